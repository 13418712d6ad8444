//! OUT of `ewise sign` and `is-infinity` on hostile paths: FIFOs without a reader,
//! read-only files (modes on Unix, the read-only attribute on Windows), special
//! permission bits, names near the 255-byte (Windows: 255 UTF-16 units) limit and over
//! it, paths over 260 characters and non-ASCII names, dangling links, paths that cannot
//! be a file, a directory that refuses the temporary, a run killed outright, and the
//! directory sync after the rename. Each test does the bad thing for real.
//!
//! FIFOs, modes, other users, links and `strace` are Unix by nature; the rest runs on
//! Windows too (scripts/windows-test.sh, under wine).

mod common;

#[cfg(unix)]
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
#[cfg(unix)]
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
#[cfg(unix)]
fn unwritten_fifo(dir: &Path) -> PathBuf {
    let fifo = dir.join("never-written.fifo");
    mkfifo(&fifo);
    fifo
}

#[test]
#[cfg(unix)]
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
#[cfg(unix)]
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
#[cfg(unix)]
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
#[cfg(unix)]
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
#[cfg(unix)]
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
        "données-Ω-日本.npy".to_string(),
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
#[cfg(unix)]
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

/// Starts `ewise sign BIG dst` on a 1 GiB input (a run of seconds, many more under
/// wine), waits for its temporary file, kills it with `TerminateProcess` and returns the
/// temporary's name.
#[cfg(windows)]
fn kill_mid_run(dir: &Path, dst: &Path) -> String {
    let big = dir.join("big.npy");
    let header = f32_header(256 << 20);
    let file = std::fs::File::create(&big).unwrap();
    std::io::Write::write_all(&mut &file, &header).unwrap();
    file.set_len(header.len() as u64 + (1 << 30)).unwrap();
    drop(file);
    let before = file_names(dir);
    let mut child = spawn_ewise(&["sign", s(&big), s(dst), "--threads", "1"]);
    let mut temp = None;
    wait_until(&mut child, "the temporary output appeared", LIMIT, || {
        temp = file_names(dir).into_iter().find(|n| !before.contains(n));
        temp.is_some()
    });
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::remove_file(&big).unwrap();
    temp.unwrap()
}

