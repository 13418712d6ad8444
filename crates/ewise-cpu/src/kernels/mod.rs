//! Element-wise kernels over plain slices, and the choice of one per operator.
//!
//! Kernels know nothing of strides or bindings: [`crate::layout`] hands them contiguous
//! runs of bytes. Each kernel is one monomorphized loop per (operator, data type, NaN
//! policy or mode), so the hot loop holds no run-time choices.

/// `Some($make)` with `$m` naming the SIGN operation ([`ops::SignFloat`],
/// [`ops::SignSigned`] or [`ops::SignUnsigned`]) of `$data_type` under `$policy`; `None`
/// for types SIGN does not take. One table for every instruction set's kernels.
macro_rules! sign_kernel {
    ($data_type:expr, $policy:expr, |$m:ident| $make:expr) => {{
        use ewise_core::{DataType as T, NanPolicy as P};
        use $crate::kernels::formats::{BF16, F16, F32, F64};
        use $crate::kernels::ops::{SignFloat, SignSigned, SignUnsigned};
        match ($data_type, $policy) {
            (T::Float32, P::Zero) => sign_kernel!(@ $m = SignFloat<F32, false>, $make),
            (T::Float32, P::Propagate) => sign_kernel!(@ $m = SignFloat<F32, true>, $make),
            (T::Float64, P::Zero) => sign_kernel!(@ $m = SignFloat<F64, false>, $make),
            (T::Float64, P::Propagate) => sign_kernel!(@ $m = SignFloat<F64, true>, $make),
            (T::Float16, P::Zero) => sign_kernel!(@ $m = SignFloat<F16, false>, $make),
            (T::Float16, P::Propagate) => sign_kernel!(@ $m = SignFloat<F16, true>, $make),
            (T::Bfloat16, P::Zero) => sign_kernel!(@ $m = SignFloat<BF16, false>, $make),
            (T::Bfloat16, P::Propagate) => sign_kernel!(@ $m = SignFloat<BF16, true>, $make),
            (T::Int8, _) => sign_kernel!(@ $m = SignSigned<i8>, $make),
            (T::Int16, _) => sign_kernel!(@ $m = SignSigned<i16>, $make),
            (T::Int32, _) => sign_kernel!(@ $m = SignSigned<i32>, $make),
            (T::Int64, _) => sign_kernel!(@ $m = SignSigned<i64>, $make),
            (T::Uint8, _) => sign_kernel!(@ $m = SignUnsigned<u8>, $make),
            (T::Uint16, _) => sign_kernel!(@ $m = SignUnsigned<u16>, $make),
            (T::Uint32, _) => sign_kernel!(@ $m = SignUnsigned<u32>, $make),
            (T::Uint64, _) => sign_kernel!(@ $m = SignUnsigned<u64>, $make),
            _ => None,
        }
    }};
    (@ $m:ident = $t:ty, $make:expr) => {{
        type $m = $t;
        Some($make)
    }};
}

mod formats;
#[cfg(target_arch = "x86_64")]
mod is_infinity_avx2;
#[cfg(target_arch = "x86_64")]
mod is_infinity_avx512;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod is_infinity_wasm;
pub(crate) mod isa;
mod loops;
mod ops;
#[cfg(target_arch = "x86_64")]
mod sign_avx2;
#[cfg(target_arch = "x86_64")]
mod sign_avx512;
#[cfg(all(
    test,
    any(
        target_arch = "x86_64",
        all(target_arch = "aarch64", target_feature = "neon"),
        all(target_arch = "wasm32", target_feature = "simd128")
    )
))]
mod sign_cases;
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
mod sign_neon;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod sign_wasm;
#[cfg(target_arch = "x86_64")]
mod sign_x86;
mod slice;
pub(crate) mod stream;
pub(crate) mod transpose;

use ewise_core::{DataType, InfinityMode, NanPolicy, OperatorDesc};

use formats::{FloatFormat, BF16, F16, F32, F64, F8E5M2};
use isa::{InstructionSet, Isa, Portable};
use loops::Compiled;
use ops::{AllFalse, IsInfinity};

