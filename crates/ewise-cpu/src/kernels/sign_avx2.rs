//! SIGN on x86-64 with AVX2, written with intrinsics where one instruction or a few do
//! what the compiler's loops spend more on.
//!
//! - float32 and float64: an ordered not-equal compare with zero is false exactly for ±0
//!   and NaN, and a blend on the sign bit picks -1 or +1, so a vector of signs takes
//!   three operations (five when NaN propagates) where the integer form of [`SignFloat`]
//!   takes seven. The blend is in assembly: LLVM splits the intrinsic into an and and an
//!   or, and with the blend float32 NaN -> +0 at 64 Ki went from 0.74-0.75 of the copy to
//!   0.81-0.84 on Zen 1.
//! - float16 and bfloat16: five operations on 16-bit lanes with either NaN policy, where
//!   the compiler's form of [`SignFloat`] takes seven: the magnitude, a NaN compare, a
//!   byte blend on the sign bit for ±1, the NaN choice, and a `vpsign` by the magnitude,
//!   which zeroes ±0.
//! - signed 8-, 16- and 32-bit integers: `vpsign` of a vector of ones, one operation
//!   where the compiler emits three or four; 64-bit: two compares with zero subtracted.
//! - unsigned integers: `vpminu` with ones (8 to 32 bits; in assembly, as LLVM turns the
//!   intrinsic back into its compare and mask), one operation where the compiler emits
//!   two: 9-12% faster at 64 Ki on Zen 1. 64-bit: a compare and mask.
//!
//! The loop runs back to front where the output lies a little past the input modulo
//! 4 KiB (see [`stores_alias_following_loads`]): with the `vpminu` above, that took int8
//! and int16 SIGN at 64 Ki elements from 0.71-0.79 of the copy to 0.88-0.92 on Zen 1, in
//! `ewise bench`, whose buffers sit that way; on Intel it matters in L1 too.
//!
//! Streaming calls (outputs larger than the caches) prefetch their input
//! ahead ([`stream::prefetch_ahead`]).
//!
//! On cores that run each 256-bit operation as two 128-bit halves (AMD Zen 1) those
//! operations, not memory, set the speed in cache: 0.53-0.57 of a copy for float32 with
//! the integer form.
//!
//! The loop, and the floating-point environment the float compares need, are
//! [`super::sign_x86`]'s.

use std::arch::x86_64::{
    __m256, __m256d, __m256i, _mm256_and_pd, _mm256_and_ps, _mm256_and_si256, _mm256_andnot_si256,
    _mm256_blendv_epi8, _mm256_blendv_pd, _mm256_blendv_ps, _mm256_cmp_pd, _mm256_cmp_ps,
    _mm256_cmpeq_epi64, _mm256_cmpgt_epi16, _mm256_cmpgt_epi64, _mm256_loadu_pd, _mm256_loadu_ps,
    _mm256_loadu_si256, _mm256_set1_epi16, _mm256_set1_epi32, _mm256_set1_epi64x, _mm256_set1_epi8,
    _mm256_set1_pd, _mm256_set1_ps, _mm256_setzero_pd, _mm256_setzero_ps, _mm256_setzero_si256,
    _mm256_sign_epi16, _mm256_sign_epi32, _mm256_sign_epi8, _mm256_storeu_pd, _mm256_storeu_ps,
    _mm256_storeu_si256, _mm256_stream_pd, _mm256_stream_ps, _mm256_stream_si256, _mm256_sub_epi64,
    _CMP_NEQ_OQ, _CMP_UNORD_Q,
};

use ewise_core::{DataType, NanPolicy};

use super::formats::{FloatFormat, BF16, F16, F32, F64};
use super::ops::{SignFloat, SignSigned, SignUnsigned};
use super::sign_x86::{self, simd_impl, Simd, Width};
use super::Kernel;

