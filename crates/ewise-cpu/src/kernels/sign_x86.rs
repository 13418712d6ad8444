//! The loop shared by the hand-written x86-64 SIGN kernels, whatever their vector width
//! ([`Simd`]): whole vectors, four at a time with all loads before any store, then
//! single vectors, then elements; back to front where stores would alias following
//! loads; with streaming stores and prefetching for outputs larger than the caches.
//!
//! Kernels whose vector form compares floats ([`Simd::COMPARES_FLOATS`]) read the
//! floating-point environment on each call: under DAZ (denormals are zero, MXCSR bit 6)
//! they would see subnormals as zero, and an unmasked invalid or denormal exception would
//! trap on a signalling NaN or a subnormal. Such calls use the AVX2 build of the integer
//! loops unless DAZ is clear and both exceptions are masked (the default). The vector
//! forms may set MXCSR's sticky invalid and denormal flags; the results are the same
//! bits either way.

use std::marker::PhantomData;

use super::isa::{Avx2, Isa};
use super::loops::{self, InPlace, Loop};
use super::ops::Map;
use super::{stream, Kernel};

/// A vector width with the instruction set that runs it.
#[allow(unsafe_code)]
pub(super) trait Width: Sized + 'static {
    /// Bytes per vector.
    const BYTES: usize;

    /// [`walk`] compiled with this width's instruction set.
    ///
    /// # Safety
    ///
    /// As for [`walk`].
    unsafe fn run<M: Simd<Self>, const STREAM: bool>(src: *const M::In, dst: *mut M::In, n: usize);
}

/// A SIGN whose vector form runs in registers of width `W`, giving the bits of
/// [`Map::apply`] on each element.
#[allow(unsafe_code)]
pub(super) trait Simd<W: Width>: Map<Out = <Self as Map>::In> {
    type V: Copy;
    /// Whether [`Simd::vector`] depends on the floating-point environment
    /// ([`compares_are_exact`]).
    const COMPARES_FLOATS: bool;

    /// # Safety
    ///
    /// `W::BYTES` bytes at `p` are readable; the CPU has `W`'s instruction set.
    unsafe fn load(p: *const Self::In) -> Self::V;

    /// With `STREAM`, a streaming store.
    ///
    /// # Safety
    ///
    /// `W::BYTES` bytes at `p` are writable, `W::BYTES`-aligned with `STREAM`; the CPU
    /// has `W`'s instruction set.
    unsafe fn store<const STREAM: bool>(p: *mut Self::In, v: Self::V);

    /// SIGN of each lane.
    ///
    /// # Safety
    ///
    /// The CPU has `W`'s instruction set, and [`usable`] holds.
    unsafe fn vector(x: Self::V) -> Self::V;
}

/// Implements [`Simd`] of width `$w` for `$m`, on elements `$t` in vectors `$v`, with
/// the instruction sets `$features` enabled: `$load` and `$store` are unaligned, `$stream`
/// the streaming store, `|$x| $body` the vector form, and `$floats` is
/// [`Simd::COMPARES_FLOATS`].
macro_rules! simd_impl {
    ([$($generics:tt)*] $m:ty => $w:ty, $features:literal, $t:ty, $v:ty, $floats:expr,
     ($load:path, $store:path, $stream:path), |$x:ident| $body:expr) => {
        #[allow(unsafe_code)]
        impl<$($generics)*> $crate::kernels::sign_x86::Simd<$w> for $m {
            type V = $v;
            const COMPARES_FLOATS: bool = $floats;

            #[inline]
            #[target_feature(enable = $features)]
            unsafe fn load(p: *const $t) -> $v {
                // SAFETY: as the trait requires; the load has no alignment requirement.
                unsafe { $load(p.cast()) }
            }

            #[inline]
            #[target_feature(enable = $features)]
            unsafe fn store<const STREAM: bool>(p: *mut $t, v: $v) {
                // SAFETY: as the trait requires.
                unsafe {
                    match STREAM {
                        true => $stream(p.cast(), v),
                        false => $store(p.cast(), v),
                    }
                }
            }

            #[inline]
            #[target_feature(enable = $features)]
            unsafe fn vector($x: $v) -> $v {
                $body
            }
        }
    };
}
pub(super) use simd_impl;

/// The kernel of `M` in `W`'s vectors.
pub(super) fn kernel<W: Width, M: Simd<W>>() -> Kernel {
    loops::in_place::<Vectors<W, M>>()
}

/// `M`'s loop in `W`'s vectors.
struct Vectors<W, M>(PhantomData<(W, M)>);

