//! SIGN on wasm32 with SIMD128, 16 bytes (one `v128`) per step.
//!
//! WebAssembly has no run-time feature detection: a module either uses SIMD128
//! everywhere or nowhere, so these kernels exist only in builds with
//! `-C target-feature=+simd128`, and a build without it (for runtimes without SIMD) runs
//! the scalar loops of [`super::isa::Portable`].
//!
//! Every test is on the elements' integer bits (docs/SEMANTICS.md section 2.3): no float
//! compare decides a result, so NaN payloads, subnormals and the engine's float
//! handling change nothing. WebAssembly operations per vector, as LLVM emits them:
//!
//! | data type | NaN -> +0 | NaN propagates |
//! |---|---:|---:|
//! | float32, float64, float16, bfloat16 | 6 | 9 |
//! | int8, int16, int32 | 2 | 2 |
//! | int64 | 3 | 3 |
//! | uint8, uint16, uint32 | 1 | 1 |
//! | uint64 | 2 | 2 |
//!
//! - floats, in integer lanes of their width: with `magnitude = x & MAGNITUDE`,
//!   `magnitude + (SIGN - 1)` (`magnitude - 1` with its top bit flipped) is below
//!   `SIGN + INFINITY` as a signed lane exactly when `1 <= magnitude <= INFINITY`: the
//!   lanes that are neither ±0 nor NaN, in one signed compare (i64x2 has no unsigned
//!   compares, and engines build the others from several instructions). `x & SIGN | ONE`
//!   is ±1 with the input's sign, kept in those lanes. When NaN propagates, a
//!   `bitselect` keeps the input in the other lanes (NaN and ±0), and the lanes whose
//!   magnitude equals 0 are cleared.
//! - signed 8- to 32-bit integers: `max(min(x, 1), -1)`; 64-bit (no i64x2 `min` or
//!   `max`): the `x < 0` mask (-1) minus the `x > 0` mask.
//! - unsigned 8- to 32-bit: `min_u(x, 1)`; 64-bit: the `x == 0` mask (-1) plus 1.
//!
//! LLVM rewrites SIMD128 intrinsics into its own canonical forms, as it does NEON's
//! (`sign_neon.rs`), and WebAssembly has no stable inline assembly. With constants it
//! could see, `min_u(x, 1)` came back as `ne(x, 0) & 1`, the signed clamps as two
//! compares with 0 and a subtraction, int64's masks as an arithmetic shift by 63 (which
//! V8 emulates with five x86-64 instructions) or'ed with `ne(x, 0) & 1`, and the
//! inverted ±0 mask as `ne` (in V8, `eq` and an inversion). So the constants these
//! forms combine with the lanes (1, -1, 0, all ones) reach the loop through
//! [`std::hint::black_box`], once per call, and the operations stay as listed; V8 (Node
//! 20 on x86-64 with AVX) runs each as one instruction, and `bitselect` as three.
//!
//! The streaming entry points are the plain ones: WebAssembly has no non-temporal
//! stores ([`super::stream::NON_TEMPORAL`]).

use std::arch::wasm32::{
    i16x8_add, i16x8_eq, i16x8_lt, i16x8_max, i16x8_min, i16x8_splat, i32x4_add, i32x4_eq,
    i32x4_lt, i32x4_max, i32x4_min, i32x4_splat, i64x2_add, i64x2_eq, i64x2_gt, i64x2_lt,
    i64x2_splat, i64x2_sub, i8x16_max, i8x16_min, i8x16_splat, u16x8_min, u16x8_splat, u32x4_min,
    u32x4_splat, u64x2_splat, u8x16_min, u8x16_splat, v128, v128_and, v128_bitselect, v128_load,
    v128_or, v128_store, v128_xor,
};

use ewise_core::{DataType, NanPolicy};

use super::formats::{FloatFormat, BF16, F16, F32, F64};
use super::isa::{Isa, Portable};
use super::ops::{Map, SignFloat, SignSigned, SignUnsigned};
use super::{slice, Kernel};

/// The SIMD128 SIGN kernel for a data type and NaN policy; `None` for types SIGN does
/// not take.
pub(super) fn kernel(data_type: DataType, policy: NanPolicy) -> Option<Kernel> {
    sign_kernel!(data_type, policy, |M| for_map::<M>())
}

