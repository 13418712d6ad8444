//! Limits that hostile or careless arguments run into, each exercised for real: thread
//! counts beyond what the machine can use, benchmark sizes beyond its memory, and
//! Ctrl-C during long benchmarks and conformance runs, which must stop between steps.
#![cfg(target_os = "linux")]

mod common;

use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::*;
use ewise_cpu::{max_threads, DataType, NanPolicy};
use ewise_onnx::proto::{self, Message};
use ewise_onnx::Tensor;

/// Long enough for any hang to be a hang.
const PATIENCE: Duration = Duration::from_secs(120);

/// Runs `child` to its end, killing it and failing the test after `limit`.
fn finish_within(mut child: Child, limit: Duration) -> (ExitStatus, String, String) {
    let out = child.stdout.take();
    let err = child.stderr.take();
    let read_all = |stream: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut stream) = stream {
                let _ = stream.read_to_string(&mut text);
            }
            text
        })
    };
    let out_reader = read_all(out.map(|o| Box::new(o) as Box<dyn Read + Send>));
    let err_reader = read_all(err.map(|e| Box::new(e) as Box<dyn Read + Send>));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for ewise") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ewise still ran after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stdout = out_reader.join().expect("stdout reader");
    let stderr = err_reader.join().expect("stderr reader");
    (status, stdout, stderr)
}

fn spawn(args: &[&str]) -> Child {
    ewise_command()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the ewise binary starts")
}

/// Whether the process `pid` has a handler for SIGINT (so a signal now takes ewise's
/// own path, not the default that kills it).
fn catches_sigint(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("SigCgt:"))
                .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        })
        .is_some_and(|mask| mask & (1 << (2 - 1)) != 0)
}

