//! IS_INFINITY on x86-64 with AVX2, written with intrinsics.
//!
//! Each step tests 32 elements in their own width (one masked compare per element lane)
//! and narrows the all-ones or zero results to one 32-byte output vector with packs and
//! at most two cross-lane or byte shuffles, where the compiler's own loops spend several
//! shuffles per input vector. Remainders of fewer than 32 elements use the generic
//! [`slice::map`] loop. The streaming form writes each aligned 64-byte output line with
//! non-temporal stores and prefetches its input ahead ([`stream::prefetch_ahead`]).

use std::arch::x86_64::{
    __m256i, _mm256_and_si256, _mm256_blend_epi32, _mm256_cmpeq_epi16, _mm256_cmpeq_epi32,
    _mm256_cmpeq_epi64, _mm256_loadu_si256, _mm256_packs_epi16, _mm256_packs_epi32,
    _mm256_permute4x64_epi64, _mm256_permutevar8x32_epi32, _mm256_set1_epi16, _mm256_set1_epi32,
    _mm256_set1_epi64x, _mm256_set1_epi8, _mm256_setr_epi32, _mm256_setr_epi8, _mm256_shuffle_epi8,
    _mm256_storeu_si256, _mm256_stream_si256, _mm_sfence,
};
use std::marker::PhantomData;

use super::formats::{FloatFormat, BF16, F16, F32, F64};
use super::isa::Avx2;
use super::loops::{InfinityLoops, Loop};
use super::ops::IsInfinity;
use super::{slice, stream};

/// AVX2's IS_INFINITY loops ([`super::loops::is_infinity`] builds the kernels): float32,
/// float64, float16 and bfloat16.
///
/// Callers hand its kernels out only where AVX2 was detected, as for
/// [`super::isa::Avx2`].
pub(super) struct Loops;

impl<F: Block> InfinityLoops<F> for Loops {
    type Loop<const MODE: u32> = Infinity<F, MODE>;
}

/// IS_INFINITY in `MODE` over `F`, 32 elements a step.
pub(super) struct Infinity<F, const MODE: u32>(PhantomData<F>);

impl<F: Block, const MODE: u32> Loop for Infinity<F, MODE> {
    type Map = IsInfinity<F, MODE>;
    type Isa = Avx2;

    fn map(src: &[F::Bits], dst: &mut [u8]) {
        map::<F, MODE>(src, dst);
    }

    fn map_stream(src: &[F::Bits], dst: &mut [u8]) -> bool {
        map_stream::<F, MODE>(src, dst)
    }
}

/// [`map_avx2`] behind a safe signature.
#[allow(unsafe_code)]
fn map<F: Block, const MODE: u32>(src: &[F::Bits], dst: &mut [u8]) {
    // SAFETY: these kernels are only selected for `InstructionSet::Avx2`, which
    // `isa::selected()` returns only after `is_x86_feature_detected!("avx2")`.
    unsafe { map_avx2::<F, MODE>(src, dst) }
}

/// [`map_stream_avx2`] behind a safe signature; always `true` (done), as for
/// [`Loop::map_stream`].
#[allow(unsafe_code)]
fn map_stream<F: Block, const MODE: u32>(src: &[F::Bits], dst: &mut [u8]) -> bool {
    // SAFETY: as in `map`, AVX2 was detected before these kernels were selected.
    unsafe { map_stream_avx2::<F, MODE>(src, dst) };
    true
}

/// IS_INFINITY in `MODE` of the first `n` elements of `src` into `dst`, `n` the shorter
/// length, 32 elements per step.
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
fn map_avx2<F: Block, const MODE: u32>(src: &[F::Bits], dst: &mut [u8]) {
    let (mask, value) = IsInfinity::<F, MODE>::test();
    let len = src.len().min(dst.len());
    let (src, dst) = (&src[..len], &mut dst[..len]);
    let mut s = src.chunks_exact(32);
    let mut d = dst.chunks_exact_mut(32);
    for (s, d) in (&mut s).zip(&mut d) {
        // SAFETY: AVX2 is enabled on this function.
        let v = unsafe { F::block(to_array(s), mask, value) };
        store(to_array_mut(d), v);
    }
    slice::map::<IsInfinity<F, MODE>>(s.remainder(), d.into_remainder());
}

/// [`map_avx2`] writing each 64-byte aligned output line with two streaming stores; the
/// unaligned head and the tail use plain stores. Ends with `sfence`.
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
fn map_stream_avx2<F: Block, const MODE: u32>(src: &[F::Bits], dst: &mut [u8]) {
    let (mask, value) = IsInfinity::<F, MODE>::test();
    let len = src.len().min(dst.len());
    let head = dst.as_ptr().align_offset(64).min(len);
    map_avx2::<F, MODE>(&src[..head], &mut dst[..head]);
    let body = (len - head) / 64 * 64;
    let (s, d) = (&src[head..head + body], &mut dst[head..head + body]);
    for (s, d) in s.chunks_exact(64).zip(d.chunks_exact_mut(64)) {
        stream::prefetch_ahead(s.as_ptr().cast(), std::mem::size_of_val(s));
        let (s0, s1) = s.split_at(32);
        // SAFETY: AVX2 is enabled on this function.
        let (v0, v1) = unsafe {
            (
                F::block(to_array(s0), mask, value),
                F::block(to_array(s1), mask, value),
            )
        };
        let to = d.as_mut_ptr().cast::<__m256i>();
        // SAFETY: `d` is 64 bytes starting 64-byte aligned (the head was peeled above),
        // so both 32-byte halves are in bounds and 32-byte aligned as
        // `_mm256_stream_si256` requires. AVX2 is enabled on this function.
        unsafe {
            _mm256_stream_si256(to, v0);
            _mm256_stream_si256(to.add(1), v1);
        }
    }
    map_avx2::<F, MODE>(&src[head + body..len], &mut dst[head + body..len]);
    _mm_sfence();
}