fn for_map<M: Simd>() -> Kernel {
    Kernel {
        in_size: std::mem::size_of::<M::In>(),
        out_size: std::mem::size_of::<M::In>(),
        map: map_bytes::<M>,
        map_stream: map_bytes::<M>,
        map_in_place: Some(map_bytes_in_place::<M>),
        map_in_place_stream: Some(map_bytes_in_place::<M>),
        transpose: <Portable as Isa>::transpose,
    }
}

fn map_bytes<M: Simd>(src: &[u8], dst: &mut [u8]) {
    slice::map_bytes_with::<M>(src, dst, map::<M>);
}

fn map_bytes_in_place<M: Simd>(data: &mut [u8]) {
    slice::map_bytes_in_place_with::<M>(data, run_in_place::<M>);
}

/// SIGN of `src` into `dst` (the shorter length).
#[allow(unsafe_code)]
fn map<M: Simd>(src: &[M::In], dst: &mut [M::In]) {
    let n = src.len().min(dst.len());
    // SAFETY: `src` holds `n` readable and `dst` `n` writable elements, in distinct
    // slices.
    unsafe { run::<M>(src.as_ptr(), dst.as_mut_ptr(), n) }
}

/// SIGN of `data` in place.
#[allow(unsafe_code)]
fn run_in_place<M: Simd>(data: &mut [M::In]) {
    let p = data.as_mut_ptr();
    // SAFETY: `p` holds `data.len()` elements, read and written; `run` reads each vector
    // or element before writing it at the same place.
    unsafe { run::<M>(p, p, data.len()) }
}

/// SIGN of the `n` elements at `src` into the `n` at `dst`, which may be the same
/// memory (in place) but otherwise must not overlap: four vectors a step, then single
/// vectors, then the last elements one at a time through [`Map::apply`].
///
/// # Safety
///
/// `src` must be readable and `dst` writable for `n` elements.
#[allow(unsafe_code)]
unsafe fn run<M: Simd>(src: *const M::In, dst: *mut M::In, n: usize) {
    let lanes = 16 / std::mem::size_of::<M::In>();
    let k = std::hint::black_box(M::constants());
    let mut i = 0;
    while i + 4 * lanes <= n {
        // SAFETY: elements `i .. i + 4 * lanes` are in bounds, and all four vectors are
        // loaded before any is stored. `v128_load` and `v128_store` need no alignment.
        unsafe {
            let v = [0, 1, 2, 3].map(|j| M::vector(v128_load(src.add(i + j * lanes).cast()), k));
            for (j, v) in v.into_iter().enumerate() {
                v128_store(dst.add(i + j * lanes).cast(), v);
            }
        }
        i += 4 * lanes;
    }
    while i + lanes <= n {
        // SAFETY: as above, for one vector.
        unsafe {
            v128_store(
                dst.add(i).cast(),
                M::vector(v128_load(src.add(i).cast()), k),
            )
        };
        i += lanes;
    }
    for i in i..n {
        // SAFETY: `i < n`; the element is read before it is written.
        unsafe { *dst.add(i) = M::apply(*src.add(i)) }
    }
}

/// A SIGN whose vector form gives the bits of [`Map::apply`] on each lane of a `v128`.
trait Simd: Map<Out = <Self as Map>::In> {
    /// The constant vectors [`Simd::vector`] combines with the lanes, which [`run`]
    /// hides from the optimizer (see the module's notes).
    fn constants() -> [v128; 2];

    /// SIGN of each lane, given [`Simd::constants`].
    fn vector(x: v128, constants: [v128; 2]) -> v128;
}

