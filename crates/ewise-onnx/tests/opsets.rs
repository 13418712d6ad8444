//! Every default-domain opset x operator x element type: accepted exactly when
//! docs/SEMANTICS.md section 6 says so, and then computing what ewise's scalar reference
//! computes for a set of telling bit patterns.

mod common;

use common::*;
use ewise_cpu::reference::{is_infinity_bits, sign_bits};
use ewise_onnx::opset::{OpType, MAX_OPSET};
use ewise_onnx::{dtype, DataType, Error, InfinityMode, NanPolicy, Tensor};

/// Every ONNX element type number ewise can hold, plus string.
const TYPES: [i32; 18] = [
    FLOAT,
    UINT8,
    INT8,
    UINT16,
    INT16,
    INT32,
    INT64,
    STRING,
    BOOL,
    FLOAT16,
    DOUBLE,
    UINT32,
    UINT64,
    BFLOAT16,
    FLOAT8E4M3FN,
    FLOAT8E4M3FNUZ,
    FLOAT8E5M2,
    FLOAT8E5M2FNUZ,
];

fn accepted(op: OpType, opset: i64, elem: i32) -> bool {
    use DataType::*;
    let Some(t) = dtype::from_onnx(elem) else {
        return false;
    };
    let sign9 = [
        Float16, Float32, Float64, Int8, Int16, Int32, Int64, Uint8, Uint16, Uint32, Uint64,
    ];
    match op {
        OpType::Sign if opset >= 13 => sign9.contains(&t) || t == Bfloat16,
        OpType::Sign if opset >= 9 => sign9.contains(&t),
        OpType::IsInf if opset >= 20 => [
            Float32,
            Float64,
            Float16,
            Bfloat16,
            Float8E4M3Fn,
            Float8E4M3Fnuz,
            Float8E5M2,
            Float8E5M2Fnuz,
        ]
        .contains(&t),
        OpType::IsInf if opset >= 10 => [Float32, Float64].contains(&t),
        _ => false,
    }
}

/// Bit patterns worth testing for an element size: zeros, ones, infinities, NaNs with
/// payloads and signs, subnormals, extremes, and every pattern of one-byte types.
fn patterns(size: usize) -> Vec<u64> {
    match size {
        1 => (0..=255).collect(),
        2 => vec![
            0x0000, 0x8000, 0x0001, 0x8001, 0x3C00, 0xBC00, 0x7BFF, 0x7C00, 0xFC00, 0x7C01, 0xFE00,
            0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x7F7F, 0x3F80, 0xFFFF, 0x7FFF,
        ],
        4 => vec![
            0x0000_0000,
            0x8000_0000,
            0x0000_0001,
            0x8000_0001,
            0x3F80_0000,
            0xBF80_0000,
            0x7F80_0000,
            0xFF80_0000,
            0x7FC0_0000,
            0xFFC0_1234,
            0x7F80_0001,
            0x7F7F_FFFF,
            0xFFFF_FFFF,
            0x7FFF_FFFF,
        ],
        _ => vec![
            0,
            1 << 63,
            1,
            (1 << 63) | 1,
            0x3FF0_0000_0000_0000,
            0x7FF0_0000_0000_0000,
            0xFFF0_0000_0000_0000,
            0x7FF8_0000_0000_0001,
            0xFFF0_0000_0000_0001,
            0x7FEF_FFFF_FFFF_FFFF,
            u64::MAX,
            i64::MAX as u64,
        ],
    }
}

fn tensor_of(t: DataType, bits: &[u64]) -> Tensor {
    let size = t.size_in_bytes().unwrap() as usize;
    let mut data = Vec::new();
    for &b in bits {
        if cfg!(target_endian = "little") {
            data.extend_from_slice(&b.to_le_bytes()[..size]);
        } else {
            data.extend_from_slice(&b.to_be_bytes()[8 - size..]);
        }
    }
    Tensor::new(t, vec![bits.len()], data).unwrap()
}

fn element_bits(t: &Tensor) -> Vec<u64> {
    let size = t.data_type.size_in_bytes().unwrap() as usize;
    t.data
        .chunks_exact(size)
        .map(|c| {
            let mut a = [0u8; 8];
            if cfg!(target_endian = "little") {
                a[..size].copy_from_slice(c);
                u64::from_le_bytes(a)
            } else {
                a[8 - size..].copy_from_slice(c);
                u64::from_be_bytes(a)
            }
        })
        .collect()
}

