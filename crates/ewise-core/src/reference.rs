//! The scalar reference semantics: docs/SEMANTICS.md section 1 in executable form.
//!
//! These functions are written for clarity, through each type's own arithmetic (f16 and
//! bf16 through the `half` crate's comparisons), never through the bit tricks the fast
//! kernels use, so that the kernels can be tested against an independent statement of
//! the contract. Elements travel as their bit patterns, zero-extended into a `u64`.

use half::{bf16, f16};

use crate::dtype::DataType;
use crate::error::{Error, Result};
use crate::operator::{InfinityMode, NanPolicy, OperatorDesc, TensorRole};
use crate::tensor::TensorDesc;

/// SIGN of one element given by its bit pattern; `None` when SIGN has no meaning for
/// the type (bool, float8, 4-bit and unknown types).
///
/// - x < 0 gives -1, x > 0 gives +1, including infinities and subnormals (never flushed);
/// - +0 and -0 give +0 (the all-zero pattern);
/// - NaN gives +0 under [`NanPolicy::Zero`], or the input unchanged under
///   [`NanPolicy::Propagate`];
/// - signed minimum gives -1; unsigned values give 0 for 0 and 1 otherwise.
pub fn sign_bits(data_type: DataType, bits: u64, policy: NanPolicy) -> Option<u64> {
    /// The three results a float type can give, besides a propagated NaN.
    struct Unit<T> {
        zero: T,
        one: T,
        minus_one: T,
    }
    fn float<T: PartialOrd + Copy>(
        x: T,
        is_nan: bool,
        unit: Unit<T>,
        to_bits: impl Fn(T) -> u64,
        bits: u64,
        policy: NanPolicy,
    ) -> u64 {
        if is_nan {
            match policy {
                NanPolicy::Zero => to_bits(unit.zero),
                NanPolicy::Propagate => bits,
            }
        } else if x < unit.zero {
            to_bits(unit.minus_one)
        } else if x > unit.zero {
            to_bits(unit.one)
        } else {
            to_bits(unit.zero)
        }
    }
    let r = match data_type {
        DataType::Float32 => {
            let x = f32::from_bits(bits as u32);
            let unit = Unit {
                zero: 0.0,
                one: 1.0,
                minus_one: -1.0,
            };
            float(x, x.is_nan(), unit, |v| v.to_bits().into(), bits, policy)
        }
        DataType::Float64 => {
            let x = f64::from_bits(bits);
            let unit = Unit {
                zero: 0.0,
                one: 1.0,
                minus_one: -1.0,
            };
            float(x, x.is_nan(), unit, f64::to_bits, bits, policy)
        }
        DataType::Float16 => {
            let x = f16::from_bits(bits as u16);
            let unit = Unit {
                zero: f16::ZERO,
                one: f16::ONE,
                minus_one: f16::NEG_ONE,
            };
            float(x, x.is_nan(), unit, |v| v.to_bits().into(), bits, policy)
        }
        DataType::Bfloat16 => {
            let x = bf16::from_bits(bits as u16);
            let unit = Unit {
                zero: bf16::ZERO,
                one: bf16::ONE,
                minus_one: bf16::NEG_ONE,
            };
            float(x, x.is_nan(), unit, |v| v.to_bits().into(), bits, policy)
        }
        DataType::Int8 => u64::from((bits as i8).signum() as u8),
        DataType::Int16 => u64::from((bits as i16).signum() as u16),
        DataType::Int32 => u64::from((bits as i32).signum() as u32),
        DataType::Int64 => (bits as i64).signum() as u64,
        DataType::Uint8 => u64::from(bits as u8 != 0),
        DataType::Uint16 => u64::from(bits as u16 != 0),
        DataType::Uint32 => u64::from(bits as u32 != 0),
        DataType::Uint64 => u64::from(bits != 0),
        DataType::Bool
        | DataType::Float8E4M3Fn
        | DataType::Float8E4M3Fnuz
        | DataType::Float8E5M2
        | DataType::Float8E5M2Fnuz
        | DataType::Uint4
        | DataType::Int4
        | DataType::Unknown => return None,
    };
    Some(r)
}

