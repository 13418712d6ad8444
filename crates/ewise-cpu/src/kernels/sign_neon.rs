//! SIGN on aarch64 with NEON, where a few instructions do what the compiler's NEON loops
//! spend more on. Counts are per 128-bit vector, beside the compiler's loops for the
//! same target (register copies not counted; cores that rename them spend nothing):
//!
//! | data type | NaN -> +0 | NaN propagates | compiler |
//! |---|---:|---:|---:|
//! | float32, float64 | 3 | 5 | 6, 7 |
//! | float16, bfloat16 | 5 | 6 | 6, 7 |
//! | int8, int16, int32 | 2 | 2 | 4 |
//! | int64 | 3 | 3 | 4 |
//! | uint8, uint16, uint32 | 1 | 1 | 2 |
//! | uint64 | 2 | 2 | 2 |
//!
//! - float32 and float64: `facgt` with zero (|x| > 0) is false exactly for ±0 and NaN;
//!   `sri` by one bit of `ONE << 1` keeps each lane's sign bit and puts 1.0's bits under
//!   it; an `and` zeroes the rest. When NaN propagates, `fcmeq` of each lane with itself
//!   and a `bif` put the NaN lanes back.
//! - float16 and bfloat16, in integer lanes: `magnitude - 1 < INFINITY` (it wraps for ±0)
//!   selects the lanes that are neither zero nor NaN; when NaN propagates, a NaN compare,
//!   a non-zero test (`cmtst`) and a `bit` do.
//! - signed 8- to 32-bit integers: `smax` with -1 then `smin` with 1; 64-bit (no `smax`
//!   for 64-bit lanes): the `x < 0` mask (-1) minus the `x > 0` mask.
//! - unsigned 8- to 32-bit: `umin` with 1; 64-bit (no `umin` for 64-bit lanes): `cmtst`
//!   of each lane with itself and a shift right by 63, two like the compiler's.
//!
//! The vector bodies are inline assembly: LLVM rewrites NEON intrinsics into its own
//! canonical forms and selects its own instructions again (a `vmaxq`/`vminq` clamp came
//! back as the four compare-and-mask instructions of its portable loop, `vcagtq` with
//! zero as six integer ones), so only assembly keeps the counts above.
//!
//! The streaming entry points are the plain ones: ewise has no non-temporal stores on
//! aarch64 ([`super::stream::NON_TEMPORAL`]).
//!
//! The float compares read FPCR: with FZ (flush-to-zero, bit 24), or FEAT_AFP's FIZ or
//! AH (bits 0 and 1), a subnormal input compares as zero, and with the invalid or input
//! denormal trap enabled (IOE, IDE: bits 8 and 15) a NaN or subnormal could trap. Each
//! float call reads FPCR and uses the portable loops unless all five bits are clear (the
//! default). `facgt` is a signalling compare, so the float forms may set FPSR's sticky
//! invalid-operation flag (IOC) on any NaN input, and the input-denormal flag; the
//! results are the same bits either way.

use std::arch::aarch64::{
    int16x8_t, int32x4_t, int64x2_t, int8x16_t, uint16x8_t, uint32x4_t, uint64x2_t, uint8x16_t,
    vdupq_n_s16, vdupq_n_s32, vdupq_n_s8, vdupq_n_u16, vdupq_n_u32, vdupq_n_u64, vdupq_n_u8,
    vld1q_s16, vld1q_s32, vld1q_s64, vld1q_s8, vld1q_u16, vld1q_u32, vld1q_u64, vld1q_u8,
    vst1q_s16, vst1q_s32, vst1q_s64, vst1q_s8, vst1q_u16, vst1q_u32, vst1q_u64, vst1q_u8,
};
use std::arch::asm;
use std::marker::PhantomData;

use ewise_core::{DataType, NanPolicy};

use super::formats::{FloatFormat, BF16, F16, F32, F64};
use super::isa::{Isa, Portable};
use super::loops::{self, InPlace, Loop};
use super::ops::{Map, SignFloat, SignSigned, SignUnsigned};
use super::Kernel;