/// The AVX2 SIGN kernel for a data type and NaN policy; `None` for types SIGN does not
/// take.
///
/// Callers hand it out only where AVX2 was detected, as for [`super::isa::Avx2`].
pub(super) fn kernel(data_type: DataType, policy: NanPolicy) -> Option<Kernel> {
    sign_kernel!(data_type, policy, |M| sign_x86::kernel::<Ymm, M>())
}

/// 32-byte AVX2 vectors.
pub(super) struct Ymm;

impl Width for Ymm {
    const BYTES: usize = 32;

    #[inline]
    #[allow(unsafe_code)]
    unsafe fn run<M: Simd<Self>, const STREAM: bool>(src: *const M::In, dst: *mut M::In, n: usize) {
        // SAFETY: as the caller guarantees.
        unsafe { run::<M, STREAM>(src, dst, n) }
    }
}

/// [`sign_x86::walk`] with AVX2 enabled.
///
/// # Safety
///
/// As for [`sign_x86::walk`].
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
unsafe fn run<M: Simd<Ymm>, const STREAM: bool>(src: *const M::In, dst: *mut M::In, n: usize) {
    // SAFETY: as the caller guarantees.
    unsafe { sign_x86::walk::<Ymm, M, STREAM>(src, dst, n) }
}

macro_rules! float_simd {
    ($f:ty, $bits:ty, $v:ty, $load:ident, $store:ident, $stream:ident, $cmp:ident,
     $blendv:ident, $blendvname:literal, $and:ident, $set1:ident, $zero:ident) => {
        simd_impl!([const PROPAGATE: bool] SignFloat<$f, PROPAGATE> => Ymm, "avx2", $bits, $v,
            true, ($load, $store, $stream), |x| {
            let nonzero = $cmp::<_CMP_NEQ_OQ>(x, $zero());
            // ±1 by the sign bit, in assembly: LLVM turns the blend intrinsic into an and
            // and an or, two operations instead of one.
            let one: $v;
            // SAFETY: one register-only AVX instruction (the caller has AVX2 enabled).
            unsafe {
                std::arch::asm!(
                    concat!("v", $blendvname, " {d}, {a}, {b}, {m}"),
                    d = lateout(ymm_reg) one,
                    a = in(ymm_reg) $set1(1.0),
                    b = in(ymm_reg) $set1(-1.0),
                    m = in(ymm_reg) x,
                    options(pure, nomem, nostack, preserves_flags),
                );
            }
            let sign = $and(nonzero, one);
            match PROPAGATE {
                true => $blendv(sign, x, $cmp::<_CMP_UNORD_Q>(x, x)),
                false => sign,
            }
        });
    };
}

float_simd!(
    F32,
    u32,
    __m256,
    _mm256_loadu_ps,
    _mm256_storeu_ps,
    _mm256_stream_ps,
    _mm256_cmp_ps,
    _mm256_blendv_ps,
    "blendvps",
    _mm256_and_ps,
    _mm256_set1_ps,
    _mm256_setzero_ps
);
float_simd!(
    F64,
    u64,
    __m256d,
    _mm256_loadu_pd,
    _mm256_storeu_pd,
    _mm256_stream_pd,
    _mm256_cmp_pd,
    _mm256_blendv_pd,
    "blendvpd",
    _mm256_and_pd,
    _mm256_set1_pd,
    _mm256_setzero_pd
);

macro_rules! int_simd {
    ([$($generics:tt)*] $m:ty, $t:ty, |$x:ident| $body:expr) => {
        simd_impl!([$($generics)*] $m => Ymm, "avx2", $t, __m256i, false,
            (_mm256_loadu_si256, _mm256_storeu_si256, _mm256_stream_si256), |$x| $body);
    };
    ($m:ty, $t:ty, |$x:ident| $body:expr) => {
        int_simd!([] $m, $t, |$x| $body);
    };
}

// `vpsign(ones, x)` is 1, 0 or -1 as x is positive, zero or negative.
int_simd!(SignSigned<i8>, i8, |x| _mm256_sign_epi8(
    _mm256_set1_epi8(1),
    x
));
int_simd!(SignSigned<i16>, i16, |x| _mm256_sign_epi16(
    _mm256_set1_epi16(1),
    x
));
int_simd!(SignSigned<i32>, i32, |x| _mm256_sign_epi32(
    _mm256_set1_epi32(1),
    x
));