#[test]
fn temporaries_of_long_names_left_by_a_killed_run_are_removed_later() {
    if cfg!(unix) && !Path::new("/proc/self").exists() {
        eprintln!("skipping: stale temporaries are recognised through /proc");
        return;
    }
    let dir = temp_dir();
    let src = small_input(dir.path());
    let dst = dir.path().join(format!("{}.npy", "é".repeat(125)));
    let temp = kill_mid_run(dir.path(), &dst);
    assert!(temp.len() <= 255 && temp.starts_with('.'), "{temp}");
    let temp = dir.path().join(temp);
    assert!(
        temp.exists(),
        "a kill (SIGKILL, TerminateProcess) leaves the temporary"
    );
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
#[cfg(unix)]
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

/// An input that cannot be opened without notice: on Unix a FIFO nobody writes to (a
/// command that opens it blocks forever), on Windows a file that does not exist (a
/// command that opens it fails naming it), so a refusal naming OUT shows that OUT was
/// checked first.
fn input_never_to_open(dir: &Path) -> PathBuf {
    #[cfg(unix)]
    return unwritten_fifo(dir);
    #[cfg(not(unix))]
    return dir.join("never-made.npy");
}

#[test]
fn impossible_outputs_are_refused_before_the_input_is_opened() {
    let dir = temp_dir();
    let input = input_never_to_open(dir.path());
    std::fs::write(dir.path().join("file.txt"), b"text").unwrap();
    let sep = std::path::MAIN_SEPARATOR;
    let in_file = format!("file.txt{sep}o.npy");
    let mut cases: Vec<(PathBuf, Vec<&str>)> = vec![
        (
            dir.path().join("o.npy/"),
            vec!["o.npy/", "ends with a path separator"],
        ),
        (
            dir.path().join("file.txt").join("o.npy"),
            vec![&in_file, "cannot create a file in", "not a directory"],
        ),
        (dir.path().to_path_buf(), vec!["is a directory"]),
    ];
    #[cfg(windows)]
    cases.push((
        dir.path().join("o.npy\\"),
        vec!["o.npy\\", "ends with a path separator"],
    ));
    #[cfg(unix)]
    {
        let dangling = dir.path().join("dangling.npy");
        std::os::unix::fs::symlink("no-such-dir/t.npy", &dangling).unwrap();
        cases.push((
            dangling,
            vec![
                "dangling.npy: is a symbolic link to",
                "no-such-dir",
                "No such file",
            ],
        ));
    }
    for (dst, fragments) in cases {
        for op in ["sign", "is-infinity"] {
            let out = ewise_within([op, s(&input), s(&dst)], LIMIT).unwrap_or_else(|| {
                panic!("{op} to {} opened its input before refusing", dst.display())
            });
            assert_error(&out, &fragments);
        }
    }
    let expected: &[&str] = if cfg!(unix) {
        &["dangling.npy", "file.txt", "never-written.fifo"]
    } else {
        &["file.txt"]
    };
    assert_eq!(file_names(dir.path()), expected);
}

#[test]
#[cfg(unix)]
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
#[cfg(unix)]
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
#[cfg(unix)]
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

/// Sets or clears the read-only attribute.
#[cfg(windows)]
fn set_readonly(path: &Path, readonly: bool) {
    let mut permissions = std::fs::metadata(path).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    permissions.set_readonly(readonly);
    std::fs::set_permissions(path, permissions).unwrap();
}

/// Windows' counterpart of the Unix modes: a file with the read-only attribute is
/// refused before the input is opened, for every user (there is no superuser exception),
/// and stays as it was, attribute included.
#[test]
#[cfg(windows)]
fn a_read_only_output_is_refused_and_kept_byte_for_byte() {
    let dir = temp_dir();
    let src = small_input(dir.path());
    let dst = dir.path().join("out.npy");
    std::fs::write(&dst, b"keep me").unwrap();
    set_readonly(&dst, true);
    let never = input_never_to_open(dir.path());
    for input in [&src, &never] {
        for op in ["sign", "is-infinity"] {
            let out = ewise_within([op, s(input), s(&dst)], LIMIT).expect("ewise finishes");
            assert_error(
                &out,
                &[
                    &format!("{}: cannot replace it", dst.display()),
                    "has the read-only attribute",
                    "attrib -R",
                ],
            );
        }
    }
    assert_eq!(std::fs::read(&dst).unwrap(), b"keep me");
    assert!(std::fs::metadata(&dst).unwrap().permissions().readonly());
    assert_eq!(
        file_names(dir.path()),
        ["in.npy", "out.npy"],
        "no temporary"
    );
    set_readonly(&dst, false);
    assert_ok(&ewise(["sign", s(&src), s(&dst)]));
    assert_eq!(std::fs::read(&dst).unwrap(), small_signs());
}

/// Windows ignores the read-only attribute on a directory (Explorer sets it on folders
/// it customises): files can still be created there, so an output there is written.
#[test]
#[cfg(windows)]
fn the_read_only_attribute_of_a_directory_does_not_refuse_an_output() {
    let dir = temp_dir();
    let src = small_input(dir.path());
    let outdir = dir.path().join("customised");
    std::fs::create_dir(&outdir).unwrap();
    set_readonly(&outdir, true);
    if !std::fs::metadata(&outdir).unwrap().permissions().readonly() {
        eprintln!(
            "skipping: the read-only attribute of a directory is not kept here (wine 8.0 drops it)"
        );
        return;
    }
    let dst = outdir.join("out.npy");
    assert_ok(&ewise(["sign", s(&src), s(&dst)]));
    assert_eq!(std::fs::read(&dst).unwrap(), small_signs());
    assert_eq!(file_names(&outdir), ["out.npy"]);
    set_readonly(&outdir, false);
}

/// A name longer than the system takes is refused naming OUT and the limit, before the
/// input is opened, and nothing is created.
#[test]
fn an_output_name_over_the_limit_is_refused_before_the_input_is_opened() {
    let dir = temp_dir();
    let input = input_never_to_open(dir.path());
    let before = file_names(dir.path());
    let long = dir.path().join(format!("{}.npy", "a".repeat(252)));
    let mut cases = vec![(long, "256")];
    if cfg!(windows) {
        // 256 UTF-16 units, 512 bytes in UTF-8.
        cases.push((dir.path().join(format!("{}.npy", "é".repeat(252))), "256"));
    }
    for (dst, units) in cases {
        for op in ["sign", "is-infinity"] {
            let out = ewise_within([op, s(&input), s(&dst)], LIMIT)
                .unwrap_or_else(|| panic!("{op} opened its input before refusing"));
            let unit = if cfg!(windows) {
                "UTF-16 units"
            } else {
                "bytes"
            };
            let fragments = [
                format!(
                    "{}: cannot be an output file name: it is {units} {unit} long",
                    dst.display()
                ),
                "file names take at most 255".into(),
            ];
            let fragments: Vec<&str> = fragments.iter().map(String::as_str).collect();
            assert_error(&out, &fragments);
        }
    }
    assert_eq!(file_names(dir.path()), before);
}

/// On Windows a name may take 255 UTF-16 units whatever its characters: 255 of them
/// that each take 2 bytes in UTF-8 are a legal name, and its temporary (cut by bytes)
/// fits too.
#[test]
#[cfg(windows)]
fn names_of_255_utf16_units_work_where_the_file_system_takes_them() {
    let dir = temp_dir();
    let src = small_input(dir.path());
    let name = format!("{}.npy", "é".repeat(251));
    assert_eq!(name.encode_utf16().count(), 255);
    let probe = dir.path().join(&name);
    if let Err(e) = std::fs::write(&probe, b"") {
        eprintln!(
            "skipping: this file system refuses a name of 255 UTF-16 units that takes {} bytes in UTF-8 ({e}); wine keeps names as UTF-8 on the host's file system, which takes 255 bytes",
            name.len()
        );
        return;
    }
    std::fs::remove_file(&probe).unwrap();
    for _ in 0..2 {
        assert_ok(&ewise(["sign", s(&src), s(&probe)]));
        assert_eq!(std::fs::read(&probe).unwrap(), small_signs());
    }
    let mut expected = vec!["in.npy".to_string(), name];
    expected.sort();
    assert_eq!(file_names(dir.path()), expected, "no temporary left");
}

/// `dir` nested until its path is over 300 characters, ending in a non-ASCII name.
fn deep_dir(dir: &Path) -> PathBuf {
    let mut deep = dir.to_path_buf();
    for i in 0..5 {
        deep.push(format!("{i}-{}", "répertoire".repeat(6)));
    }
    deep.push("données-Ω-日本");
    std::fs::create_dir_all(&deep).unwrap();
    assert!(deep.as_os_str().len() > 300, "{}", deep.display());
    deep
}

/// Paths over 260 characters (Windows' old MAX_PATH) and non-ASCII names, as input and
/// as OUT: written, replaced, refused as the input under another spelling, and named in
/// messages as given.
#[test]
fn paths_over_260_characters_and_non_ascii_names_work() {
    let dir = temp_dir();
    let deep = deep_dir(dir.path());
    let src = deep.join("entrée-Ω.npy");
    std::fs::write(&src, f32_npy_bytes(&[-1.0, 0.0, f32::INFINITY])).unwrap();
    let dst = deep.join("données-Ω-日本.npy");
    for _ in 0..2 {
        assert_ok(&ewise(["sign", s(&src), s(&dst)]));
        assert_eq!(std::fs::read(&dst).unwrap(), small_signs());
    }
    let infinity = deep.join("無限.npy");
    assert_ok(&ewise(["is-infinity", s(&src), s(&infinity)]));
    assert_eq!(read_npy(&infinity).1, [0, 0, 1]);
    let last = deep.file_name().unwrap().to_str().unwrap();
    let other_spelling = deep.join("..").join(last).join("entrée-Ω.npy");
    let out = ewise(["sign", s(&src), s(&other_spelling)]);
    assert_error(
        &out,
        &[
            &format!(
                "{}: is the input file {}",
                other_spelling.display(),
                src.display()
            ),
            "--in-place",
        ],
    );
    let missing = deep.join("absent-Ω").join("o.npy");
    let out = ewise(["sign", s(&src), s(&missing)]);
    assert_error(
        &out,
        &[
            &format!("{}: cannot create a file in", missing.display()),
            "absent-Ω",
            "No such file or directory",
        ],
    );
    assert_eq!(
        file_names(&deep),
        ["données-Ω-日本.npy", "entrée-Ω.npy", "無限.npy"],
        "no temporary left"
    );
}

/// Windows' counterpart of a directory the user may not write: one whose ACL denies
/// creating files (`icacls /deny`), which ewise does not read ahead; the creation of the
/// temporary fails, and the error names OUT and its directory, never the temporary.
#[test]
#[cfg(windows)]
fn a_directory_that_refuses_new_files_is_named_not_the_temporary() {
    let dir = temp_dir();
    let src = small_input(dir.path());
    let outdir = dir.path().join("outdir");
    std::fs::create_dir(&outdir).unwrap();
    let icacls = |args: &[&str]| {
        std::process::Command::new("icacls")
            .arg(&outdir)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let denied = icacls(&["/deny", "*S-1-1-0:(WD,AD)"]);
    let probe = outdir.join("probe");
    if !denied || std::fs::write(&probe, b"").is_ok() {
        let _ = std::fs::remove_file(&probe);
        icacls(&["/remove:d", "*S-1-1-0"]);
        eprintln!(
            "skipping: `icacls /deny *S-1-1-0:(WD,AD)` did not stop this process creating a file in the directory (wine 8.0 keeps no ACLs), so no directory here refuses new files"
        );
        return;
    }
    let dst = outdir.join("out.npy");
    let out = ewise(["sign", s(&src), s(&dst)]);
    icacls(&["/remove:d", "*S-1-1-0"]);
    let err = assert_error(
        &out,
        &[
            &format!(
                "{}: cannot create a file in {}",
                dst.display(),
                outdir.display()
            ),
            "Permission denied",
        ],
    );
    assert!(!err.contains(".ewise-"), "names the temporary: {err}");
    assert!(file_names(&outdir).is_empty());
}

/// On Windows a file another program holds open without `FILE_SHARE_DELETE` (numpy's
/// `mmap_mode`, an editor) cannot be replaced: refused before the input is opened,
/// naming OUT and what to do, and left as it was.
#[test]
#[cfg(windows)]
fn an_output_held_open_by_another_program_is_refused_before_the_input_is_opened() {
    use std::os::windows::fs::OpenOptionsExt;
    const FILE_SHARE_READ: u32 = 1;
    let dir = temp_dir();
    let dst = dir.path().join("out.npy");
    std::fs::write(&dst, b"keep me").unwrap();
    let never = input_never_to_open(dir.path());
    let holder = std::fs::OpenOptions::new()
        .read(true)
        .share_mode(FILE_SHARE_READ)
        .open(&dst)
        .unwrap();
    for op in ["sign", "is-infinity"] {
        let out = ewise_within([op, s(&never), s(&dst)], LIMIT).expect("ewise finishes");
        assert_error(
            &out,
            &[
                &format!("{}: cannot replace it now", dst.display()),
                "another program has it open without sharing its deletion",
                "close it there, then run again",
            ],
        );
    }
    drop(holder);
    assert_eq!(std::fs::read(&dst).unwrap(), b"keep me");
    assert_eq!(file_names(dir.path()), ["out.npy"]);
}
