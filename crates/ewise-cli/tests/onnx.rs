//! `ewise run` and `ewise onnx-test` on models built in code: outputs compared bit for
//! bit with the scalar reference, input checks that leave nothing written, output names
//! that could escape OUTDIR, and backend test case directories that pass and fail.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::*;
use ewise_cpu::{DataType, InfinityMode, NanPolicy};
use ewise_onnx::proto::{self, Message};
use ewise_onnx::Tensor;

const BOOL: i32 = 9;

/// `x -> Sign -> y` for element type `elem_type` (ONNX number) and shape `[n]`.
fn sign_model_of(elem_type: i32, n: i64) -> Vec<u8> {
    model_bytes(
        13,
        vec![node("Sign", "x", "y", &[])],
        vec![value("x", elem_type, Some(&[n]))],
        vec![value("y", elem_type, None)],
    )
}

/// Writes `bytes` as `dir/name` and returns the path.
fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write test file");
    path
}

/// `-i name=path`.
fn input_arg(name: &str, path: &Path) -> String {
    format!("{name}={}", path.display())
}

/// The `.npy` files in `dir` (none when `dir` does not exist).
fn npy_files(dir: &Path) -> Vec<String> {
    if !dir.exists() {
        return Vec::new();
    }
    file_names(dir)
        .into_iter()
        .filter(|n| n.ends_with(".npy"))
        .collect()
}

/// Runs `ewise run model -i x=input -o out` plus `extra` arguments.
fn run_model(model: &Path, inputs: &[(&str, &Path)], out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["run".to_string(), model.display().to_string()];
    for (name, path) in inputs {
        args.push("-i".into());
        args.push(input_arg(name, path));
    }
    args.push("-o".into());
    args.push(out.display().to_string());
    args.extend(extra.iter().map(|s| s.to_string()));
    ewise(&args)
}

#[test]
fn sign_models_match_the_reference_bit_for_bit() {
    let cases = [
        (FLOAT, "<f4", DataType::Float32),
        (11, "<f8", DataType::Float64),
        (10, "<f2", DataType::Float16),
        (3, "|i1", DataType::Int8),
        (7, "<i8", DataType::Int64),
        (4, "<u2", DataType::Uint16),
    ];
    for (elem_type, descr, t) in cases {
        let dir = temp_dir();
        let size = t.size_in_bytes().unwrap() as usize;
        let patterns = common::patterns(t, 200, 7);
        let n = patterns.len();
        let model = write(dir.path(), "sign.onnx", &sign_model_of(elem_type, n as i64));
        let x = dir.path().join("x.npy");
        write_npy(&x, descr, false, &[n as u64], &to_le(&patterns, size));
        for (flag, policy) in [
            ("propagate", NanPolicy::Propagate),
            ("zero", NanPolicy::Zero),
        ] {
            let out = dir.path().join(format!("out-{flag}"));
            assert_ok(&run_model(&model, &[("x", &x)], &out, &["--nan", flag]));
            let (header, data) = read_npy(&out.join("y.npy"));
            assert_eq!(header.descr, descr);
            assert_eq!(header.shape, [n as u64]);
            assert!(!header.fortran_order);
            assert_eq!(
                from_le(&data, size),
                expected_sign(t, &patterns, policy),
                "{t} --nan {flag}"
            );
        }
        let out = dir.path().join("out-default");
        assert_ok(&run_model(&model, &[("x", &x)], &out, &[]));
        let (_, data) = read_npy(&out.join("y.npy"));
        assert_eq!(
            from_le(&data, size),
            expected_sign(t, &patterns, NanPolicy::Propagate),
            "{t}: propagate is the default"
        );
    }
}