#[test]
fn every_opset_operator_and_type_is_accepted_exactly_as_specified() {
    let mut checked = 0;
    for opset in 1..=MAX_OPSET {
        for op in OpType::ALL {
            for elem in TYPES {
                let out_elem = if op == OpType::IsInf { BOOL } else { elem };
                let m = single(opset, node(op.name(), "x", "y"), elem, out_elem);
                let result = load(&m);
                if !accepted(op, opset, elem) {
                    let err = result.expect_err("should be refused");
                    assert!(
                        matches!(
                            err,
                            Error::UnsupportedType { .. }
                                | Error::OperatorNotInOpset { .. }
                                | Error::UnsupportedElementType { .. }
                        ),
                        "{op:?}-{opset} {elem}: {err}"
                    );
                    continue;
                }
                let model = result.unwrap_or_else(|e| panic!("{op:?} opset {opset} {elem}: {e}"));
                let t = dtype::from_onnx(elem).unwrap();
                let bits = patterns(t.size_in_bytes().unwrap() as usize);
                for policy in NanPolicy::ALL {
                    let model = model.clone().with_nan_policy(policy);
                    let out = model.run([("x", tensor_of(t, &bits))]).unwrap();
                    let y = &out[0].1;
                    let expected: Vec<u64> = match op {
                        OpType::Sign => bits
                            .iter()
                            .map(|&b| sign_bits(t, b, policy).unwrap())
                            .collect(),
                        OpType::IsInf => bits
                            .iter()
                            .map(|&b| is_infinity_bits(t, b, InfinityMode::Either).unwrap().into())
                            .collect(),
                    };
                    assert_eq!(
                        element_bits(y),
                        expected,
                        "{op:?} opset {opset} {t} {policy}"
                    );
                }
                checked += 1;
            }
        }
    }
    assert_eq!(
        checked,
        (27 - 9 + 1) * 11 + (27 - 13 + 1) + (27 - 10 + 1) * 2 + (27 - 20 + 1) * 6
    );
}

#[test]
fn bfloat16_sign_needs_opset_13() {
    let m = single(12, node("Sign", "x", "y"), BFLOAT16, BFLOAT16);
    assert_eq!(
        load(&m).unwrap_err().to_string(),
        "node #0 (Sign): Sign-9 does not accept input type bfloat16 (accepted: float16, float, \
         double, int8, int16, int32, int64, uint8, uint16, uint32, uint64)"
    );
    let m = single(13, node("Sign", "x", "y"), BFLOAT16, BFLOAT16);
    let model = load(&m).unwrap();
    assert_eq!(model.steps().next().unwrap().version, 13);
}

#[test]
fn float16_is_inf_needs_opset_20() {
    let n = named(node("IsInf", "x", "y"), "inf16");
    let m = single(19, n.clone(), FLOAT16, BOOL);
    assert_eq!(
        load(&m).unwrap_err().to_string(),
        "node \"inf16\" (#0, IsInf): IsInf-10 does not accept input type float16 (accepted: float, double)"
    );
    let model = load(&single(20, n, FLOAT16, BOOL)).unwrap();
    let x = Tensor::from_values(
        vec![4],
        &[
            ewise_cpu::half::f16::INFINITY,
            ewise_cpu::half::f16::NEG_INFINITY,
            ewise_cpu::half::f16::NAN,
            ewise_cpu::half::f16::MAX,
        ],
    )
    .unwrap();
    let y = &model.run([("x", x)]).unwrap()[0].1;
    assert_eq!(y.values::<bool>().unwrap(), [true, true, false, false]);
}

#[test]
fn operators_before_their_first_opset_are_refused() {
    let err = load(&single(8, node("Sign", "x", "y"), FLOAT, FLOAT)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "node #0 (Sign): Sign does not exist at opset 8 (it was introduced in opset 9)"
    );
    let err = load(&single(9, node("IsInf", "x", "y"), FLOAT, BOOL)).unwrap_err();
    assert!(
        matches!(err, Error::OperatorNotInOpset { introduced: 10, .. }),
        "{err}"
    );
}

#[test]
fn opsets_outside_the_known_range_are_refused() {
    for opset in [0, MAX_OPSET + 1] {
        let err = load(&single(opset, node("Sign", "x", "y"), FLOAT, FLOAT)).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("model imports default-domain opset {opset} (supported: 1 to {MAX_OPSET})")
        );
    }
}

#[test]
fn the_ai_onnx_domain_name_is_the_default_domain() {
    let mut m = single(13, node("Sign", "x", "y"), FLOAT, FLOAT);
    m.opset_import[0].domain = "ai.onnx".into();
    m.graph.as_mut().unwrap().node[0].domain = "ai.onnx".into();
    assert_eq!(load(&m).unwrap().opset(), 13);
}

