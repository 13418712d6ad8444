//! Output appears whole or not at all; the input is never the output.
//!
//! The tests that need named pipes (mkfifo), symbolic links, unix permission bits or
//! signals are unix-only; the rest run on Windows too (scripts/windows-test.sh).

mod common;

#[cfg(unix)]
use std::io::Write as _;
#[cfg(unix)]
use std::process::Command;

use common::*;

fn small_input(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let src = path(dir, "in.npy");
    write_npy(
        &src,
        "<f4",
        false,
        &[3],
        &[0, 0, 0x80, 0xbf, 0, 0, 0, 0, 0, 0, 0x80, 0x7f],
    );
    src
}

/// A named pipe `in.fifo` in `dir`, for inputs that arrive (or stop) while a run reads.
#[cfg(unix)]
fn fifo_in(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let fifo = path(dir, "in.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    fifo
}

#[test]
#[cfg(unix)]
fn a_run_failing_mid_stream_leaves_no_output_and_keeps_an_old_one() {
    let dir = temp_dir();
    let fifo = fifo_in(&dir);
    let header = f32_header(3 << 20);
    let dst = path(&dir, "out.npy");
    std::fs::write(&dst, b"previous contents").unwrap();
    for existing in [true, false] {
        if !existing {
            std::fs::remove_file(&dst).unwrap();
        }
        let writer = {
            let (fifo, header) = (fifo.clone(), header.clone());
            std::thread::spawn(move || {
                let mut f = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
                f.write_all(&header).unwrap();
                let _ = f.write_all(&vec![0x3f; 9 << 20]);
            })
        };
        let out = ewise(["sign", fifo.to_str().unwrap(), dst.to_str().unwrap()]);
        writer.join().unwrap();
        assert_error(&out, &["in.fifo: read failed: the file ended early"]);
        if existing {
            assert_eq!(std::fs::read(&dst).unwrap(), b"previous contents");
            assert_eq!(file_names(dir.path()), ["in.fifo", "out.npy"]);
        } else {
            assert_eq!(
                file_names(dir.path()),
                ["in.fifo"],
                "no output, no temporary file"
            );
        }
    }
}

#[test]
fn a_bad_input_leaves_an_existing_output_untouched() {
    let dir = temp_dir();
    let src = path(&dir, "bad.npy");
    std::fs::write(&src, b"\x93NUMPY\x01\x00garbage").unwrap();
    let dst = path(&dir, "out.npy");
    std::fs::write(&dst, b"keep me").unwrap();
    assert_error(
        &ewise(["sign", src.to_str().unwrap(), dst.to_str().unwrap()]),
        &["bad.npy"],
    );
    assert_eq!(std::fs::read(&dst).unwrap(), b"keep me");
    assert_eq!(file_names(dir.path()), ["bad.npy", "out.npy"]);
}

#[test]
fn the_output_may_not_be_the_input_under_any_name() {
    let dir = temp_dir();
    let src = small_input(&dir);
    let before = std::fs::read(&src).unwrap();
    std::fs::create_dir(path(&dir, "sub")).unwrap();
    let hard = path(&dir, "hard.npy");
    std::fs::hard_link(&src, &hard).unwrap();
    #[allow(unused_mut)]
    let mut spellings = vec![
        src.clone(),
        dir.path().join("sub").join("..").join("in.npy"),
        dir.path().join(".").join("in.npy"),
        hard,
    ];
    #[cfg(unix)]
    {
        let soft = path(&dir, "soft.npy");
        std::os::unix::fs::symlink(&src, &soft).unwrap();
        spellings.push(soft);
    }
    for out in &spellings {
        for op in ["sign", "is-infinity"] {
            let result = ewise([op, src.to_str().unwrap(), out.to_str().unwrap()]);
            assert_error(&result, &["is the input file", "--in-place"]);
        }
    }
    assert_eq!(std::fs::read(&src).unwrap(), before);
    let mut names = vec!["hard.npy", "in.npy", "sub"];
    if cfg!(unix) {
        names.insert(2, "soft.npy");
    }
    assert_eq!(file_names(dir.path()), names);
}

#[test]
#[cfg(unix)]
fn an_existing_output_is_replaced_keeping_its_permissions() {
    let dir = temp_dir();
    let src = small_input(&dir);
    let dst = path(&dir, "out.npy");
    std::fs::write(&dst, b"old").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(0o640)).unwrap();
    assert_ok(&ewise([
        "sign",
        src.to_str().unwrap(),
        dst.to_str().unwrap(),
    ]));
    assert_eq!(
        std::fs::metadata(&dst).unwrap().permissions().mode() & 0o777,
        0o640
    );
    assert_eq!(
        read_npy(&dst).1,
        [0, 0, 0x80, 0xbf, 0, 0, 0, 0, 0, 0, 0x80, 0x3f]
    );
    assert_eq!(file_names(dir.path()), ["in.npy", "out.npy"]);
}

