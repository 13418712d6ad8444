//! SIGN of floats on x86-64 with AVX-512 (F, BW, DQ and VL), through the loop of
//! [`super::sign_x86`].
//!
//! - float32 and float64: one `vfixupimm` per vector. It sorts each lane into eight
//!   classes (quiet NaN, signalling NaN, ±0, +1, -∞, +∞, other negative, other
//!   positive) and writes per class a constant (+0, ±1) or the input itself, so both NaN
//!   policies cost the same. Its classes read DAZ, so the calls check the floating-point
//!   environment as the AVX2 float compares do. In 32-byte vectors ([`YmmVl`]): on a
//!   Sapphire Rapids-class Xeon, one thread, float32 SIGN of 64 Ki elements (in L2) took
//!   5.94 us in them, 6.6 in 64-byte vectors and 6.2-7.6 with AVX2; of 4 Ki (in L1) 180
//!   ns, 133 and 322-480.
//! - float16 and bfloat16: integer operations on 16-bit lanes in 64-byte vectors
//!   ([`Zmm`]): a test under the magnitude (non-zero), an unsigned compare of the doubled
//!   input (the sign dropped) with doubled infinity (not NaN), a ternary-logic
//!   `(x & sign) | one`, and a zero-masking move (one more, a merging move, when NaN
//!   propagates). 64 Ki elements took 3.06 us (AVX2: 3.28-3.85), 32-byte vectors
//!   3.2-3.6.
//!
//! Integers keep the AVX2 kernels. At 64 Ki elements (in L2), one thread, on the same
//! host every type ran 2-5% slower in 64-byte vectors than in 32-byte ones wherever the
//! operations per byte were the same, and 8- to 32-bit SIGN is one AVX2 operation per
//! 32 bytes (`vpsign`, `vpminu`) on three ports against two per 64 bytes on the two
//! ports that take 512-bit operations: int32 SIGN at 4 Ki took 217-222 ns against
//! 171-174. 64-bit integers (fewer operations in AVX-512) came out even.

use std::arch::x86_64::{
    __m256, __m256d, __m512i, _mm256_fixupimm_pd, _mm256_fixupimm_ps, _mm256_loadu_pd,
    _mm256_loadu_ps, _mm256_set1_epi32, _mm256_set1_epi64x, _mm256_storeu_pd, _mm256_storeu_ps,
    _mm256_stream_pd, _mm256_stream_ps, _mm512_add_epi16, _mm512_loadu_si512,
    _mm512_mask_cmple_epu16_mask, _mm512_mask_mov_epi16, _mm512_maskz_mov_epi16, _mm512_set1_epi16,
    _mm512_storeu_si512, _mm512_stream_si512, _mm512_ternarylogic_epi32, _mm512_test_epi16_mask,
};

use ewise_core::{DataType, NanPolicy};

use super::formats::{FloatFormat, BF16, F16, F32, F64};
use super::ops::SignFloat;
use super::sign_x86::{self, simd_impl, Simd, Width};
use super::Kernel;

/// The AVX-512 SIGN kernel for a float data type and NaN policy; `None` for the others
/// (integers keep the AVX2 kernels).
///
/// Callers hand it out only where [`super::isa::InstructionSet::Avx512`] was detected.
pub(super) fn kernel(data_type: DataType, policy: NanPolicy) -> Option<Kernel> {
    Some(match data_type {
        DataType::Float32 => float::<YmmVl, F32>(policy),
        DataType::Float64 => float::<YmmVl, F64>(policy),
        DataType::Float16 => float::<Zmm, F16>(policy),
        DataType::Bfloat16 => float::<Zmm, BF16>(policy),
        _ => return None,
    })
}

fn float<W: Width, F>(policy: NanPolicy) -> Kernel
where
    SignFloat<F, false>: Simd<W>,
    SignFloat<F, true>: Simd<W>,
{
    match policy {
        NanPolicy::Zero => sign_x86::kernel::<W, SignFloat<F, false>>(),
        NanPolicy::Propagate => sign_x86::kernel::<W, SignFloat<F, true>>(),
    }
}

/// 64-byte AVX-512 vectors.
pub(super) struct Zmm;

/// 32-byte vectors with AVX-512 VL's instructions.
pub(super) struct YmmVl;

impl Width for Zmm {
    const BYTES: usize = 64;

    #[inline]
    #[allow(unsafe_code)]
    unsafe fn run<M: Simd<Self>, const STREAM: bool>(src: *const M::In, dst: *mut M::In, n: usize) {
        // SAFETY: as the caller guarantees.
        unsafe { run::<Self, M, STREAM>(src, dst, n) }
    }
}