impl<W: Width, M: Simd<W>> Loop for Vectors<W, M> {
    type Map = M;
    type Isa = Avx2;

    fn map(src: &[M::In], dst: &mut [M::In]) {
        map::<W, M>(src, dst);
    }

    fn map_stream(src: &[M::In], dst: &mut [M::In]) -> bool {
        map_stream::<W, M>(src, dst)
    }
}

impl<W: Width, M: Simd<W>> InPlace for Vectors<W, M> {
    fn map_in_place(data: &mut [M::In]) {
        run_in_place::<W, M, false>(data);
    }

    fn map_in_place_stream(data: &mut [M::In]) -> bool {
        run_in_place::<W, M, true>(data)
    }
}

/// Whether `M`'s vector form gives exact results in this thread's environment.
fn usable<W: Width, M: Simd<W>>() -> bool {
    !M::COMPARES_FLOATS || compares_are_exact()
}

/// SIGN of `src` into `dst` (the shorter length).
#[allow(unsafe_code)]
fn map<W: Width, M: Simd<W>>(src: &[M::In], dst: &mut [M::In]) {
    if !usable::<W, M>() {
        return Avx2::map::<M>(src, dst);
    }
    let n = src.len().min(dst.len());
    // SAFETY: `src` holds `n` readable and `dst` `n` writable elements, in distinct
    // slices; `W`'s instruction set was detected before these kernels were selected.
    unsafe { W::run::<M, false>(src.as_ptr(), dst.as_mut_ptr(), n) }
}

/// [`map`] with streaming stores; always `true` (done), as for [`Loop::map_stream`].
#[allow(unsafe_code)]
fn map_stream<W: Width, M: Simd<W>>(src: &[M::In], dst: &mut [M::In]) -> bool {
    if !usable::<W, M>() {
        return Avx2::map_stream::<M>(src, dst);
    }
    let n = src.len().min(dst.len());
    // SAFETY: as in `map`.
    unsafe { W::run::<M, true>(src.as_ptr(), dst.as_mut_ptr(), n) }
    true
}

/// SIGN of `data` in place, with streaming stores if `STREAM`; `true` (done). Where
/// [`usable`] does not hold, the compiler's AVX2 loop runs instead, or, with `STREAM`,
/// nothing is done and the answer is `false`, as [`InPlace::map_in_place_stream`]'s
/// may be (the caller then streams out blocks computed by [`map`]).
#[allow(unsafe_code)]
fn run_in_place<W: Width, M: Simd<W>, const STREAM: bool>(data: &mut [M::In]) -> bool {
    if !usable::<W, M>() {
        if !STREAM {
            Avx2::map_in_place::<M>(data);
        }
        return !STREAM;
    }
    let p = data.as_mut_ptr();
    // SAFETY: `p` holds `data.len()` elements, read and written; `walk` reads each
    // vector or element before writing it at the same place. `W`'s instruction set was
    // detected before these kernels were selected.
    unsafe { W::run::<M, STREAM>(p, p, data.len()) };
    true
}