fn wait_for_handler(child: &Child) {
    let start = Instant::now();
    while !catches_sigint(child.id()) {
        assert!(
            start.elapsed() < PATIENCE,
            "ewise never installed its handler"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn interrupt(child: &Child) {
    let status = Command::new("kill")
        .args(["-s", "INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -s INT");
}

/// A usage error: exit status 2, one line `ewise: error: ...` with every fragment.
fn assert_usage_error(status: ExitStatus, err: &str, fragments: &[&str]) {
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(err.starts_with("ewise: error: "), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for f in fragments {
        assert!(err.contains(f), "missing {f:?} in: {err}");
    }
}

/// A run stopped by ewise itself between steps: status 130 and the orderly message,
/// not the one of the fallback that exits when a command ignores the request.
fn assert_stopped_between_steps(status: ExitStatus, err: &str, message: &str) {
    assert_eq!(status.code(), Some(130), "status {status}, stderr: {err}");
    assert!(err.contains(message), "missing {message:?} in: {err}");
    assert!(!err.contains("stopped before finishing"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn thread_counts_above_the_cap_are_refused_at_once() {
    let dir = temp_dir();
    let src = path(&dir, "in.npy");
    write_npy(&src, "<f4", false, &[4], &[0; 16]);
    let dst = path(&dir, "out.npy");
    let (src, dst) = (src.to_str().unwrap(), dst.to_str().unwrap());
    let range = format!("or 1 to {}", max_threads());
    let too_many = (max_threads() + 1).to_string();
    for args in [
        vec!["sign", src, dst, "--threads", "100000"],
        vec!["sign", "--in-place", src, "--threads", "100000"],
        vec!["is-infinity", src, dst, "--threads", "100000"],
        vec!["sign", src, dst, "--threads", &too_many],
        vec!["bench", "--device", "cpu", "--threads", "100000"],
        vec!["bench", "--device", "cpu", "--threads", &too_many],
    ] {
        let (status, _, err) = finish_within(spawn(&args), PATIENCE);
        let value = args[args.iter().position(|a| *a == "--threads").unwrap() + 1];
        let named = format!("invalid value '{value}' for '--threads <N>'");
        assert_usage_error(status, &err, &[&named, &range]);
    }
    assert_eq!(file_names(dir.path()), ["in.npy"]);
}

#[test]
fn the_most_threads_accepted_finish_a_24_mib_input_bit_exact() {
    let dir = temp_dir();
    let t = DataType::Float32;
    let n = 6 << 20;
    let values = patterns(t, n - 15, 9);
    let src = path(&dir, "in.npy");
    write_npy(&src, "<f4", false, &[n as u64], &to_le(&values, 4));
    let want = expected_sign(t, &values, NanPolicy::Zero);
    let threads = max_threads().to_string();
    let dst = path(&dir, "out.npy");
    let args = [
        "sign",
        src.to_str().unwrap(),
        dst.to_str().unwrap(),
        "--device",
        "cpu",
        "--threads",
        &threads,
    ];
    let (status, _, err) = finish_within(spawn(&args), PATIENCE);
    assert!(status.success(), "{err}");
    assert!(from_le(&read_npy(&dst).1, 4) == want, "{threads} threads");

    let args = [
        "bench",
        "--device",
        "cpu",
        "--threads",
        &threads,
        "--sizes",
        "1Mi",
        "--op",
        "sign",
        "--dtype",
        "float32",
        "--layout",
        "contiguous",
        "--samples",
        "3",
        "--json",
    ];
    let (status, out, err) = finish_within(spawn(&args), PATIENCE);
    assert!(status.success(), "{err}");
    assert!(out.contains("\"op\": \"sign\""), "{out}");
}

#[test]
fn bench_sizes_beyond_memory_are_an_error_not_an_abort() {
    if std::env::var(RUNNER_ENV).is_ok_and(|r| !r.trim().is_empty()) {
        eprintln!("skipping: an emulator under {RUNNER_ENV} reserves address space itself");
        return;
    }
    for (dtype, size, bytes) in [
        ("float64", "4095Mi", "34351349760"),
        ("int8", "4095Mi", "4293918720"),
        ("float32", "512Mi", "2147483648"),
    ] {
        let out = under_a_memory_limit(&[
            "bench",
            "--device",
            "cpu",
            "--sizes",
            size,
            "--dtype",
            dtype,
            "--op",
            "sign",
            "--layout",
            "contiguous",
            "--threads",
            "1",
            "--samples",
            "3",
        ]);
        let elements = size[..size.len() - 2].parse::<u64>().unwrap() << 20;
        let case = format!("sign {dtype} x {elements}");
        assert_error(&out, &["cannot allocate", bytes, &case, "--sizes"]);
    }
}

#[test]
fn ctrl_c_stops_bench_between_samples() {
    let mut child = spawn(&[
        "bench",
        "--device",
        "cpu",
        "--sizes",
        "4Mi",
        "--op",
        "sign",
        "--dtype",
        "float32",
        "--layout",
        "contiguous",
        "--threads",
        "1",
        "--samples",
        "1001",
    ]);
    wait_for_handler(&child);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(child.try_wait().unwrap().is_none(), "bench ended early");
    interrupt(&child);
    let (status, out, err) = finish_within(child, PATIENCE);
    assert_stopped_between_steps(status, &err, "interrupted: stopped; no output was written");
    assert!(out.is_empty(), "{out}");
}

/// `x -> Sign -> y` over float32 `[n]`.
fn sign_model(n: i64) -> Vec<u8> {
    use proto::tensor_shape_proto::{dimension, Dimension};
    let value = |name: &str| proto::ValueInfoProto {
        name: name.into(),
        r#type: Some(proto::TypeProto {
            value: Some(proto::type_proto::Value::TensorType(
                proto::type_proto::Tensor {
                    elem_type: 1,
                    shape: Some(proto::TensorShapeProto {
                        dim: vec![Dimension {
                            value: Some(dimension::Value::DimValue(n)),
                            ..Default::default()
                        }],
                    }),
                },
            )),
            ..Default::default()
        }),
        ..Default::default()
    };
    proto::ModelProto {
        ir_version: 9,
        opset_import: vec![proto::OperatorSetIdProto {
            domain: String::new(),
            version: 13,
        }],
        graph: Some(proto::GraphProto {
            name: "limits".into(),
            node: vec![proto::NodeProto {
                input: vec!["x".into()],
                output: vec!["y".into()],
                op_type: "Sign".into(),
                ..Default::default()
            }],
            input: vec![value("x")],
            output: vec![value("y")],
            ..Default::default()
        }),
        ..Default::default()
    }
    .encode_to_vec()
}

#[test]
fn ctrl_c_stops_onnx_test_between_cases() {
    if std::env::var("EWISE_DEVICE").is_ok_and(|d| d == "gpu") && !gpu() {
        return;
    }
    let dir = temp_dir();
    let n = 1usize << 20;
    let case = dir.path().join("test_big_sign");
    let set = case.join("test_data_set_0");
    std::fs::create_dir_all(&set).unwrap();
    std::fs::write(case.join("model.onnx"), sign_model(n as i64)).unwrap();
    let values: Vec<f32> = (0..n).map(|i| i as f32 - 1000.0).collect();
    let signs: Vec<f32> = values
        .iter()
        .map(|&v| if v == 0.0 { 0.0 } else { v.signum() })
        .collect();
    let pb = |values: &[f32], name: &str| {
        Tensor::from_values(vec![n], values)
            .unwrap()
            .to_proto(name)
            .unwrap()
            .encode_to_vec()
    };
    std::fs::write(set.join("input_0.pb"), pb(&values, "x")).unwrap();
    std::fs::write(set.join("output_0.pb"), pb(&signs, "y")).unwrap();
    let cases = 5000;
    let case_arg = case.to_str().unwrap().to_string();
    let mut args = vec!["onnx-test"];
    args.extend(std::iter::repeat_n(case_arg.as_str(), cases));
    let mut child = spawn(&args);
    let mut out = child.stdout.take().expect("stdout");
    let mut first = [0u8; 4];
    out.read_exact(&mut first).expect("a first result line");
    assert_eq!(&first, b"PASS");
    interrupt(&child);
    let reader = std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = out.read_to_string(&mut rest);
        rest
    });
    let (status, _, err) = finish_within(child, PATIENCE);
    let rest = reader.join().expect("stdout reader");
    assert_stopped_between_steps(status, &err, "interrupted: stopped after ");
    assert!(err.contains(&format!(" of {cases} test cases")), "{err}");
    assert!(rest.lines().count() < cases, "every case ran");
    assert!(!rest.contains("passed"), "the summary was printed: {rest}");
}
