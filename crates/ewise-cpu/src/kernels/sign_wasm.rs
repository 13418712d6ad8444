//! SIGN on wasm32 with SIMD128, 16 bytes (one `v128`) per vector, eight vectors a step.
//!
//! WebAssembly has no run-time feature detection: a module either uses SIMD128
//! everywhere or nowhere, so these kernels exist only in builds with
//! `-C target-feature=+simd128`, and a build without it (for runtimes without SIMD) runs
//! the scalar loops of [`super::isa::Portable`].
//!
//! WebAssembly operations per vector, as LLVM emits them (V8, Node 20 on x86-64 with
//! AVX, runs each as one instruction):
//!
//! | data type | NaN -> +0 | NaN propagates |
//! |---|---:|---:|
//! | float32, float64 | 5 | 7 |
//! | float16, bfloat16 | 6 | 7 |
//! | int8, int16, int32 | 2 | 2 |
//! | int64 | 3 | 3 |
//! | uint8, uint16, uint32 | 1 | 1 |
//! | uint64 | 2 | 2 |
//!
//! - floats, in integer lanes of their width, with `magnitude = x & MAGNITUDE`: the
//!   lanes that are neither ±0 nor NaN get `(x | ONE) & (SIGN | ONE)`, ±1 with the
//!   input's sign.
//! - float32 and float64, NaN -> +0: one float compare, `magnitude > 0`, is false
//!   exactly for ±0 and NaN. WebAssembly's float compares are IEEE 754's, subnormals
//!   included, but an engine could run them with denormals flushed to zero (x86-64's
//!   DAZ, Arm's FZ), so each call first compares the smallest subnormals with zero and
//!   takes the portable integer loops unless both are above it.
//! - float16 and bfloat16, NaN -> +0 (SIMD128 has no 16-bit float compares):
//!   `magnitude + (SIGN - 1)` (`magnitude - 1` with its top bit flipped) is below
//!   `SIGN + INFINITY` as a signed lane exactly when `1 <= magnitude <= INFINITY`.
//! - every float type, NaN propagates, in integer compares alone: the result is
//!   `(x | ONE) & keep`, where `keep` is `SIGN | ONE` where `magnitude > 0`, every bit
//!   where also `magnitude > INFINITY` (NaN: its exponent bits hold ONE's, so
//!   `x | ONE` is `x`), and none for ±0. (`magnitude` has no sign bit, so these
//!   compares are signed ones: i64x2 has no unsigned compares, and engines build the
//!   others from several instructions.)
//! - signed 8- to 32-bit integers: `max(min(x, 1), -1)`; 64-bit (no i64x2 `min` or
//!   `max`): the `x < 0` mask (-1) minus the `x > 0` mask.
//! - unsigned 8- to 32-bit: `min_u(x, 1)`; 64-bit: the `x == 0` mask (-1) plus 1.
//!
//! LLVM rewrites SIMD128 intrinsics into its own canonical forms, as it does NEON's
//! (`sign_neon.rs`), and WebAssembly has no stable inline assembly. With constants it
//! could see, `min_u(x, 1)` came back as `ne(x, 0) & 1`, the signed clamps as two
//! compares with 0 and a subtraction, int64's masks as an arithmetic shift by 63 (which
//! V8 emulates with five x86-64 instructions) or'ed with `ne(x, 0) & 1`, and the
//! propagating forms' compares of the magnitude as `ne(magnitude, 0)` (in V8, `eq` and
//! an inversion) and an unsigned `gt_u`. So the constants these forms combine with the
//! lanes reach the loop through [`std::hint::black_box`], once per call, and the
//! operations stay as listed.
//!
//! SIGN is idempotent, so the last elements of a call (fewer than a vector's) are the
//! last vector's, overlapping the one before and recomputed in place. The streaming
//! entry points are the plain ones: WebAssembly has no non-temporal stores
//! ([`super::stream::NON_TEMPORAL`]).

use std::arch::wasm32::{
    f32x4_gt, f32x4_splat, f64x2_gt, f64x2_splat, i16x8_add, i16x8_gt, i16x8_lt, i16x8_max,
    i16x8_min, i16x8_splat, i32x4_add, i32x4_all_true, i32x4_gt, i32x4_lt, i32x4_max, i32x4_min,
    i32x4_splat, i64x2_add, i64x2_eq, i64x2_gt, i64x2_lt, i64x2_splat, i64x2_sub, i8x16_max,
    i8x16_min, i8x16_splat, u16x8_min, u16x8_splat, u32x4_min, u32x4_splat, u64x2_splat, u8x16_min,
    u8x16_splat, v128, v128_and, v128_load, v128_or, v128_store,
};
use std::marker::PhantomData;

