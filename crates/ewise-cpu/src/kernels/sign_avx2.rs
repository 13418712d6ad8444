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
//! The float compares read the floating-point environment: under DAZ (denormals are
//! zero, MXCSR bit 6) they would see subnormals as zero, and an unmasked invalid or
//! denormal exception would trap on a signalling NaN or a subnormal. Each float call
//! reads MXCSR and uses the integer loops unless DAZ is clear and both exceptions are
//! masked (the default). The compares may set MXCSR's sticky invalid and denormal flags;
//! the results are the same bits either way.

use std::arch::x86_64::{
    __m256, __m256d, __m256i, _mm256_and_pd, _mm256_and_ps, _mm256_and_si256, _mm256_andnot_si256,
    _mm256_blendv_epi8, _mm256_blendv_pd, _mm256_blendv_ps, _mm256_cmp_pd, _mm256_cmp_ps,
    _mm256_cmpeq_epi64, _mm256_cmpgt_epi16, _mm256_cmpgt_epi64, _mm256_loadu_pd, _mm256_loadu_ps,
    _mm256_loadu_si256, _mm256_set1_epi16, _mm256_set1_epi32, _mm256_set1_epi64x, _mm256_set1_epi8,
    _mm256_set1_pd, _mm256_set1_ps, _mm256_setzero_pd, _mm256_setzero_ps, _mm256_setzero_si256,
    _mm256_sign_epi16, _mm256_sign_epi32, _mm256_sign_epi8, _mm256_storeu_pd, _mm256_storeu_ps,
    _mm256_storeu_si256, _mm256_stream_pd, _mm256_stream_ps, _mm256_stream_si256, _mm256_sub_epi64,
    _mm_sfence, _CMP_NEQ_OQ, _CMP_UNORD_Q,
};

use ewise_core::{DataType, NanPolicy};

use super::formats::{FloatFormat, BF16, F16, F32, F64};
use super::isa::{Avx2, Isa};
use super::ops::{Map, SignFloat, SignSigned, SignUnsigned};
use super::{slice, stream, Kernel};

/// The AVX2 SIGN kernel for a data type and NaN policy; `None` for types SIGN does not
/// take.
///
/// Callers hand it out only where AVX2 was detected, as for [`super::isa::Avx2`].
pub(super) fn kernel(data_type: DataType, policy: NanPolicy) -> Option<Kernel> {
    sign_kernel!(data_type, policy, |M| for_map::<M>())
}

fn for_map<M: Simd>() -> Kernel {
    Kernel {
        in_size: std::mem::size_of::<M::In>(),
        out_size: std::mem::size_of::<M::In>(),
        map: map_bytes::<M>,
        map_stream: map_bytes_stream::<M>,
        map_in_place: Some(map_bytes_in_place::<M>),
        map_in_place_stream: Some(map_bytes_in_place_stream::<M>),
        transpose: <Avx2 as Isa>::transpose,
    }
}

fn map_bytes<M: Simd>(src: &[u8], dst: &mut [u8]) {
    slice::map_bytes_with::<M>(src, dst, map::<M>);
}

fn map_bytes_stream<M: Simd>(src: &[u8], dst: &mut [u8]) {
    slice::map_bytes_stream_with::<M>(src, dst, map::<M>, map_stream::<M>);
}

fn map_bytes_in_place<M: Simd>(data: &mut [u8]) {
    slice::map_bytes_in_place_with::<M>(data, |d| run_in_place::<M, false>(d));
}

fn map_bytes_in_place_stream<M: Simd>(data: &mut [u8]) {
    match bytemuck::try_cast_slice_mut::<u8, M::In>(data) {
        Ok(d) => run_in_place::<M, true>(d),
        Err(_) => slice::map_bytes_in_place_stream::<M, Avx2>(data),
    }
}

/// Whether `M`'s vector form gives exact results in this thread's environment.
fn usable<M: Simd>() -> bool {
    !M::COMPARES_FLOATS || compares_are_exact()
}