/// A type-erased kernel: byte slices in, byte slices out.
#[derive(Clone, Copy)]
pub(crate) struct Kernel {
    /// Bytes per input element.
    pub in_size: usize,
    /// Bytes per output element.
    pub out_size: usize,
    /// Maps `n` input elements to `n` output elements (`src.len() / in_size` of them).
    pub map: fn(&[u8], &mut [u8]),
    /// [`Kernel::map`] with streaming stores, for outputs larger than the caches.
    pub map_stream: fn(&[u8], &mut [u8]),
    /// Maps elements in place, where input and output have one type.
    pub map_in_place: Option<fn(&mut [u8])>,
    /// [`Kernel::map_in_place`] with streaming stores.
    pub map_in_place_stream: Option<fn(&mut [u8])>,
    /// Transposes matrices of output elements, with the kernel's instruction set.
    pub transpose: transpose::Transpose,
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel")
            .field("in_size", &self.in_size)
            .field("out_size", &self.out_size)
            .field("in_place", &self.map_in_place.is_some())
            .finish()
    }
}

/// The compiler's IS_INFINITY loops of `F` in `mode` for `I`.
fn is_infinity_float<F: FloatFormat, I: Isa>(mode: InfinityMode) -> Kernel {
    match mode {
        InfinityMode::Either => loops::kernel::<Compiled<IsInfinity<F, { ops::EITHER }>, I>>(),
        InfinityMode::Positive => loops::kernel::<Compiled<IsInfinity<F, { ops::POSITIVE }>, I>>(),
        InfinityMode::Negative => loops::kernel::<Compiled<IsInfinity<F, { ops::NEGATIVE }>, I>>(),
        InfinityMode::Neither => loops::kernel::<Compiled<AllFalse<F::Bits>, I>>(),
    }
}

/// The compiler's SIGN loops for `I`.
fn sign_for<I: Isa>(data_type: DataType, policy: NanPolicy) -> Option<Kernel> {
    sign_kernel!(data_type, policy, |M| loops::in_place::<Compiled<M, I>>())
}

fn is_infinity_for<I: Isa>(data_type: DataType, mode: InfinityMode) -> Option<Kernel> {
    Some(match data_type {
        DataType::Float32 => is_infinity_float::<F32, I>(mode),
        DataType::Float64 => is_infinity_float::<F64, I>(mode),
        DataType::Float16 => is_infinity_float::<F16, I>(mode),
        DataType::Bfloat16 => is_infinity_float::<BF16, I>(mode),
        DataType::Float8E5M2 => is_infinity_float::<F8E5M2, I>(mode),
        DataType::Float8E4M3Fn | DataType::Float8E4M3Fnuz | DataType::Float8E5M2Fnuz => {
            loops::kernel::<Compiled<AllFalse<u8>, I>>()
        }
        _ => return None,
    })
}

/// The SIGN kernel for a data type on an instruction set; `None` where SIGN has no
/// meaning.
pub(crate) fn sign_on(
    isa: InstructionSet,
    data_type: DataType,
    policy: NanPolicy,
) -> Option<Kernel> {
    match isa {
        #[cfg(target_arch = "x86_64")]
        InstructionSet::Avx2 => sign_avx2::kernel(data_type, policy),
        #[cfg(target_arch = "x86_64")]
        InstructionSet::Avx512 => {
            sign_avx512::kernel(data_type, policy).or_else(|| sign_avx2::kernel(data_type, policy))
        }
        #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
        InstructionSet::Neon => sign_neon::kernel(data_type, policy),
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        InstructionSet::Simd128 => sign_wasm::kernel(data_type, policy),
        _ => sign_for::<Portable>(data_type, policy),
    }
}

/// The IS_INFINITY kernel for an input data type on an instruction set (output: one
/// byte, 0 or 1); `None` for non-float types.
pub(crate) fn is_infinity_on(
    isa: InstructionSet,
    data_type: DataType,
    mode: InfinityMode,
) -> Option<Kernel> {
    match isa {
        #[cfg(target_arch = "x86_64")]
        InstructionSet::Avx2 => loops::is_infinity::<is_infinity_avx2::Loops>(data_type, mode)
            .or_else(|| is_infinity_for::<isa::Avx2>(data_type, mode)),
        #[cfg(target_arch = "x86_64")]
        InstructionSet::Avx512 => loops::is_infinity::<is_infinity_avx512::Loops>(data_type, mode)
            .or_else(|| is_infinity_for::<isa::Avx2>(data_type, mode)),
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        InstructionSet::Simd128 => loops::is_infinity::<is_infinity_wasm::Loops>(data_type, mode)
            .or_else(|| is_infinity_for::<Portable>(data_type, mode)),
        _ => is_infinity_for::<Portable>(data_type, mode),
    }
}