// `x < 0` and `x > 0` are all-ones (-1) masks: their difference is the sign.
int_simd!(SignSigned<i64>, i64, |x| {
    let zero = _mm256_setzero_si256();
    _mm256_sub_epi64(_mm256_cmpgt_epi64(zero, x), _mm256_cmpgt_epi64(x, zero))
});

/// `vpminu{suffix}` of `x` with a vector of ones, in assembly: LLVM turns the intrinsic
/// back into a compare and a mask, two operations.
macro_rules! min_with_one {
    ($x:expr, $suffix:literal, $ones:expr) => {{
        let sign;
        // SAFETY: one register-only AVX2 instruction (the caller has AVX2 enabled).
        unsafe {
            std::arch::asm!(
                concat!("vpminu", $suffix, " {s}, {x}, {one}"),
                s = lateout(ymm_reg) sign,
                x = in(ymm_reg) $x,
                one = in(ymm_reg) $ones,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        sign
    }};
}

// Unsigned: x clamped to 0 ..= 1 (64-bit lanes have no unsigned min: x != 0 as 1).
int_simd!(SignUnsigned<u8>, u8, |x| min_with_one!(
    x,
    "b",
    _mm256_set1_epi8(1)
));
int_simd!(SignUnsigned<u16>, u16, |x| min_with_one!(
    x,
    "w",
    _mm256_set1_epi16(1)
));
int_simd!(SignUnsigned<u32>, u32, |x| min_with_one!(
    x,
    "d",
    _mm256_set1_epi32(1)
));
int_simd!(SignUnsigned<u64>, u64, |x| _mm256_andnot_si256(
    _mm256_cmpeq_epi64(x, _mm256_setzero_si256()),
    _mm256_set1_epi64x(1)
));

/// SIGN of float16 or bfloat16 lanes `x` in integer operations, as [`SignFloat`].
#[inline]
#[target_feature(enable = "avx2")]
fn sign_16<F: FloatFormat<Bits = u16>, const PROPAGATE: bool>(x: __m256i) -> __m256i {
    let lanes = |bits: u16| _mm256_set1_epi16(bits as i16);
    let magnitude = _mm256_and_si256(x, lanes(F::MAGNITUDE));
    let nan = _mm256_cmpgt_epi16(magnitude, lanes(F::INFINITY));
    // A byte blend on the sign bits: ±1 share their low byte, so only the high byte's
    // choice matters, and its top bit is the element's sign.
    let one = _mm256_blendv_epi8(lanes(F::ONE), lanes(F::ONE | F::SIGN), x);
    let sign = match PROPAGATE {
        true => _mm256_blendv_epi8(one, x, nan),
        false => _mm256_andnot_si256(nan, one),
    };
    // The magnitude is never negative: `vpsign` keeps `sign` or, for ±0, gives +0.
    _mm256_sign_epi16(sign, magnitude)
}

int_simd!([const P: bool] SignFloat<F16, P>, u16, |x| sign_16::<F16, P>(x));
int_simd!([const P: bool] SignFloat<BF16, P>, u16, |x| sign_16::<BF16, P>(x));

#[cfg(test)]
mod tests {
    use super::super::sign_cases::{all_cases, check, check_placements};
    use super::super::sign_x86::check_environment;
    use super::*;

    fn avx2() -> bool {
        std::arch::is_x86_feature_detected!("avx2")
    }

    #[test]
    fn every_type_matches_the_reference_at_every_length_and_offset() {
        if !avx2() {
            return;
        }
        for (t, cases) in all_cases(kernel) {
            check(kernel, t, &cases);
            check_placements(kernel, t);
        }
    }

    #[test]
    fn a_caller_floating_point_environment_changes_nothing() {
        if avx2() {
            check_environment(kernel);
        }
    }
}
