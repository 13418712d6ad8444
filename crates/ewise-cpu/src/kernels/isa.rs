//! Instruction sets: the slice loops compiled for each, and the choice made once.

use std::sync::OnceLock;

use super::ops::Map;
use super::slice;
use super::transpose;

/// Setting this environment variable to anything but `0` or the empty string forces the
/// portable kernels (for tests and comparisons); it is read once, at the first compile.
pub const FORCE_PORTABLE_ENV: &str = "EWISE_FORCE_PORTABLE";

/// Naming an instruction set in this environment variable ([`InstructionSet::name`])
/// caps the choice at it, for comparisons: `avx2` on an AVX-512 machine takes the AVX2
/// kernels. A set above what the CPU has, or a name that is none of them, leaves the
/// choice as it would be; [`selected`] tells which set was taken. It is read once, at the
/// first compile, after [`FORCE_PORTABLE_ENV`].
pub const ISA_ENV: &str = "EWISE_ISA";

/// An instruction set the slice loops are compiled for.
pub(crate) trait Isa: Send + Sync + 'static {
    fn map<M: Map>(src: &[M::In], dst: &mut [M::Out]);
    fn map_in_place<M: Map<Out = <M as Map>::In>>(data: &mut [M::In]);

    /// [`Isa::map`] with streaming stores issued from the loop itself, one output cache
    /// line at a time, if this instruction set has such a loop; `false` (nothing done)
    /// otherwise, and the caller streams in blocks instead.
    fn map_stream<M: Map>(_src: &[M::In], _dst: &mut [M::Out]) -> bool {
        false
    }

    /// [`transpose::transpose`] with this instruction set's register blocks.
    fn transpose(
        size: usize,
        src: (&[u8], usize),
        dst: (&mut [u8], usize),
        shape: (usize, usize),
        stream: bool,
    ) {
        transpose::transpose(size, src, dst, shape, stream);
    }
}

/// The baseline of the target (SSE2 on x86-64, NEON on aarch64, SIMD128 on wasm32 when
/// built with it, scalar otherwise), vectorized by the compiler where it can.
pub(crate) struct Portable;

impl Isa for Portable {
    #[inline]
    fn map<M: Map>(src: &[M::In], dst: &mut [M::Out]) {
        slice::map::<M>(src, dst);
    }

    #[inline]
    fn map_in_place<M: Map<Out = <M as Map>::In>>(data: &mut [M::In]) {
        slice::map_in_place::<M>(data);
    }
}

/// x86-64 with AVX2: the same loops, compiled with 256-bit vectors.
#[cfg(target_arch = "x86_64")]
pub(crate) struct Avx2;

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn map_avx2<M: Map>(src: &[M::In], dst: &mut [M::Out]) {
    slice::map::<M>(src, dst);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn map_in_place_avx2<M: Map<Out = <M as Map>::In>>(data: &mut [M::In]) {
    slice::map_in_place::<M>(data);
}

/// Maps `src` into `dst` computing one 64-byte output line at a time in registers and
/// writing each aligned line with two 32-byte streaming stores; the unaligned head and
/// the tail use plain stores.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
fn map_stream_avx2<M: Map>(src: &[M::In], dst: &mut [M::Out]) {
    use std::arch::x86_64::{__m256i, _mm256_load_si256, _mm256_stream_si256, _mm_sfence};
    let per_line = (64 / std::mem::size_of::<M::Out>()).max(1);
    let len = dst.len().min(src.len());
    let head = dst.as_ptr().align_offset(64).min(len);
    slice::map::<M>(&src[..head], &mut dst[..head]);
    let body = (len - head) / per_line * per_line;
    let mut line = Line([0; 64]);
    let (s, d) = (&src[head..head + body], &mut dst[head..head + body]);
    for (s, d) in s.chunks_exact(per_line).zip(d.chunks_exact_mut(per_line)) {
        slice::map::<M>(s, bytemuck::cast_slice_mut(&mut line.0));
        let from = line.0.as_ptr().cast::<__m256i>();
        let to = d.as_mut_ptr().cast::<__m256i>();
        // SAFETY: `line` is 64-byte aligned and 64 bytes long; `d` holds `per_line`
        // elements = 64 bytes starting 64-byte aligned (the head was peeled above), so
        // both 32-byte halves are in bounds and 32-byte aligned as the load and the
        // streaming store require. AVX2 is enabled on this function.
        unsafe {
            _mm256_stream_si256(to, _mm256_load_si256(from));
            _mm256_stream_si256(to.add(1), _mm256_load_si256(from.add(1)));
        }
    }
    slice::map::<M>(&src[head + body..len], &mut dst[head + body..len]);
    _mm_sfence();
}

/// One output cache line, aligned for the streaming stores.
#[cfg(target_arch = "x86_64")]
#[repr(C, align(64))]
struct Line([u8; 64]);

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
impl Isa for Avx2 {
    #[inline]
    fn map_stream<M: Map>(src: &[M::In], dst: &mut [M::Out]) -> bool {
        // SAFETY: as for `map`, AVX2 was detected before this ISA was selected.
        unsafe { map_stream_avx2::<M>(src, dst) };
        true
    }

    #[inline]
    fn map<M: Map>(src: &[M::In], dst: &mut [M::Out]) {
        // SAFETY: kernels using `Avx2` are only chosen by `selected()` after
        // `is_x86_feature_detected!("avx2")` returned true on this machine.
        unsafe { map_avx2::<M>(src, dst) }
    }

    #[inline]
    fn map_in_place<M: Map<Out = <M as Map>::In>>(data: &mut [M::In]) {
        // SAFETY: as above, AVX2 was detected before this ISA was selected.
        unsafe { map_in_place_avx2::<M>(data) }
    }

    fn transpose(
        size: usize,
        src: (&[u8], usize),
        dst: (&mut [u8], usize),
        shape: (usize, usize),
        stream: bool,
    ) {
        // SAFETY: as above, AVX2 was detected before this ISA was selected.
        unsafe { transpose::transpose_avx2(size, src, dst, shape, stream) }
    }
}

/// Which instruction set the kernels use on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstructionSet {
    /// The target's baseline, vectorized by the compiler.
    Portable,
    /// x86-64 AVX2: hand-written SIGN and IS_INFINITY loops, the compiler's loops in
    /// 256-bit vectors elsewhere.
    Avx2,
    /// aarch64 NEON: hand-written SIGN loops, the compiler's NEON loops (the portable
    /// ones) for IS_INFINITY.
    Neon,
    /// x86-64 with AVX-512 F, BW, DQ and VL: hand-written SIGN and IS_INFINITY loops in
    /// 64-byte vectors with mask registers, AVX2 elsewhere.
    Avx512,
    /// wasm32 built with SIMD128 (`-C target-feature=+simd128`; WebAssembly has no
    /// run-time detection): hand-written SIGN and IS_INFINITY loops on `v128`, the
    /// compiler's SIMD128 loops elsewhere.
    Simd128,
}