/// SIGN of `src` into `dst` (the shorter length).
#[allow(unsafe_code)]
fn map<M: Simd>(src: &[M::In], dst: &mut [M::In]) {
    if !usable::<M>() {
        return Avx2::map::<M>(src, dst);
    }
    let n = src.len().min(dst.len());
    // SAFETY: `src` holds `n` readable and `dst` `n` writable elements, in distinct
    // slices; AVX2 was detected before these kernels were selected.
    unsafe { run::<M, false>(src.as_ptr(), dst.as_mut_ptr(), n) }
}

/// [`map`] with streaming stores; always `true` (done), as for [`Isa::map_stream`].
#[allow(unsafe_code)]
fn map_stream<M: Simd>(src: &[M::In], dst: &mut [M::In]) -> bool {
    if !usable::<M>() {
        return Avx2::map_stream::<M>(src, dst);
    }
    let n = src.len().min(dst.len());
    // SAFETY: as in `map`.
    unsafe { run::<M, true>(src.as_ptr(), dst.as_mut_ptr(), n) }
    true
}

/// SIGN of `data` in place, with streaming stores if `STREAM`.
#[allow(unsafe_code)]
fn run_in_place<M: Simd, const STREAM: bool>(data: &mut [M::In]) {
    if !usable::<M>() {
        return match STREAM {
            true => slice::map_bytes_in_place_stream::<M, Avx2>(bytemuck::cast_slice_mut(data)),
            false => Avx2::map_in_place::<M>(data),
        };
    }
    let p = data.as_mut_ptr();
    // SAFETY: `p` holds `data.len()` elements, read and written; `run` reads each vector
    // or element before writing it at the same place. AVX2 was detected before these
    // kernels were selected.
    unsafe { run::<M, STREAM>(p, p, data.len()) }
}

/// Whether float compares give the exact answers for every input here: DAZ is clear
/// and the invalid and denormal exceptions are masked.
#[allow(unsafe_code)]
fn compares_are_exact() -> bool {
    const DAZ: u32 = 1 << 6;
    const INVALID_MASK: u32 = 1 << 7;
    const DENORMAL_MASK: u32 = 1 << 8;
    let mut csr = 0u32;
    // SAFETY: `stmxcsr` stores the 4-byte MXCSR register at the given address, a local
    // `u32`; SSE is part of the x86-64 baseline.
    unsafe {
        std::arch::asm!(
            "stmxcsr [{0}]",
            in(reg) &mut csr,
            options(nostack, preserves_flags)
        );
    }
    csr & (DAZ | INVALID_MASK | DENORMAL_MASK) == INVALID_MASK | DENORMAL_MASK
}

/// Input bytes below which [`stores_alias_following_loads`] is not asked: a few vectors,
/// which run at the same speed either way. In L1 the aliasing cost nothing measurable on
/// Zen 1 (4 and 16 KiB), but on Emerald Rapids a forward float32 SIGN of 4 Ki elements
/// in L1 took 372 ns with the output 16 bytes past the input modulo 4 KiB, against 241-267
/// ns at gaps of 64 bytes to 3 KiB.
const ALIASING_MATTERS: usize = 1024;

/// Whether, walking front to back, each store to `dst` would match the address bits
/// below 4 KiB of loads of `src` that follow it closely: `dst` lies up to 2 KiB past
/// `src` modulo 4 KiB. Loads that match an earlier store's low address bits wait for it
/// ("4K aliasing"); consecutive heap blocks of 4 KiB and more sit 64 or 80 bytes past
/// each other that way, and a forward SIGN between them in L2 ran 15-20% slower than a
/// backward one on Zen 1.
fn stores_alias_following_loads<T>(src: *const T, dst: *const T) -> bool {
    let gap = (dst as usize).wrapping_sub(src as usize) % 4096;
    gap != 0 && gap < 2048
}

