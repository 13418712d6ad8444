//! SIGN of float32 and float64 on x86-64 with AVX2, written with the CPU's float
//! compares.
//!
//! An ordered not-equal compare with zero is false exactly for ±0 and NaN, and a blend on
//! the sign bit picks -1 or +1, so one vector of signs takes three operations (five when
//! NaN propagates), where the integer form of [`SignFloat`] takes seven. On cores that
//! run each 256-bit operation as two 128-bit halves (AMD Zen 1) those operations, not
//! memory, set the speed of the integer form: 0.53-0.57 of a copy in cache for float32.
//!
//! The compares read the floating-point environment: under DAZ (denormals are zero,
//! MXCSR bit 6) they would see subnormals as zero, and an unmasked invalid or denormal
//! exception would trap on a signalling NaN or a subnormal. Each call reads MXCSR and
//! uses the integer loops unless DAZ is clear and both exceptions are masked (the
//! default). The compares may set MXCSR's sticky invalid and denormal flags; the results
//! are the same bits either way.

use std::arch::x86_64::{
    __m256, __m256d, _mm256_and_pd, _mm256_and_ps, _mm256_blendv_pd, _mm256_blendv_ps,
    _mm256_cmp_pd, _mm256_cmp_ps, _mm256_loadu_pd, _mm256_loadu_ps, _mm256_set1_pd, _mm256_set1_ps,
    _mm256_setzero_pd, _mm256_setzero_ps, _mm256_storeu_pd, _mm256_storeu_ps, _mm256_stream_pd,
    _mm256_stream_ps, _mm_sfence, _CMP_NEQ_OQ, _CMP_UNORD_Q,
};

use ewise_core::{DataType, NanPolicy};

use super::formats::{FloatFormat, F32, F64};
use super::isa::{Avx2, Isa};
use super::ops::{Map, SignFloat};
use super::{slice, Kernel};

/// The AVX2 SIGN kernel for a data type and NaN policy; `None` where the generic loops
/// serve instead (every type but float32 and float64).
///
/// Callers hand it out only where AVX2 was detected, as for [`super::isa::Avx2`].
pub(super) fn kernel(data_type: DataType, policy: NanPolicy) -> Option<Kernel> {
    match data_type {
        DataType::Float32 => Some(for_format::<F32>(policy)),
        DataType::Float64 => Some(for_format::<F64>(policy)),
        _ => None,
    }
}

fn for_format<F: Lanes>(policy: NanPolicy) -> Kernel {
    match policy {
        NanPolicy::Zero => for_policy::<F, false>(),
        NanPolicy::Propagate => for_policy::<F, true>(),
    }
}

fn for_policy<F: Lanes, const PROPAGATE: bool>() -> Kernel {
    Kernel {
        in_size: std::mem::size_of::<F::Bits>(),
        out_size: std::mem::size_of::<F::Bits>(),
        map: map_bytes::<F, PROPAGATE>,
        map_stream: map_bytes_stream::<F, PROPAGATE>,
        map_in_place: Some(map_bytes_in_place::<F, PROPAGATE>),
        map_in_place_stream: Some(map_bytes_in_place_stream::<F, PROPAGATE>),
        transpose: <Avx2 as Isa>::transpose,
    }
}

fn map_bytes<F: Lanes, const P: bool>(src: &[u8], dst: &mut [u8]) {
    slice::map_bytes_with::<SignFloat<F, P>>(src, dst, map::<F, P>);
}

fn map_bytes_stream<F: Lanes, const P: bool>(src: &[u8], dst: &mut [u8]) {
    slice::map_bytes_stream_with::<SignFloat<F, P>>(src, dst, map::<F, P>, map_stream::<F, P>);
}

fn map_bytes_in_place<F: Lanes, const P: bool>(data: &mut [u8]) {
    slice::map_bytes_in_place_with::<SignFloat<F, P>>(data, |d| run_in_place::<F, P, false>(d));
}