#[test]
fn is_inf_models_write_bool_matching_the_reference() {
    let cases = [
        (FLOAT, "<f4", DataType::Float32),
        (11, "<f8", DataType::Float64),
        (10, "<f2", DataType::Float16),
    ];
    let modes = [
        (1, 1, InfinityMode::Either),
        (1, 0, InfinityMode::Positive),
        (0, 1, InfinityMode::Negative),
        (0, 0, InfinityMode::Neither),
    ];
    for (elem_type, descr, t) in cases {
        let dir = temp_dir();
        let size = t.size_in_bytes().unwrap() as usize;
        let patterns = common::patterns(t, 101, 11);
        let n = patterns.len() as i64;
        let x = dir.path().join("x.npy");
        write_npy(
            &x,
            descr,
            false,
            &[2, n as u64 / 2],
            &to_le(&patterns, size),
        );
        for (positive, negative, mode) in modes {
            let bytes = model_bytes(
                20,
                vec![node(
                    "IsInf",
                    "x",
                    "inf",
                    &[("detect_positive", positive), ("detect_negative", negative)],
                )],
                vec![value("x", elem_type, Some(&[2, n / 2]))],
                vec![value("inf", BOOL, Some(&[2, n / 2]))],
            );
            let model = write(dir.path(), "isinf.onnx", &bytes);
            let out = dir.path().join(format!("out-{positive}{negative}"));
            assert_ok(&run_model(&model, &[("x", &x)], &out, &[]));
            let (header, data) = read_npy(&out.join("inf.npy"));
            assert_eq!(header.descr, "|b1");
            assert_eq!(header.shape, [2, n as u64 / 2]);
            assert_eq!(
                from_le(&data, 1),
                expected_is_infinity(t, &patterns, mode),
                "{t} {mode:?}"
            );
        }
    }
}

#[test]
fn bfloat16_and_float8_travel_as_raw_items() {
    let dir = temp_dir();
    let t = DataType::Bfloat16;
    let patterns = common::patterns(t, 100, 3);
    let n = patterns.len();
    let model = write(dir.path(), "bf16.onnx", &sign_model_of(16, n as i64));
    let x = dir.path().join("x.npy");
    write_npy(&x, "<V2", false, &[n as u64], &to_le(&patterns, 2));
    let out = dir.path().join("out");
    assert_ok(&run_model(&model, &[("x", &x)], &out, &[]));
    let (header, data) = read_npy(&out.join("y.npy"));
    assert_eq!(header.descr, "<V2");
    assert_eq!(
        from_le(&data, 2),
        expected_sign(t, &patterns, NanPolicy::Propagate)
    );

    for (elem_type, t, descr) in [
        (17, DataType::Float8E4M3Fn, "|V1"),
        (19, DataType::Float8E5M2, "<f1"),
        (20, DataType::Float8E5M2Fnuz, "|V1"),
    ] {
        let patterns = common::patterns(t, 50, 5);
        let n = patterns.len() as i64;
        let bytes = model_bytes(
            20,
            vec![node("IsInf", "x", "inf", &[])],
            vec![value("x", elem_type, Some(&[n]))],
            vec![value("inf", BOOL, None)],
        );
        let model = write(dir.path(), "f8.onnx", &bytes);
        let x = dir.path().join("f8.npy");
        write_npy(&x, descr, false, &[n as u64], &to_le(&patterns, 1));
        let out = dir.path().join(format!("out-{elem_type}"));
        assert_ok(&run_model(&model, &[("x", &x)], &out, &[]));
        let (header, data) = read_npy(&out.join("inf.npy"));
        assert_eq!(header.descr, "|b1");
        assert_eq!(
            from_le(&data, 1),
            expected_is_infinity(t, &patterns, InfinityMode::Either),
            "{t}"
        );
    }

    let f8_sign = model_bytes(
        20,
        vec![node("Sign", "x", "y", &[])],
        vec![value("x", 17, None)],
        vec![value("y", 17, None)],
    );
    let model = write(dir.path(), "f8_sign.onnx", &f8_sign);
    let x = dir.path().join("f8.npy");
    write_npy(&x, "|V1", false, &[1], &[0x38]);
    let out = dir.path().join("out-f8-sign");
    assert_error(
        &run_model(&model, &[("x", &x)], &out, &[]),
        &["Sign", "float8e4m3fn"],
    );
    assert!(npy_files(&out).is_empty());
}