/// The NEON SIGN kernel for a data type and NaN policy; `None` for types SIGN does not
/// take.
pub(super) fn kernel(data_type: DataType, policy: NanPolicy) -> Option<Kernel> {
    sign_kernel!(data_type, policy, |M| loops::in_place::<Vectors<M>>())
}

/// `M`'s loop in NEON vectors.
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

/// Whether `M`'s vector form gives exact results in this thread's environment.
fn usable<M: Simd>() -> bool {
    !M::COMPARES_FLOATS || compares_are_exact()
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

/// Whether float compares give the exact answers for every input here: FZ, FIZ and AH
/// are clear and the invalid and input-denormal traps are disabled.
#[allow(unsafe_code)]
fn compares_are_exact() -> bool {
    const FIZ: u64 = 1 << 0;
    const AH: u64 = 1 << 1;
    const IOE: u64 = 1 << 8;
    const IDE: u64 = 1 << 15;
    const FZ: u64 = 1 << 24;
    let fpcr: u64;
    // SAFETY: reading FPCR has no side effects and is allowed at EL0.
    unsafe {
        std::arch::asm!("mrs {0}, fpcr", out(reg) fpcr, options(nomem, nostack, preserves_flags));
    }
    fpcr & (FIZ | AH | IOE | IDE | FZ) == 0
}

/// SIGN of the `n` elements at `src` into the `n` at `dst`, which may be the same
/// memory (in place) but otherwise must not overlap.
///
/// # Safety
///
/// `src` must be readable and `dst` writable for `n` elements; [`usable`] must hold.
#[target_feature(enable = "neon")]
#[allow(unsafe_code)]
unsafe fn run<M: Simd>(src: *const M::In, dst: *mut M::In, n: usize) {
    let lanes = 16 / std::mem::size_of::<M::In>();
    let mut i = 0;
    while i + 4 * lanes <= n {
        // SAFETY: elements `i .. i + 4 * lanes` are in bounds, and all four vectors are
        // loaded before any is stored.
        unsafe {
            let v = [0, 1, 2, 3].map(|k| M::vector(M::load(src.add(i + k * lanes))));
            for (k, v) in v.into_iter().enumerate() {
                M::store(dst.add(i + k * lanes), v);
            }
        }
        i += 4 * lanes;
    }
    while i + lanes <= n {
        // SAFETY: as above, for one vector.
        unsafe { M::store(dst.add(i), M::vector(M::load(src.add(i)))) };
        i += lanes;
    }
    for i in i..n {
        // SAFETY: `i < n`; the element is read before it is written.
        unsafe { *dst.add(i) = M::apply(*src.add(i)) }
    }
}

/// A SIGN whose vector form runs in NEON registers, 16 bytes at a time, giving the bits
/// of [`Map::apply`] on each element.
#[allow(unsafe_code)]
trait Simd: Map<Out = <Self as Map>::In> {
    type V: Copy;
    /// Whether [`Simd::vector`] uses float compares ([`compares_are_exact`]).
    const COMPARES_FLOATS: bool;

    /// # Safety
    ///
    /// 16 bytes at `p` are readable.
    unsafe fn load(p: *const Self::In) -> Self::V;

    /// # Safety
    ///
    /// 16 bytes at `p` are writable.
    unsafe fn store(p: *mut Self::In, v: Self::V);

    /// SIGN of each lane.
    ///
    /// # Safety
    ///
    /// [`usable`] holds (NEON itself is part of every aarch64 target this is built for).
    unsafe fn vector(x: Self::V) -> Self::V;
}

macro_rules! neon_simd {
    ([$($generics:tt)*] $m:ty, $t:ty, $v:ty, $load:ident, $store:ident, $floats:expr,
     |$x:ident| $body:expr) => {
        #[allow(unsafe_code)]
        impl<$($generics)*> Simd for $m {
            type V = $v;
            const COMPARES_FLOATS: bool = $floats;

            #[inline]
            #[target_feature(enable = "neon")]
            unsafe fn load(p: *const $t) -> $v {
                // SAFETY: as the trait requires; the load has no alignment requirement.
                unsafe { $load(p.cast()) }
            }

            #[inline]
            #[target_feature(enable = "neon")]
            unsafe fn store(p: *mut $t, v: $v) {
                // SAFETY: as the trait requires; the store has no alignment requirement.
                unsafe { $store(p.cast(), v) }
            }

            #[inline]
            #[target_feature(enable = "neon")]
            unsafe fn vector($x: $v) -> $v {
                $body
            }
        }
    };
}

/// SIGN of float lanes (as bits; `$arr` is `4s` or `2d`): `facgt` with zero is false
/// for ±0 and NaN; `sri` by one bit of `ONE << 1` keeps each lane's sign bit and puts
/// the bits of 1.0 under it. With `PROPAGATE`, a `fcmeq` of each lane with itself
/// (false for NaN) and a `bif` put the NaN lanes back.
macro_rules! float_sign {
    ($name:ident, $f:ty, $v:ty, $arr:literal, $dup:ident) => {
        #[inline]
        #[target_feature(enable = "neon")]
        #[allow(unsafe_code)]
        fn $name<const PROPAGATE: bool>(x: $v) -> $v {
            let mut sign = x;
            // SAFETY: register-only NEON instructions, on registers the compiler chose.
            unsafe {
                asm!(
                    concat!("facgt {nz:v}.", $arr, ", {s:v}.", $arr, ", {zero:v}.", $arr),
                    concat!("sri {s:v}.", $arr, ", {one:v}.", $arr, ", #1"),
                    "and {s:v}.16b, {s:v}.16b, {nz:v}.16b",
                    s = inout(vreg) sign,
                    nz = out(vreg) _,
                    zero = in(vreg) $dup(0),
                    one = in(vreg) $dup(<$f>::ONE << 1),
                    options(pure, nomem, nostack, preserves_flags),
                );
                if PROPAGATE {
                    asm!(
                        concat!("fcmeq {ord:v}.", $arr, ", {x:v}.", $arr, ", {x:v}.", $arr),
                        "bif {s:v}.16b, {x:v}.16b, {ord:v}.16b",
                        s = inout(vreg) sign,
                        ord = out(vreg) _,
                        x = in(vreg) x,
                        options(pure, nomem, nostack, preserves_flags),
                    );
                }
            }
            sign
        }
    };
}

float_sign!(sign_f32, F32, uint32x4_t, "4s", vdupq_n_u32);
float_sign!(sign_f64, F64, uint64x2_t, "2d", vdupq_n_u64);

/// SIGN of float16 or bfloat16 lanes (as bits) in integer operations: with NaN -> +0,
/// `magnitude - 1 < INFINITY` (it wraps for ±0) selects the lanes that are neither zero
/// nor NaN; when NaN propagates, a NaN compare, a non-zero test (`cmtst`) and a `bit`
/// do. ±1 comes from `sri`, as in [`sign_f32`].
#[inline]
#[target_feature(enable = "neon")]
#[allow(unsafe_code)]
fn sign_16<F: FloatFormat<Bits = u16>, const PROPAGATE: bool>(x: uint16x8_t) -> uint16x8_t {
    let mut sign = x;
    let (magnitude, infinity, one) = (
        vdupq_n_u16(F::MAGNITUDE),
        vdupq_n_u16(F::INFINITY),
        vdupq_n_u16(F::ONE << 1),
    );
    // SAFETY: register-only NEON instructions, on registers the compiler chose.
    unsafe {
        match PROPAGATE {
            false => asm!(
                "and {m:v}.16b, {s:v}.16b, {mag:v}.16b",
                "sub {m:v}.8h, {m:v}.8h, {unit:v}.8h",
                "cmhi {m:v}.8h, {inf:v}.8h, {m:v}.8h",
                "sri {s:v}.8h, {one:v}.8h, #1",
                "and {s:v}.16b, {s:v}.16b, {m:v}.16b",
                s = inout(vreg) sign,
                m = out(vreg) _,
                mag = in(vreg) magnitude,
                unit = in(vreg) vdupq_n_u16(1),
                inf = in(vreg) infinity,
                one = in(vreg) one,
                options(pure, nomem, nostack, preserves_flags),
            ),
            true => asm!(
                "and {nan:v}.16b, {x:v}.16b, {mag:v}.16b",
                "cmhi {nan:v}.8h, {nan:v}.8h, {inf:v}.8h",
                "cmtst {nz:v}.8h, {x:v}.8h, {mag:v}.8h",
                "sri {s:v}.8h, {one:v}.8h, #1",
                "and {s:v}.16b, {s:v}.16b, {nz:v}.16b",
                "bit {s:v}.16b, {x:v}.16b, {nan:v}.16b",
                s = inout(vreg) sign,
                nan = out(vreg) _,
                nz = out(vreg) _,
                x = in(vreg) x,
                mag = in(vreg) magnitude,
                inf = in(vreg) infinity,
                one = in(vreg) one,
                options(pure, nomem, nostack, preserves_flags),
            ),
        }
    }
    sign
}

/// SIGN of 8-, 16- or 32-bit integer lanes (`$arr`) as a clamp: each `$op` (`smax`,
/// `smin`, `umin`) of the lanes with a vector of `$bound`, in turn.
macro_rules! clamp {
    ($name:ident, $v:ty, $arr:literal, $dup:ident, $($op:literal $bound:expr),+) => {
        #[inline]
        #[target_feature(enable = "neon")]
        #[allow(unsafe_code)]
        fn $name(x: $v) -> $v {
            let mut sign = x;
            $(
                // SAFETY: a register-only NEON instruction, on registers the compiler
                // chose.
                unsafe {
                    asm!(
                        concat!($op, " {s:v}.", $arr, ", {s:v}.", $arr, ", {b:v}.", $arr),
                        s = inout(vreg) sign,
                        b = in(vreg) $dup($bound),
                        options(pure, nomem, nostack, preserves_flags),
                    );
                }
            )+
            sign
        }
    };
}

// Signed: `smax` with -1, then `smin` with 1.
clamp!(sign_s8, int8x16_t, "16b", vdupq_n_s8, "smax" -1, "smin" 1);
clamp!(sign_s16, int16x8_t, "8h", vdupq_n_s16, "smax" -1, "smin" 1);
clamp!(sign_s32, int32x4_t, "4s", vdupq_n_s32, "smax" -1, "smin" 1);

/// Signed SIGN of 64-bit lanes (no `smax` for them): the `x < 0` mask (-1) minus the
/// `x > 0` mask.
#[inline]
#[target_feature(enable = "neon")]
#[allow(unsafe_code)]
fn sign_s64(x: int64x2_t) -> int64x2_t {
    let mut sign = x;
    // SAFETY: register-only NEON instructions, on registers the compiler chose.
    unsafe {
        asm!(
            "cmlt {neg:v}.2d, {s:v}.2d, #0",
            "cmgt {s:v}.2d, {s:v}.2d, #0",
            "sub {s:v}.2d, {neg:v}.2d, {s:v}.2d",
            s = inout(vreg) sign,
            neg = out(vreg) _,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    sign
}

// Unsigned: `umin` with 1.
clamp!(sign_u8, uint8x16_t, "16b", vdupq_n_u8, "umin" 1);
clamp!(sign_u16, uint16x8_t, "8h", vdupq_n_u16, "umin" 1);
clamp!(sign_u32, uint32x4_t, "4s", vdupq_n_u32, "umin" 1);

/// Unsigned SIGN of 64-bit lanes: all ones where non-zero (`cmtst`), shifted to 1.
#[inline]
#[target_feature(enable = "neon")]
#[allow(unsafe_code)]
fn sign_u64(x: uint64x2_t) -> uint64x2_t {
    let mut sign = x;
    // SAFETY: register-only NEON instructions, on registers the compiler chose.
    unsafe {
        asm!(
            "cmtst {s:v}.2d, {s:v}.2d, {s:v}.2d",
            "ushr {s:v}.2d, {s:v}.2d, #63",
            s = inout(vreg) sign,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    sign
}

neon_simd!([const P: bool] SignFloat<F32, P>, u32, uint32x4_t, vld1q_u32, vst1q_u32, true,
    |x| sign_f32::<P>(x));
neon_simd!([const P: bool] SignFloat<F64, P>, u64, uint64x2_t, vld1q_u64, vst1q_u64, true,
    |x| sign_f64::<P>(x));
neon_simd!([const P: bool] SignFloat<F16, P>, u16, uint16x8_t, vld1q_u16, vst1q_u16, false,
    |x| sign_16::<F16, P>(x));
neon_simd!([const P: bool] SignFloat<BF16, P>, u16, uint16x8_t, vld1q_u16, vst1q_u16, false,
    |x| sign_16::<BF16, P>(x));
neon_simd!([] SignSigned<i8>, i8, int8x16_t, vld1q_s8, vst1q_s8, false, |x| sign_s8(x));
neon_simd!([] SignSigned<i16>, i16, int16x8_t, vld1q_s16, vst1q_s16, false, |x| sign_s16(x));
neon_simd!([] SignSigned<i32>, i32, int32x4_t, vld1q_s32, vst1q_s32, false, |x| sign_s32(x));
neon_simd!([] SignSigned<i64>, i64, int64x2_t, vld1q_s64, vst1q_s64, false, |x| sign_s64(x));
neon_simd!([] SignUnsigned<u8>, u8, uint8x16_t, vld1q_u8, vst1q_u8, false, |x| sign_u8(x));
neon_simd!([] SignUnsigned<u16>, u16, uint16x8_t, vld1q_u16, vst1q_u16, false, |x| sign_u16(x));
neon_simd!([] SignUnsigned<u32>, u32, uint32x4_t, vld1q_u32, vst1q_u32, false, |x| sign_u32(x));
neon_simd!([] SignUnsigned<u64>, u64, uint64x2_t, vld1q_u64, vst1q_u64, false, |x| sign_u64(x));

#[cfg(test)]
mod tests {
    use super::super::sign_cases::{all_cases, check, check_placements};
    use super::*;

    fn fpcr() -> u64 {
        let v: u64;
        #[allow(unsafe_code)]
        // SAFETY: reads FPCR into a local.
        unsafe {
            std::arch::asm!("mrs {0}, fpcr", out(reg) v, options(nomem, nostack));
        }
        v
    }

    fn set_fpcr(v: u64) {
        #[allow(unsafe_code)]
        // SAFETY: writes FPCR with a value read from it and one control bit changed.
        unsafe {
            std::arch::asm!("msr fpcr, {0}", in(reg) v, options(nomem, nostack));
        }
    }

    #[test]
    fn every_type_matches_the_reference_at_every_length_and_offset() {
        for (t, cases) in all_cases(kernel) {
            check(kernel, t, &cases);
            check_placements(kernel, t);
        }
    }

    /// With flush-to-zero, or a floating-point trap enabled where the CPU has them, on
    /// this thread, the kernels fall back to the integer loops: subnormals still give ±1.
    #[test]
    fn a_caller_floating_point_environment_changes_nothing() {
        let all = all_cases(kernel);
        let saved = fpcr();
        assert!(
            compares_are_exact(),
            "the default environment takes the fast path"
        );
        for bit in [24, 8, 15] {
            set_fpcr(saved | 1 << bit);
            let took = fpcr() & 1 << bit != 0;
            let fast = compares_are_exact();
            for (t, cases) in &all {
                check(kernel, *t, cases);
            }
            set_fpcr(saved);
            // Trap enables read as zero on cores without trapping; FZ is always there.
            assert!(took || bit != 24, "FPCR.FZ can be set");
            assert!(
                !took || !fast,
                "FPCR bit {bit} must leave the float compares"
            );
        }
        assert_eq!(fpcr(), saved);
    }
}
