//! Limits that hostile or careless arguments run into, each exercised for real: thread
//! counts beyond what the machine can use, benchmark sizes beyond its memory, and
//! Ctrl-C during long benchmarks and conformance runs, which must stop between steps.
#![cfg(target_os = "linux")]

mod common;

use std::io::Read;
use std::process::ExitStatus;
use std::time::Duration;

use common::*;
use ewise_cpu::{max_threads, DataType, NanPolicy};
use ewise_onnx::proto::Message;
use ewise_onnx::Tensor;

/// Long enough for any hang to be a hang.
const PATIENCE: Duration = Duration::from_secs(120);

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
        let (status, _, err) = finish_within(spawn_ewise(&args), PATIENCE);
        let value = args[args.iter().position(|a| *a == "--threads").unwrap() + 1];
        let named = format!("invalid value '{value}' for '--threads <N>'");
        assert_error_exit(status, 2, &err, &[&named, &range]);
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
    let (status, _, err) = finish_within(spawn_ewise(&args), PATIENCE);
    assert!(status.success(), "{err}");
    assert!(from_le(&read_npy(&dst).1, 4) == want, "{threads} threads");

    let args = bench_sign(
        "1Mi",
        "float32",
        &["--threads", &threads, "--samples", "3", "--json"],
    );
    let (status, out, err) = finish_within(spawn_ewise(&args), PATIENCE);
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
        let out = under_a_memory_limit(&bench_sign(
            size,
            dtype,
            &["--threads", "1", "--samples", "3"],
        ));
        let elements = size[..size.len() - 2].parse::<u64>().unwrap() << 20;
        let case = format!("sign {dtype} x {elements}");
        assert_error(&out, &["cannot allocate", bytes, &case, "--sizes"]);
    }
}

#[test]
fn ctrl_c_stops_bench_between_samples() {
    let mut child = spawn_ewise(&bench_sign(
        "4Mi",
        "float32",
        &["--threads", "1", "--samples", "1001"],
    ));
    wait_for_handler(&child, PATIENCE);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(child.try_wait().unwrap().is_none(), "bench ended early");
    send_signal(&child, "INT");
    let (status, out, err) = finish_within(child, PATIENCE);
    assert_stopped_between_steps(status, &err, "interrupted: stopped; no output was written");
    assert!(out.is_empty(), "{out}");
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
    let mut child = spawn_ewise(&args);
    let mut out = child.stdout.take().expect("stdout");
    let mut first = [0u8; 4];
    out.read_exact(&mut first).expect("a first result line");
    assert_eq!(&first, b"PASS");
    send_signal(&child, "INT");
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