/// A float format whose IS_INFINITY test runs in AVX2 registers, 32 elements at a time.
#[allow(unsafe_code)]
trait Block: FloatFormat {
    /// The outputs for `x`: byte `i` is 1 where `x[i] & mask == value`, else 0.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2.
    unsafe fn block(x: &[Self::Bits; 32], mask: Self::Bits, value: Self::Bits) -> __m256i;
}

#[allow(unsafe_code)]
impl Block for F32 {
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn block(x: &[u32; 32], mask: u32, value: u32) -> __m256i {
        let (mask, value) = (
            _mm256_set1_epi32(mask as i32),
            _mm256_set1_epi32(value as i32),
        );
        let v: &[[u8; 32]; 4] = bytemuck::cast_ref(x);
        let eq = |i: usize| _mm256_cmpeq_epi32(_mm256_and_si256(load(&v[i]), mask), value);
        // Lane l of each pack holds lane l of its first operand, then of its second:
        // the bytes come out as element quads 0 2 4 6 | 1 3 5 7.
        let words = (
            _mm256_packs_epi32(eq(0), eq(1)),
            _mm256_packs_epi32(eq(2), eq(3)),
        );
        let bytes = _mm256_packs_epi16(words.0, words.1);
        let ordered = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        ones(ordered)
    }
}

#[allow(unsafe_code)]
impl Block for F64 {
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn block(x: &[u64; 32], mask: u64, value: u64) -> __m256i {
        let (mask, value) = (
            _mm256_set1_epi64x(mask as i64),
            _mm256_set1_epi64x(value as i64),
        );
        let v: &[[u8; 32]; 8] = bytemuck::cast_ref(x);
        let eq = |i: usize| _mm256_cmpeq_epi64(_mm256_and_si256(load(&v[i]), mask), value);
        // Each qword result is all ones or zero, so a dword blend of two halves the width
        // without a shuffle: dword 2k from the first vector's element k, 2k + 1 from the
        // second's.
        let pair = |i: usize| _mm256_blend_epi32::<0b1010_1010>(eq(i), eq(i + 1));
        let words = (
            _mm256_packs_epi32(pair(0), pair(2)),
            _mm256_packs_epi32(pair(4), pair(6)),
        );
        // Lane 0 now holds elements 0 4 1 5 8 12 9 13 | 16 20 17 21 24 28 25 29, lane 1
        // the same plus 2. Swapping the middle qwords gives each lane its own 16
        // elements, which the byte shuffle puts in order.
        let bytes = _mm256_packs_epi16(words.0, words.1);
        let lanes = _mm256_permute4x64_epi64::<0b11_01_10_00>(bytes);
        let order = _mm256_setr_epi8(
            0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15, //
            0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15,
        );
        ones(_mm256_shuffle_epi8(lanes, order))
    }
}

#[allow(unsafe_code)]
impl Block for F16 {
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn block(x: &[u16; 32], mask: u16, value: u16) -> __m256i {
        block16(x, mask, value)
    }
}

#[allow(unsafe_code)]
impl Block for BF16 {
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn block(x: &[u16; 32], mask: u16, value: u16) -> __m256i {
        block16(x, mask, value)
    }
}

/// [`Block::block`] for 16-bit formats.
#[inline]
#[target_feature(enable = "avx2")]
fn block16(x: &[u16; 32], mask: u16, value: u16) -> __m256i {
    let (mask, value) = (
        _mm256_set1_epi16(mask as i16),
        _mm256_set1_epi16(value as i16),
    );
    let v: &[[u8; 32]; 2] = bytemuck::cast_ref(x);
    let eq = |i: usize| _mm256_cmpeq_epi16(_mm256_and_si256(load(&v[i]), mask), value);
    // The pack gives elements 0-7 16-23 | 8-15 24-31; swapping the middle qwords orders
    // them.
    let bytes = _mm256_packs_epi16(eq(0), eq(1));
    ones(_mm256_permute4x64_epi64::<0b11_01_10_00>(bytes))
}

/// All-ones or zero bytes to 1 or 0.
#[inline]
#[target_feature(enable = "avx2")]
fn ones(mask: __m256i) -> __m256i {
    _mm256_and_si256(mask, _mm256_set1_epi8(1))
}

/// An unaligned 32-byte load.
#[inline]
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
fn load(x: &[u8; 32]) -> __m256i {
    // SAFETY: `x` is 32 readable bytes, and this load has no alignment requirement.
    unsafe { _mm256_loadu_si256(x.as_ptr().cast()) }
}

/// An unaligned 32-byte store.
#[inline]
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
fn store(d: &mut [u8; 32], v: __m256i) {
    // SAFETY: `d` is 32 writable bytes, and this store has no alignment requirement.
    unsafe { _mm256_storeu_si256(d.as_mut_ptr().cast(), v) }
}

/// A 32-element chunk from `chunks_exact(32)` as an array.
#[inline(always)]
fn to_array<T>(s: &[T]) -> &[T; 32] {
    s.try_into().expect("a chunk of 32")
}

/// [`to_array`] for output chunks.
#[inline(always)]
fn to_array_mut(d: &mut [u8]) -> &mut [u8; 32] {
    d.try_into().expect("a chunk of 32")
}