/// IS_INFINITY of one element given by its bit pattern; `None` for non-float types.
///
/// True exactly for the infinities `mode` detects. NaN (any payload or sign), finite
/// values, subnormals and zeros are false. Of the float8 formats only `float8e5m2` has
/// infinities (0x7C is +inf, 0xFC is -inf); the others are always false.
pub fn is_infinity_bits(data_type: DataType, bits: u64, mode: InfinityMode) -> Option<bool> {
    let (infinite, negative) = match data_type {
        DataType::Float32 => {
            let x = f32::from_bits(bits as u32);
            (x.is_infinite(), x.is_sign_negative())
        }
        DataType::Float64 => {
            let x = f64::from_bits(bits);
            (x.is_infinite(), x.is_sign_negative())
        }
        DataType::Float16 => {
            let x = f16::from_bits(bits as u16);
            (x.is_infinite(), x.is_sign_negative())
        }
        DataType::Bfloat16 => {
            let x = bf16::from_bits(bits as u16);
            (x.is_infinite(), x.is_sign_negative())
        }
        DataType::Float8E5M2 => {
            let b = bits as u8;
            (b == 0x7C || b == 0xFC, b == 0xFC)
        }
        DataType::Float8E4M3Fn | DataType::Float8E4M3Fnuz | DataType::Float8E5M2Fnuz => {
            (false, false)
        }
        _ => return None,
    };
    Some(
        infinite
            && if negative {
                mode.detects_negative()
            } else {
                mode.detects_positive()
            },
    )
}

/// Applies an operator element by element, walking every index of the input and output
/// layouts (strides included) with the scalar functions above.
///
/// `input` and `output` start at the tensors' base (the bound offset) and must hold at
/// least their tensors' minimum sizes. Only bytes that an output element covers are
/// written. The description is not validated beyond what is needed to stay in bounds:
/// call [`crate::validate()`] first. Elements are read and written in native byte order.
pub fn run(desc: &OperatorDesc, policy: NanPolicy, input: &[u8], output: &mut [u8]) -> Result<()> {
    let in_desc = desc.input();
    let out_desc = desc.output();
    if in_desc.sizes != out_desc.sizes {
        return Err(Error::SizesMismatch {
            operator: desc.operator_type(),
            input: in_desc.sizes.clone(),
            output: out_desc.sizes.clone(),
        });
    }
    let in_size = check_span(desc, TensorRole::Input, in_desc, input.len())?;
    let out_size = check_span(desc, TensorRole::Output, out_desc, output.len())?;
    let in_strides = strides(desc, TensorRole::Input, in_desc)?;
    let out_strides = strides(desc, TensorRole::Output, out_desc)?;
    let sizes = &in_desc.sizes;
    let count = in_desc.element_count().unwrap_or(0);
    let mut index = vec![0u32; sizes.len()];
    for _ in 0..count {
        let in_off = offset(&index, &in_strides) * in_size;
        let out_off = offset(&index, &out_strides) * out_size;
        let bits = read(&input[in_off..in_off + in_size]);
        let result = match desc {
            OperatorDesc::Sign(_) => sign_bits(in_desc.data_type, bits, policy),
            OperatorDesc::IsInfinity(d) => {
                is_infinity_bits(in_desc.data_type, bits, d.mode).map(u64::from)
            }
        };
        let result = result.ok_or(Error::UnsupportedDataType {
            operator: desc.operator_type(),
            tensor: TensorRole::Input,
            given: in_desc.data_type,
            level: crate::FeatureLevel::LATEST,
            extensions: true,
            supported: crate::support::OperatorSupport::of(desc.operator_type())
                .extended
                .input_types,
        })?;
        write(&mut output[out_off..out_off + out_size], result);
        for d in (0..sizes.len()).rev() {
            index[d] += 1;
            if index[d] < sizes[d] {
                break;
            }
            index[d] = 0;
        }
    }
    Ok(())
}