#[test]
fn big_endian_and_column_major_inputs_are_converted() {
    let dir = temp_dir();
    let values = [1.0f32, -1.0, 0.0, -2.0, f32::NAN, 3.0];
    let model = write(
        dir.path(),
        "sign.onnx",
        &model_bytes(
            13,
            vec![node("Sign", "x", "y", &[])],
            vec![value("x", FLOAT, Some(&[2, 3]))],
            vec![value("y", FLOAT, None)],
        ),
    );
    let expected: Vec<u32> = [1.0f32, -1.0, 0.0, -1.0, f32::NAN, 1.0]
        .iter()
        .map(|v| v.to_bits())
        .collect();

    let big: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
    let x = dir.path().join("big.npy");
    write_npy(&x, ">f4", false, &[2, 3], &big);
    let out = dir.path().join("out-big");
    assert_ok(&run_model(&model, &[("x", &x)], &out, &[]));
    let (header, data) = read_npy(&out.join("y.npy"));
    assert_eq!(header.descr, "<f4");
    let got: Vec<u32> = from_le(&data, 4).iter().map(|&b| b as u32).collect();
    assert_eq!(got, expected);

    let column_major: Vec<u8> = [0, 3, 1, 4, 2, 5]
        .iter()
        .flat_map(|&i| values[i].to_le_bytes())
        .collect();
    let x = dir.path().join("fortran.npy");
    write_npy(&x, "<f4", true, &[2, 3], &column_major);
    let out = dir.path().join("out-fortran");
    assert_ok(&run_model(&model, &[("x", &x)], &out, &[]));
    let (header, data) = read_npy(&out.join("y.npy"));
    assert!(!header.fortran_order);
    assert_eq!(header.shape, [2, 3]);
    let got: Vec<u32> = from_le(&data, 4).iter().map(|&b| b as u32).collect();
    assert_eq!(got, expected);
}

/// A model with inputs `x` (float [4]) and `w` (float [4]) and outputs `sx` and `iw`.
fn two_input_model(dir: &Path) -> PathBuf {
    write(
        dir,
        "two.onnx",
        &model_bytes(
            20,
            vec![node("Sign", "x", "sx", &[]), node("IsInf", "w", "iw", &[])],
            vec![value("x", FLOAT, Some(&[4])), value("w", FLOAT, Some(&[4]))],
            vec![value("sx", FLOAT, None), value("iw", BOOL, None)],
        ),
    )
}

fn f32_npy(dir: &Path, name: &str, values: &[f32]) -> PathBuf {
    let path = dir.join(name);
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    write_npy(&path, "<f4", false, &[values.len() as u64], &data);
    path
}

#[test]
fn every_output_is_written() {
    let dir = temp_dir();
    let model = two_input_model(dir.path());
    let x = f32_npy(dir.path(), "x.npy", &[-3.0, 0.0, -0.0, 7.0]);
    let w = f32_npy(
        dir.path(),
        "w.npy",
        &[f32::INFINITY, 1.0, f32::NEG_INFINITY, 0.0],
    );
    let out = dir.path().join("new").join("dir");
    assert_ok(&run_model(&model, &[("x", &x), ("w", &w)], &out, &[]));
    assert_eq!(file_names(&out), ["iw.npy", "sx.npy"]);
    let (_, sx) = read_npy(&out.join("sx.npy"));
    let sx: Vec<f32> = sx
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(sx, [-1.0, 0.0, 0.0, 1.0]);
    assert_eq!(sx[2].to_bits(), 0, "-0 gives +0");
    assert_eq!(read_npy(&out.join("iw.npy")).1, [1, 0, 1, 0]);
}

#[test]
fn bad_inputs_are_refused_before_anything_is_written() {
    let dir = temp_dir();
    let model = two_input_model(dir.path());
    let x = f32_npy(dir.path(), "x.npy", &[1.0, 2.0, 3.0, 4.0]);
    let w = f32_npy(dir.path(), "w.npy", &[1.0, 2.0, 3.0, 4.0]);
    let short = f32_npy(dir.path(), "short.npy", &[1.0, 2.0, 3.0]);
    let double = dir.path().join("double.npy");
    write_npy(&double, "<f8", false, &[4], &[0; 32]);
    let raw = dir.path().join("raw.npy");
    write_npy(&raw, "<V2", false, &[4], &[0; 8]);
    let out = dir.path().join("out");
    type Inputs<'a> = &'a [(&'a str, &'a Path)];
    let cases: [(Inputs, &[&str]); 6] = [
        (&[("x", &x)], &["\"w\"", "required", "-i w=FILE.npy"]),
        (
            &[("x", &x), ("w", &w), ("z", &x)],
            &["\"z\"", "not an input of the model", "x, w"],
        ),
        (
            &[("x", &double), ("w", &w)],
            &[
                "double.npy",
                "\"x\"",
                "double",
                "'<f8'",
                "declares it as float",
            ],
        ),
        (
            &[("x", &x), ("w", &short)],
            &["\"w\"", "[3]", "[4]", "dimension 0 is 3, declared 4"],
        ),
        (
            &[("x", &raw), ("w", &w)],
            &["raw.npy", "raw 2-byte items", "declares it as float"],
        ),
        (&[("x", &x), ("x", &w)], &["\"x\" is given twice"]),
    ];
    for (inputs, fragments) in cases {
        let output = run_model(&model, inputs, &out, &[]);
        assert_error(&output, fragments);
        assert!(npy_files(&out).is_empty(), "{fragments:?}");
    }
    assert!(
        !out.exists(),
        "OUTDIR is created only for a run that writes"
    );
}

