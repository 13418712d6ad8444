//! Every dtype x both semantics (dml also with --feature-level, its strict rules) x both
//! operators, compared bit for bit with the scalar reference; what each accepts is taken
//! from docs/SEMANTICS.md, not from the code.

mod common;

use common::*;
use ewise_cpu::{DataType, InfinityMode, NanPolicy};

const CASES: [(&str, DataType, Option<&str>); 17] = [
    ("<f2", DataType::Float16, None),
    ("<f4", DataType::Float32, None),
    ("<f8", DataType::Float64, None),
    ("|i1", DataType::Int8, None),
    ("<i2", DataType::Int16, None),
    ("<i4", DataType::Int32, None),
    ("<i8", DataType::Int64, None),
    ("|u1", DataType::Uint8, None),
    ("<u2", DataType::Uint16, None),
    ("<u4", DataType::Uint32, None),
    ("<u8", DataType::Uint64, None),
    ("|b1", DataType::Bool, None),
    ("<V2", DataType::Bfloat16, Some("bfloat16")),
    ("|V1", DataType::Float8E4M3Fn, Some("float8e4m3fn")),
    ("<f1", DataType::Float8E4M3Fnuz, Some("float8e4m3fnuz")),
    ("<f1", DataType::Float8E5M2, Some("float8e5m2")),
    ("|V1", DataType::Float8E5M2Fnuz, Some("float8e5m2fnuz")),
];

/// Whether `op` takes `t` under DirectML's strict rules at 6_4 (`strict`) or the
/// extended ones.
fn accepts(op: &str, strict: bool, t: DataType) -> bool {
    use DataType::*;
    let dml_sign = [
        Float32, Float16, Int32, Int16, Int8, Uint32, Uint16, Uint8, Int64, Uint64,
    ];
    match (op, strict) {
        ("sign", true) => dml_sign.contains(&t),
        ("sign", false) => dml_sign.contains(&t) || [Float64, Bfloat16].contains(&t),
        ("is-infinity", true) => [Float32, Float16].contains(&t),
        _ => [
            Float32,
            Float16,
            Float64,
            Bfloat16,
            Float8E4M3Fn,
            Float8E4M3Fnuz,
            Float8E5M2,
            Float8E5M2Fnuz,
        ]
        .contains(&t),
    }
}

#[test]
fn every_dtype_semantics_and_operator() {
    let dir = temp_dir();
    for (i, &(descr, t, flag)) in CASES.iter().enumerate() {
        let size = t.size_in_bytes().unwrap() as usize;
        let mut input = patterns(t, 45, i as u64);
        input.truncate(input.len() / 4 * 4);
        let shape = [4, input.len() as u64 / 4];
        let src = path(&dir, &format!("in{i}.npy"));
        write_npy(&src, descr, false, &shape, &to_le(&input, size));
        for (semantics, strict) in [("dml", false), ("dml", true), ("onnx", false)] {
            for op in ["sign", "is-infinity"] {
                let dst = path(&dir, &format!("out{i}-{semantics}-{strict}-{op}.npy"));
                let mut args = vec![
                    op.to_string(),
                    src.display().to_string(),
                    dst.display().to_string(),
                ];
                args.extend(["--semantics".to_string(), semantics.to_string()]);
                if strict {
                    args.extend(["--feature-level".to_string(), "6_4".to_string()]);
                }
                if let Some(flag) = flag {
                    args.extend(["--dtype".to_string(), flag.to_string()]);
                }
                let out = ewise(&args);
                let what = format!("{op} {descr} ({t}) --semantics {semantics} strict {strict}");
                if !accepts(op, strict, t) {
                    let err = assert_error(&out, &["not supported"]);
                    if strict && accepts(op, false, t) {
                        assert!(
                            err.contains("hint: leave out --feature-level"),
                            "{what}: no hint in {err}"
                        );
                    }
                    assert!(!dst.exists(), "{what}: output written after an error");
                    continue;
                }
                assert!(out.status.success(), "{what}: {}", stderr(&out));
                let (header, data) = read_npy(&dst);
                assert_eq!(header.shape, shape, "{what}");
                assert!(!header.fortran_order);
                if op == "sign" {
                    let policy = if semantics == "dml" {
                        NanPolicy::Zero
                    } else {
                        NanPolicy::Propagate
                    };
                    assert_eq!(header.descr, descr, "{what}");
                    assert_eq!(
                        from_le(&data, size),
                        expected_sign(t, &input, policy),
                        "{what}"
                    );
                } else {
                    let out_descr = if semantics == "dml" { "|u1" } else { "|b1" };
                    assert_eq!(header.descr, out_descr, "{what}");
                    assert_eq!(
                        from_le(&data, 1),
                        expected_is_infinity(t, &input, InfinityMode::Either),
                        "{what}"
                    );
                }
            }
        }
    }
}

#[test]
fn nan_policy_and_mode_options() {
    let dir = temp_dir();
    for (descr, t) in [("<f4", DataType::Float32), ("<f2", DataType::Float16)] {
        let size = t.size_in_bytes().unwrap() as usize;
        let input = patterns(t, 20, 7);
        let src = path(&dir, "in.npy");
        write_npy(
            &src,
            descr,
            false,
            &[input.len() as u64],
            &to_le(&input, size),
        );
        let dst = path(&dir, "out.npy");
        for (semantics, nan, policy) in [
            ("dml", "propagate", NanPolicy::Propagate),
            ("onnx", "zero", NanPolicy::Zero),
            ("dml", "zero", NanPolicy::Zero),
        ] {
            let out = ewise([
                "sign",
                src.to_str().unwrap(),
                dst.to_str().unwrap(),
                "--semantics",
                semantics,
                "--nan",
                nan,
            ]);
            assert_ok(&out);
            assert_eq!(
                from_le(&read_npy(&dst).1, size),
                expected_sign(t, &input, policy),
                "{descr} {nan}"
            );
        }
        for (mode, m) in [
            ("either", InfinityMode::Either),
            ("positive", InfinityMode::Positive),
            ("negative", InfinityMode::Negative),
        ] {
            let out = ewise([
                "is-infinity",
                src.to_str().unwrap(),
                dst.to_str().unwrap(),
                "--mode",
                mode,
            ]);
            assert_ok(&out);
            assert_eq!(
                from_le(&read_npy(&dst).1, 1),
                expected_is_infinity(t, &input, m),
                "{descr} {mode}"
            );
        }
        let out = ewise([
            "is-infinity",
            src.to_str().unwrap(),
            dst.to_str().unwrap(),
            "--mode",
            "neither",
            "--semantics",
            "onnx",
        ]);
        assert_ok(&out);
        assert!(read_npy(&dst).1.iter().all(|&b| b == 0));
        let out = ewise([
            "is-infinity",
            src.to_str().unwrap(),
            dst.to_str().unwrap(),
            "--mode",
            "neither",
        ]);
        assert_ok(&out);
        assert!(read_npy(&dst).1.iter().all(|&b| b == 0));
        let out = ewise([
            "is-infinity",
            src.to_str().unwrap(),
            dst.to_str().unwrap(),
            "--mode",
            "neither",
            "--feature-level",
            "6_4",
        ]);
        assert_error(&out, &["NEITHER", "hint: leave out --feature-level"]);
    }
}