/// SIGN of float lanes (as bits of `$bits`), as in the module's notes; `all_ones` is a
/// vector of ones bits.
macro_rules! float_sign {
    ($name:ident, $bits:ty, $splat:ident, $add:ident, $lt:ident, $eq:ident) => {
        #[inline(always)]
        fn $name<F: FloatFormat<Bits = $bits>, const PROPAGATE: bool>(
            x: v128,
            all_ones: v128,
        ) -> v128 {
            let lanes = |bits: $bits| $splat(bits as _);
            let magnitude = v128_and(x, lanes(F::MAGNITUDE));
            let biased = $add(magnitude, lanes(F::SIGN.wrapping_sub(1)));
            let ordinary = $lt(biased, lanes(F::SIGN.wrapping_add(F::INFINITY)));
            let one = v128_or(v128_and(x, lanes(F::SIGN)), lanes(F::ONE));
            match PROPAGATE {
                true => v128_and(
                    v128_bitselect(one, x, ordinary),
                    v128_xor($eq(magnitude, lanes(0)), all_ones),
                ),
                false => v128_and(one, ordinary),
            }
        }
    };
}

float_sign!(sign_64, u64, i64x2_splat, i64x2_add, i64x2_lt, i64x2_eq);
float_sign!(sign_32, u32, i32x4_splat, i32x4_add, i32x4_lt, i32x4_eq);
float_sign!(sign_16, u16, i16x8_splat, i16x8_add, i16x8_lt, i16x8_eq);

/// `impl Simd for $m`: `constants` gives `[$k0, $k1]`, and `vector` is `$body` with the
/// lanes bound to `$x` and the constants matched by `$k`.
macro_rules! simd {
    ([$($generics:tt)*] $m:ty, [$k0:expr, $k1:expr], |$x:ident, $k:pat_param| $body:expr) => {
        impl<$($generics)*> Simd for $m {
            #[inline(always)]
            fn constants() -> [v128; 2] {
                [$k0, $k1]
            }

            #[inline(always)]
            fn vector($x: v128, $k: [v128; 2]) -> v128 {
                $body
            }
        }
    };
}

// Floats: all ones, to invert the ±0 mask.
simd!([const P: bool] SignFloat<F64, P>, [u8x16_splat(0xFF), u8x16_splat(0)],
    |x, [ones, _]| sign_64::<F64, P>(x, ones));
simd!([const P: bool] SignFloat<F32, P>, [u8x16_splat(0xFF), u8x16_splat(0)],
    |x, [ones, _]| sign_32::<F32, P>(x, ones));
simd!([const P: bool] SignFloat<F16, P>, [u8x16_splat(0xFF), u8x16_splat(0)],
    |x, [ones, _]| sign_16::<F16, P>(x, ones));
simd!([const P: bool] SignFloat<BF16, P>, [u8x16_splat(0xFF), u8x16_splat(0)],
    |x, [ones, _]| sign_16::<BF16, P>(x, ones));

// Signed: clamped to -1 ..= 1; 64-bit lanes, the `x < 0` mask minus the `x > 0` mask.
simd!([] SignSigned<i8>, [i8x16_splat(1), i8x16_splat(-1)],
    |x, [one, minus_one]| i8x16_max(i8x16_min(x, one), minus_one));
simd!([] SignSigned<i16>, [i16x8_splat(1), i16x8_splat(-1)],
    |x, [one, minus_one]| i16x8_max(i16x8_min(x, one), minus_one));
simd!([] SignSigned<i32>, [i32x4_splat(1), i32x4_splat(-1)],
    |x, [one, minus_one]| i32x4_max(i32x4_min(x, one), minus_one));
simd!([] SignSigned<i64>, [i64x2_splat(0), i64x2_splat(0)],
    |x, [zero, _]| i64x2_sub(i64x2_lt(x, zero), i64x2_gt(x, zero)));

// Unsigned: clamped to 0 ..= 1; 64-bit lanes, the `x == 0` mask (-1) plus 1.
simd!([] SignUnsigned<u8>, [u8x16_splat(1), u8x16_splat(0)], |x, [one, _]| u8x16_min(x, one));
simd!([] SignUnsigned<u16>, [u16x8_splat(1), u16x8_splat(0)], |x, [one, _]| u16x8_min(x, one));
simd!([] SignUnsigned<u32>, [u32x4_splat(1), u32x4_splat(0)], |x, [one, _]| u32x4_min(x, one));
simd!([] SignUnsigned<u64>, [u64x2_splat(0), u64x2_splat(1)],
    |x, [zero, one]| i64x2_add(i64x2_eq(x, zero), one));

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
}
