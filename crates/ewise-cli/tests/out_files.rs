//! OUT of `ewise sign` and `is-infinity` on hostile paths: FIFOs without a reader,
//! read-only files, special permission bits, names near the 255-byte limit, dangling
//! links, paths that cannot be a file, a directory that refuses the temporary, and the
//! directory sync after the rename. Each test does the bad thing for real.
#![cfg(unix)]

mod common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::*;

/// Long enough for a run that works, short enough for a test that would hang forever.
const LIMIT: Duration = Duration::from_secs(30);

/// `dir/in.npy`: float32 [-1, 0, inf].
fn small_input(dir: &Path) -> PathBuf {
    let src = dir.join("in.npy");
    std::fs::write(&src, f32_npy_bytes(&[-1.0, 0.0, f32::INFINITY])).unwrap();
    src
}

/// The `.npy` bytes `ewise sign` writes for [`small_input`].
fn small_signs() -> Vec<u8> {
    f32_npy_bytes(&[-1.0, 0.0, 1.0])
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A FIFO input nobody writes to: a command that opens its input blocks forever.
fn unwritten_fifo(dir: &Path) -> PathBuf {
    let fifo = dir.join("never-written.fifo");
    mkfifo(&fifo);
    fifo
}

#[test]
fn a_fifo_without_reader_is_refused_at_once() {
    let dir = temp_dir();
    let src = small_input(dir.path());
    let fifo = dir.path().join("out.fifo");
    mkfifo(&fifo);
    for op in ["sign", "is-infinity"] {
        let out = ewise_within([op, s(&src), s(&fifo)], LIMIT)
            .expect("ewise blocked opening a FIFO that has no reader");
        assert_error(&out, &["out.fifo", "is a FIFO with no reader"]);
    }
    assert_eq!(file_names(dir.path()), ["in.npy", "out.fifo"]);
}

#[test]
fn a_fifo_with_a_reader_gets_the_output_and_devices_are_written() {
    let dir = temp_dir();
    let src = small_input(dir.path());
    let fifo = dir.path().join("out.fifo");
    mkfifo(&fifo);
    // Read and write: opening does not wait for a writer, and the reader exists before
    // ewise opens the FIFO.
    let mut reader = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .unwrap();
    let out = ewise_within(["sign", s(&src), s(&fifo)], LIMIT).expect("ewise finishes");
    assert_ok(&out);
    let expected = small_signs();
    let mut got = vec![0u8; expected.len()];
    reader.read_exact(&mut got).unwrap();
    assert_eq!(got, expected);
    let piped = ewise(["sign", s(&src), "/dev/stdout"]);
    assert_ok(&piped);
    assert_eq!(piped.stdout, expected, "/dev/stdout, a link to a pipe");
    assert_ok(&ewise(["sign", s(&src), "/dev/null"]));
    assert_ok(&ewise(["is-infinity", s(&src), "/dev/null"]));
    assert_eq!(file_names(dir.path()), ["in.npy", "out.fifo"]);
}

#[test]
fn a_read_only_output_is_refused_for_a_user_who_may_not_write_it() {
    if as_other_user().is_none() {
        return;
    }
    let dir = temp_dir();
    chmod(dir.path(), 0o777);
    let src = small_input(dir.path());
    chmod(&src, 0o644);
    let dst = dir.path().join("out.npy");
    std::fs::write(&dst, b"keep me").unwrap();
    std::os::unix::fs::chown(&dst, Some(OTHER_UID), Some(OTHER_UID)).unwrap();
    chmod(&dst, 0o444);
    for op in ["sign", "is-infinity"] {
        let mut user = as_other_user().unwrap();
        let out = user.args([op, s(&src), s(&dst)]).output().unwrap();
        assert_error(
            &out,
            &["out.npy: cannot replace it", "Permission denied", "0444"],
        );
    }
    assert_eq!(std::fs::read(&dst).unwrap(), b"keep me");
    assert_eq!(mode_of(&dst), 0o444);
    assert_eq!(file_names(dir.path()), ["in.npy", "out.npy"]);
}

#[test]
fn the_superuser_replaces_a_read_only_output_as_cp_does() {
    if !is_root() {
        eprintln!("skipping: needs root");
        return;
    }
    let dir = temp_dir();
    let src = small_input(dir.path());
    let dst = dir.path().join("out.npy");
    std::fs::write(&dst, b"old").unwrap();
    chmod(&dst, 0o444);
    assert_ok(&ewise(["sign", s(&src), s(&dst)]));
    assert_eq!(std::fs::read(&dst).unwrap(), small_signs());
    assert_eq!(mode_of(&dst), 0o444, "the replaced file's permissions");
}

#[test]
fn setuid_setgid_and_sticky_bits_are_not_copied_and_the_umask_does_not_narrow() {
    let dir = temp_dir();
    let src = small_input(dir.path());
    let dst = dir.path().join("out.npy");
    for old in [0o4755, 0o2755, 0o1755, 0o7777] {
        std::fs::write(&dst, b"old").unwrap();
        chmod(&dst, old);
        assert_eq!(mode_of(&dst), old, "the test sets the bits");
        assert_ok(&ewise(["sign", s(&src), s(&dst)]));
        assert_eq!(mode_of(&dst), old & 0o777, "from {old:04o}");
    }
    let umask_run = |umask: &str| {
        let ewise = ewise_command();
        let status = Command::new("sh")
            .args(["-c", &format!("umask {umask} && exec \"$@\""), "sh"])
            .arg(ewise.get_program())
            .args(ewise.get_args())
            .args(["sign", s(&src), s(&dst)])
            .status()
            .unwrap();
        assert!(status.success());
    };
    chmod(&dst, 0o666);
    umask_run("077");
    assert_eq!(mode_of(&dst), 0o666, "a replaced file keeps its bits");
    std::fs::remove_file(&dst).unwrap();
    umask_run("027");
    assert_eq!(mode_of(&dst), 0o640, "a new file: 0666 less the umask");
}

#[test]
fn output_names_up_to_255_bytes_work() {
    let dir = temp_dir();
    let src = small_input(dir.path());
    let names = [
        format!("{}.npy", "a".repeat(251)),
        format!("{}.npy", "é".repeat(125)),
        format!("{}.npy", "b".repeat(222)),
    ];
    for name in &names {
        assert!(name.len() <= 255, "a legal name");
        let dst = dir.path().join(name);
        assert_ok(&ewise(["sign", s(&src), s(&dst)]));
        assert_eq!(std::fs::read(&dst).unwrap(), small_signs());
        assert_ok(&ewise(["sign", s(&src), s(&dst)]));
    }
    let mut expected: Vec<String> = names.to_vec();
    expected.push("in.npy".into());
    expected.sort();
    assert_eq!(file_names(dir.path()), expected, "no temporary left");
}

/// Starts `ewise sign FIFO dst`, feeds it a header and part of the data, waits for its
/// temporary file, kills it with SIGKILL and returns the temporary's name.
fn kill_mid_run(dir: &Path, dst: &Path) -> String {
    let fifo = dir.join("in.fifo");
    mkfifo(&fifo);
    let before = file_names(dir);
    let mut child = ewise_command()
        .args(["sign", s(&fifo), s(dst)])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    let mut header = f32_header(4 << 20);
    header.extend(vec![0x3f; 4 << 20]);
    writer.write_all(&header).unwrap();
    let started = std::time::Instant::now();
    let temp = loop {
        let new: Vec<String> = file_names(dir)
            .into_iter()
            .filter(|n| !before.contains(n) && n != "in.fifo")
            .collect();
        if let Some(name) = new.into_iter().next() {
            break name;
        }
        assert!(started.elapsed() < LIMIT, "no temporary appeared");
        std::thread::sleep(Duration::from_millis(20));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    drop(writer);
    std::fs::remove_file(&fifo).unwrap();
    temp
}

#[test]
fn temporaries_of_long_names_left_by_a_killed_run_are_removed_later() {
    if !Path::new("/proc/self").exists() {
        eprintln!("skipping: stale temporaries are recognised through /proc");
        return;
    }
    let dir = temp_dir();
    let src = small_input(dir.path());
    let dst = dir.path().join(format!("{}.npy", "é".repeat(125)));
    let temp = kill_mid_run(dir.path(), &dst);
    assert!(temp.len() <= 255 && temp.starts_with('.'), "{temp}");
    let temp = dir.path().join(temp);
    assert!(temp.exists(), "SIGKILL leaves the temporary");
    let old = std::time::SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&temp)
        .unwrap()
        .set_modified(old)
        .unwrap();
    assert_ok(&ewise(["sign", s(&src), s(&dst)]));
    assert!(!temp.exists(), "the stale temporary is removed");
    let mut expected = vec![
        "in.npy".to_string(),
        dst.file_name().unwrap().to_str().unwrap().into(),
    ];
    expected.sort();
    assert_eq!(file_names(dir.path()), expected);
}

#[test]
fn a_dangling_symlink_gets_its_target_created_through_a_chain() {
    let dir = temp_dir();
    let src = small_input(dir.path());
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let link = dir.path().join("link.npy");
    std::os::unix::fs::symlink("sub/middle.npy", &link).unwrap();
    std::os::unix::fs::symlink("target.npy", dir.path().join("sub/middle.npy")).unwrap();
    assert_ok(&ewise(["sign", s(&src), s(&link)]));
    for l in [&link, &dir.path().join("sub/middle.npy")] {
        let meta = std::fs::symlink_metadata(l).unwrap();
        assert!(
            meta.file_type().is_symlink(),
            "{} stays a link",
            l.display()
        );
    }
    assert_eq!(
        std::fs::read(dir.path().join("sub/target.npy")).unwrap(),
        small_signs()
    );
    assert_eq!(file_names(dir.path()), ["in.npy", "link.npy", "sub"]);
    assert_eq!(
        file_names(&dir.path().join("sub")),
        ["middle.npy", "target.npy"]
    );
}

#[test]
fn impossible_outputs_are_refused_before_the_input_is_opened() {
    let dir = temp_dir();
    let fifo = unwritten_fifo(dir.path());
    std::fs::write(dir.path().join("file.txt"), b"text").unwrap();
    let dangling = dir.path().join("dangling.npy");
    std::os::unix::fs::symlink("no-such-dir/t.npy", &dangling).unwrap();
    let cases: [(PathBuf, &[&str]); 4] = [
        (
            dir.path().join("o.npy/"),
            &["o.npy/", "ends with a path separator"],
        ),
        (
            dir.path().join("file.txt").join("o.npy"),
            &[
                "file.txt/o.npy",
                "cannot create a file in",
                "not a directory",
            ],
        ),
        (
            dangling.clone(),
            &[
                "dangling.npy: is a symbolic link to",
                "no-such-dir",
                "No such file",
            ],
        ),
        (dir.path().to_path_buf(), &["is a directory"]),
    ];
    for (dst, fragments) in cases {
        for op in ["sign", "is-infinity"] {
            let out = ewise_within([op, s(&fifo), s(&dst)], LIMIT).unwrap_or_else(|| {
                panic!("{op} to {} opened its input before refusing", dst.display())
            });
            assert_error(&out, fragments);
        }
    }
    assert_eq!(
        file_names(dir.path()),
        ["dangling.npy", "file.txt", "never-written.fifo"]
    );
}

#[test]
fn a_failed_temporary_file_names_out_not_the_temporary() {
    let dir = temp_dir();
    let outdir = dir.path().join("outdir");
    std::fs::create_dir(&outdir).unwrap();
    let fifo = dir.path().join("in.fifo");
    mkfifo(&fifo);
    let dst = outdir.join("out.npy");
    let root = is_root();
    if root && !chattr_works(dir.path()) {
        return;
    }
    let child = ewise_command()
        .args(["sign", s(&fifo), s(&dst)])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // ewise opens its input once OUT has passed every check; then the directory stops
    // taking new files, before ewise creates its temporary.
    let mut writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    let _guard = if root {
        Some(Immutable::set(&outdir))
    } else {
        chmod(&outdir, 0o555);
        None
    };
    writer.write_all(&f32_npy_bytes(&[1.0, -2.0])).unwrap();
    drop(writer);
    let out = wait_within(child, LIMIT).expect("ewise finishes");
    let err = assert_error(&out, &["out.npy: cannot create a file in", "outdir"]);
    assert!(!err.contains(".ewise-"), "names the temporary: {err}");
    drop(_guard);
    chmod(&outdir, 0o755);
    assert!(file_names(&outdir).is_empty());
}

/// The system calls of `ewise args` that rename or sync, with file descriptors shown
/// as paths (`strace -y`).
fn renames_and_syncs(args: &[&str]) -> Vec<String> {
    let dir = temp_dir();
    let log = dir.path().join("trace");
    let status = Command::new("strace")
        .args([
            "-f",
            "-y",
            "-qq",
            "-e",
            "trace=rename,renameat,renameat2,fsync,fdatasync",
        ])
        .arg("-o")
        .arg(&log)
        .arg(env!("CARGO_BIN_EXE_ewise"))
        .args(args)
        .status()
        .unwrap();
    assert!(status.success(), "ewise {args:?} under strace");
    std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn the_directory_is_synced_after_the_rename() {
    if !strace_works() || std::env::var(RUNNER_ENV).is_ok_and(|r| !r.trim().is_empty()) {
        return;
    }
    let dir = temp_dir();
    let src = small_input(dir.path());
    let outdir = dir.path().join("outdir");
    std::fs::create_dir(&outdir).unwrap();
    let dst = outdir.join("out.npy");
    let dir_sync = format!("<{}>)", outdir.canonicalize().unwrap().display());
    for op in ["sign", "is-infinity"] {
        let calls = renames_and_syncs(&[op, s(&src), s(&dst)]);
        let rename = calls
            .iter()
            .position(|c| c.contains("rename") && c.contains("out.npy\""))
            .unwrap_or_else(|| panic!("no rename in {calls:#?}"));
        assert!(
            calls[rename..]
                .iter()
                .any(|c| c.contains("fsync(") && c.contains(&dir_sync)),
            "{op}: no fsync of {} after the rename: {calls:#?}",
            outdir.display()
        );
    }
}
