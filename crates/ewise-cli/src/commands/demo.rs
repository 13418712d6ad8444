//! `ewise demo`: both operators on special values, in several types, as a table.
//!
//! Every result shown is computed by the operators themselves (compiled with the ewise
//! extensions enabled), never by formatting code.

use std::fmt::Write as _;

use anyhow::Result;
use ewise_cpu::half::{bf16, f16};
use ewise_cpu::{DataType, Device, Extensions, InfinityMode, NanPolicy, OperatorDesc, TensorDesc};

use crate::table::Table;

/// A binary floating-point format: enough to build its special values.
struct Format {
    data_type: DataType,
    bits: u32,
    mantissa_bits: u32,
    from_f64: fn(f64) -> u64,
    to_f64: fn(u64) -> f64,
}

const FLOATS: [Format; 4] = [
    Format {
        data_type: DataType::Float32,
        bits: 32,
        mantissa_bits: 23,
        from_f64: |x| u64::from((x as f32).to_bits()),
        to_f64: |b| f64::from(f32::from_bits(b as u32)),
    },
    Format {
        data_type: DataType::Float16,
        bits: 16,
        mantissa_bits: 10,
        from_f64: |x| u64::from(f16::from_f64(x).to_bits()),
        to_f64: |b| f16::from_bits(b as u16).to_f64(),
    },
    Format {
        data_type: DataType::Bfloat16,
        bits: 16,
        mantissa_bits: 7,
        from_f64: |x| u64::from(bf16::from_f64(x).to_bits()),
        to_f64: |b| bf16::from_bits(b as u16).to_f64(),
    },
    Format {
        data_type: DataType::Float64,
        bits: 64,
        mantissa_bits: 52,
        from_f64: f64::to_bits,
        to_f64: f64::from_bits,
    },
];

impl Format {
    fn sign(&self) -> u64 {
        1 << (self.bits - 1)
    }

    fn infinity(&self) -> u64 {
        (self.sign() - 1) & !((1 << self.mantissa_bits) - 1)
    }

    fn cases(&self) -> Vec<(String, u64)> {
        let (sign, inf) = (self.sign(), self.infinity());
        let quiet = 1 << (self.mantissa_bits - 1);
        let all = (1u64 << self.mantissa_bits) - 1;
        let tiny = format!("{:.3e}", (self.to_f64)(1));
        vec![
            ("-inf".into(), sign | inf),
            ("-2.5".into(), (self.from_f64)(-2.5)),
            (format!("-{tiny} (min subnormal)"), sign | 1),
            ("-0".into(), sign),
            ("+0".into(), 0),
            (format!("+{tiny} (min subnormal)"), 1),
            ("+0.5".into(), (self.from_f64)(0.5)),
            (
                format!("+{:.4e} (max finite)", (self.to_f64)(inf - 1)),
                inf - 1,
            ),
            ("+inf".into(), inf),
            ("NaN (quiet)".into(), inf | quiet),
            ("-NaN (quiet)".into(), sign | inf | quiet),
            ("NaN payload 0x1 (signaling)".into(), inf | 1),
            (format!("-NaN payload {all:#x}"), sign | inf | all),
        ]
    }

    fn hex(&self, bits: u64) -> String {
        format!("0x{:0width$x}", bits, width = (self.bits / 4) as usize)
    }

    fn describe(&self, bits: u64) -> String {
        let x = (self.to_f64)(bits);
        if x.is_nan() {
            format!("NaN {}", self.hex(bits))
        } else if x == 0.0 {
            let sign = if bits & self.sign() != 0 { "-" } else { "+" };
            format!("{sign}0 {}", self.hex(bits))
        } else {
            format!("{x:+}")
        }
    }
}

