//! IS_INFINITY on x86-64 with AVX-512 (F, BW, DQ and VL), with mask registers.
//!
//! float32 and float64 only. Each step classifies 16 elements with `vfpclass` (the
//! infinities of the mode's signs: one operation per 64 bytes, which reads no
//! floating-point environment and raises no exception) into a mask, one bit per element,
//! and a zero-masking byte move turns the mask into 16 output bytes of 0 and 1. Elements
//! before the first 16-byte aligned output of a streaming call, and the remainders, run
//! as one step on a zero-padded copy. The streaming form writes each aligned step with a
//! non-temporal store and prefetches its input ahead ([`stream::prefetch_ahead`]).
//!
//! The byte move's source of ones is a register the compiler cannot see through
//! ([`std::hint::black_box`]), and no autovectorised loop runs here: LLVM otherwise folds
//! the constant into the move as a masked load from its constant pool, and a masked load
//! whose mask is all zeros (no infinity among 16 elements, the usual case) does not touch
//! its page. Until something else reads that page of the library's read-only data, each
//! such load takes a microcode assist on AMD Zen 4: ~130 ns per 16 elements, 34 us
//! instead of 0.3 for 4096 float32 elements, in a fresh Python process that had not run
//! other ewise code (issue 40).
//!
//! The AVX2 loops serve float16 and bfloat16: a masked compare per 64 bytes and a move
//! per 32 outputs ran 3-5% slower than their packs at 64 Ki elements on a Sapphire
//! Rapids-class Xeon (2.15-2.19 against 2.07-2.17 us, one thread), and no faster at
//! 4 Ki.

use std::arch::x86_64::{
    __m128i, _mm512_fpclass_pd_mask, _mm512_fpclass_ps_mask, _mm512_kunpackb, _mm512_loadu_pd,
    _mm512_loadu_ps, _mm_maskz_mov_epi8, _mm_set1_epi8, _mm_storeu_si128, _mm_stream_si128,
};
use std::marker::PhantomData;

use super::formats::{FloatFormat, Word, BF16, F16, F32, F64};
use super::is_infinity_avx2;
use super::isa::Avx2;
use super::loops::{InfinityLoops, Loop};
use super::ops::{self, IsInfinity};
use super::stream;

/// AVX-512's IS_INFINITY loops ([`super::loops::is_infinity`] builds the kernels):
/// float32 and float64 here, float16 and bfloat16 in AVX2's loops.
///
/// Callers hand its kernels out only where [`super::isa::InstructionSet::Avx512`] was
/// detected.
pub(super) struct Loops;

impl InfinityLoops<F32> for Loops {
    type Loop<const MODE: u32> = Infinity<F32, MODE>;
}

impl InfinityLoops<F64> for Loops {
    type Loop<const MODE: u32> = Infinity<F64, MODE>;
}

impl InfinityLoops<F16> for Loops {
    type Loop<const MODE: u32> = is_infinity_avx2::Infinity<F16, MODE>;
}

impl InfinityLoops<BF16> for Loops {
    type Loop<const MODE: u32> = is_infinity_avx2::Infinity<BF16, MODE>;
}

/// IS_INFINITY in `MODE` over `F`, [`STEP`] elements a step.
pub(super) struct Infinity<F, const MODE: u32>(PhantomData<F>);

impl<F: Classify, const MODE: u32> Loop for Infinity<F, MODE> {
    type Map = IsInfinity<F, MODE>;
    type Isa = Avx2;

    fn map(src: &[F::Bits], dst: &mut [u8]) {
        map::<F, MODE, false>(src, dst);
    }

    fn map_stream(src: &[F::Bits], dst: &mut [u8]) -> bool {
        map::<F, MODE, true>(src, dst);
        true
    }
}

/// [`map_avx512`] behind a safe signature.
#[allow(unsafe_code)]
fn map<F: Classify, const MODE: u32, const STREAM: bool>(src: &[F::Bits], dst: &mut [u8]) {
    // SAFETY: these kernels are only selected for `InstructionSet::Avx512`, which
    // `isa::selected()` returns only after `isa::avx512()` returned true.
    unsafe { map_avx512::<F, MODE, STREAM>(src, dst) }
}

