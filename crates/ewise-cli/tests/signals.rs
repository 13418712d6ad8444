//! Every command stoppable: SIGINT, SIGTERM and SIGHUP sent for real to a running
//! `ewise`, while it computes, while it is blocked reading a stalled pipe, and twice.
//! Each time the process exits with status 130, leaves no temporary file and leaves the
//! files that were there before exactly as they were.
//!
//! On Windows the same for console control events: `ewise` runs in a console of its
//! own and a helper process attaches to it and generates the event
//! (`common::send_console_event`). Ctrl-C is delivered for real under wine; Ctrl-Break
//! and closing the console are tried, and where the system cannot deliver them (wine
//! 8.0's server implements only `CTRL_C_EVENT`, and gives a console no window to close
//! when there is no display) the test says so in one line and skips. The Unix tests
//! need FIFOs, `/proc` and `kill`, so they are Linux's.

mod common;

#[cfg(target_os = "linux")]
use std::fs::OpenOptions;
#[cfg(target_os = "linux")]
use std::io::Write;
#[cfg(target_os = "linux")]
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
#[cfg(target_os = "linux")]
use std::process::Child;
use std::process::ExitStatus;
#[cfg(target_os = "linux")]
use std::time::Instant;
use std::{fs::File, time::Duration};

use common::*;

/// Linux's `O_NONBLOCK` (the same on x86-64 and aarch64).
#[cfg(target_os = "linux")]
const O_NONBLOCK: i32 = 0o4000;

/// Long enough for any hang to be a hang, even under qemu.
const PATIENCE: Duration = Duration::from_secs(60);