#[test]
fn unsafe_output_names_are_refused() {
    for name in ["../escape", "sub/y", ".."] {
        let dir = temp_dir();
        let bytes = model_bytes(
            13,
            vec![node("Sign", "x", name, &[])],
            vec![value("x", FLOAT, Some(&[1]))],
            vec![value(name, FLOAT, None)],
        );
        let model = write(dir.path(), "m.onnx", &bytes);
        let x = f32_npy(dir.path(), "x.npy", &[-1.0]);
        let out = dir.path().join("out");
        assert_error(
            &run_model(&model, &[("x", &x)], &out, &[]),
            &[&format!("{name:?}"), "plain file names"],
        );
        assert!(!dir.path().join("escape.npy").exists());
        assert_eq!(npy_files(dir.path()), ["x.npy"], "{name}");
        assert!(!out.exists());
    }
}

#[test]
fn a_failed_write_leaves_no_output_and_keeps_old_files() {
    let dir = temp_dir();
    let model = two_input_model(dir.path());
    let x = f32_npy(dir.path(), "x.npy", &[1.0, 2.0, 3.0, 4.0]);
    let w = f32_npy(dir.path(), "w.npy", &[1.0, 2.0, 3.0, 4.0]);
    let out = dir.path().join("out");
    std::fs::create_dir_all(out.join("iw.npy")).unwrap();
    std::fs::write(out.join("sx.npy"), b"old").unwrap();
    assert_error(
        &run_model(&model, &[("x", &x), ("w", &w)], &out, &[]),
        &["iw.npy", "not a regular file"],
    );
    assert_eq!(std::fs::read(out.join("sx.npy")).unwrap(), b"old");
    assert_eq!(file_names(&out), ["iw.npy", "sx.npy"], "no temporary left");
}

#[test]
fn an_output_may_not_replace_an_input() {
    let dir = temp_dir();
    let model = write(dir.path(), "sign.onnx", &sign_model_of(FLOAT, 2));
    let x = f32_npy(dir.path(), "y.npy", &[-5.0, 5.0]);
    let before = std::fs::read(&x).unwrap();
    assert_error(
        &run_model(&model, &[("x", &x)], dir.path(), &[]),
        &["y.npy", "which this run reads"],
    );
    assert_eq!(std::fs::read(&x).unwrap(), before);
}

/// A backend test case: `dir/name/model.onnx` (`x -> Sign -> y`, float [3]) and
/// `test_data_set_0` with `input` and `output` as its tensors.
fn backend_case(dir: &Path, name: &str, input: &[f32], output: &[f32]) -> PathBuf {
    let case = dir.join(name);
    let set = case.join("test_data_set_0");
    std::fs::create_dir_all(&set).unwrap();
    write(&case, "model.onnx", &sign_model_of(FLOAT, 3));
    let pb = |t: Tensor, name: &str| t.to_proto(name).unwrap().encode_to_vec();
    write(
        &set,
        "input_0.pb",
        &pb(Tensor::from_values(vec![3], input).unwrap(), "x"),
    );
    write(
        &set,
        "output_0.pb",
        &pb(Tensor::from_values(vec![3], output).unwrap(), "y"),
    );
    case
}