impl InstructionSet {
    /// Lower-case name: `portable`, `avx2`, `avx512`, `neon` or `simd128`.
    pub fn name(self) -> &'static str {
        match self {
            InstructionSet::Portable => "portable",
            InstructionSet::Avx2 => "avx2",
            InstructionSet::Avx512 => "avx512",
            InstructionSet::Neon => "neon",
            InstructionSet::Simd128 => "simd128",
        }
    }

    /// The sets this CPU can run, the portable one first and the widest last.
    pub fn available() -> Vec<InstructionSet> {
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
        let mut v = vec![InstructionSet::Portable];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            v.push(InstructionSet::Avx2);
            if avx512() {
                v.push(InstructionSet::Avx512);
            }
        }
        if cfg!(all(target_arch = "aarch64", target_feature = "neon")) {
            v.push(InstructionSet::Neon);
        }
        if cfg!(all(target_arch = "wasm32", target_feature = "simd128")) {
            v.push(InstructionSet::Simd128);
        }
        v
    }
}

/// Whether this CPU has the AVX-512 subsets the [`InstructionSet::Avx512`] kernels use.
#[cfg(target_arch = "x86_64")]
pub(crate) fn avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512dq")
        && std::arch::is_x86_feature_detected!("avx512vl")
}

/// The instruction set chosen for this process, unless [`FORCE_PORTABLE_ENV`] or
/// [`ISA_ENV`] say otherwise: the widest of [`InstructionSet::available`] (AVX-512 or
/// AVX2 where an x86-64 CPU has them, NEON on aarch64, where every CPU has it, SIMD128
/// in wasm32 builds with it); the portable loops everywhere else.
pub fn selected() -> InstructionSet {
    static CHOICE: OnceLock<InstructionSet> = OnceLock::new();
    *CHOICE.get_or_init(|| {
        let forced =
            std::env::var_os(FORCE_PORTABLE_ENV).is_some_and(|v| !v.is_empty() && v != "0");
        if forced {
            return InstructionSet::Portable;
        }
        let cap = std::env::var(ISA_ENV).ok();
        choose(&InstructionSet::available(), cap.as_deref())
    })
}

/// The widest of `available` (listed narrowest first), or the widest up to the set
/// named `cap` where `available` holds one by that name.
fn choose(available: &[InstructionSet], cap: Option<&str>) -> InstructionSet {
    let widest = available.len() - 1;
    let end = cap
        .and_then(|name| available.iter().position(|s| s.name() == name))
        .unwrap_or(widest);
    available[end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use InstructionSet::{Avx2, Avx512, Portable};

    #[test]
    fn the_widest_set_is_chosen_unless_a_present_one_caps_it() {
        let all = [Portable, Avx2, Avx512];
        assert_eq!(choose(&all, None), Avx512);
        assert_eq!(choose(&all, Some("avx2")), Avx2);
        assert_eq!(choose(&all, Some("portable")), Portable);
        assert_eq!(choose(&all, Some("avx512")), Avx512);
        assert_eq!(choose(&all[..2], Some("avx512")), Avx2);
        assert_eq!(choose(&all, Some("AVX2")), Avx512);
        assert_eq!(choose(&all, Some("sse9")), Avx512);
        assert_eq!(choose(&[Portable], Some("avx2")), Portable);
    }

    /// SIMD128 is offered exactly in wasm32 builds with it, after the portable loops.
    #[test]
    fn simd128_is_available_exactly_in_builds_with_it() {
        let available = InstructionSet::available();
        let simd128 = cfg!(all(target_arch = "wasm32", target_feature = "simd128"));
        assert_eq!(available.contains(&InstructionSet::Simd128), simd128);
        if cfg!(target_family = "wasm") {
            assert_eq!(available.len(), 1 + usize::from(simd128));
        }
    }
}