use ewise_core::{DataType, NanPolicy};

use super::formats::{FloatFormat, Word, BF16, F16, F32, F64};
use super::isa::{Isa, Portable};
use super::loops::{self, InPlace, Loop};
use super::ops::{Map, SignFloat, SignSigned, SignUnsigned};
use super::Kernel;

/// The SIMD128 SIGN kernel for a data type and NaN policy; `None` for types SIGN does
/// not take.
pub(super) fn kernel(data_type: DataType, policy: NanPolicy) -> Option<Kernel> {
    sign_kernel!(data_type, policy, |M| loops::in_place::<Vectors<M>>())
}

/// `M`'s loop in SIMD128 vectors.
struct Vectors<M>(PhantomData<M>);

impl<M: Simd> Loop for Vectors<M> {
    type Map = M;
    type Isa = Portable;

    fn map(src: &[M::In], dst: &mut [M::In]) {
        map::<M>(src, dst);
    }
}

impl<M: Simd> InPlace for Vectors<M> {
    fn map_in_place(data: &mut [M::In]) {
        run_in_place::<M>(data);
    }
}

/// Whether `M`'s vector form gives exact results in this engine.
fn usable<M: Simd>() -> bool {
    !M::COMPARES_FLOATS || compares_are_exact()
}

/// Whether float compares see subnormals as themselves here: the smallest float32 and
/// float64 subnormals compare above zero.
fn compares_are_exact() -> bool {
    let [tiny_f32, tiny_f64, zero] = std::hint::black_box([
        f32x4_splat(f32::from_bits(1)),
        f64x2_splat(f64::from_bits(1)),
        f32x4_splat(0.0),
    ]);
    i32x4_all_true(v128_and(f32x4_gt(tiny_f32, zero), f64x2_gt(tiny_f64, zero)))
}

/// SIGN of `src` into `dst` (the shorter length).
#[allow(unsafe_code)]
fn map<M: Simd>(src: &[M::In], dst: &mut [M::In]) {
    if !usable::<M>() {
        return Portable::map::<M>(src, dst);
    }
    let n = src.len().min(dst.len());
    // SAFETY: `src` holds `n` readable and `dst` `n` writable elements, in distinct
    // slices.
    unsafe { run::<M>(src.as_ptr(), dst.as_mut_ptr(), n) }
}

/// SIGN of `data` in place.
#[allow(unsafe_code)]
fn run_in_place<M: Simd>(data: &mut [M::In]) {
    if !usable::<M>() {
        return Portable::map_in_place::<M>(data);
    }
    let p = data.as_mut_ptr();
    // SAFETY: `p` holds `data.len()` elements, read and written; `run` reads each vector
    // or element before writing it at the same place.
    unsafe { run::<M>(p, p, data.len()) }
}

/// Vectors per step of [`run`].
const STEP: usize = 8;

/// SIGN of the `n` elements at `src` into the `n` at `dst`, which may be the same
/// memory (in place) but otherwise must not overlap: [`STEP`] vectors a step, then
/// single vectors, then, for the last elements, the vector that ends with them (or
/// those elements one at a time, through [`Map::apply`], where `n` is less than a
/// vector).
///
/// The steps index both pointers through `mask`, all ones but hidden from the
/// optimizer: LLVM's loop strength reduction otherwise rewrites the addresses as adds
/// without their no-wrap flag, which WebAssembly cannot fold into a load's or store's
/// offset, and V8 then computes each of a step's 16 addresses with an instruction of
/// its own.
///
/// # Safety
///
/// `src` must be readable and `dst` writable for `n` elements.
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn run<M: Simd>(src: *const M::In, dst: *mut M::In, n: usize) {
    let lanes = 16 / std::mem::size_of::<M::In>();
    let (k, mask) = std::hint::black_box((M::constants(), usize::MAX));
    let steps = n / (STEP * lanes) * (STEP * lanes);
    let mut i = 0;
    while i < steps {
        let at = i & mask;
        // SAFETY: elements `at .. at + STEP * lanes` are in bounds (`at` is `i`), and all
        // the step's vectors are loaded before any is stored. The array reads and
        // writes need no alignment.
        unsafe {
            let mut step = src.add(at).cast::<[v128; STEP]>().read_unaligned();
            for v in &mut step {
                *v = M::vector(*v, k);
            }
            dst.add(at).cast::<[v128; STEP]>().write_unaligned(step);
        }
        i += STEP * lanes;
    }
    if n < lanes {
        for i in 0..n {
            // SAFETY: `i < n`; the element is read before it is written.
            unsafe { *dst.add(i) = M::apply(*src.add(i)) }
        }
        return;
    }
    while i < n {
        // The last vector ends at `n`, over elements that the vector before may have
        // written already: SIGN of their SIGN is the same bits.
        let at = i.min(n - lanes);
        // SAFETY: `lanes <= n`, so elements `at .. at + lanes` are in bounds; the vector
        // is loaded before it is stored. `v128_load` and `v128_store` need no alignment.
        unsafe {
            v128_store(
                dst.add(at).cast(),
                M::vector(v128_load(src.add(at).cast()), k),
            )
        };
        i = at + lanes;
    }
}

