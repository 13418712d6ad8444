//! IS_INFINITY on wasm32 with SIMD128 (built with `-C target-feature=+simd128`; see
//! [`super::sign_wasm`] for why the choice is made at build time).
//!
//! Each step tests 16 elements in lanes of their own width, one masked compare per
//! vector (`x & mask == value`, [`IsInfinity::test`]: bit tests only), and narrows the
//! all-ones or zero results to one 16-byte output vector with `i8x16.narrow_i16x8_s`
//! alone: a saturating narrow keeps -1 and 0, and a mask of 32 or 64 bits is two or four
//! equal 16-bit lanes, so each narrow halves the width of two mask vectors. Float16 and
//! bfloat16 take 1 narrow per 16 outputs, float32 3 and float64 7; an `and` with 1 turns
//! -1 into the output's 1. (`i16x8.narrow_i32x4_s` would do the same for 32-bit lanes,
//! but LLVM turns it into a clamp of each input and a shuffle: 5 operations for 1.)
//! Remainders of fewer than 16 elements use the generic [`slice::map`] loop, and the
//! streaming entry point is the plain one, as WebAssembly has no non-temporal stores.

use std::arch::wasm32::{
    i16x8_eq, i16x8_splat, i32x4_eq, i32x4_splat, i64x2_eq, i64x2_splat, i8x16_narrow_i16x8,
    u8x16_splat, v128, v128_and, v128_load, v128_store,
};
use std::marker::PhantomData;

use super::formats::{FloatFormat, BF16, F16, F32, F64};
use super::isa::Portable;
use super::loops::{InfinityLoops, Loop};
use super::ops::IsInfinity;
use super::slice;

/// SIMD128's IS_INFINITY loops ([`super::loops::is_infinity`] builds the kernels):
/// float32, float64, float16 and bfloat16.
pub(super) struct Loops;

impl<F: Block> InfinityLoops<F> for Loops {
    type Loop<const MODE: u32> = Infinity<F, MODE>;
}

/// IS_INFINITY in `MODE` over `F`, 16 elements a step.
pub(super) struct Infinity<F, const MODE: u32>(PhantomData<F>);

impl<F: Block, const MODE: u32> Loop for Infinity<F, MODE> {
    type Map = IsInfinity<F, MODE>;
    type Isa = Portable;

    fn map(src: &[F::Bits], dst: &mut [u8]) {
        map::<F, MODE>(src, dst);
    }
}

/// IS_INFINITY of `src` into `dst` (the shorter length), 16 elements a step. As in
/// [`super::sign_wasm`]'s loop, the steps index both slices through a mask of all ones
/// hidden from the optimizer, which keeps the loads' and the store's offsets foldable.
#[allow(unsafe_code)]
fn map<F: Block, const MODE: u32>(src: &[F::Bits], dst: &mut [u8]) {
    let (mask, value) = IsInfinity::<F, MODE>::test();
    let n = src.len().min(dst.len());
    let body = n / 16 * 16;
    let index_mask = std::hint::black_box(usize::MAX);
    let mut i = 0;
    while i < body {
        let at = i & index_mask;
        // SAFETY: `at` is `i`, and `i + 16 <= body <= n`: `src` holds 16 readable
        // elements and `dst` 16 writable bytes from `at`. `v128_store` needs no
        // alignment.
        unsafe {
            let masks = F::block(src.as_ptr().add(at), mask, value);
            v128_store(
                dst.as_mut_ptr().add(at).cast(),
                v128_and(masks, u8x16_splat(1)),
            );
        }
        i += 16;
    }
    slice::map::<IsInfinity<F, MODE>>(&src[body..n], &mut dst[body..n]);
}

/// A format whose 16-element blocks are tested in SIMD128 lanes of its width.
trait Block: FloatFormat {
    /// 16 bytes, each all ones where `element & mask == value` for the element at its
    /// index among the 16 at `src`, and 0 elsewhere.
    ///
    /// # Safety
    ///
    /// 16 elements at `src` are readable (at any alignment).
    #[allow(unsafe_code)]
    unsafe fn block(src: *const Self::Bits, mask: Self::Bits, value: Self::Bits) -> v128;
}

/// [`Block::block`] of 16-bit elements: two compares, one narrow.
///
/// # Safety
///
/// As for [`Block::block`].
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn block_16(src: *const u16, mask: u16, value: u16) -> v128 {
    let (mask, value) = (i16x8_splat(mask as i16), i16x8_splat(value as i16));
    // SAFETY: `k < 2`: elements `8 * k .. 8 * k + 8` are among the 16 readable ones.
    let test =
        |k: usize| unsafe { i16x8_eq(v128_and(v128_load(src.add(8 * k).cast()), mask), value) };
    i8x16_narrow_i16x8(test(0), test(1))
}

/// [`Block::block`] of 32-bit elements: four compares, three narrows (the first two take
/// each 32-bit mask as two equal 16-bit lanes).
///
/// # Safety
///
/// As for [`Block::block`].
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn block_32(src: *const u32, mask: u32, value: u32) -> v128 {
    let (mask, value) = (i32x4_splat(mask as i32), i32x4_splat(value as i32));
    // SAFETY: `k < 4`: elements `4 * k .. 4 * k + 4` are among the 16 readable ones.
    let test =
        |k: usize| unsafe { i32x4_eq(v128_and(v128_load(src.add(4 * k).cast()), mask), value) };
    i8x16_narrow_i16x8(
        i8x16_narrow_i16x8(test(0), test(1)),
        i8x16_narrow_i16x8(test(2), test(3)),
    )
}

/// [`Block::block`] of 64-bit elements: eight compares, seven narrows (the first four
/// take each 64-bit mask as four equal 16-bit lanes, the next two as two).
///
/// # Safety
///
/// As for [`Block::block`].
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn block_64(src: *const u64, mask: u64, value: u64) -> v128 {
    let (mask, value) = (i64x2_splat(mask as i64), i64x2_splat(value as i64));
    // SAFETY: `k < 8`: elements `2 * k .. 2 * k + 2` are among the 16 readable ones.
    let test =
        |k: usize| unsafe { i64x2_eq(v128_and(v128_load(src.add(2 * k).cast()), mask), value) };
    let quarter = |k: usize| i8x16_narrow_i16x8(test(2 * k), test(2 * k + 1));
    i8x16_narrow_i16x8(
        i8x16_narrow_i16x8(quarter(0), quarter(1)),
        i8x16_narrow_i16x8(quarter(2), quarter(3)),
    )
}

macro_rules! block {
    ($f:ty, $bits:ty, $block:ident) => {
        impl Block for $f {
            #[inline(always)]
            #[allow(unsafe_code)]
            unsafe fn block(src: *const $bits, mask: $bits, value: $bits) -> v128 {
                // SAFETY: as the caller guarantees.
                unsafe { $block(src, mask, value) }
            }
        }
    };
}

block!(F64, u64, block_64);
block!(F32, u32, block_32);
block!(F16, u16, block_16);
block!(BF16, u16, block_16);