/// SIGN of the `n` elements at `src` into the `n` at `dst`, which may be the same
/// memory (in place) but otherwise must not overlap. With `STREAM`, whole vectors from
/// the first 32-byte aligned output address on are written with streaming stores, the
/// input is prefetched ahead ([`stream::prefetch_ahead`]), and the call ends with
/// `sfence`; without, where [`stores_alias_following_loads`] (from
/// [`ALIASING_MATTERS`] bytes on), the vectors go back to front.
///
/// # Safety
///
/// `src` must be readable and `dst` writable for `n` elements, and the CPU must have
/// AVX2; [`usable`] must hold.
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
unsafe fn run<M: Simd, const STREAM: bool>(src: *const M::In, dst: *mut M::In, n: usize) {
    let lanes = 32 / std::mem::size_of::<M::In>();
    let scalar = |i: usize| {
        // SAFETY: the callers pass `i < n`; the element is read before it is written.
        unsafe { *dst.add(i) = M::apply(*src.add(i)) }
    };
    let four = |i: usize| {
        if STREAM {
            stream::prefetch_ahead(src.wrapping_add(i).cast(), 4 * 32);
        }
        // SAFETY: the callers pass `i + 4 * lanes <= n` and, with `STREAM`, a 32-byte
        // aligned `dst + i`; all four vectors are loaded before any is stored.
        unsafe {
            let v = [0, 1, 2, 3].map(|k| M::vector(M::load(src.add(i + k * lanes))));
            for (k, v) in v.into_iter().enumerate() {
                M::store::<STREAM>(dst.add(i + k * lanes), v);
            }
        }
    };
    let one = |i: usize| {
        // SAFETY: as for `four`, for one vector.
        unsafe { M::store::<STREAM>(dst.add(i), M::vector(M::load(src.add(i)))) }
    };
    if !STREAM
        && n * std::mem::size_of::<M::In>() >= ALIASING_MATTERS
        && stores_alias_following_loads(src, dst)
    {
        let whole = n / lanes * lanes;
        (whole..n).for_each(scalar);
        let fours = whole / (4 * lanes);
        for k in 1..=fours {
            four(whole - k * 4 * lanes);
        }
        let mut i = whole - fours * 4 * lanes;
        while i >= lanes {
            i -= lanes;
            one(i);
        }
        return;
    }
    let head = match STREAM {
        true => dst.align_offset(32).min(n),
        false => 0,
    };
    (0..head).for_each(scalar);
    // With `STREAM`, `dst + i` stays 32-byte aligned: the head was peeled and each step
    // is a whole number of vectors.
    let mut i = head;
    while i + 4 * lanes <= n {
        four(i);
        i += 4 * lanes;
    }
    while i + lanes <= n {
        one(i);
        i += lanes;
    }
    (i..n).for_each(scalar);
    if STREAM {
        _mm_sfence();
    }
}

/// A SIGN whose vector form runs in AVX2 registers, 32 bytes at a time, giving the
/// bits of [`Map::apply`] on each element.
#[allow(unsafe_code)]
trait Simd: Map<Out = <Self as Map>::In> {
    type V: Copy;
    /// Whether [`Simd::vector`] uses float compares ([`compares_are_exact`]).
    const COMPARES_FLOATS: bool;

    /// # Safety
    ///
    /// 32 bytes at `p` are readable; the CPU has AVX2.
    unsafe fn load(p: *const Self::In) -> Self::V;

    /// With `STREAM`, a streaming store.
    ///
    /// # Safety
    ///
    /// 32 bytes at `p` are writable, 32-byte aligned with `STREAM`; the CPU has AVX2.
    unsafe fn store<const STREAM: bool>(p: *mut Self::In, v: Self::V);

    /// SIGN of each lane.
    ///
    /// # Safety
    ///
    /// The CPU has AVX2, and [`usable`] holds.
    unsafe fn vector(x: Self::V) -> Self::V;
}