/// The text `ewise demo` prints.
pub fn render() -> Result<String> {
    let device = Device::builder().extensions(Extensions::Enabled).build()?;
    let mut out = String::from(
        "ewise demo: ELEMENT_WISE_SIGN and ELEMENT_WISE_IS_INFINITY on special values\n\
         (every result below is computed by the operators)\n\
         \n\
         SIGN gives -1, +0 or +1 in the input's type; -0 gives +0, the all-zero pattern.\n\
         For NaN, policy zero (DirectML; --semantics dml) gives +0, and policy propagate\n\
         (ONNX, numpy; --semantics onnx) returns the NaN unchanged, payload and sign kept.\n\
         IS_INFINITY gives 1 or 0 (uint8 in DirectML, bool in ONNX): EITHER detects both\n\
         infinities, POSITIVE only +inf, NEGATIVE only -inf; NaN is never an infinity.\n",
    );
    for format in &FLOATS {
        let cases = format.cases();
        let bits: Vec<u64> = cases.iter().map(|c| c.1).collect();
        let zero = run(&device, format.data_type, &bits, Job::Sign(NanPolicy::Zero))?;
        let keep = run(
            &device,
            format.data_type,
            &bits,
            Job::Sign(NanPolicy::Propagate),
        )?;
        let modes = [
            InfinityMode::Either,
            InfinityMode::Positive,
            InfinityMode::Negative,
        ];
        let mut inf = Vec::new();
        for mode in modes {
            inf.push(run(
                &device,
                format.data_type,
                &bits,
                Job::IsInfinity(mode),
            )?);
        }
        let mut table = Table::new(&[
            "input",
            "bits",
            "SIGN nan=zero",
            "SIGN nan=propagate",
            "IS_INF EITHER",
            "POSITIVE",
            "NEGATIVE",
        ]);
        for (i, (label, b)) in cases.iter().enumerate() {
            table.row(vec![
                label.clone(),
                format.hex(*b),
                format.describe(zero[i]),
                format.describe(keep[i]),
                inf[0][i].to_string(),
                inf[1][i].to_string(),
                inf[2][i].to_string(),
            ]);
        }
        let _ = write!(out, "\n{}\n{}", format.data_type, table.render("  "));
    }
    out.push_str(&integers(&device)?);
    Ok(out)
}

fn integers(device: &Device) -> Result<String> {
    let cases: [(DataType, &[i64]); 3] = [
        (DataType::Int8, &[-128, -5, -1, 0, 1, 127]),
        (DataType::Uint8, &[0, 1, 200, 255]),
        (DataType::Int64, &[i64::MIN, -1, 0, 1, i64::MAX]),
    ];
    let mut table = Table::new(&["type", "input", "SIGN"]);
    for (data_type, values) in cases {
        let width = data_type.size_in_bytes().unwrap_or(1) * 8;
        let mask = if width == 64 {
            u64::MAX
        } else {
            (1 << width) - 1
        };
        let bits: Vec<u64> = values.iter().map(|&v| v as u64 & mask).collect();
        let signs = run(device, data_type, &bits, Job::Sign(NanPolicy::Zero))?;
        for (&v, &s) in values.iter().zip(&signs) {
            let shift = 64 - width;
            let signed = ((s << shift) as i64) >> shift;
            let result = if data_type.is_signed_integer() {
                signed
            } else {
                s as i64
            };
            table.row(vec![
                data_type.name().to_string(),
                v.to_string(),
                result.to_string(),
            ]);
        }
    }
    Ok(format!(
        "\nIntegers (SIGN only; the minimum gives -1, unsigned values give 0 or 1)\n{}",
        table.render("  ")
    ))
}

#[derive(Clone, Copy)]
enum Job {
    Sign(NanPolicy),
    IsInfinity(InfinityMode),
}

fn run(device: &Device, data_type: DataType, bits: &[u64], job: Job) -> Result<Vec<u64>> {
    let size = data_type.size_in_bytes().unwrap_or(1) as usize;
    let input: Vec<u8> = bits
        .iter()
        .flat_map(|b| {
            b.to_ne_bytes()
                .into_iter()
                .skip(if cfg!(target_endian = "big") {
                    8 - size
                } else {
                    0
                })
                .take(size)
        })
        .collect();
    let n = bits.len() as u32;
    let in_desc = TensorDesc::new(data_type, &[n]);
    let (desc, out_type, policy) = match job {
        Job::Sign(policy) => (
            OperatorDesc::sign(in_desc.clone(), in_desc),
            data_type,
            policy,
        ),
        Job::IsInfinity(mode) => (
            OperatorDesc::is_infinity(in_desc, TensorDesc::new(DataType::Uint8, &[n]), mode),
            DataType::Uint8,
            NanPolicy::Zero,
        ),
    };
    let compiled = device
        .create_operator(&desc)?
        .with_nan_policy(policy)
        .compile()?;
    let out_size = out_type.size_in_bytes().unwrap_or(1) as usize;
    let mut output = vec![0u8; bits.len() * out_size];
    compiled.execute_slices(&input, &mut output)?;
    Ok(output
        .chunks_exact(out_size)
        .map(|c| {
            let mut b = [0u8; 8];
            if cfg!(target_endian = "big") {
                b[8 - out_size..].copy_from_slice(c);
            } else {
                b[..out_size].copy_from_slice(c);
            }
            u64::from_ne_bytes(b)
        })
        .collect())
}