/// The SIGN kernel for a data type on this machine's instruction set.
pub(crate) fn sign(data_type: DataType, policy: NanPolicy) -> Option<Kernel> {
    sign_on(isa::selected(), data_type, policy)
}

/// The IS_INFINITY kernel for an input data type on this machine's instruction set.
pub(crate) fn is_infinity(data_type: DataType, mode: InfinityMode) -> Option<Kernel> {
    is_infinity_on(isa::selected(), data_type, mode)
}

/// The kernel for a validated description.
pub(crate) fn for_desc(desc: &OperatorDesc, policy: NanPolicy) -> Option<Kernel> {
    match desc {
        OperatorDesc::Sign(d) => sign(d.input.data_type, policy),
        OperatorDesc::IsInfinity(d) => is_infinity(d.input.data_type, d.mode),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ewise_core::reference::{is_infinity_bits, sign_bits};

    fn available() -> Vec<InstructionSet> {
        InstructionSet::available()
    }

    fn patterns(width: usize) -> Vec<u64> {
        let mut s = 0x243F_6A88_85A3_08D3u64;
        let mask = if width == 8 {
            u64::MAX
        } else {
            (1 << (8 * width)) - 1
        };
        let mut v: Vec<u64> = (0..(1u64 << 16).min(mask)).collect();
        for _ in 0..20_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            v.push(s & mask);
        }
        v
    }

    fn to_bytes(values: &[u64], width: usize) -> Vec<u8> {
        values
            .iter()
            .flat_map(|v| v.to_ne_bytes()[..width].to_vec())
            .collect()
    }

    fn from_bytes(bytes: &[u8], width: usize) -> Vec<u64> {
        bytes
            .chunks(width)
            .map(|c| {
                let mut b = [0u8; 8];
                b[..width].copy_from_slice(c);
                u64::from_ne_bytes(b)
            })
            .collect()
    }

    /// Every instruction set has a kernel for exactly the types and modes the portable
    /// loops have.
    #[test]
    fn every_instruction_set_takes_every_type() {
        for isa in available() {
            for t in DataType::ALL {
                for policy in NanPolicy::ALL {
                    let (has, portable) = (
                        sign_on(isa, t, policy).is_some(),
                        sign_on(InstructionSet::Portable, t, policy).is_some(),
                    );
                    assert_eq!(has, portable, "SIGN {isa:?} {t} {policy}");
                }
                for mode in InfinityMode::ALL {
                    let (has, portable) = (
                        is_infinity_on(isa, t, mode).is_some(),
                        is_infinity_on(InstructionSet::Portable, t, mode).is_some(),
                    );
                    assert_eq!(has, portable, "IS_INFINITY {isa:?} {t} {mode}");
                }
            }
        }
    }

    /// Every instruction set, plain and streaming, separate and in place, equals the
    /// reference on every 16-bit pattern and random wider ones.
    #[test]
    fn every_instruction_set_matches_the_reference() {
        for isa in available() {
            for t in DataType::ALL {
                for policy in NanPolicy::ALL {
                    let Some(k) = sign_on(isa, t, policy) else {
                        continue;
                    };
                    let p = patterns(k.in_size);
                    let input = to_bytes(&p, k.in_size);
                    let want: Vec<u64> = p
                        .iter()
                        .map(|&b| sign_bits(t, b, policy).unwrap())
                        .collect();
                    for map in [k.map, k.map_stream] {
                        let mut out = vec![0u8; input.len()];
                        map(&input, &mut out);
                        assert_eq!(from_bytes(&out, k.in_size), want, "{isa:?} {t} {policy}");
                    }
                    for map in [k.map_in_place.unwrap(), k.map_in_place_stream.unwrap()] {
                        let mut data = input.clone();
                        map(&mut data);
                        assert_eq!(
                            from_bytes(&data, k.in_size),
                            want,
                            "{isa:?} {t} {policy} in place"
                        );
                    }
                }
                for mode in InfinityMode::ALL {
                    let Some(k) = is_infinity_on(isa, t, mode) else {
                        continue;
                    };
                    let p = patterns(k.in_size);
                    let input = to_bytes(&p, k.in_size);
                    let want: Vec<u8> = p
                        .iter()
                        .map(|&b| u8::from(is_infinity_bits(t, b, mode).unwrap()))
                        .collect();
                    for map in [k.map, k.map_stream] {
                        let mut out = vec![9u8; p.len()];
                        map(&input, &mut out);
                        assert_eq!(out, want, "{isa:?} {t} {mode}");
                    }
                }
            }
        }
    }

    /// Bit patterns that sit on IS_INFINITY's edges for a float type of `width` bytes
    /// whose +infinity is `inf`: both infinities, NaNs beside them and at the extremes,
    /// the largest finite values, signed zeros and subnormals, and a value whose low half
    /// holds the high half of infinity.
    fn edges(width: usize, inf: u64) -> Vec<u64> {
        let all = if width == 8 {
            u64::MAX
        } else {
            (1 << (8 * width)) - 1
        };
        let sign = 1 << (8 * width - 1);
        let mut v = vec![
            inf,
            inf | sign,
            inf + 1,
            (inf + 1) | sign,
            all,
            all & !sign,
            inf - 1,
            (inf - 1) | sign,
            0,
            sign,
            1,
            1 | sign,
        ];
        if width > 1 {
            v.push(inf >> (4 * width));
            v.push(inf | (inf >> (4 * width)));
        }
        v
    }

    /// IS_INFINITY on every instruction set, plain and streaming, for every length
    /// 0..=200 and a few thousand, written at every offset 0..64 from a 64-byte boundary,
    /// from inputs at varied alignments (some not a whole element), with every edge value
    /// at every position over the offsets; nothing outside the output is written.
    #[test]
    fn is_infinity_matches_the_reference_at_every_alignment_and_length() {
        const GUARD: u8 = 0xA5;
        for isa in available() {
            for t in DataType::ALL {
                let inf = match t {
                    DataType::Float64 => 0x7FF0_0000_0000_0000,
                    DataType::Float32 => 0x7F80_0000,
                    DataType::Float16 => 0x7C00,
                    DataType::Bfloat16 => 0x7F80,
                    _ => 0x7C,
                };
                for mode in InfinityMode::ALL {
                    let Some(k) = is_infinity_on(isa, t, mode) else {
                        continue;
                    };
                    let w = k.in_size;
                    let values = edges(w, inf);
                    let wants: Vec<u8> = values
                        .iter()
                        .map(|&b| u8::from(is_infinity_bits(t, b, mode).unwrap()))
                        .collect();
                    for len in (0..=200).chain([1000, 2047, 4133]) {
                        let mut src = vec![0u64; len + 8];
                        let mut dst = vec![GUARD; len + 192];
                        let base = dst.as_ptr().align_offset(64);
                        for off in 0..64 {
                            let pick = |i: usize| (i + len + off) % values.len();
                            let in_at = off * 3 % 32 / w * w + usize::from(off % 8 == 7);
                            let input = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut src)
                                [in_at..in_at + len * w];
                            for (i, e) in input.chunks_exact_mut(w).enumerate() {
                                e.copy_from_slice(&values[pick(i)].to_ne_bytes()[..w]);
                            }
                            let want: Vec<u8> = (0..len).map(|i| wants[pick(i)]).collect();
                            for (name, map) in [("plain", k.map), ("streaming", k.map_stream)] {
                                dst.fill(GUARD);
                                let out = base + off;
                                map(input, &mut dst[out..out + len]);
                                let at = format!("{isa:?} {t} {mode} {name} len {len} off {off}");
                                assert_eq!(dst[out..out + len], want, "{at}");
                                assert!(dst[..out].iter().all(|&b| b == GUARD), "{at}");
                                assert!(dst[out + len..].iter().all(|&b| b == GUARD), "{at}");
                            }
                        }
                    }
                }
            }
        }
    }
}