/// The constant vectors a [`Simd::vector`] form combines with the lanes.
type Constants = [v128; 5];

/// A SIGN whose vector form gives the bits of [`Map::apply`] on each lane of a `v128`.
trait Simd: Map<Out = <Self as Map>::In> {
    /// Whether [`Simd::vector`] compares floats ([`compares_are_exact`]).
    const COMPARES_FLOATS: bool;

    /// The constants [`Simd::vector`] takes, which [`run`] hides from the optimizer
    /// (see the module's notes).
    fn constants() -> Constants;

    /// SIGN of each lane, given [`Simd::constants`].
    fn vector(x: v128, constants: Constants) -> v128;
}

/// `impl Simd for $m`: `constants` gives `$k`, and `vector` is `$body` with the lanes
/// bound to `$x` and the constants matched by `$kp`.
macro_rules! simd {
    ([$($generics:tt)*] $m:ty, $floats:expr, $k:expr, |$x:ident, $kp:pat_param| $body:expr) => {
        impl<$($generics)*> Simd for $m {
            const COMPARES_FLOATS: bool = $floats;

            #[inline(always)]
            fn constants() -> Constants {
                $k
            }

            #[inline(always)]
            fn vector($x: v128, $kp: Constants) -> v128 {
                $body
            }
        }
    };
}

/// `k`, then zeros.
fn pad<const N: usize>(k: [v128; N]) -> Constants {
    let mut all = [u8x16_splat(0); 5];
    all[..N].copy_from_slice(&k);
    all
}

/// SIMD128 operations on integer lanes of a float format's width (signed compares).
trait Lanes: Word {
    fn splat(self) -> v128;
    fn add_lanes(a: v128, b: v128) -> v128;
    fn lt_lanes(a: v128, b: v128) -> v128;
    fn gt_lanes(a: v128, b: v128) -> v128;
}

/// [`Lanes`] of float32 or float64 values, also compared as floats.
trait FloatLanes: Lanes {
    fn float_gt(a: v128, b: v128) -> v128;
}

macro_rules! lanes {
    ($bits:ty, $splat:ident, $add:ident, $lt:ident, $gt:ident) => {
        impl Lanes for $bits {
            #[inline(always)]
            fn splat(self) -> v128 {
                $splat(self as _)
            }
            #[inline(always)]
            fn add_lanes(a: v128, b: v128) -> v128 {
                $add(a, b)
            }
            #[inline(always)]
            fn lt_lanes(a: v128, b: v128) -> v128 {
                $lt(a, b)
            }
            #[inline(always)]
            fn gt_lanes(a: v128, b: v128) -> v128 {
                $gt(a, b)
            }
        }
    };
}

lanes!(u64, i64x2_splat, i64x2_add, i64x2_lt, i64x2_gt);
lanes!(u32, i32x4_splat, i32x4_add, i32x4_lt, i32x4_gt);
lanes!(u16, i16x8_splat, i16x8_add, i16x8_lt, i16x8_gt);

impl FloatLanes for u64 {
    #[inline(always)]
    fn float_gt(a: v128, b: v128) -> v128 {
        f64x2_gt(a, b)
    }
}

impl FloatLanes for u32 {
    #[inline(always)]
    fn float_gt(a: v128, b: v128) -> v128 {
        f32x4_gt(a, b)
    }
}

/// The constants of the float forms of `F`: `[MAGNITUDE, low, high, SIGN | ONE, ONE]`,
/// where `low` and `high` are `SIGN - 1` and `SIGN + INFINITY` for [`range`], and 0
/// and `INFINITY` for [`compare`] and [`propagate`].
fn float_constants<F: FloatFormat<Bits: Lanes>>(range_test: bool) -> Constants {
    let (low, high) = match range_test {
        true => (F::SIGN.wrapping_sub(F::Bits::UNIT), F::SIGN.or(F::INFINITY)),
        false => (F::Bits::ZERO, F::INFINITY),
    };
    [
        F::MAGNITUDE.splat(),
        low.splat(),
        high.splat(),
        F::SIGN.or(F::ONE).splat(),
        F::ONE.splat(),
    ]
}