fn stdout_lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn onnx_test_passes_a_matching_case() {
    let dir = temp_dir();
    let case = backend_case(
        dir.path(),
        "test_mine",
        &[-2.0, f32::NAN, 0.5],
        &[-1.0, f32::NAN, 1.0],
    );
    let out = ewise([Path::new("onnx-test"), &case]);
    assert_ok(&out);
    assert_eq!(stdout_lines(&out), ["PASS test_mine", "1 passed, 0 failed"]);
}

#[test]
fn onnx_test_reports_failures_and_exits_1() {
    let dir = temp_dir();
    let good = backend_case(
        dir.path(),
        "test_good",
        &[-2.0, 0.0, 0.5],
        &[-1.0, 0.0, 1.0],
    );
    let wrong = backend_case(
        dir.path(),
        "test_wrong",
        &[-2.0, 0.0, 0.5],
        &[-1.0, 0.0, -1.0],
    );
    let empty = dir.path().join("not_a_case");
    std::fs::create_dir(&empty).unwrap();
    let missing = dir.path().join("missing");
    let out = ewise([Path::new("onnx-test"), &good, &wrong, &empty, &missing]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(!stderr(&out).contains("panicked"));
    let lines = stdout_lines(&out);
    assert_eq!(lines.len(), 5, "{lines:?}");
    assert_eq!(lines[0], "PASS test_good");
    assert!(
        lines[1].starts_with("FAIL test_wrong: test_data_set_0: output \"y\": element 2"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].starts_with("FAIL not_a_case: ") && lines[2].contains("no model.onnx"),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].starts_with("FAIL missing: ") && lines[3].contains("does not exist"),
        "{}",
        lines[3]
    );
    assert_eq!(lines[4], "1 passed, 3 failed");

    let out = ewise([
        Path::new("onnx-test"),
        Path::new("--nan"),
        Path::new("zero"),
        &good,
    ]);
    assert_ok(&out);
    assert_eq!(stdout_lines(&out).last().unwrap(), "1 passed, 0 failed");
}

