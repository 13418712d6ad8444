//! Inputs that are not plain files, and files changed under a running `ewise`, each done
//! for real: FIFOs with and without a writer, sockets, devices, and a file truncated by
//! another program while `--in-place` rewrites it or `run` reads it.
//!
//! FIFOs, sockets and `/dev` are Unix's (Linux's: the tests wait for the signal handler
//! through `/proc`); directories as inputs and files truncated under a running `ewise`
//! are tested on Windows too (scripts/windows-test.sh, under wine).

mod common;

use std::io::Write;
#[cfg(unix)]
use std::os::unix::fs::MetadataExt;
use std::time::{Duration, Instant};

use common::*;
#[cfg(target_os = "linux")]
use ewise_cpu::{DataType, NanPolicy};

/// Long enough for any hang to be a hang.
const PATIENCE: Duration = Duration::from_secs(60);

#[test]
#[cfg(target_os = "linux")]
fn in_place_refuses_a_fifo_before_opening_it() {
    let dir = temp_dir();
    let fifo = path(&dir, "in.npy");
    mkfifo(&fifo);
    let link = path(&dir, "link.npy");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    for target in [&fifo, &link] {
        let child = spawn_ewise(&["sign", "--in-place", target.to_str().unwrap()]);
        let (status, _, err) = finish_within(child, PATIENCE);
        assert_error_exit(
            status,
            1,
            &err,
            &[
                "is a FIFO (named pipe), not a regular file",
                "--in-place rewrites regular files only",
            ],
        );
    }
    let child = spawn_ewise(&["sign", "--in-place", "/dev/null"]);
    let (status, _, err) = finish_within(child, PATIENCE);
    assert_error_exit(
        status,
        1,
        &err,
        &["/dev/null: is a character device, not a regular file"],
    );
    assert_eq!(file_names(dir.path()), ["in.npy", "link.npy"]);
}

#[test]
fn sockets_devices_and_directories_are_refused_naming_what_is_accepted() {
    let dir = temp_dir();
    let out = path(&dir, "out.npy");
    let accepted =
        "(accepted: a regular .npy file, or a FIFO or pipe that a program writes one into)";
    #[allow(unused_mut)]
    let mut cases = vec![(
        dir.path().to_str().unwrap().to_string(),
        "is a directory, not a .npy file",
    )];
    #[cfg(unix)]
    let _listener = {
        let socket = path(&dir, "in.sock");
        let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        cases.push((
            socket.to_str().unwrap().to_string(),
            "is a socket, not a .npy file",
        ));
        cases.push((
            "/dev/null".to_string(),
            "is a character device, not a .npy file",
        ));
        listener
    };
    for (input, what) in &cases {
        let child = spawn_ewise(&["sign", input, out.to_str().unwrap()]);
        let (status, _, err) = finish_within(child, PATIENCE);
        assert_error_exit(status, 1, &err, &[&format!("{input}: {what}"), accepted]);
    }
    let expected: &[&str] = if cfg!(unix) { &["in.sock"] } else { &[] };
    assert_eq!(file_names(dir.path()), expected);
}

/// A `.npy` file of four float32 values.
#[cfg(target_os = "linux")]
fn small_npy() -> (Vec<u8>, Vec<u64>) {
    let t = DataType::Float32;
    let values = patterns(t, 0, 1)[..4].to_vec();
    let mut bytes = f32_header(values.len() as u64);
    bytes.extend_from_slice(&to_le(&values, 4));
    (bytes, expected_sign(t, &values, NanPolicy::Zero))
}

#[test]
#[cfg(target_os = "linux")]
fn a_fifo_input_waits_for_its_writer() {
    let dir = temp_dir();
    let fifo = path(&dir, "in.npy");
    mkfifo(&fifo);
    let out = path(&dir, "out.npy");
    let child = spawn_ewise(&["sign", fifo.to_str().unwrap(), out.to_str().unwrap()]);
    wait_for_handler(&child, PATIENCE);
    std::thread::sleep(Duration::from_millis(300));
    let (bytes, want) = small_npy();
    let mut writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    writer.write_all(&bytes).unwrap();
    drop(writer);
    let (status, _, err) = finish_within(child, PATIENCE);
    assert!(status.success(), "{err}");
    assert_eq!(from_le(&read_npy(&out).1, 4), want);
}

