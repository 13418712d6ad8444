//! Every command stoppable: SIGINT, SIGTERM and SIGHUP sent for real to a running
//! `ewise`, while it computes, while it is blocked reading a stalled pipe, and twice.
//! Each time the process exits with status 130, leaves no temporary file and leaves the
//! files that were there before exactly as they were.
#![cfg(target_os = "linux")]

mod common;

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::*;
use ewise_cli::npy::Header;
use ewise_onnx::proto::{self, Message};

/// Linux's `O_NONBLOCK` (the same on x86-64 and aarch64).
const O_NONBLOCK: i32 = 0o4000;

/// Long enough for any hang to be a hang, even under qemu.
const PATIENCE: Duration = Duration::from_secs(60);

fn spawn(args: &[&str]) -> Child {
    ewise_command()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the ewise binary starts")
}

fn send(child: &Child, signal: &str) {
    let status = Command::new("kill")
        .args(["-s", signal, &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -s {signal} failed");
}

/// Waits for `child` to exit, failing the test if it is still running after
/// [`PATIENCE`]; returns its status and standard error.
fn finish(mut child: Child) -> (ExitStatus, String) {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for ewise") {
            let mut err = String::new();
            if let Some(mut stderr) = child.stderr.take() {
                let _ = stderr.read_to_string(&mut err);
            }
            return (status, err);
        }
        if start.elapsed() > PATIENCE {
            let _ = child.kill();
            panic!("ewise did not stop within {PATIENCE:?} of the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Polls `ready` until it holds, failing the test after [`PATIENCE`] or if `child`
/// exits first.
fn wait_until(child: &mut Child, what: &str, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        if let Some(status) = child.try_wait().expect("wait for ewise") {
            let mut err = String::new();
            if let Some(mut stderr) = child.stderr.take() {
                let _ = stderr.read_to_string(&mut err);
            }
            panic!("ewise exited ({status}) before {what}: {err}");
        }
        assert!(start.elapsed() < PATIENCE, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn assert_stopped(status: ExitStatus, err: &str) {
    assert_eq!(status.code(), Some(130), "status {status}, stderr: {err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Bytes ewise has read so far (`rchar` in `/proc/PID/io`).
fn bytes_read(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/io"))
        .ok()
        .and_then(|io| {
            io.lines()
                .find_map(|l| l.strip_prefix("rchar: ").map(|v| v.trim().parse().ok()))
                .flatten()
        })
        .unwrap_or(0)
}

/// Whether `dir` holds a file that was not in `before`.
fn has_new_file(dir: &Path, before: &[String]) -> bool {
    file_names(dir).iter().any(|n| !before.contains(n))
}

/// Opens the write end of the FIFO `path` once `child` opens its read end.
fn open_writer(child: &mut Child, path: &Path) -> File {
    let mut file = None;
    wait_until(child, "ewise opened the pipe", || {
        file = OpenOptions::new()
            .write(true)
            .custom_flags(O_NONBLOCK)
            .open(path)
            .ok();
        file.is_some()
    });
    file.expect("opened")
}

/// Writes all of `bytes` to a non-blocking pipe, waiting while it is full.
fn push(pipe: &mut File, mut bytes: &[u8]) {
    let start = Instant::now();
    while !bytes.is_empty() {
        match pipe.write(bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                assert!(start.elapsed() < PATIENCE, "the reader stopped reading");
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => panic!("write to the pipe: {e}"),
        }
    }
}

/// A `.npy` header for `n` float32 elements.
fn float32_header(n: u64) -> Vec<u8> {
    Header {
        descr: "<f4".into(),
        fortran_order: false,
        shape: vec![n],
    }
    .to_bytes()
}

/// `ewise sign PIPE OUT` fed a header and 5 MiB of data through a FIFO that then stalls
/// (so a temporary output exists and the process is blocked in a read); OUT holds old
/// bytes. Returns the running child, the pipe and what the directory held.
fn stalled_sign(dir: &Path) -> (Child, File, Vec<String>) {
    let pipe = dir.join("in.npy");
    mkfifo(&pipe);
    let out = dir.join("out.npy");
    std::fs::write(&out, b"old results").unwrap();
    let before = file_names(dir);
    let mut child = spawn(&[
        "sign",
        pipe.to_str().unwrap(),
        out.to_str().unwrap(),
        "--threads",
        "1",
    ]);
    let mut writer = open_writer(&mut child, &pipe);
    push(&mut writer, &float32_header(64 << 20));
    push(&mut writer, &vec![0u8; 5 << 20]);
    wait_until(&mut child, "the temporary output appeared", || {
        has_new_file(dir, &before)
    });
    (child, writer, before)
}

fn check_clean(dir: &Path, before: &[String]) {
    assert_eq!(file_names(dir), before, "a file was left behind or removed");
    assert_eq!(std::fs::read(dir.join("out.npy")).unwrap(), b"old results");
}

#[test]
fn each_signal_stops_a_run_blocked_reading_a_stalled_pipe() {
    for signal in ["INT", "TERM", "HUP"] {
        let dir = temp_dir();
        let (child, writer, before) = stalled_sign(dir.path());
        send(&child, signal);
        let (status, err) = finish(child);
        drop(writer);
        assert_stopped(status, &err);
        check_clean(dir.path(), &before);
    }
}

#[test]
fn a_second_signal_exits_at_once_and_removes_the_temporary() {
    let dir = temp_dir();
    let (child, writer, before) = stalled_sign(dir.path());
    send(&child, "INT");
    std::thread::sleep(Duration::from_millis(100));
    send(&child, "INT");
    let (status, err) = finish(child);
    drop(writer);
    assert_stopped(status, &err);
    check_clean(dir.path(), &before);
}

#[test]
fn a_signal_between_chunks_stops_at_the_next_chunk() {
    let dir = temp_dir();
    let pipe = dir.path().join("in.npy");
    mkfifo(&pipe);
    let out = dir.path().join("out.npy");
    std::fs::write(&out, b"old results").unwrap();
    let before = file_names(dir.path());
    let mut child = spawn(&["sign", pipe.to_str().unwrap(), out.to_str().unwrap()]);
    let mut writer = open_writer(&mut child, &pipe);
    push(&mut writer, &float32_header(1 << 30));
    push(&mut writer, &vec![0u8; 5 << 20]);
    wait_until(&mut child, "the temporary output appeared", || {
        has_new_file(dir.path(), &before)
    });
    send(&child, "TERM");
    let chunk = vec![0u8; 256 << 10];
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() && start.elapsed() < PATIENCE {
        match writer.write(&chunk) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => break,
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let (status, err) = finish(child);
    drop(writer);
    assert_stopped(status, &err);
    assert!(err.contains("no output was written"), "{err}");
    check_clean(dir.path(), &before);
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
            name: "signals".into(),
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
fn run_stops_on_a_signal_and_leaves_outdir_as_it_was() {
    let n: u64 = 64 << 20;
    for signal in ["INT", "TERM"] {
        let dir = temp_dir();
        let model = dir.path().join("sign.onnx");
        std::fs::write(&model, sign_model(n as i64)).unwrap();
        let input = dir.path().join("x.npy");
        let mut file = File::create(&input).unwrap();
        let header = float32_header(n);
        file.write_all(&header).unwrap();
        file.set_len(header.len() as u64 + 4 * n).unwrap();
        drop(file);
        let outdir = dir.path().join("out");
        std::fs::create_dir(&outdir).unwrap();
        std::fs::write(outdir.join("y.npy"), b"old results").unwrap();
        let before = file_names(&outdir);
        let mut child = spawn(&[
            "run",
            model.to_str().unwrap(),
            "-i",
            &format!("x={}", input.display()),
            "-o",
            outdir.to_str().unwrap(),
        ]);
        let pid = child.id();
        wait_until(&mut child, "ewise read 64 MiB of its input", || {
            bytes_read(pid) > 64 << 20
        });
        send(&child, signal);
        let (status, err) = finish(child);
        assert_stopped(status, &err);
        assert_eq!(file_names(&outdir), before, "OUTDIR changed");
        assert_eq!(std::fs::read(outdir.join("y.npy")).unwrap(), b"old results");
    }
}