fn check_span(
    desc: &OperatorDesc,
    tensor: TensorRole,
    t: &TensorDesc,
    len: usize,
) -> Result<usize> {
    let required = t.min_size_in_bytes().unwrap_or(u64::MAX);
    if (len as u64) < required {
        return Err(Error::BindingTooSmall {
            operator: desc.operator_type(),
            tensor,
            given: len as u64,
            required,
        });
    }
    Ok(t.data_type.size_in_bytes().unwrap_or(1) as usize)
}

fn strides(desc: &OperatorDesc, tensor: TensorRole, t: &TensorDesc) -> Result<Vec<u64>> {
    t.effective_strides().ok_or_else(|| Error::StrideCount {
        operator: desc.operator_type(),
        tensor,
        given: t.strides.as_ref().map_or(0, Vec::len),
        expected: t.sizes.len(),
    })
}

fn offset(index: &[u32], strides: &[u64]) -> usize {
    index
        .iter()
        .zip(strides)
        .map(|(&i, &s)| u64::from(i) * s)
        .sum::<u64>() as usize
}

fn read(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    match bytes.len() {
        1 => return u64::from(bytes[0]),
        2 => return u64::from(u16::from_ne_bytes([bytes[0], bytes[1]])),
        4 => {
            b[..4].copy_from_slice(bytes);
            return u64::from(u32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
        }
        _ => b.copy_from_slice(bytes),
    }
    u64::from_ne_bytes(b)
}

fn write(bytes: &mut [u8], value: u64) {
    match bytes.len() {
        1 => bytes[0] = value as u8,
        2 => bytes.copy_from_slice(&(value as u16).to_ne_bytes()),
        4 => bytes.copy_from_slice(&(value as u32).to_ne_bytes()),
        _ => bytes.copy_from_slice(&value.to_ne_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use DataType::*;
    use NanPolicy::*;

    fn s(t: DataType, bits: u64, p: NanPolicy) -> u64 {
        sign_bits(t, bits, p).unwrap()
    }

    #[test]
    fn float32_pinned_cases() {
        for p in NanPolicy::ALL {
            assert_eq!(s(Float32, 0x8000_0000, p), 0, "-0 gives +0");
            assert_eq!(s(Float32, 0, p), 0);
            assert_eq!(
                s(Float32, 0x0000_0001, p),
                0x3F80_0000,
                "smallest subnormal"
            );
            assert_eq!(
                s(Float32, 0x8000_0001, p),
                0xBF80_0000,
                "negative subnormal"
            );
            assert_eq!(s(Float32, 0x7F80_0000, p), 0x3F80_0000, "+inf");
            assert_eq!(s(Float32, 0xFF80_0000, p), 0xBF80_0000, "-inf");
            assert_eq!(s(Float32, 0x7F7F_FFFF, p), 0x3F80_0000, "max finite");
        }
        for nan in [
            0x7FC0_0000u64,
            0xFFC0_0000,
            0x7F80_0001,
            0xFFFF_FFFF,
            0x7FA5_A5A5,
        ] {
            assert_eq!(s(Float32, nan, Zero), 0);
            assert_eq!(s(Float32, nan, Propagate), nan);
        }
    }

    #[test]
    fn float64_and_half_pinned_cases() {
        assert_eq!(s(Float64, 0x8000_0000_0000_0000, Zero), 0);
        assert_eq!(s(Float64, 1, Zero), 0x3FF0_0000_0000_0000);
        assert_eq!(
            s(Float64, 0x8000_0000_0000_0001, Zero),
            0xBFF0_0000_0000_0000
        );
        assert_eq!(
            s(Float64, 0xFFF8_0000_0000_0123, Propagate),
            0xFFF8_0000_0000_0123
        );
        assert_eq!(s(Float64, 0xFFF8_0000_0000_0123, Zero), 0);
        assert_eq!(s(Float16, 0x8000, Zero), 0);
        assert_eq!(s(Float16, 0x0001, Zero), 0x3C00);
        assert_eq!(s(Float16, 0x8001, Zero), 0xBC00);
        assert_eq!(s(Float16, 0xFC00, Zero), 0xBC00);
        assert_eq!(s(Float16, 0x7E01, Zero), 0);
        assert_eq!(s(Float16, 0xFE01, Propagate), 0xFE01);
        assert_eq!(s(Bfloat16, 0x8000, Propagate), 0);
        assert_eq!(s(Bfloat16, 0x0001, Zero), 0x3F80);
        assert_eq!(s(Bfloat16, 0x8001, Zero), 0xBF80);
        assert_eq!(s(Bfloat16, 0xFF81, Propagate), 0xFF81);
        assert_eq!(s(Bfloat16, 0xFF81, Zero), 0);
    }

    #[test]
    fn integers_pinned_cases() {
        assert_eq!(s(Int8, 0x80, Zero), 0xFF, "int8 min gives -1");
        assert_eq!(s(Int8, 0x7F, Zero), 1);
        assert_eq!(s(Int16, 0x8000, Zero), 0xFFFF);
        assert_eq!(s(Int32, 0x8000_0000, Zero), 0xFFFF_FFFF);
        assert_eq!(s(Int64, 0x8000_0000_0000_0000, Zero), u64::MAX);
        assert_eq!(s(Int64, 0, Zero), 0);
        assert_eq!(s(Uint8, 0xFF, Zero), 1, "unsigned max gives 1");
        assert_eq!(s(Uint64, u64::MAX, Zero), 1);
        assert_eq!(s(Uint32, 0, Zero), 0);
        assert_eq!(sign_bits(Bool, 1, Zero), None);
        assert_eq!(sign_bits(Float8E5M2, 1, Zero), None);
    }

    #[test]
    fn is_infinity_pinned_cases() {
        use InfinityMode::*;
        let cases: [(DataType, u64, bool, bool); 8] = [
            (Float32, 0x7F80_0000, true, false),
            (Float32, 0xFF80_0000, false, true),
            (Float16, 0x7C00, true, false),
            (Float16, 0xFC00, false, true),
            (Bfloat16, 0x7F80, true, false),
            (Float64, 0xFFF0_0000_0000_0000, false, true),
            (Float8E5M2, 0x7C, true, false),
            (Float8E5M2, 0xFC, false, true),
        ];
        for (t, bits, pos, neg) in cases {
            assert_eq!(is_infinity_bits(t, bits, Either), Some(true));
            assert_eq!(is_infinity_bits(t, bits, Positive), Some(pos));
            assert_eq!(is_infinity_bits(t, bits, Negative), Some(neg));
            assert_eq!(is_infinity_bits(t, bits, Neither), Some(false));
        }
        for (t, bits) in [
            (Float32, 0x7FC0_0000u64),
            (Float32, 0xFF80_0001),
            (Float32, 0x7F7F_FFFF),
            (Float16, 0x7C01),
            (Float8E5M2, 0x7D),
            (Float8E4M3Fn, 0x7F),
            (Float8E4M3Fnuz, 0x80),
            (Float8E5M2Fnuz, 0x7C),
        ] {
            assert_eq!(
                is_infinity_bits(t, bits, Either),
                Some(false),
                "{t} {bits:#x}"
            );
        }
        assert_eq!(is_infinity_bits(Int32, 0, Either), None);
    }

    #[test]
    fn run_walks_strides() {
        // 2x2 input viewed transposed (strides [1, 2]) into a packed output.
        let input_desc = TensorDesc::strided(Int8, &[2, 2], &[1, 2]);
        let desc = OperatorDesc::sign(input_desc, TensorDesc::new(Int8, &[2, 2]));
        let input = [5u8, 0, 0x80, 0];
        let mut output = [9u8; 4];
        run(&desc, Zero, &input, &mut output).unwrap();
        assert_eq!(output, [1, 0xFF, 0, 0]);
        let short = [0u8; 2];
        assert!(run(&desc, Zero, &short, &mut output).is_err());
        let bad = OperatorDesc::sign(TensorDesc::new(Int8, &[2, 2]), TensorDesc::new(Int8, &[4]));
        assert!(run(&bad, Zero, &input, &mut output).is_err());
        let mut bad_strides = TensorDesc::new(Int8, &[2, 2]);
        bad_strides.strides = Some(vec![1]);
        let bad = OperatorDesc::sign(bad_strides, TensorDesc::new(Int8, &[2, 2]));
        assert!(run(&bad, Zero, &input, &mut output).is_err());
    }
}