/// IS_INFINITY in `MODE` of the first `n` elements of `src` into `dst`, `n` the shorter
/// length, [`STEP`] elements per step. With `STREAM`, the steps from the first 16-byte
/// aligned output address on are written with non-temporal stores, and the call ends
/// with `sfence`.
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl")]
#[allow(unsafe_code)]
fn map_avx512<F: Classify, const MODE: u32, const STREAM: bool>(src: &[F::Bits], dst: &mut [u8]) {
    let len = src.len().min(dst.len());
    let head = match STREAM {
        true => dst.as_ptr().align_offset(STEP).min(len),
        false => 0,
    };
    let ones = std::hint::black_box(_mm_set1_epi8(1));
    padded::<F, MODE>(&src[..head], &mut dst[..head], ones);
    let mut i = head;
    while i + STEP <= len {
        let at = src[i..].as_ptr();
        if STREAM {
            stream::prefetch_ahead(at.cast(), STEP * std::mem::size_of::<F::Bits>());
        }
        // SAFETY: `src` holds `STEP` elements from `i` and `dst` as many bytes, the
        // latter 16-byte aligned with `STREAM` (the head was peeled and each step is
        // whole); AVX-512 is enabled on this function.
        unsafe {
            let out = F::step::<MODE>(at, ones);
            let to = dst[i..].as_mut_ptr().cast::<__m128i>();
            match STREAM {
                true => _mm_stream_si128(to, out),
                false => _mm_storeu_si128(to, out),
            }
        }
        i += STEP;
    }
    padded::<F, MODE>(&src[i..len], &mut dst[i..len], ones);
    if STREAM {
        stream::fence();
    }
}

/// One step on fewer than [`STEP`] elements (none: nothing), through a copy padded with
/// zeros (finite, so their outputs, which are dropped, are 0).
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl")]
#[allow(unsafe_code)]
fn padded<F: Classify, const MODE: u32>(src: &[F::Bits], dst: &mut [u8], ones: __m128i) {
    let n = src.len().min(dst.len());
    if n == 0 {
        return;
    }
    debug_assert!(n < STEP);
    let mut input = [F::Bits::ZERO; STEP];
    input[..n].copy_from_slice(&src[..n]);
    let mut output = [0u8; STEP];
    // SAFETY: both buffers hold `STEP` elements; AVX-512 is enabled on this function.
    unsafe {
        let out = F::step::<MODE>(input.as_ptr(), ones);
        _mm_storeu_si128(output.as_mut_ptr().cast::<__m128i>(), out);
    }
    dst[..n].copy_from_slice(&output[..n]);
}

/// Elements per step, and output bytes.
const STEP: usize = 16;

/// A float format whose IS_INFINITY test runs in AVX-512 registers.
#[allow(unsafe_code)]
trait Classify: FloatFormat {
    /// The [`STEP`] outputs for the `STEP` elements at `src`: byte `i` is 1 where element
    /// `i` is an infinity of `MODE`'s signs, else 0. `ones` holds 1 in every byte.
    ///
    /// # Safety
    ///
    /// `src` is readable for `STEP` elements; the CPU has AVX-512 F, BW, DQ and VL.
    unsafe fn step<const MODE: u32>(src: *const Self::Bits, ones: __m128i) -> __m128i;
}

/// `vfpclass`'s classes for `MODE`: +∞ (bit 3), -∞ (bit 4) or both.
const fn infinities(mode: u32) -> i32 {
    match mode {
        ops::POSITIVE => 0x08,
        ops::NEGATIVE => 0x10,
        _ => 0x18,
    }
}

/// Classifies with the class set of `MODE` (see [`infinities`]) by `$class::<IMM>(x)`.
macro_rules! by_mode {
    ($mode:expr, $class:ident, $x:expr) => {
        match infinities($mode) {
            0x08 => $class::<0x08>($x),
            0x10 => $class::<0x10>($x),
            _ => $class::<0x18>($x),
        }
    };
}

#[allow(unsafe_code)]
impl Classify for F32 {
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl")]
    unsafe fn step<const MODE: u32>(src: *const u32, ones: __m128i) -> __m128i {
        // SAFETY: as the trait requires.
        let x = unsafe { _mm512_loadu_ps(src.cast()) };
        _mm_maskz_mov_epi8(by_mode!(MODE, _mm512_fpclass_ps_mask, x), ones)
    }
}

#[allow(unsafe_code)]
impl Classify for F64 {
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl")]
    unsafe fn step<const MODE: u32>(src: *const u64, ones: __m128i) -> __m128i {
        // SAFETY: as the trait requires: 16 elements are two vectors.
        let (lo, hi) = unsafe {
            (
                _mm512_loadu_pd(src.cast()),
                _mm512_loadu_pd(src.add(8).cast()),
            )
        };
        let (lo, hi) = (
            by_mode!(MODE, _mm512_fpclass_pd_mask, lo),
            by_mode!(MODE, _mm512_fpclass_pd_mask, hi),
        );
        _mm_maskz_mov_epi8(_mm512_kunpackb(hi.into(), lo.into()), ones)
    }
}
