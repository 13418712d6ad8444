//! Inputs that are not plain files, and files changed under a running `ewise`, each done
//! for real: FIFOs with and without a writer, sockets, devices, and a file truncated by
//! another program while `--in-place` rewrites it.
#![cfg(target_os = "linux")]

mod common;

use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::*;
use ewise_cli::npy::Header;
use ewise_cpu::{DataType, NanPolicy};

/// Long enough for any hang to be a hang.
const PATIENCE: Duration = Duration::from_secs(60);

fn spawn(args: &[&str]) -> Child {
    ewise_command()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the ewise binary starts")
}

/// Waits for `child` to exit, killing it and failing the test after [`PATIENCE`];
/// returns its status and standard error.
fn finish(mut child: Child) -> (ExitStatus, String) {
    let mut err = child.stderr.take().expect("piped stderr");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = err.read_to_string(&mut text);
        text
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for ewise") {
            break status;
        }
        if start.elapsed() > PATIENCE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ewise still ran after {PATIENCE:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    (status, reader.join().expect("stderr reader"))
}

/// Exit status 1 and one line `ewise: error: ...` with every fragment.
fn assert_failed(status: ExitStatus, err: &str, fragments: &[&str]) {
    assert_eq!(status.code(), Some(1), "status {status}, stderr: {err}");
    assert!(err.starts_with("ewise: error: "), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for f in fragments {
        assert!(err.contains(f), "missing {f:?} in: {err}");
    }
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// Whether the process `pid` has a handler for SIGINT.
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

#[test]
fn in_place_refuses_a_fifo_before_opening_it() {
    let dir = temp_dir();
    let fifo = path(&dir, "in.npy");
    mkfifo(&fifo);
    let link = path(&dir, "link.npy");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    for target in [&fifo, &link] {
        let child = spawn(&["sign", "--in-place", target.to_str().unwrap()]);
        let (status, err) = finish(child);
        assert_failed(
            status,
            &err,
            &[
                "is a FIFO (named pipe), not a regular file",
                "--in-place rewrites regular files only",
            ],
        );
    }
    let child = spawn(&["sign", "--in-place", "/dev/null"]);
    let (status, err) = finish(child);
    assert_failed(
        status,
        &err,
        &["/dev/null: is a character device, not a regular file"],
    );
    assert_eq!(file_names(dir.path()), ["in.npy", "link.npy"]);
}

#[test]
fn sockets_devices_and_directories_are_refused_naming_what_is_accepted() {
    let dir = temp_dir();
    let socket = path(&dir, "in.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let out = path(&dir, "out.npy");
    let accepted =
        "(accepted: a regular .npy file, or a FIFO or pipe that a program writes one into)";
    for (input, what) in [
        (socket.to_str().unwrap(), "is a socket, not a .npy file"),
        ("/dev/null", "is a character device, not a .npy file"),
        (
            dir.path().to_str().unwrap(),
            "is a directory, not a .npy file",
        ),
    ] {
        let child = spawn(&["sign", input, out.to_str().unwrap()]);
        let (status, err) = finish(child);
        assert_failed(status, &err, &[what, accepted]);
    }
    assert_eq!(file_names(dir.path()), ["in.sock"]);
}

/// A `.npy` file of four float32 values.
fn small_npy() -> (Vec<u8>, Vec<u64>) {
    let t = DataType::Float32;
    let values = patterns(t, 0, 1)[..4].to_vec();
    let mut bytes = Header {
        descr: "<f4".into(),
        fortran_order: false,
        shape: vec![values.len() as u64],
    }
    .to_bytes();
    bytes.extend_from_slice(&to_le(&values, 4));
    (bytes, expected_sign(t, &values, NanPolicy::Zero))
}

#[test]
fn a_fifo_input_waits_for_its_writer() {
    let dir = temp_dir();
    let fifo = path(&dir, "in.npy");
    mkfifo(&fifo);
    let out = path(&dir, "out.npy");
    let child = spawn(&["sign", fifo.to_str().unwrap(), out.to_str().unwrap()]);
    wait_for_handler(&child);
    std::thread::sleep(Duration::from_millis(300));
    let (bytes, want) = small_npy();
    let mut writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    writer.write_all(&bytes).unwrap();
    drop(writer);
    let (status, err) = finish(child);
    assert!(status.success(), "{err}");
    assert_eq!(from_le(&read_npy(&out).1, 4), want);
}

#[test]
fn ctrl_c_ends_the_wait_for_a_fifo_writer_at_once() {
    let dir = temp_dir();
    let fifo = path(&dir, "in.npy");
    mkfifo(&fifo);
    let out = path(&dir, "out.npy");
    std::fs::write(&out, b"old results").unwrap();
    let child = spawn(&["sign", fifo.to_str().unwrap(), out.to_str().unwrap()]);
    wait_for_handler(&child);
    std::thread::sleep(Duration::from_millis(1000));
    let status = Command::new("kill")
        .args(["-s", "INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -s INT");
    let (status, err) = finish(child);
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(
        err.contains("in.npy: interrupted while waiting for a program to write into the FIFO"),
        "{err}"
    );
    assert!(!err.contains("stopped before finishing"), "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), b"old results");
    assert_eq!(file_names(dir.path()), ["in.npy", "out.npy"]);
}

#[test]
fn a_fifo_closed_without_data_is_an_error() {
    let dir = temp_dir();
    let fifo = path(&dir, "in.npy");
    mkfifo(&fifo);
    let out = path(&dir, "out.npy");
    let child = spawn(&["sign", fifo.to_str().unwrap(), out.to_str().unwrap()]);
    drop(std::fs::OpenOptions::new().write(true).open(&fifo).unwrap());
    let (status, err) = finish(child);
    assert_failed(status, &err, &["in.npy: the pipe delivered nothing"]);
    assert_eq!(file_names(dir.path()), ["in.npy"]);
}

/// Bytes of zeros in the file of the truncation test: SIGN of +0 is +0, so the data
/// need not be written, only its length set (a sparse file).
const TRUNCATED_DATA: u64 = 256 << 20;

#[test]
fn in_place_stops_when_the_file_is_truncated_and_never_grows_it_again() {
    truncated_while_rewritten(&["--device", "cpu", "--threads", "1"]);
}

#[test]
fn in_place_on_the_gpu_stops_when_the_file_is_truncated() {
    if gpu() {
        truncated_while_rewritten(&["--device", "gpu"]);
    }
}

/// Truncates a large file once `ewise sign --in-place FILE EXTRA...` has started writing
/// it (retrying when ewise finished first), and checks that ewise stops with an error
/// and leaves the file at its new length.
fn truncated_while_rewritten(extra: &[&str]) {
    let dir = temp_dir();
    let file = path(&dir, "big.npy");
    let header = Header {
        descr: "<f4".into(),
        fortran_order: false,
        shape: vec![TRUNCATED_DATA / 4],
    }
    .to_bytes();
    let cut = header.len() as u64 + (1 << 20);
    for attempt in 0..10 {
        let mut f = std::fs::File::create(&file).unwrap();
        f.write_all(&header).unwrap();
        f.set_len(header.len() as u64 + TRUNCATED_DATA).unwrap();
        drop(f);
        let blocks = std::fs::metadata(&file).unwrap().blocks();
        let mut args = vec!["sign", "--in-place", file.to_str().unwrap()];
        args.extend_from_slice(extra);
        let mut child = spawn(&args);
        let start = Instant::now();
        let started = loop {
            if std::fs::metadata(&file).unwrap().blocks() > blocks {
                break true;
            }
            if child.try_wait().unwrap().is_some() {
                break false;
            }
            assert!(start.elapsed() < PATIENCE, "ewise never wrote");
            std::thread::sleep(Duration::from_micros(200));
        };
        if !started {
            let _ = child.wait();
            continue;
        }
        std::fs::OpenOptions::new()
            .write(true)
            .open(&file)
            .unwrap()
            .set_len(cut)
            .unwrap();
        let (status, err) = finish(child);
        if status.success() {
            assert!(!err.contains("panicked"), "attempt {attempt}: {err}");
            continue;
        }
        assert_failed(
            status,
            &err,
            &[
                "big.npy: was truncated to",
                "by another program while being rewritten in place",
                "without writing past its new end",
            ],
        );
        assert_eq!(
            std::fs::metadata(&file).unwrap().len(),
            cut,
            "the truncated file was grown again"
        );
        return;
    }
    panic!("ewise finished before the file could be truncated, ten times");
}