#[test]
#[cfg(target_os = "linux")]
fn ctrl_c_ends_the_wait_for_a_fifo_writer_at_once() {
    let dir = temp_dir();
    let fifo = path(&dir, "in.npy");
    mkfifo(&fifo);
    let out = path(&dir, "out.npy");
    std::fs::write(&out, b"old results").unwrap();
    let child = spawn_ewise(&["sign", fifo.to_str().unwrap(), out.to_str().unwrap()]);
    wait_for_handler(&child, PATIENCE);
    std::thread::sleep(Duration::from_millis(1000));
    send_signal(&child, "INT");
    let (status, _, err) = finish_within(child, PATIENCE);
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
#[cfg(target_os = "linux")]
fn a_fifo_closed_without_data_is_an_error() {
    let dir = temp_dir();
    let fifo = path(&dir, "in.npy");
    mkfifo(&fifo);
    let out = path(&dir, "out.npy");
    let child = spawn_ewise(&["sign", fifo.to_str().unwrap(), out.to_str().unwrap()]);
    drop(std::fs::OpenOptions::new().write(true).open(&fifo).unwrap());
    let (status, _, err) = finish_within(child, PATIENCE);
    assert_error_exit(status, 1, &err, &["in.npy: the pipe delivered nothing"]);
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

/// The 4 bytes at `offset` of `file`, read through a handle of their own.
#[cfg(not(unix))]
fn first_element(file: &std::path::Path, offset: u64) -> [u8; 4] {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(file).unwrap();
    f.seek(SeekFrom::Start(offset)).unwrap();
    let mut bytes = [0; 4];
    f.read_exact(&mut bytes).unwrap();
    bytes
}

/// Truncates a large file once `ewise sign --in-place FILE EXTRA...` has started writing
/// it (retrying when ewise finished first), and checks that ewise stops with an error
/// and leaves the file at its new length. On Windows, where ewise does not share the
/// file for writing while it rewrites it, checks that the truncation is refused and that
/// ewise finishes.
fn truncated_while_rewritten(extra: &[&str]) {
    let dir = temp_dir();
    let file = path(&dir, "big.npy");
    let header = f32_header(TRUNCATED_DATA / 4);
    // The first element: -2, which ewise rewrites to -1 (Windows tells the start so).
    #[cfg(not(unix))]
    let first = header.len() as u64;
    for attempt in 0..10 {
        let mut f = std::fs::File::create(&file).unwrap();
        f.write_all(&header).unwrap();
        f.write_all(&(-2.0f32).to_le_bytes()).unwrap();
        f.set_len(header.len() as u64 + TRUNCATED_DATA).unwrap();
        drop(f);
        let mut args = vec!["sign", "--in-place", file.to_str().unwrap()];
        args.extend_from_slice(extra);
        #[cfg(unix)]
        let blocks = std::fs::metadata(&file).unwrap().blocks();
        let mut child = spawn_ewise(&args);
        let start = Instant::now();
        let started = loop {
            // Unix: the sparse file gets more blocks. Windows, which has no such count:
            // the first element was rewritten.
            #[cfg(unix)]
            let writing = std::fs::metadata(&file).unwrap().blocks() > blocks;
            #[cfg(not(unix))]
            let writing = first_element(&file, first) == (-1.0f32).to_le_bytes();
            if writing {
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
        let opened = std::fs::OpenOptions::new().write(true).open(&file);
        #[cfg(windows)]
        {
            const ERROR_SHARING_VIOLATION: i32 = 32;
            let refused = opened.expect_err("another program opened the file for writing");
            assert_eq!(
                refused.raw_os_error(),
                Some(ERROR_SHARING_VIOLATION),
                "{refused}"
            );
            let (status, _, err) = finish_within(child, PATIENCE);
            assert!(status.success(), "attempt {attempt}: {err}");
            let full = header.len() as u64 + TRUNCATED_DATA;
            assert_eq!(std::fs::metadata(&file).unwrap().len(), full);
            return;
        }
        #[cfg(not(windows))]
        if stopped_by_truncation(
            opened.unwrap(),
            header.len() as u64 + (1 << 20),
            child,
            attempt,
        ) {
            return;
        }
    }
    panic!("ewise finished before the file could be truncated, ten times");
}

/// Truncates `file` (the big.npy that `child` rewrites in place) to `cut` bytes. Checks,
/// and returns true, when ewise stopped with the error that names the truncation and
/// left the file at its new length; false when ewise had finished first.
#[cfg(not(windows))]
fn stopped_by_truncation(
    file: std::fs::File,
    cut: u64,
    child: std::process::Child,
    attempt: usize,
) -> bool {
    file.set_len(cut).unwrap();
    let (status, _, err) = finish_within(child, PATIENCE);
    if status.success() {
        assert!(!err.contains("panicked"), "attempt {attempt}: {err}");
        return false;
    }
    // On a machine with only a software renderer, `--device gpu` announces it first.
    let err: String = err
        .lines()
        .filter(|l| !l.starts_with("ewise: warning: the GPU device runs on "))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_error_exit(
        status,
        1,
        &err,
        &[
            "big.npy: was truncated to",
            "by another program while being rewritten in place",
            "without writing past its new end",
        ],
    );
    assert_eq!(
        file.metadata().unwrap().len(),
        cut,
        "the truncated file was grown again"
    );
    true
}

/// Windows: a file another program has open for writing is refused by `--in-place`,
/// naming why, and left as it was; once that program closes it, the same command runs.
#[test]
#[cfg(windows)]
fn in_place_refuses_a_file_another_program_has_open_for_writing() {
    let dir = temp_dir();
    let file = path(&dir, "held.npy");
    let bytes = f32_npy_bytes(&[-2.0, 3.0]);
    std::fs::write(&file, &bytes).unwrap();
    let held = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    let out = ewise(["sign", "--in-place", file.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_error_exit(
        out.status,
        1,
        &err,
        &[
            "held.npy: cannot open: another program has it open for writing",
            "(os error 32); close it there, then run again",
        ],
    );
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
    drop(held);
    let out = ewise(["sign", "--in-place", file.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(&file).unwrap(), f32_npy_bytes(&[-1.0, 1.0]));
}

#[test]
fn run_names_what_an_input_truncated_while_it_is_read_still_holds() {
    let dir = temp_dir();
    let model = path(&dir, "sign.onnx");
    std::fs::write(&model, sign_model((TRUNCATED_DATA / 4) as i64)).unwrap();
    let x = path(&dir, "x.npy");
    let out = path(&dir, "out");
    let header = f32_header(TRUNCATED_DATA / 4);
    let cut = header.len() as u64 + 4096;
    for _ in 0..10 {
        let mut f = std::fs::File::create(&x).unwrap();
        f.write_all(&header).unwrap();
        f.set_len(header.len() as u64 + TRUNCATED_DATA).unwrap();
        let mut child = spawn_ewise(&[
            "run",
            model.to_str().unwrap(),
            "-i",
            &format!("x={}", x.display()),
            "-o",
            out.to_str().unwrap(),
            "--chunk-size",
            "4Ki",
        ]);
        wait_until(
            &mut child,
            "the output's temporary exists",
            PATIENCE,
            || std::fs::read_dir(&out).is_ok_and(|mut d| d.next().is_some()),
        );
        f.set_len(cut).unwrap();
        let (status, _, err) = finish_within(child, PATIENCE);
        if status.success() {
            std::fs::remove_dir_all(&out).unwrap();
            continue;
        }
        assert_error_exit(
            status,
            1,
            &err,
            &[
                "x.npy: truncated while being read",
                &format!("needs {TRUNCATED_DATA} bytes of data"),
                "but the file now holds 4096 bytes after the header",
            ],
        );
        assert!(!out.exists() || file_names(&out).is_empty(), "{err}");
        return;
    }
    panic!("ewise finished before the input could be truncated, ten times");
}