#[test]
fn onnx_test_nan_policy_is_applied() {
    let dir = temp_dir();
    let case = backend_case(
        dir.path(),
        "test_nan",
        &[f32::NAN, -1.0, 1.0],
        &[f32::NAN, -1.0, 1.0],
    );
    assert_ok(&ewise([Path::new("onnx-test"), &case]));
    let out = ewise([
        Path::new("onnx-test"),
        Path::new("--nan"),
        Path::new("zero"),
        &case,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout_lines(&out).last().unwrap(), "0 passed, 1 failed");
}

/// Runs `ewise run` with `--device cpu` and `--device gpu` into separate directories
/// and asserts that both write the same files, byte for byte; returns their names.
fn run_on_both(
    dir: &Path,
    label: &str,
    model: &Path,
    inputs: &[(&str, &Path)],
    extra: &[&str],
) -> Vec<String> {
    let mut written = Vec::new();
    for device in ["cpu", "gpu"] {
        let out = dir.join(format!("{label}-{device}"));
        let args = [extra, &["--device", device]].concat();
        assert_ok(&run_model(model, inputs, &out, &args));
        let files: Vec<(String, Vec<u8>)> = npy_files(&out)
            .into_iter()
            .map(|name| {
                let bytes = std::fs::read(out.join(&name)).unwrap();
                (name, bytes)
            })
            .collect();
        written.push(files);
    }
    assert!(!written[0].is_empty(), "{label}: nothing written");
    assert!(
        written[0] == written[1],
        "{label}: --device gpu wrote other files than --device cpu"
    );
    written[0].iter().map(|(name, _)| name.clone()).collect()
}

#[test]
fn run_on_the_gpu_writes_the_files_of_the_cpu() {
    if !gpu() {
        return;
    }
    let dir = temp_dir();
    let d = dir.path();
    let types = [
        (FLOAT, "<f4", DataType::Float32),
        (11, "<f8", DataType::Float64),
        (10, "<f2", DataType::Float16),
        (3, "|i1", DataType::Int8),
        (2, "|u1", DataType::Uint8),
        (5, "<i2", DataType::Int16),
        (6, "<i4", DataType::Int32),
        (7, "<i8", DataType::Int64),
        (4, "<u2", DataType::Uint16),
        (12, "<u4", DataType::Uint32),
        (13, "<u8", DataType::Uint64),
        (16, "<V2", DataType::Bfloat16),
    ];
    for (elem_type, descr, t) in types {
        let size = t.size_in_bytes().unwrap() as usize;
        let patterns = common::patterns(t, 77, 5);
        let n = patterns.len();
        let model = write(d, "sign.onnx", &sign_model_of(elem_type, n as i64));
        let x = d.join("x.npy");
        write_npy(&x, descr, false, &[n as u64], &to_le(&patterns, size));
        for flag in ["propagate", "zero"] {
            let names = run_on_both(
                d,
                &format!("{t}-{flag}"),
                &model,
                &[("x", &x)],
                &["--nan", flag],
            );
            assert_eq!(names, ["y.npy"]);
        }
    }

    // Sign chains (in place on the GPU), fan-out and IsInf of every float type.
    for (elem_type, descr, t) in [
        (FLOAT, "<f4", DataType::Float32),
        (11, "<f8", DataType::Float64),
        (10, "<f2", DataType::Float16),
        (16, "<V2", DataType::Bfloat16),
        (17, "|V1", DataType::Float8E4M3Fn),
        (18, "|V1", DataType::Float8E4M3Fnuz),
        (19, "<f1", DataType::Float8E5M2),
        (20, "|V1", DataType::Float8E5M2Fnuz),
    ] {
        let size = t.size_in_bytes().unwrap() as usize;
        let patterns = common::patterns(t, 60, 9);
        let n = patterns.len() as u64;
        let float8 = size == 1;
        let mut nodes = vec![
            node("IsInf", "x", "inf", &[]),
            node("IsInf", "x", "neg", &[("detect_positive", 0)]),
        ];
        let mut outputs = vec![value("inf", BOOL, None), value("neg", BOOL, None)];
        if !float8 {
            nodes.extend([
                node("Sign", "x", "s", &[]),
                node("Sign", "s", "t", &[]),
                node("IsInf", "t", "tinf", &[]),
            ]);
            outputs.extend([value("t", elem_type, None), value("tinf", BOOL, None)]);
        }
        let bytes = model_bytes(20, nodes, vec![value("x", elem_type, None)], outputs);
        let model = write(d, "graph.onnx", &bytes);
        let x = d.join("g.npy");
        write_npy(
            &x,
            descr,
            false,
            &[2, n / 2],
            &to_le(&patterns[..n as usize / 2 * 2], size),
        );
        let names = run_on_both(d, &format!("graph-{t}"), &model, &[("x", &x)], &[]);
        assert_eq!(names.len(), if float8 { 2 } else { 4 }, "{t}");
    }

    // Two inputs, a 0-d input and an empty one.
    let model = two_input_model(d);
    let x = f32_npy(d, "x4.npy", &[-3.0, 0.0, -0.0, 7.0]);
    let w = f32_npy(
        d,
        "w4.npy",
        &[f32::INFINITY, 1.0, f32::NEG_INFINITY, f32::NAN],
    );
    run_on_both(d, "two", &model, &[("x", &x), ("w", &w)], &[]);
    let any_shape = write(
        d,
        "any.onnx",
        &model_bytes(
            13,
            vec![node("Sign", "x", "y", &[])],
            vec![value("x", FLOAT, None)],
            vec![value("y", FLOAT, None), value("x", FLOAT, None)],
        ),
    );
    let scalar = d.join("scalar.npy");
    write_npy(&scalar, "<f4", false, &[], &(-2.5f32).to_le_bytes());
    run_on_both(d, "scalar", &any_shape, &[("x", &scalar)], &[]);
    let empty = d.join("empty.npy");
    write_npy(&empty, "<f4", false, &[3, 0], &[]);
    run_on_both(d, "empty", &any_shape, &[("x", &empty)], &[]);
}

/// The cases written by the onnx Python package for ewise-onnx's tests.
fn python_cases() -> Vec<PathBuf> {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ewise-onnx/tests/data/python");
    [
        "typed_initializers",
        "external_data",
        "dim_param_chain",
        "float8_all_patterns",
    ]
    .iter()
    .map(|name| data.join(name))
    .collect()
}

#[test]
fn onnx_test_on_the_gpu_passes_where_the_cpu_passes() {
    if !gpu() {
        return;
    }
    let dir = temp_dir();
    let good = backend_case(
        dir.path(),
        "test_good",
        &[-2.0, f32::NAN, 0.5],
        &[-1.0, f32::NAN, 1.0],
    );
    let wrong = backend_case(
        dir.path(),
        "test_wrong",
        &[-2.0, 0.0, 0.5],
        &[-1.0, 0.0, -1.0],
    );
    let mut cases = vec![good.clone()];
    cases.extend(python_cases());
    for nan in ["propagate", "zero"] {
        let mut lines = Vec::new();
        for device in ["cpu", "gpu"] {
            let mut args = vec![
                PathBuf::from("onnx-test"),
                PathBuf::from("--nan"),
                PathBuf::from(nan),
                PathBuf::from("--device"),
                PathBuf::from(device),
            ];
            args.extend(cases.iter().cloned());
            args.push(wrong.clone());
            let out = ewise(&args);
            assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
            assert!(!stderr(&out).contains("panicked"));
            lines.push(stdout_lines(&out));
        }
        assert_eq!(lines[0], lines[1], "--nan {nan}: --device gpu differs");
        assert!(
            lines[1].last().unwrap().ends_with("1 failed") || nan == "zero",
            "{:?}",
            lines[1]
        );
    }
    let mut args = vec![
        PathBuf::from("onnx-test"),
        PathBuf::from("--device"),
        PathBuf::from("gpu"),
    ];
    args.extend(cases.iter().cloned());
    let out = ewise(&args);
    assert_ok(&out);
    assert_eq!(
        stdout_lines(&out).last().unwrap(),
        &format!("{} passed, 0 failed", cases.len())
    );
}

/// A float32 `[n]` initializer `name` stored in `location` from `offset`.
fn external_f32(name: &str, n: usize, location: &str, offset: usize) -> proto::TensorProto {
    let entry = |key: &str, value: String| proto::StringStringEntryProto {
        key: key.into(),
        value,
    };
    proto::TensorProto {
        name: name.into(),
        data_type: FLOAT,
        dims: vec![n as i64],
        data_location: proto::DataLocation::External as i32,
        external_data: vec![
            entry("location", location.into()),
            entry("offset", offset.to_string()),
            entry("length", (4 * n).to_string()),
        ],
        ..Default::default()
    }
}

#[test]
fn external_initializers_and_defaults_stream_from_their_files_on_both_devices() {
    let dir = temp_dir();
    let d = dir.path();
    let t = DataType::Float32;
    let w = common::patterns(t, 100_000, 3);
    let x = common::patterns(t, 70_000, 4);
    let mut data = vec![0xEE; 8];
    data.extend(to_le(&w, 4));
    data.extend(to_le(&x, 4));
    write(d, "weights.bin", &data);
    let graph = proto::GraphProto {
        name: "external".into(),
        node: vec![node("Sign", "w", "y", &[]), node("IsInf", "x", "z", &[])],
        input: vec![value("x", FLOAT, None)],
        initializer: vec![
            external_f32("w", w.len(), "weights.bin", 8),
            external_f32("x", x.len(), "./weights.bin", 8 + 4 * w.len()),
        ],
        output: vec![
            value("y", FLOAT, None),
            value("z", BOOL, None),
            value("w", FLOAT, None),
        ],
        ..Default::default()
    };
    let model = write(d, "external.onnx", &graph_model_bytes(20, graph));
    let out = d.join("cpu");
    assert_ok(&run_model(&model, &[], &out, &["--chunk-size", "64Ki"]));
    let (_, y) = read_npy(&out.join("y.npy"));
    assert_eq!(from_le(&y, 4), expected_sign(t, &w, NanPolicy::Propagate));
    let (header, z) = read_npy(&out.join("z.npy"));
    assert_eq!(header.shape, [x.len() as u64]);
    let z: Vec<u64> = z.into_iter().map(u64::from).collect();
    assert_eq!(z, expected_is_infinity(t, &x, InfinityMode::Either));
    let (_, copied) = read_npy(&out.join("w.npy"));
    assert_eq!(copied, to_le(&w, 4));
    if gpu() {
        run_on_both(d, "external", &model, &[], &["--chunk-size", "64Ki"]);
    }
}