#[test]
#[cfg(unix)]
fn an_output_through_a_symlink_replaces_the_target() {
    let dir = temp_dir();
    let src = small_input(&dir);
    let target = path(&dir, "target.npy");
    std::fs::write(&target, b"old").unwrap();
    let link = path(&dir, "link.npy");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    assert_ok(&ewise([
        "sign",
        src.to_str().unwrap(),
        link.to_str().unwrap(),
    ]));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(read_npy(&target).1.len(), 12);
}

#[test]
fn temporaries_of_interrupted_runs_are_removed_by_the_next_run() {
    if !cfg!(windows) && !std::path::Path::new("/proc/self").exists() {
        eprintln!("skipping: here a process's end is told through /proc, and it is absent");
        return;
    }
    let dir = temp_dir();
    let src = small_input(&dir);
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let stale = path(&dir, ".out.npy.ewise-4000000000-AbCdEf.tmp");
    let fresh = path(&dir, ".out.npy.ewise-4000000001-AbCdEf.tmp");
    let running = path(
        &dir,
        &format!(".out.npy.ewise-{}-AbCdEf.tmp", std::process::id()),
    );
    let other = path(&dir, ".other.npy.ewise-4000000000-AbCdEf.tmp");
    for p in [&stale, &fresh, &running, &other] {
        std::fs::write(p, b"partial").unwrap();
    }
    for p in [&stale, &running, &other] {
        std::fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
    assert_ok(&ewise([
        "sign",
        src.to_str().unwrap(),
        path(&dir, "out.npy").to_str().unwrap(),
    ]));
    assert!(
        !stale.exists(),
        "a stale temporary of a finished process remains"
    );
    assert!(fresh.exists() && running.exists() && other.exists());
}

#[test]
#[cfg(unix)]
fn ctrl_c_stops_at_the_next_chunk_and_leaves_no_file() {
    let dir = temp_dir();
    let fifo = fifo_in(&dir);
    let header = f32_header(2 << 20);
    let dst = path(&dir, "out.npy");
    let (go_on, wait) = std::sync::mpsc::channel::<()>();
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
            f.write_all(&header).unwrap();
            f.write_all(&vec![0x3f; 4 << 20]).unwrap();
            let _ = wait.recv();
            let _ = f.write_all(&vec![0x3f; 4 << 20]);
        })
    };
    let child = ewise_command()
        .args(["sign", fifo.to_str().unwrap(), dst.to_str().unwrap()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while file_names(dir.path()).len() < 2 && started.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(
        file_names(dir.path()).len(),
        2,
        "the temporary output appears"
    );
    std::thread::sleep(std::time::Duration::from_millis(200));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    assert!(killed.is_ok_and(|s| s.success()), "kill -INT");
    std::thread::sleep(std::time::Duration::from_millis(100));
    go_on.send(()).unwrap();
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert_eq!(
        file_names(dir.path()),
        ["in.fifo"],
        "no output, no temporary file"
    );
}
