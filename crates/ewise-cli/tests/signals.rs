//! Every command stoppable: SIGINT, SIGTERM and SIGHUP sent for real to a running
//! `ewise`, while it computes, while it is blocked reading a stalled pipe, and twice.
//! Each time the process exits with status 130, leaves no temporary file and leaves the
//! files that were there before exactly as they were.
#![cfg(target_os = "linux")]

mod common;

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use common::*;

/// Linux's `O_NONBLOCK` (the same on x86-64 and aarch64).
const O_NONBLOCK: i32 = 0o4000;

/// Long enough for any hang to be a hang, even under qemu.
const PATIENCE: Duration = Duration::from_secs(60);

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
    wait_until(child, "ewise opened the pipe", PATIENCE, || {
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

/// `ewise sign PIPE OUT` fed a header and 5 MiB of data through a FIFO that then stalls
/// (so a temporary output exists and the process is blocked in a read); OUT holds old
/// bytes. Returns the running child, the pipe and what the directory held.
fn stalled_sign(dir: &Path) -> (Child, File, Vec<String>) {
    let pipe = dir.join("in.npy");
    mkfifo(&pipe);
    let out = dir.join("out.npy");
    std::fs::write(&out, b"old results").unwrap();
    let before = file_names(dir);
    let mut child = spawn_ewise(&[
        "sign",
        pipe.to_str().unwrap(),
        out.to_str().unwrap(),
        "--threads",
        "1",
    ]);
    let mut writer = open_writer(&mut child, &pipe);
    push(&mut writer, &f32_header(64 << 20));
    push(&mut writer, &vec![0u8; 5 << 20]);
    wait_until(
        &mut child,
        "the temporary output appeared",
        PATIENCE,
        || has_new_file(dir, &before),
    );
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
        send_signal(&child, signal);
        let (status, _, err) = finish_within(child, PATIENCE);
        drop(writer);
        assert_stopped(status, &err);
        check_clean(dir.path(), &before);
    }
}

#[test]
fn a_second_signal_exits_at_once_and_removes_the_temporary() {
    let dir = temp_dir();
    let (child, writer, before) = stalled_sign(dir.path());
    send_signal(&child, "INT");
    std::thread::sleep(Duration::from_millis(100));
    send_signal(&child, "INT");
    let (status, _, err) = finish_within(child, PATIENCE);
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
    let mut child = spawn_ewise(&["sign", pipe.to_str().unwrap(), out.to_str().unwrap()]);
    let mut writer = open_writer(&mut child, &pipe);
    push(&mut writer, &f32_header(1 << 30));
    push(&mut writer, &vec![0u8; 5 << 20]);
    wait_until(
        &mut child,
        "the temporary output appeared",
        PATIENCE,
        || has_new_file(dir.path(), &before),
    );
    send_signal(&child, "TERM");
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
    let (status, _, err) = finish_within(child, PATIENCE);
    drop(writer);
    assert_stopped(status, &err);
    assert!(err.contains("no output was written"), "{err}");
    check_clean(dir.path(), &before);
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
        let header = f32_header(n);
        file.write_all(&header).unwrap();
        file.set_len(header.len() as u64 + 4 * n).unwrap();
        drop(file);
        let outdir = dir.path().join("out");
        std::fs::create_dir(&outdir).unwrap();
        std::fs::write(outdir.join("y.npy"), b"old results").unwrap();
        let before = file_names(&outdir);
        let mut child = spawn_ewise(&[
            "run",
            model.to_str().unwrap(),
            "-i",
            &format!("x={}", input.display()),
            "-o",
            outdir.to_str().unwrap(),
        ]);
        let pid = child.id();
        wait_until(
            &mut child,
            "ewise read 64 MiB of its input",
            PATIENCE,
            || bytes_read(pid) > 64 << 20,
        );
        send_signal(&child, signal);
        let (status, _, err) = finish_within(child, PATIENCE);
        assert_stopped(status, &err);
        assert_eq!(file_names(&outdir), before, "OUTDIR changed");
        assert_eq!(std::fs::read(outdir.join("y.npy")).unwrap(), b"old results");
    }
}