fn map_bytes_in_place_stream<F: Lanes, const P: bool>(data: &mut [u8]) {
    match bytemuck::try_cast_slice_mut::<u8, F::Bits>(data) {
        Ok(d) if compares_are_exact() => run_in_place::<F, P, true>(d),
        _ => slice::map_bytes_in_place_stream::<SignFloat<F, P>, Avx2>(data),
    }
}

/// SIGN of `src` into `dst` (the shorter length).
#[allow(unsafe_code)]
fn map<F: Lanes, const P: bool>(src: &[F::Bits], dst: &mut [F::Bits]) {
    if !compares_are_exact() {
        return Avx2::map::<SignFloat<F, P>>(src, dst);
    }
    let n = src.len().min(dst.len());
    // SAFETY: `src` holds `n` readable and `dst` `n` writable elements, in distinct
    // slices; AVX2 was detected before these kernels were selected.
    unsafe { run::<F, P, false>(src.as_ptr(), dst.as_mut_ptr(), n) }
}

/// [`map`] with streaming stores; always `true` (done), as for [`Isa::map_stream`].
#[allow(unsafe_code)]
fn map_stream<F: Lanes, const P: bool>(src: &[F::Bits], dst: &mut [F::Bits]) -> bool {
    if !compares_are_exact() {
        return Avx2::map_stream::<SignFloat<F, P>>(src, dst);
    }
    let n = src.len().min(dst.len());
    // SAFETY: as in `map`.
    unsafe { run::<F, P, true>(src.as_ptr(), dst.as_mut_ptr(), n) }
    true
}

