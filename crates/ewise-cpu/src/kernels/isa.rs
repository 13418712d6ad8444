//! Instruction sets: the slice loops compiled for each, and the choice made once.

use std::sync::OnceLock;

use super::ops::Map;
use super::slice;

/// Setting this environment variable to anything but `0` or the empty string forces the
/// portable kernels (for tests and comparisons); it is read once, at the first compile.
pub const FORCE_PORTABLE_ENV: &str = "EWISE_FORCE_PORTABLE";

/// An instruction set the slice loops are compiled for.
pub(crate) trait Isa: Send + Sync + 'static {
    fn map<M: Map>(src: &[M::In], dst: &mut [M::Out]);
    fn map_in_place<M: Map<Out = <M as Map>::In>>(data: &mut [M::In]);
}

/// The baseline of the target (SSE2 on x86-64, NEON on aarch64), vectorized by the
/// compiler.
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

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
impl Isa for Avx2 {
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
}

/// Which instruction set the kernels use on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstructionSet {
    /// The target's baseline, vectorized by the compiler.
    Portable,
    /// x86-64 AVX2.
    Avx2,
}

impl InstructionSet {
    /// Lower-case name: `portable` or `avx2`.
    pub fn name(self) -> &'static str {
        match self {
            InstructionSet::Portable => "portable",
            InstructionSet::Avx2 => "avx2",
        }
    }
}

/// The instruction set chosen for this process: AVX2 where the CPU has it, unless
/// [`FORCE_PORTABLE_ENV`] is set; the portable loops everywhere else.
pub fn selected() -> InstructionSet {
    static CHOICE: OnceLock<InstructionSet> = OnceLock::new();
    *CHOICE.get_or_init(|| {
        let forced =
            std::env::var_os(FORCE_PORTABLE_ENV).is_some_and(|v| !v.is_empty() && v != "0");
        if forced {
            return InstructionSet::Portable;
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            return InstructionSet::Avx2;
        }
        InstructionSet::Portable
    })
}