macro_rules! float_simd {
    ($f:ty, $bits:ty, $v:ty, $load:ident, $store:ident, $stream:ident, $cmp:ident,
     $blendv:ident, $blendvname:literal, $and:ident, $set1:ident, $zero:ident) => {
        #[allow(unsafe_code)]
        impl<const PROPAGATE: bool> Simd for SignFloat<$f, PROPAGATE> {
            type V = $v;
            const COMPARES_FLOATS: bool = true;

            #[inline]
            #[target_feature(enable = "avx2")]
            unsafe fn load(p: *const $bits) -> $v {
                // SAFETY: as the trait requires; the load has no alignment requirement.
                unsafe { $load(p.cast()) }
            }

            #[inline]
            #[target_feature(enable = "avx2")]
            unsafe fn store<const STREAM: bool>(p: *mut $bits, v: $v) {
                // SAFETY: as the trait requires.
                unsafe {
                    match STREAM {
                        true => $stream(p.cast(), v),
                        false => $store(p.cast(), v),
                    }
                }
            }

            #[inline]
            #[target_feature(enable = "avx2")]
            unsafe fn vector(x: $v) -> $v {
                let nonzero = $cmp::<_CMP_NEQ_OQ>(x, $zero());
                // ±1 by the sign bit, in assembly: LLVM turns the blend intrinsic into an
                // and and an or, two operations instead of one.
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
            }
        }
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
        #[allow(unsafe_code)]
        impl<$($generics)*> Simd for $m {
            type V = __m256i;
            const COMPARES_FLOATS: bool = false;

            #[inline]
            #[target_feature(enable = "avx2")]
            unsafe fn load(p: *const $t) -> __m256i {
                // SAFETY: as the trait requires; the load has no alignment requirement.
                unsafe { _mm256_loadu_si256(p.cast()) }
            }

            #[inline]
            #[target_feature(enable = "avx2")]
            unsafe fn store<const STREAM: bool>(p: *mut $t, v: __m256i) {
                // SAFETY: as the trait requires.
                unsafe {
                    match STREAM {
                        true => _mm256_stream_si256(p.cast(), v),
                        false => _mm256_storeu_si256(p.cast(), v),
                    }
                }
            }

            #[inline]
            #[target_feature(enable = "avx2")]
            unsafe fn vector($x: __m256i) -> __m256i {
                $body
            }
        }
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

    fn mxcsr() -> u32 {
        let mut csr = 0u32;
        #[allow(unsafe_code)]
        // SAFETY: stores MXCSR into a local.
        unsafe {
            std::arch::asm!("stmxcsr [{0}]", in(reg) &mut csr, options(nostack));
        }
        csr
    }

    fn set_mxcsr(csr: u32) {
        #[allow(unsafe_code)]
        // SAFETY: loads MXCSR from a local holding a valid value (reserved bits as read).
        unsafe {
            std::arch::asm!("ldmxcsr [{0}]", in(reg) &csr, options(nostack));
        }
    }

    /// With DAZ set, or the invalid or denormal exception unmasked, on this thread, the
    /// kernels fall back to the integer loops: subnormals still give ±1 and signalling
    /// NaNs neither trap nor change.
    #[test]
    fn a_caller_floating_point_environment_changes_nothing() {
        if !avx2() {
            return;
        }
        let all = all_cases(kernel);
        let saved = mxcsr();
        assert!(
            compares_are_exact(),
            "the default environment takes the fast path"
        );
        for bits in [1 << 6, 1 << 7, 1 << 8] {
            set_mxcsr(saved ^ bits);
            let fast = compares_are_exact();
            for (t, cases) in &all {
                check(kernel, *t, cases);
            }
            set_mxcsr(saved);
            assert!(!fast, "MXCSR bit {bits:#x} must leave the float compares");
        }
        assert_eq!(mxcsr() & 0xFFC0, saved & 0xFFC0);
    }
}