/// Whether float compares give the exact answers for every input here: DAZ is clear
/// and the invalid and denormal exceptions are masked.
#[allow(unsafe_code)]
pub(super) fn compares_are_exact() -> bool {
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
/// the first `W::BYTES`-aligned output address on are written with streaming stores,
/// the input is prefetched ahead ([`stream::prefetch_ahead`]), and the call ends with
/// `sfence`; without, where [`stores_alias_following_loads`] (from
/// [`ALIASING_MATTERS`] bytes on), the vectors go back to front.
///
/// Inlined into [`Width::run`], whose instruction set the vector operations need.
///
/// # Safety
///
/// `src` must be readable and `dst` writable for `n` elements, and the CPU must have
/// `W`'s instruction set; [`usable`] must hold.
#[inline(always)]
#[allow(unsafe_code)]
pub(super) unsafe fn walk<W: Width, M: Simd<W>, const STREAM: bool>(
    src: *const M::In,
    dst: *mut M::In,
    n: usize,
) {
    let lanes = W::BYTES / std::mem::size_of::<M::In>();
    // SAFETY of the calls below: `scalar` gets `i < n`, `one` gets `i + lanes <= n` and
    // `four` gets `i + 4 * lanes <= n`, with `dst + i` aligned to `W::BYTES` under
    // `STREAM`; the rest is the caller's promise.
    if !STREAM
        && n * std::mem::size_of::<M::In>() >= ALIASING_MATTERS
        && stores_alias_following_loads(src, dst)
    {
        let whole = n / lanes * lanes;
        for i in whole..n {
            unsafe { scalar::<W, M>(src, dst, i) };
        }
        let fours = whole / (4 * lanes);
        for k in 1..=fours {
            unsafe { four::<W, M, false>(src, dst, whole - k * 4 * lanes) };
        }
        let mut i = whole - fours * 4 * lanes;
        while i >= lanes {
            i -= lanes;
            unsafe { one::<W, M, false>(src, dst, i) };
        }
        return;
    }
    let head = match STREAM {
        true => dst.align_offset(W::BYTES).min(n),
        false => 0,
    };
    for i in 0..head {
        unsafe { scalar::<W, M>(src, dst, i) };
    }
    // With `STREAM`, `dst + i` stays aligned: the head was peeled and each step is a
    // whole number of vectors.
    let mut i = head;
    while i + 4 * lanes <= n {
        unsafe { four::<W, M, STREAM>(src, dst, i) };
        i += 4 * lanes;
    }
    while i + lanes <= n {
        unsafe { one::<W, M, STREAM>(src, dst, i) };
        i += lanes;
    }
    for i in i..n {
        unsafe { scalar::<W, M>(src, dst, i) };
    }
    if STREAM {
        stream::fence();
    }
}

/// SIGN of element `i`, read before it is written.
///
/// # Safety
///
/// `src` is readable and `dst` writable at element `i`.
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn scalar<W: Width, M: Simd<W>>(src: *const M::In, dst: *mut M::In, i: usize) {
    // SAFETY: as the caller guarantees.
    unsafe { *dst.add(i) = M::apply(*src.add(i)) }
}

/// SIGN of the vector at element `i`; with `STREAM`, a streaming store.
///
/// # Safety
///
/// `src` is readable and `dst` writable for a vector from element `i`, `dst + i`
/// aligned to `W::BYTES` with `STREAM`; as for [`walk`], the CPU has `W`'s instruction
/// set and [`usable`] holds.
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn one<W: Width, M: Simd<W>, const STREAM: bool>(
    src: *const M::In,
    dst: *mut M::In,
    i: usize,
) {
    // SAFETY: as the caller guarantees.
    unsafe { M::store::<STREAM>(dst.add(i), M::vector(M::load(src.add(i)))) }
}

/// SIGN of the four vectors from element `i`, all loaded before any is stored; with
/// `STREAM`, streaming stores after a prefetch ahead.
///
/// # Safety
///
/// As for [`one`], for four vectors.
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn four<W: Width, M: Simd<W>, const STREAM: bool>(
    src: *const M::In,
    dst: *mut M::In,
    i: usize,
) {
    let lanes = W::BYTES / std::mem::size_of::<M::In>();
    if STREAM {
        stream::prefetch_ahead(src.wrapping_add(i).cast(), 4 * W::BYTES);
    }
    // SAFETY: as the caller guarantees.
    unsafe {
        let a = M::vector(M::load(src.add(i)));
        let b = M::vector(M::load(src.add(i + lanes)));
        let c = M::vector(M::load(src.add(i + 2 * lanes)));
        let d = M::vector(M::load(src.add(i + 3 * lanes)));
        M::store::<STREAM>(dst.add(i), a);
        M::store::<STREAM>(dst.add(i + lanes), b);
        M::store::<STREAM>(dst.add(i + 2 * lanes), c);
        M::store::<STREAM>(dst.add(i + 3 * lanes), d);
    }
}

#[cfg(test)]
fn mxcsr() -> u32 {
    let mut csr = 0u32;
    #[allow(unsafe_code)]
    // SAFETY: stores MXCSR into a local.
    unsafe {
        std::arch::asm!("stmxcsr [{0}]", in(reg) &mut csr, options(nostack));
    }
    csr
}

#[cfg(test)]
fn set_mxcsr(csr: u32) {
    #[allow(unsafe_code)]
    // SAFETY: loads MXCSR from a local holding a valid value (reserved bits as read).
    unsafe {
        std::arch::asm!("ldmxcsr [{0}]", in(reg) &csr, options(nostack));
    }
}

/// With DAZ set, or the invalid or denormal exception unmasked, on this thread,
/// `kernel`'s types still match the reference (the float kernels fall back to the
/// integer loops: subnormals still give ±1 and signalling NaNs neither trap nor change),
/// and MXCSR's controls are as they were.
#[cfg(test)]
pub(super) fn check_environment(kernel: super::sign_cases::KernelFor) {
    use super::sign_cases::{all_cases, check};
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