/// SIGN of `data` in place, with streaming stores if `STREAM`.
#[allow(unsafe_code)]
fn run_in_place<F: Lanes, const P: bool, const STREAM: bool>(data: &mut [F::Bits]) {
    if !compares_are_exact() {
        return match STREAM {
            true => slice::map_bytes_in_place_stream::<SignFloat<F, P>, Avx2>(
                bytemuck::cast_slice_mut(data),
            ),
            false => Avx2::map_in_place::<SignFloat<F, P>>(data),
        };
    }
    let p = data.as_mut_ptr();
    // SAFETY: `p` holds `data.len()` elements, read and written; `run` reads each vector
    // or element before writing it at the same place. AVX2 was detected before these
    // kernels were selected.
    unsafe { run::<F, P, STREAM>(p, p, data.len()) }
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

/// SIGN of the `n` elements at `src` into the `n` at `dst`, which may be the same
/// memory (in place) but otherwise must not overlap. With `STREAM`, whole vectors from
/// the first 32-byte aligned output address on are written with streaming stores and
/// the call ends with `sfence`.
///
/// # Safety
///
/// `src` must be readable and `dst` writable for `n` elements, and the CPU must have
/// AVX2; float compares must be exact ([`compares_are_exact`]).
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
unsafe fn run<F: Lanes, const P: bool, const STREAM: bool>(
    src: *const F::Bits,
    dst: *mut F::Bits,
    n: usize,
) {
    let scalar = |i: usize| {
        // SAFETY: the callers pass `i < n`; the element is read before it is written.
        unsafe { *dst.add(i) = SignFloat::<F, P>::apply(*src.add(i)) }
    };
    let head = match STREAM {
        true => dst.align_offset(32).min(n),
        false => 0,
    };
    (0..head).for_each(scalar);
    let mut i = head;
    while i + 2 * F::LANES <= n {
        // SAFETY: elements `i .. i + 2 * LANES` are in bounds; with `STREAM`, `dst + i`
        // is 32-byte aligned (the head was peeled and each step is 64 bytes).
        unsafe {
            let (a, b) = (F::load(src.add(i)), F::load(src.add(i + F::LANES)));
            let (a, b) = (F::sign::<P>(a), F::sign::<P>(b));
            F::store::<STREAM>(dst.add(i), a);
            F::store::<STREAM>(dst.add(i + F::LANES), b);
        }
        i += 2 * F::LANES;
    }
    (i..n).for_each(scalar);
    if STREAM {
        _mm_sfence();
    }
}

/// A float format whose SIGN runs in AVX2 float registers, `LANES` elements at a time.
#[allow(unsafe_code)]
trait Lanes: FloatFormat {
    type V: Copy;
    const LANES: usize;

    /// # Safety
    ///
    /// `LANES` elements at `p` are readable; the CPU has AVX2.
    unsafe fn load(p: *const Self::Bits) -> Self::V;

    /// With `STREAM`, a streaming store.
    ///
    /// # Safety
    ///
    /// `LANES` elements at `p` are writable, 32-byte aligned with `STREAM`; the CPU has
    /// AVX2.
    unsafe fn store<const STREAM: bool>(p: *mut Self::Bits, v: Self::V);

    /// SIGN of each lane, NaN giving +0 or, with `PROPAGATE`, itself.
    ///
    /// # Safety
    ///
    /// The CPU has AVX2, and float compares are exact ([`compares_are_exact`]).
    unsafe fn sign<const PROPAGATE: bool>(x: Self::V) -> Self::V;
}

#[allow(unsafe_code)]
impl Lanes for F32 {
    type V = __m256;
    const LANES: usize = 8;

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn load(p: *const u32) -> __m256 {
        // SAFETY: as the trait requires; the load has no alignment requirement.
        unsafe { _mm256_loadu_ps(p.cast()) }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn store<const STREAM: bool>(p: *mut u32, v: __m256) {
        // SAFETY: as the trait requires.
        unsafe {
            match STREAM {
                true => _mm256_stream_ps(p.cast(), v),
                false => _mm256_storeu_ps(p.cast(), v),
            }
        }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn sign<const PROPAGATE: bool>(x: __m256) -> __m256 {
        let nonzero = _mm256_cmp_ps::<_CMP_NEQ_OQ>(x, _mm256_setzero_ps());
        let one = _mm256_blendv_ps(_mm256_set1_ps(1.0), _mm256_set1_ps(-1.0), x);
        let sign = _mm256_and_ps(nonzero, one);
        match PROPAGATE {
            true => _mm256_blendv_ps(sign, x, _mm256_cmp_ps::<_CMP_UNORD_Q>(x, x)),
            false => sign,
        }
    }
}

#[allow(unsafe_code)]
impl Lanes for F64 {
    type V = __m256d;
    const LANES: usize = 4;

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn load(p: *const u64) -> __m256d {
        // SAFETY: as the trait requires; the load has no alignment requirement.
        unsafe { _mm256_loadu_pd(p.cast()) }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn store<const STREAM: bool>(p: *mut u64, v: __m256d) {
        // SAFETY: as the trait requires.
        unsafe {
            match STREAM {
                true => _mm256_stream_pd(p.cast(), v),
                false => _mm256_storeu_pd(p.cast(), v),
            }
        }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn sign<const PROPAGATE: bool>(x: __m256d) -> __m256d {
        let nonzero = _mm256_cmp_pd::<_CMP_NEQ_OQ>(x, _mm256_setzero_pd());
        let one = _mm256_blendv_pd(_mm256_set1_pd(1.0), _mm256_set1_pd(-1.0), x);
        let sign = _mm256_and_pd(nonzero, one);
        match PROPAGATE {
            true => _mm256_blendv_pd(sign, x, _mm256_cmp_pd::<_CMP_UNORD_Q>(x, x)),
            false => sign,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ewise_core::reference::sign_bits;

    /// Values on SIGN's edges for a float of `width` bytes whose +infinity is `inf` and
    /// +1 is `one`: zeros, subnormals, ±1, infinities, quiet and signalling NaNs with
    /// payloads, the largest finite values.
    fn edges(width: usize, inf: u64, one: u64) -> Vec<u64> {
        let sign = 1u64 << (8 * width - 1);
        let quiet = (inf >> 1) & !(inf >> 2) & !inf | inf;
        let mut v = vec![0, 1, inf - 1, one, inf, inf + 1, quiet, quiet + 5, sign - 1];
        v.extend(v.clone().into_iter().map(|x| x | sign));
        v
    }

    /// Inputs and the reference's outputs, per policy and length. The reference is
    /// computed here, before a test changes MXCSR: it compares floats itself.
    type Cases = Vec<(NanPolicy, Vec<u8>, Vec<u8>)>;

    fn cases(t: DataType, inf: u64, one: u64) -> Cases {
        let w = t.size_in_bytes().expect("a sized type") as usize;
        let values = edges(w, inf, one);
        let mut cases = Vec::new();
        for policy in NanPolicy::ALL {
            for len in (0..=70).chain([257, 1000]) {
                let input: Vec<u8> = (0..len)
                    .flat_map(|i| values[(i * 7 + len) % values.len()].to_ne_bytes()[..w].to_vec())
                    .collect();
                let want: Vec<u8> = input
                    .chunks(w)
                    .flat_map(|c| {
                        let mut b = [0u8; 8];
                        b[..w].copy_from_slice(c);
                        let bits = sign_bits(t, u64::from_ne_bytes(b), policy).unwrap();
                        bits.to_ne_bytes()[..w].to_vec()
                    })
                    .collect();
                cases.push((policy, input, want));
            }
        }
        cases
    }

    /// Every case through every entry point of the kernel, at several output offsets;
    /// nothing outside the output is written.
    fn check(t: DataType, cases: &Cases) {
        for (policy, input, want) in cases {
            let k = kernel(t, *policy).expect("a float type");
            for off in [0, 4, 8, 12, 24, 32, 1] {
                let at = format!("{t} {policy} len {} off {off}", input.len());
                for (name, map) in [("plain", k.map), ("streaming", k.map_stream)] {
                    let mut out = vec![0xA5u8; input.len() + off + 64];
                    map(input, &mut out[off..off + input.len()]);
                    assert_eq!(out[off..off + input.len()], want[..], "{name} {at}");
                    assert!(out[..off].iter().all(|&b| b == 0xA5), "{name} {at}");
                    assert!(out[off + input.len()..].iter().all(|&b| b == 0xA5), "{at}");
                }
                let in_place = [k.map_in_place.unwrap(), k.map_in_place_stream.unwrap()];
                for (name, map) in ["in place", "in place streaming"].into_iter().zip(in_place) {
                    let mut data = vec![0u8; input.len() + off];
                    data[off..].copy_from_slice(input);
                    map(&mut data[off..]);
                    assert_eq!(data[off..], want[..], "{name} {at}");
                }
            }
        }
    }

    fn all_cases() -> [(DataType, Cases); 2] {
        [
            (
                DataType::Float32,
                cases(DataType::Float32, 0x7F80_0000, 0x3F80_0000),
            ),
            (
                DataType::Float64,
                cases(
                    DataType::Float64,
                    0x7FF0_0000_0000_0000,
                    0x3FF0_0000_0000_0000,
                ),
            ),
        ]
    }

    fn avx2() -> bool {
        std::arch::is_x86_feature_detected!("avx2")
    }

    #[test]
    fn float32_and_float64_match_the_reference_at_every_length_and_offset() {
        if !avx2() {
            return;
        }
        for (t, cases) in all_cases() {
            check(t, &cases);
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
        let all = all_cases();
        let saved = mxcsr();
        assert!(
            compares_are_exact(),
            "the default environment takes the fast path"
        );
        for bits in [1 << 6, 1 << 7, 1 << 8] {
            set_mxcsr(saved ^ bits);
            let fast = compares_are_exact();
            for (t, cases) in &all {
                check(*t, cases);
            }
            set_mxcsr(saved);
            assert!(!fast, "MXCSR bit {bits:#x} must leave the float compares");
        }
        assert_eq!(mxcsr() & 0xFFC0, saved & 0xFFC0);
    }
}