/// Float SIGN with NaN -> +0 by the integer range test of the magnitude (the module's
/// notes).
#[inline(always)]
fn range<L: Lanes>(x: v128, [magnitude, bias, bound, sign_one, one]: Constants) -> v128 {
    let ordinary = L::lt_lanes(L::add_lanes(v128_and(x, magnitude), bias), bound);
    v128_and(v128_and(v128_or(x, one), sign_one), ordinary)
}

/// Float SIGN with NaN -> +0 by a float compare of the magnitude with zero (the
/// module's notes).
#[inline(always)]
fn compare<L: FloatLanes>(x: v128, [magnitude, zero, _, sign_one, one]: Constants) -> v128 {
    let ordinary = L::float_gt(v128_and(x, magnitude), zero);
    v128_and(v128_and(v128_or(x, one), sign_one), ordinary)
}

/// Float SIGN with NaN propagated, in integer compares (the module's notes).
#[inline(always)]
fn propagate<L: Lanes>(x: v128, [magnitude, zero, infinity, sign_one, one]: Constants) -> v128 {
    let magnitude = v128_and(x, magnitude);
    let keep = v128_and(
        L::gt_lanes(magnitude, zero),
        v128_or(sign_one, L::gt_lanes(magnitude, infinity)),
    );
    v128_and(v128_or(x, one), keep)
}

// Floats, NaN -> +0: a float compare for float32 and float64, the range test for the
// 16-bit formats.
simd!([] SignFloat<F64, false>, true, float_constants::<F64>(false),
    |x, k| compare::<u64>(x, k));
simd!([] SignFloat<F32, false>, true, float_constants::<F32>(false),
    |x, k| compare::<u32>(x, k));
simd!([] SignFloat<F16, false>, false, float_constants::<F16>(true),
    |x, k| range::<u16>(x, k));
simd!([] SignFloat<BF16, false>, false, float_constants::<BF16>(true),
    |x, k| range::<u16>(x, k));

// Floats, NaN propagates.
simd!([F: FloatFormat<Bits: Lanes>] SignFloat<F, true>, false, float_constants::<F>(false),
    |x, k| propagate::<F::Bits>(x, k));

// Signed: clamped to -1 ..= 1; 64-bit lanes, the `x < 0` mask minus the `x > 0` mask.
simd!([] SignSigned<i8>, false, pad([i8x16_splat(1), i8x16_splat(-1)]),
    |x, [one, minus_one, ..]| i8x16_max(i8x16_min(x, one), minus_one));
simd!([] SignSigned<i16>, false, pad([i16x8_splat(1), i16x8_splat(-1)]),
    |x, [one, minus_one, ..]| i16x8_max(i16x8_min(x, one), minus_one));
simd!([] SignSigned<i32>, false, pad([i32x4_splat(1), i32x4_splat(-1)]),
    |x, [one, minus_one, ..]| i32x4_max(i32x4_min(x, one), minus_one));
simd!([] SignSigned<i64>, false, pad([i64x2_splat(0)]),
    |x, [zero, ..]| i64x2_sub(i64x2_lt(x, zero), i64x2_gt(x, zero)));

// Unsigned: clamped to 0 ..= 1; 64-bit lanes, the `x == 0` mask (-1) plus 1.
simd!([] SignUnsigned<u8>, false, pad([u8x16_splat(1)]), |x, [one, ..]| u8x16_min(x, one));
simd!([] SignUnsigned<u16>, false, pad([u16x8_splat(1)]), |x, [one, ..]| u16x8_min(x, one));
simd!([] SignUnsigned<u32>, false, pad([u32x4_splat(1)]), |x, [one, ..]| u32x4_min(x, one));
simd!([] SignUnsigned<u64>, false, pad([u64x2_splat(0), u64x2_splat(1)]),
    |x, [zero, one, ..]| i64x2_add(i64x2_eq(x, zero), one));

#[cfg(test)]
mod tests {
    use super::super::sign_cases::{all_cases, check, check_placements};
    use super::*;

    #[test]
    fn every_type_matches_the_reference_at_every_length_and_offset() {
        for (t, cases) in all_cases(kernel) {
            check(kernel, t, &cases);
            check_placements(kernel, t);
        }
    }

    /// The probe that guards the float compares finds them exact under Node.
    #[test]
    fn float_compares_are_exact_here() {
        assert!(compares_are_exact());
    }
}