#[test]
fn is_inf_detect_flags_select_the_mode_and_both_off_is_all_false() {
    let x = [f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -0.0, f64::MAX];
    let cases = [
        (None, None, [true, true, false, false, false]),
        (Some(1), Some(1), [true, true, false, false, false]),
        (Some(1), Some(0), [true, false, false, false, false]),
        (Some(0), Some(1), [false, true, false, false, false]),
        (Some(0), None, [false, true, false, false, false]),
        (None, Some(0), [true, false, false, false, false]),
        (Some(0), Some(0), [false; 5]),
    ];
    for opset in [10, 20] {
        for (pos, neg, expected) in cases {
            let model = load(&single(opset, is_inf("x", "y", pos, neg), DOUBLE, BOOL)).unwrap();
            let step = model.steps().next().unwrap();
            let flags = (pos.unwrap_or(1) != 0, neg.unwrap_or(1) != 0);
            assert_eq!(step.mode, Some(InfinityMode::from_detect(flags.0, flags.1)));
            let t = Tensor::from_values(vec![5], &x).unwrap();
            let y = &model.run([("x", t)]).unwrap()[0].1;
            assert_eq!(y.data_type, DataType::Bool);
            assert_eq!(y.values::<bool>().unwrap(), expected, "{pos:?} {neg:?}");
        }
    }
}

#[test]
fn both_flags_off_is_all_false_for_every_float8_format_too() {
    for elem in [FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ] {
        let model = load(&single(20, is_inf("x", "y", Some(0), Some(0)), elem, BOOL)).unwrap();
        let t = dtype::from_onnx(elem).unwrap();
        let all: Vec<u8> = (0..=255).collect();
        let x = Tensor::new(t, vec![16, 16], all).unwrap();
        let y = &model.run([("x", x)]).unwrap()[0].1;
        assert!(y.data.iter().all(|&b| b == 0), "{t}");
    }
}

#[test]
fn only_float8e5m2_has_infinities() {
    for (elem, infinities) in [
        (FLOAT8E4M3FN, vec![]),
        (FLOAT8E4M3FNUZ, vec![]),
        (FLOAT8E5M2, vec![0x7C, 0xFC]),
        (FLOAT8E5M2FNUZ, vec![]),
    ] {
        let model = load(&single(20, node("IsInf", "x", "y"), elem, BOOL)).unwrap();
        let t = dtype::from_onnx(elem).unwrap();
        let x = Tensor::new(t, vec![256], (0..=255).collect()).unwrap();
        let y = &model.run([("x", x)]).unwrap()[0].1;
        let found: Vec<usize> = (0..256).filter(|&i| y.data[i] == 1).collect();
        assert_eq!(found, infinities, "{t}");
    }
}

#[test]
fn attribute_errors_name_the_node_and_what_is_accepted() {
    let mut n = node("Sign", "x", "y");
    n.attribute.push(int_attr("detect_positive", 1));
    let err = load(&single(13, n, FLOAT, FLOAT)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "node #0 (Sign): Sign-13 has no attribute \"detect_positive\" (accepted: none)"
    );
    let mut n = is_inf("x", "y", Some(1), None);
    n.attribute[0].r#type = ewise_onnx::proto::AttributeType::Float as i32;
    let err = load(&single(20, n, FLOAT, BOOL)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "node #0 (IsInf): attribute \"detect_positive\" of IsInf-20 has type FLOAT (expected INT)"
    );
    let err = load(&single(20, is_inf("x", "y", Some(1), Some(1)), FLOAT, BOOL));
    assert!(err.is_ok());
    let mut n = is_inf("x", "y", Some(1), None);
    n.attribute.push(int_attr("detect_positive", 0));
    let err = load(&single(20, n, FLOAT, BOOL)).unwrap_err();
    assert!(err.to_string().contains("is given more than once"), "{err}");
    let mut n = is_inf("x", "y", None, None);
    n.attribute.push(int_attr("detect_nan", 1));
    let err = load(&single(20, n, FLOAT, BOOL)).unwrap_err();
    assert!(
        err.to_string().contains(
            "has no attribute \"detect_nan\" (accepted: detect_positive, detect_negative)"
        ),
        "{err}"
    );
}

#[test]
fn declared_output_types_must_match_the_inferred_ones() {
    let err = load(&single(20, node("IsInf", "x", "y"), FLOAT, FLOAT)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "graph output \"y\" is declared as float, but is bool"
    );
    let err = load(&single(13, node("Sign", "x", "y"), INT8, UINT8)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "graph output \"y\" is declared as uint8, but is int8"
    );
}