fn assert_stopped(status: ExitStatus, err: &str) {
    assert_eq!(status.code(), Some(130), "status {status}, stderr: {err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Bytes ewise has read so far (`rchar` in `/proc/PID/io`).
#[cfg(target_os = "linux")]
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
#[cfg(target_os = "linux")]
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
#[cfg(target_os = "linux")]
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
#[cfg(target_os = "linux")]
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
#[cfg(target_os = "linux")]
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
#[cfg(target_os = "linux")]
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
#[cfg(target_os = "linux")]
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
#[cfg(target_os = "linux")]
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

/// `dir/NAME`: a float32 `.npy` vector of `n` zeros, a sparse file where the file
/// system makes one (SIGN of +0 is +0, so no data need be written).
#[cfg(windows)]
fn zeros_npy(dir: &Path, name: &str, n: u64) -> std::path::PathBuf {
    let path = dir.join(name);
    let header = f32_header(n);
    let file = File::create(&path).unwrap();
    std::io::Write::write_all(&mut &file, &header).unwrap();
    file.set_len(header.len() as u64 + 4 * n).unwrap();
    path
}

/// Starts `ewise ARGS` in a console of its own and waits until a new file (its
/// temporary output) appears in `dir`, which held `before`.
#[cfg(windows)]
fn started_writing(args: &[&str], dir: &Path, before: &[String]) -> std::process::Child {
    let mut child = spawn_ewise_in_a_console(args);
    wait_until(
        &mut child,
        "the temporary output appeared",
        PATIENCE,
        || has_new_file(dir, before),
    );
    child
}

/// The helper process of `send_console_event`: does nothing in a test run of its own.
#[cfg(windows)]
#[test]
#[ignore = "the helper that delivers console events for the Windows tests of this file"]
fn console_event_helper_process() {
    console_event_helper();
}

#[cfg(windows)]
const HELPER: &str = "console_event_helper_process";

#[test]
#[cfg(windows)]
fn ctrl_c_stops_sign_and_is_infinity_at_the_next_chunk() {
    for op in ["sign", "is-infinity"] {
        let dir = temp_dir();
        let input = zeros_npy(dir.path(), "in.npy", 256 << 20);
        let out = dir.path().join("out.npy");
        std::fs::write(&out, b"old results").unwrap();
        let before = file_names(dir.path());
        let args = [
            op,
            input.to_str().unwrap(),
            out.to_str().unwrap(),
            "--threads",
            "1",
        ];
        let child = started_writing(&args, dir.path(), &before);
        send_console_event(&child, ConsoleEvent::CtrlC, 1, HELPER).expect("Ctrl-C delivered");
        let (status, _, err) = finish_within(child, PATIENCE);
        assert_stopped(status, &err);
        assert!(
            err.contains("interrupted: stopped; no output was written"),
            "{op}: {err}"
        );
        assert!(!err.contains("stopped before finishing"), "{op}: {err}");
        check_clean(dir.path(), &before);
    }
}

/// `dir/sign.onnx` over `n` elements, `dir/x.npy` of `n` zeros, and `dir/out/` holding
/// `y.npy` with old bytes; returns the arguments of `ewise run` over them (in chunks of
/// 4 KiB: a run of many seconds) and OUTDIR.
#[cfg(windows)]
fn slow_run(dir: &Path, n: u64) -> (Vec<String>, std::path::PathBuf) {
    let model = dir.join("sign.onnx");
    std::fs::write(&model, sign_model(n as i64)).unwrap();
    let input = zeros_npy(dir, "x.npy", n);
    let outdir = dir.join("out");
    std::fs::create_dir(&outdir).unwrap();
    std::fs::write(outdir.join("y.npy"), b"old results").unwrap();
    let args = run_args(&model, &input, &outdir, &["--chunk-size", "4Ki"]);
    (args, outdir)
}

#[test]
#[cfg(windows)]
fn ctrl_c_stops_run_and_leaves_outdir_as_it_was() {
    for count in [1, 2] {
        let dir = temp_dir();
        let (args, outdir) = slow_run(dir.path(), 64 << 20);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let before = file_names(&outdir);
        let child = started_writing(&args, &outdir, &before);
        send_console_event(&child, ConsoleEvent::CtrlC, count, HELPER).expect("Ctrl-C delivered");
        let (status, _, err) = finish_within(child, PATIENCE);
        assert_stopped(status, &err);
        if count == 1 {
            assert!(!err.contains("stopped before finishing"), "{err}");
        }
        assert_eq!(
            file_names(&outdir),
            before,
            "{count} Ctrl-C: OUTDIR changed"
        );
        assert_eq!(std::fs::read(outdir.join("y.npy")).unwrap(), b"old results");
    }
}

#[test]
#[cfg(windows)]
fn ctrl_c_stops_bench_between_samples() {
    let mut child = spawn_ewise_in_a_console(&bench_sign(
        "64Mi",
        "float32",
        &["--threads", "1", "--samples", "1001"],
    ));
    std::thread::sleep(Duration::from_millis(1500));
    assert!(child.try_wait().unwrap().is_none(), "bench ended early");
    send_console_event(&child, ConsoleEvent::CtrlC, 1, HELPER).expect("Ctrl-C delivered");
    let (status, out, err) = finish_within(child, PATIENCE);
    assert_stopped(status, &err);
    assert!(
        err.contains("interrupted: stopped; no output was written"),
        "{err}"
    );
    assert!(!err.contains("stopped before finishing"), "{err}");
    assert!(out.is_empty(), "{out}");
}

/// Ctrl-Break (`CTRL_BREAK_EVENT`) and closing the console (`CTRL_CLOSE_EVENT`, after
/// which Windows ends the process 5 s later whatever its handler does) stop a run as
/// Ctrl-C does: status 130, OUTDIR as it was, no temporary left.
///
/// Under wine 8.0 neither can be tested: its server refuses `CTRL_BREAK_EVENT`; without a
/// display a console has no window to close, and with one (scripts/windows-test.sh runs
/// an X server for the GPU tests) `WM_CLOSE` on the console's window ends the processes
/// attached to it at once, status 0, no `CTRL_CLOSE_EVENT` reaching their handlers (as
/// `kill -9` would). Each case says so in one line and is skipped there.
#[test]
#[cfg(windows)]
fn ctrl_break_and_closing_the_console_stop_a_run_and_leave_outdir_as_it_was() {
    for (event, what) in [
        (ConsoleEvent::CtrlBreak, "Ctrl-Break"),
        (ConsoleEvent::Close, "closing the console"),
    ] {
        let dir = temp_dir();
        let (args, outdir) = slow_run(dir.path(), 64 << 20);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let before = file_names(&outdir);
        let mut child = started_writing(&args, &outdir, &before);
        if let Err(why) = send_console_event(&child, event, 1, HELPER) {
            let _ = child.kill();
            let _ = child.wait();
            let wine = if std::env::var_os("WINEPREFIX").is_none() {
                ""
            } else if event == ConsoleEvent::CtrlBreak {
                " (wine 8.0's server delivers CTRL_C_EVENT only: any other event fails with STATUS_NOT_IMPLEMENTED)"
            } else {
                " (wine 8.0 gives a console no window without a display, and its server sends no CTRL_CLOSE_EVENT)"
            };
            eprintln!("SKIPPED ({what}): this system does not deliver it: {why}{wine}");
            continue;
        }
        let (status, _, err) = finish_within(child, PATIENCE);
        let under_wine = std::env::var_os("WINEPREFIX").is_some();
        if under_wine && event == ConsoleEvent::Close && status.code() != Some(130) {
            eprintln!(
                "SKIPPED ({what}): wine 8.0's console window ended the run with {status} and no handler ran ({err:?}): wine sends no CTRL_CLOSE_EVENT on WM_CLOSE"
            );
            continue;
        }
        assert_stopped(status, &err);
        assert_eq!(file_names(&outdir), before, "{what}: OUTDIR changed");
        assert_eq!(std::fs::read(outdir.join("y.npy")).unwrap(), b"old results");
    }
}