impl Width for YmmVl {
    const BYTES: usize = 32;

    #[inline]
    #[allow(unsafe_code)]
    unsafe fn run<M: Simd<Self>, const STREAM: bool>(src: *const M::In, dst: *mut M::In, n: usize) {
        // SAFETY: as the caller guarantees.
        unsafe { run::<Self, M, STREAM>(src, dst, n) }
    }
}

/// [`sign_x86::walk`] with AVX-512 enabled.
///
/// # Safety
///
/// As for [`sign_x86::walk`].
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl")]
#[allow(unsafe_code)]
unsafe fn run<W: Width, M: Simd<W>, const STREAM: bool>(
    src: *const M::In,
    dst: *mut M::In,
    n: usize,
) {
    // SAFETY: as the caller guarantees.
    unsafe { sign_x86::walk::<W, M, STREAM>(src, dst, n) }
}

/// `vfixupimm`'s answers per class, one nibble each from bit 0: quiet NaN, signalling
/// NaN, ±0, +1, -∞, +∞, other negative, other positive. 1 is the input itself, 8 is +0,
/// 9 is -1 and 10 (`A`) is +1.
const fn fixup_table(propagate: bool) -> u32 {
    match propagate {
        true => 0xA9A9_A811,
        false => 0xA9A9_A888,
    }
}

macro_rules! float_simd {
    ($f:ty, $bits:ty, $v:ty, $load:ident, $store:ident, $stream:ident, $fixup:ident,
     $set1:ident) => {
        // No flags asked (0): no class raises an exception.
        simd_impl!([const PROPAGATE: bool] SignFloat<$f, PROPAGATE> => YmmVl,
            "avx512f,avx512bw,avx512dq,avx512vl", $bits, $v, true, ($load, $store, $stream),
            |x| $fixup::<0>(x, x, $set1(fixup_table(PROPAGATE) as _)));
    };
}

float_simd!(
    F32,
    u32,
    __m256,
    _mm256_loadu_ps,
    _mm256_storeu_ps,
    _mm256_stream_ps,
    _mm256_fixupimm_ps,
    _mm256_set1_epi32
);
float_simd!(
    F64,
    u64,
    __m256d,
    _mm256_loadu_pd,
    _mm256_storeu_pd,
    _mm256_stream_pd,
    _mm256_fixupimm_pd,
    _mm256_set1_epi64x
);

simd_impl!([F: FloatFormat<Bits = u16>, const PROPAGATE: bool] SignFloat<F, PROPAGATE> => Zmm,
    "avx512f,avx512bw,avx512dq,avx512vl", u16, __m512i, false,
    (_mm512_loadu_si512, _mm512_storeu_si512, _mm512_stream_si512),
    |x| sign_16::<F, PROPAGATE>(x));

/// SIGN of float16 or bfloat16 lanes `x` in integer operations, as [`SignFloat`].
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl")]
fn sign_16<F: FloatFormat<Bits = u16>, const PROPAGATE: bool>(x: __m512i) -> __m512i {
    let lanes = |bits: u16| _mm512_set1_epi16(bits as i16);
    let nonzero = _mm512_test_epi16_mask(x, lanes(F::MAGNITUDE));
    // Doubling drops the sign: NaNs are the doubled magnitudes above doubled infinity.
    let ordinary =
        _mm512_mask_cmple_epu16_mask(nonzero, _mm512_add_epi16(x, x), lanes(F::INFINITY << 1));
    // (x & sign) | one: bit by bit, the table of A & B | C.
    let one = _mm512_ternarylogic_epi32::<0xEA>(x, lanes(F::SIGN), lanes(F::ONE));
    match PROPAGATE {
        true => _mm512_mask_mov_epi16(_mm512_maskz_mov_epi16(nonzero, x), ordinary, one),
        false => _mm512_maskz_mov_epi16(ordinary, one),
    }
}

#[cfg(test)]
mod tests {
    use super::super::isa::avx512;
    use super::super::sign_cases::{all_cases, check, check_placements};
    use super::super::sign_x86::check_environment;
    use super::*;

    #[test]
    fn every_type_matches_the_reference_at_every_length_and_offset() {
        if !avx512() {
            eprintln!("skipped: this CPU lacks AVX-512 F/BW/DQ/VL");
            return;
        }
        for (t, cases) in all_cases(kernel) {
            check(kernel, t, &cases);
            check_placements(kernel, t);
        }
    }

    #[test]
    fn a_caller_floating_point_environment_changes_nothing() {
        if avx512() {
            check_environment(kernel);
        }
    }
}
