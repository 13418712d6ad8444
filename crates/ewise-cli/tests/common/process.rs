//! A running `ewise` as a child process: started with its output piped, sent signals
//! with `kill -s` (Unix), watched until something holds and waited for with a deadline.

use std::io::Read;
#[cfg(unix)]
use std::process::Command;
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::{ewise_command, start, wait_within};

/// Starts `ewise ARGS` with standard input empty and standard output and error piped
/// (read them with [`finish_within`]).
pub fn spawn_ewise<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Child {
    start(
        ewise_command()
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    )
}

/// Sends `signal` (a name such as `INT`, `TERM` or `HUP`) to `child` with `kill -s`.
#[cfg(unix)]
pub fn send_signal(child: &Child, signal: &str) {
    let status = Command::new("kill")
        .args(["-s", signal, &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -s {signal} failed");
}

/// Runs `child` to its end (as [`wait_within`] does) and returns its status, standard
/// output and standard error (empty where not piped or already taken); kills it and
/// fails the test if it still runs after `limit`.
pub fn finish_within(child: Child, limit: Duration) -> (ExitStatus, String, String) {
    let out = wait_within(child, limit)
        .unwrap_or_else(|| panic!("ewise still ran after {limit:?}: it hangs"));
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (out.status, text(&out.stdout), text(&out.stderr))
}

/// Polls `ready` until it holds, failing the test after `limit` or, showing its
/// standard error, if `child` exits first.
pub fn wait_until(child: &mut Child, what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        if let Some(status) = child.try_wait().expect("wait for ewise") {
            let mut err = String::new();
            if let Some(mut stderr) = child.stderr.take() {
                let _ = stderr.read_to_string(&mut err);
            }
            panic!("ewise exited ({status}) before {what}: {err}");
        }
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether the process `pid` has a handler for SIGINT (so a signal now takes ewise's
/// own path, not the default that kills it), from `/proc/PID/status`.
#[cfg(target_os = "linux")]
pub fn catches_sigint(pid: u32) -> bool {
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

/// Waits until `child` handles SIGINT, failing the test after `limit`.
#[cfg(target_os = "linux")]
pub fn wait_for_handler(child: &Child, limit: Duration) {
    let start = Instant::now();
    while !catches_sigint(child.id()) {
        assert!(start.elapsed() < limit, "ewise never installed its handler");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A process's peak resident set (`VmHWM`), in KiB, while it exists.
#[cfg(target_os = "linux")]
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs `ewise ARGS` to its end, reading its peak resident set every 2 ms; fails the
/// test if it fails or runs past 10 minutes, else returns the last peak read, in KiB.
#[cfg(target_os = "linux")]
pub fn peak_of_ewise<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> u64 {
    let mut child = ewise_command()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the ewise binary starts");
    let started = Instant::now();
    let mut peak = None;
    let status = loop {
        if let Some(kib) = peak_rss_kib(child.id()) {
            peak = Some(kib);
        }
        if let Some(status) = child.try_wait().expect("wait for ewise") {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "ewise did not finish in 10 minutes"
        );
        std::thread::sleep(Duration::from_millis(2));
    };
    let mut err = String::new();
    if let Some(mut stderr) = child.stderr.take() {
        let _ = stderr.read_to_string(&mut err);
    }
    assert!(status.success(), "ewise failed: {err}");
    peak.expect("the peak resident set was read at least once")
}

/// The arguments of `ewise run MODEL -i x=X -o OUTDIR` followed by `extra`.
pub fn run_args(
    model: &std::path::Path,
    x: &std::path::Path,
    outdir: &std::path::Path,
    extra: &[&str],
) -> Vec<String> {
    let fixed = [
        "run".to_string(),
        model.display().to_string(),
        "-i".to_string(),
        format!("x={}", x.display()),
        "-o".to_string(),
        outdir.display().to_string(),
    ];
    fixed
        .into_iter()
        .chain(extra.iter().map(|a| a.to_string()))
        .collect()
}

/// Whether peaks are meaningful: not under an emulator, whose own memory they include.
pub fn peaks_checked() -> bool {
    let emulated = std::env::var(super::RUNNER_ENV).is_ok_and(|r| !r.trim().is_empty());
    if emulated {
        eprintln!(
            "not checking peaks: {} runs ewise inside an emulator",
            super::RUNNER_ENV
        );
    }
    !emulated
}

/// `ewise bench --device cpu --op sign --layout contiguous --sizes SIZE --dtype DTYPE`
/// followed by `extra`.
pub fn bench_sign<'a>(size: &'a str, dtype: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "bench",
        "--device",
        "cpu",
        "--op",
        "sign",
        "--layout",
        "contiguous",
        "--sizes",
        size,
        "--dtype",
        dtype,
    ];
    args.extend_from_slice(extra);
    args
}
