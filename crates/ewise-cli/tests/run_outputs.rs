//! `ewise run` outputs on hostile OUTDIRs: renames that fail after others succeeded,
//! outputs that would replace the model's external data, two outputs into one file,
//! thousands of outputs under a low open-file limit, read-only outputs, size errors
//! that must name the input, OUTDIRs that cannot be, paths over 260 characters and
//! non-ASCII names, and Ctrl-C between steps. Each test does the bad thing for real.
//!
//! FIFOs, `chattr`, modes, other users, links, `ulimit` and signals are Unix by nature;
//! the rest runs on Windows too (scripts/windows-test.sh, under wine), with Windows'
//! own ways to make a rename fail (a file held open without sharing its deletion) and
//! to refuse a target (the read-only attribute).

mod common;

#[cfg(unix)]
use std::io::Write;
use std::path::{Path, PathBuf};
#[cfg(unix)]
use std::process::Command;
use std::process::Output;
use std::time::Duration;

use common::*;
use ewise_onnx::proto::{self, DataLocation, StringStringEntryProto, TensorProto};

/// Long enough for a run that works, short enough for a test that would hang forever.
const LIMIT: Duration = Duration::from_secs(60);

/// `dir/m.onnx`: input `x` (float, of `shape` if given) and `Sign(x)` as each output.
fn fan_out_model(dir: &Path, outputs: &[&str], shape: Option<&[i64]>) -> PathBuf {
    let graph = proto::GraphProto {
        name: "fan out".into(),
        node: outputs.iter().map(|o| node("Sign", "x", o, &[])).collect(),
        input: vec![value("x", FLOAT, shape)],
        output: outputs.iter().map(|o| value(o, FLOAT, None)).collect(),
        ..Default::default()
    };
    let path = dir.join("m.onnx");
    std::fs::write(&path, graph_model_bytes(13, graph)).unwrap();
    path
}

/// `dir/x.npy`: float32 [-2, 3].
fn x_npy(dir: &Path) -> PathBuf {
    let path = dir.join("x.npy");
    std::fs::write(&path, f32_npy_bytes(&[-2.0, 3.0])).unwrap();
    path
}

/// What every output of [`fan_out_model`] holds for [`x_npy`].
fn signs() -> Vec<u8> {
    f32_npy_bytes(&[-1.0, 1.0])
}

/// Runs `ewise run` with input `x` fed through a FIFO: `between` runs once ewise has
/// opened the input, which it does only after every output check, and before the data
/// arrives.
#[cfg(unix)]
fn run_fed_through_fifo(dir: &Path, model: &Path, outdir: &Path, between: impl FnOnce()) -> Output {
    let fifo = dir.join("x.fifo");
    mkfifo(&fifo);
    let child = ewise_command()
        .args(run_args(model, &fifo, outdir, &[]))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    between();
    let written = writer.write_all(&f32_npy_bytes(&[-2.0, 3.0]));
    drop(writer);
    let out = wait_within(child, LIMIT);
    std::fs::remove_file(&fifo).unwrap();
    written.expect("ewise reads its input through the FIFO it opened");
    out.expect("ewise finishes")
}

/// Every file in `dir` with its bytes (directories as `None`).
fn snapshot(dir: &Path) -> Vec<(String, Option<Vec<u8>>)> {
    file_names(dir)
        .into_iter()
        .map(|n| {
            let p = dir.join(&n);
            let bytes = if p.is_dir() {
                None
            } else {
                Some(std::fs::read(&p).unwrap())
            };
            (n, bytes)
        })
        .collect()
}

#[test]
#[cfg(unix)]
fn a_rename_refused_after_earlier_ones_succeeded_restores_them() {
    if !is_root() {
        eprintln!("skipping: needs root for chattr +i");
        return;
    }
    let dir = temp_dir();
    if !chattr_works(dir.path()) {
        return;
    }
    let model = fan_out_model(dir.path(), &["a", "b", "c"], Some(&[2]));
    let outdir = dir.path().join("out");
    std::fs::create_dir(&outdir).unwrap();
    std::fs::write(outdir.join("a.npy"), b"old a").unwrap();
    std::fs::write(outdir.join("c.npy"), b"old c").unwrap();
    let elsewhere = dir.path().join("a-elsewhere.npy");
    std::fs::hard_link(outdir.join("a.npy"), &elsewhere).unwrap();
    let before = snapshot(&outdir);
    let mut guard = None;
    let out = run_fed_through_fifo(dir.path(), &model, &outdir, || {
        guard = Some(Immutable::set(&outdir.join("c.npy")));
    });
    drop(guard);
    assert_eq!(snapshot(&outdir), before, "OUTDIR is exactly as it was");
    assert_error(
        &out,
        &[
            "c.npy: cannot rename the finished output into place",
            "Operation not permitted",
            "the 2 outputs renamed before it were undone",
        ],
    );
    assert_eq!(std::fs::read(&elsewhere).unwrap(), b"old a");
}

#[test]
#[cfg(unix)]
fn a_rename_onto_a_directory_made_after_the_checks_restores_the_others() {
    let dir = temp_dir();
    let model = fan_out_model(dir.path(), &["a", "b", "c"], Some(&[2]));
    let outdir = dir.path().join("out");
    std::fs::create_dir(&outdir).unwrap();
    std::fs::write(outdir.join("a.npy"), b"old a").unwrap();
    std::fs::write(outdir.join("b.npy"), b"old b").unwrap();
    let out = run_fed_through_fifo(dir.path(), &model, &outdir, || {
        std::fs::remove_file(outdir.join("b.npy")).unwrap();
        std::fs::create_dir(outdir.join("b.npy")).unwrap();
        std::fs::write(outdir.join("b.npy").join("inside"), b"keep").unwrap();
    });
    assert_eq!(file_names(&outdir), ["a.npy", "b.npy"]);
    assert_eq!(std::fs::read(outdir.join("a.npy")).unwrap(), b"old a");
    assert_eq!(
        std::fs::read(outdir.join("b.npy").join("inside")).unwrap(),
        b"keep"
    );
    assert_error(
        &out,
        &[
            "b.npy: cannot rename the finished output into place",
            "the output renamed before it was undone",
        ],
    );
}

#[test]
#[cfg(unix)]
fn a_rename_refused_by_a_sticky_directory_restores_the_others() {
    if as_other_user().is_none() {
        return;
    }
    let dir = temp_dir();
    chmod(dir.path(), 0o755);
    let model = fan_out_model(dir.path(), &["a", "b", "c"], Some(&[2]));
    let x = x_npy(dir.path());
    for f in [&model, &x] {
        chmod(f, 0o644);
    }
    let outdir = dir.path().join("out");
    std::fs::create_dir(&outdir).unwrap();
    chmod(&outdir, 0o1777);
    std::fs::write(outdir.join("a.npy"), b"old a").unwrap();
    std::os::unix::fs::chown(outdir.join("a.npy"), Some(OTHER_UID), Some(OTHER_UID)).unwrap();
    // Writable by everyone, but in a sticky directory only its owner (root) may
    // replace it: the check that it may be written passes, the rename fails.
    std::fs::write(outdir.join("c.npy"), b"old c").unwrap();
    chmod(&outdir.join("c.npy"), 0o666);
    let before = snapshot(&outdir);
    let out = as_other_user()
        .unwrap()
        .args(run_args(&model, &x, &outdir, &[]))
        .output()
        .unwrap();
    assert_eq!(snapshot(&outdir), before, "OUTDIR is exactly as it was");
    assert_error(
        &out,
        &[
            "c.npy: cannot rename the finished output into place",
            "Operation not permitted",
            "the 2 outputs renamed before it were undone, so every file is as it was",
        ],
    );
}

#[test]
fn outputs_replace_every_old_file_and_leave_no_copy() {
    let dir = temp_dir();
    let model = fan_out_model(dir.path(), &["a", "b", "c"], Some(&[2]));
    let x = x_npy(dir.path());
    let outdir = dir.path().join("out");
    std::fs::create_dir(&outdir).unwrap();
    for n in ["a.npy", "b.npy"] {
        std::fs::write(outdir.join(n), b"old").unwrap();
        #[cfg(unix)]
        chmod(&outdir.join(n), 0o640);
    }
    assert_ok(&ewise(run_args(&model, &x, &outdir, &[])));
    assert_eq!(file_names(&outdir), ["a.npy", "b.npy", "c.npy"]);
    for n in ["a.npy", "b.npy", "c.npy"] {
        assert_eq!(std::fs::read(outdir.join(n)).unwrap(), signs(), "{n}");
    }
    #[cfg(unix)]
    assert_eq!(mode_of(&outdir.join("a.npy")), 0o640);
}

/// `dir/m.onnx`: no inputs; output `name` is Sign of the initializer `w` (float [2]),
/// whose data is in `dir/{location}`, which holds [-4, 5].
fn external_data_model(dir: &Path, name: &str, location: &str) -> PathBuf {
    std::fs::write(
        dir.join(location),
        [(-4.0f32).to_le_bytes(), 5.0f32.to_le_bytes()].concat(),
    )
    .unwrap();
    let entry = |key: &str, value: &str| StringStringEntryProto {
        key: key.into(),
        value: value.into(),
    };
    let w = TensorProto {
        name: "w".into(),
        data_type: FLOAT,
        dims: vec![2],
        data_location: DataLocation::External as i32,
        external_data: vec![entry("location", location), entry("length", "8")],
        ..Default::default()
    };
    let graph = proto::GraphProto {
        name: "external".into(),
        node: vec![node("Sign", "w", name, &[])],
        output: vec![value(name, FLOAT, None)],
        initializer: vec![w],
        ..Default::default()
    };
    let path = dir.join("m.onnx");
    std::fs::write(&path, graph_model_bytes(13, graph)).unwrap();
    path
}

#[test]
fn the_models_external_data_is_never_replaced() {
    let dir = temp_dir();
    let model = external_data_model(dir.path(), "d", "d.npy");
    let data = dir.path().join("d.npy");
    let before = std::fs::read(&data).unwrap();
    let run = |outdir: &Path| {
        ewise([
            "run",
            model.to_str().unwrap(),
            "-o",
            outdir.to_str().unwrap(),
        ])
    };
    assert_error(
        &run(dir.path()),
        &[
            "d.npy",
            "external data of the model",
            "which this run reads",
        ],
    );
    let linked = dir.path().join("linked");
    std::fs::create_dir(&linked).unwrap();
    std::fs::hard_link(&data, linked.join("d.npy")).unwrap();
    assert_error(
        &run(&linked),
        &[
            "d.npy",
            "external data of the model",
            "which this run reads",
        ],
    );
    #[cfg(unix)]
    {
        let symlinked = dir.path().join("symlinked");
        std::fs::create_dir(&symlinked).unwrap();
        std::os::unix::fs::symlink(&data, symlinked.join("d.npy")).unwrap();
        assert_error(
            &run(&symlinked),
            &[
                "d.npy",
                "external data of the model",
                "which this run reads",
            ],
        );
    }
    assert_eq!(std::fs::read(&data).unwrap(), before);
    let fresh = dir.path().join("fresh");
    assert_ok(&run(&fresh));
    assert_eq!(
        read_npy(&fresh.join("d.npy")).1,
        [(-1.0f32).to_le_bytes(), 1.0f32.to_le_bytes()].concat()
    );
}

#[test]
fn two_outputs_resolving_to_one_file_are_refused() {
    let dir = temp_dir();
    let model = fan_out_model(dir.path(), &["a", "b"], Some(&[2]));
    let x = x_npy(dir.path());
    let outdir = dir.path().join("out");
    std::fs::create_dir(&outdir).unwrap();
    let a = outdir.join("a.npy");
    let b = outdir.join("b.npy");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("b.npy", &a).unwrap();
        for b_exists in [false, true] {
            if b_exists {
                std::fs::write(&b, b"old b").unwrap();
            }
            assert_error(
                &ewise(run_args(&model, &x, &outdir, &[])),
                &[
                    "graph output \"b\"",
                    "graph output \"a\"",
                    "would both be written to",
                ],
            );
        }
        std::fs::remove_file(&a).unwrap();
    }
    #[cfg(not(unix))]
    std::fs::write(&b, b"old b").unwrap();
    std::fs::hard_link(&b, &a).unwrap();
    assert_error(
        &ewise(run_args(&model, &x, &outdir, &[])),
        &[
            &format!("{}: graph output \"b\"", b.display()),
            &format!("graph output \"a\" ({})", a.display()),
            "would both be written to",
        ],
    );
    assert_eq!(std::fs::read(&b).unwrap(), b"old b");
    assert_eq!(std::fs::read(&a).unwrap(), b"old b");
    assert_eq!(file_names(&outdir), ["a.npy", "b.npy"]);
}

/// `ewise args` under `ulimit -n {limit}` (and `strace` counting directory reads into
/// `trace`, if given).
#[cfg(unix)]
fn ewise_with_fd_limit(args: &[String], limit: u32, trace: Option<&Path>) -> Output {
    let mut command = match trace {
        Some(log) => {
            let mut c = Command::new("strace");
            c.args(["-f", "-qq", "-e", "trace=getdents64", "-o"])
                .arg(log)
                .arg("sh");
            c
        }
        None => Command::new("sh"),
    };
    command
        .args(["-c", &format!("ulimit -n {limit} && exec \"$0\" \"$@\"")])
        .arg(env!("CARGO_BIN_EXE_ewise"))
        .args(args);
    output_within(command, Duration::from_secs(300)).expect("ewise finishes")
}

#[test]
#[cfg(unix)]
fn thousands_of_outputs_under_a_low_open_file_limit() {
    if std::env::var(RUNNER_ENV).is_ok_and(|r| !r.trim().is_empty()) {
        eprintln!("skipping: {RUNNER_ENV} is set");
        return;
    }
    const N: usize = 3000;
    let dir = temp_dir();
    let names: Vec<String> = (0..N).map(|i| format!("y{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let model = fan_out_model(dir.path(), &refs, Some(&[2]));
    let x = x_npy(dir.path());
    let outdir = dir.path().join("out");
    let args = run_args(&model, &x, &outdir, &[]);
    let started = std::time::Instant::now();
    assert_ok(&ewise_with_fd_limit(&args, 256, None));
    eprintln!("{N} new outputs: {:?}", started.elapsed());
    let mut expected: Vec<String> = names.iter().map(|n| format!("{n}.npy")).collect();
    expected.sort();
    assert_eq!(file_names(&outdir), expected);
    let trace = strace_works().then(|| dir.path().join("getdents.trace"));
    let started = std::time::Instant::now();
    assert_ok(&ewise_with_fd_limit(&args, 256, trace.as_deref()));
    eprintln!("{N} replaced outputs: {:?}", started.elapsed());
    assert_eq!(file_names(&outdir), expected, "no temporary or copy left");
    for n in ["y0.npy", "y2999.npy"] {
        assert_eq!(std::fs::read(outdir.join(n)).unwrap(), signs());
    }
    if let Some(trace) = trace {
        let reads = std::fs::read_to_string(trace)
            .unwrap()
            .lines()
            .filter(|l| l.contains("getdents64("))
            .count();
        // One scan of a directory of N entries takes a few dozen getdents64 calls (more
        // where deleted entries leave holes); a scan per output would take N or more.
        assert!(
            reads < N / 10,
            "{reads} directory reads for {N} outputs in one directory: OUTDIR is scanned per output"
        );
    }
}

#[test]
#[cfg(unix)]
fn a_read_only_output_is_refused_for_a_user_who_may_not_write_it() {
    if as_other_user().is_none() {
        return;
    }
    let dir = temp_dir();
    chmod(dir.path(), 0o755);
    let model = fan_out_model(dir.path(), &["a", "b"], Some(&[2]));
    let x = x_npy(dir.path());
    for f in [&model, &x] {
        chmod(f, 0o644);
    }
    let outdir = dir.path().join("out");
    std::fs::create_dir(&outdir).unwrap();
    std::os::unix::fs::chown(&outdir, Some(OTHER_UID), Some(OTHER_UID)).unwrap();
    let b = outdir.join("b.npy");
    std::fs::write(&b, b"keep me").unwrap();
    std::os::unix::fs::chown(&b, Some(OTHER_UID), Some(OTHER_UID)).unwrap();
    chmod(&b, 0o444);
    let out = as_other_user()
        .unwrap()
        .args(run_args(&model, &x, &outdir, &[]))
        .output()
        .unwrap();
    assert_error(
        &out,
        &["b.npy: cannot replace it", "Permission denied", "0444"],
    );
    assert_eq!(file_names(&outdir), ["b.npy"]);
    assert_eq!(std::fs::read(&b).unwrap(), b"keep me");
}

#[test]
fn an_input_too_large_for_memory_is_named_in_the_error() {
    let dir = temp_dir();
    let model = fan_out_model(dir.path(), &["y"], None);
    let x = dir.path().join("x.npy");
    write_npy(&x, "<f4", false, &[1 << 62, 1 << 62, 0], &[]);
    let out = ewise(run_args(&model, &x, &dir.path().join("out"), &[]));
    let err = assert_error(&out, &["x.npy", "input \"x\"", "too large"]);
    assert!(!err.contains("tensor \"\""), "{err}");
}

#[test]
fn an_impossible_outdir_is_refused_before_the_inputs_are_opened() {
    let dir = temp_dir();
    let model = fan_out_model(dir.path(), &["y"], Some(&[2]));
    // On Unix a FIFO nobody writes to (opening it blocks forever), on Windows a file
    // that does not exist (opening it fails naming it): a refusal naming OUTDIR shows
    // that OUTDIR was checked first.
    let fifo = if cfg!(unix) {
        let fifo = dir.path().join("never-written.fifo");
        mkfifo(&fifo);
        fifo
    } else {
        dir.path().join("never-made.npy")
    };
    std::fs::write(dir.path().join("file.txt"), b"text").unwrap();
    let cases: [(PathBuf, &[&str]); 2] = [
        (
            dir.path().join("file.txt"),
            &["file.txt", "not a directory"],
        ),
        (
            dir.path().join("file.txt").join("sub"),
            &["file.txt", "not a directory"],
        ),
    ];
    for (outdir, fragments) in cases {
        let out = ewise_within(run_args(&model, &fifo, &outdir, &[]), LIMIT)
            .unwrap_or_else(|| panic!("{}: the input was opened first", outdir.display()));
        assert_error(&out, fragments);
    }
}

#[test]
#[cfg(unix)]
fn ctrl_c_while_an_input_is_read_stops_before_anything_is_written() {
    let dir = temp_dir();
    let model = fan_out_model(dir.path(), &["a", "b"], Some(&[2]));
    let outdir = dir.path().join("out");
    let fifo = dir.path().join("x.fifo");
    mkfifo(&fifo);
    let child = ewise_command()
        .args(run_args(&model, &fifo, &outdir, &[]))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    let bytes = f32_npy_bytes(&[-2.0, 3.0]);
    let (header, data) = bytes.split_at(bytes.len() - 8);
    writer.write_all(header).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    send_signal(&child, "INT");
    std::thread::sleep(Duration::from_millis(100));
    writer.write_all(data).unwrap();
    drop(writer);
    let out = wait_within(child, LIMIT).expect("ewise finishes");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(
        !outdir.exists(),
        "nothing written: {:?}",
        file_names(dir.path())
    );
}

/// `dir/x.npy`: a float32 vector of `n` zeros (a sparse file where the file system
/// makes one), so that a run over it with a small `--chunk-size` lasts.
fn large_x_npy(dir: &Path, n: u64) -> PathBuf {
    let path = dir.join("x.npy");
    let header = f32_header(n);
    std::fs::write(&path, &header).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(header.len() as u64 + 4 * n)
        .unwrap();
    path
}

/// Runs `ewise run` over a 64 MiB input in chunks of 4 KiB (a run of seconds), and
/// runs `between` once its temporaries exist in `outdir`: after every check, before
/// any rename. Tries again, up to 5 times, when the run ends before its temporaries
/// are seen; returns the run's output.
fn run_slowly_with(dir: &Path, model: &Path, outdir: &Path, mut between: impl FnMut()) -> Output {
    let x = large_x_npy(dir, 16 << 20);
    let before = file_names(outdir);
    for _ in 0..5 {
        let mut child = spawn_ewise(&run_args(model, &x, outdir, &["--chunk-size", "4Ki"]));
        let started = std::time::Instant::now();
        let seen = loop {
            if file_names(outdir).iter().any(|n| n.ends_with(".tmp")) {
                break true;
            }
            if child.try_wait().unwrap().is_some() {
                break false;
            }
            assert!(started.elapsed() < LIMIT, "no temporary appeared");
            std::thread::sleep(Duration::from_millis(5));
        };
        if !seen {
            let out = wait_within(child, LIMIT).expect("ewise finished");
            eprintln!(
                "the run ended before its temporaries were seen; again: {}",
                stderr(&out)
            );
            assert_eq!(
                file_names(outdir),
                before,
                "a run that ended early changed OUTDIR"
            );
            continue;
        }
        between();
        return wait_within(child, LIMIT).expect("ewise finishes");
    }
    panic!("the run ended before its temporaries were seen, five times");
}

/// Every way of spelling the outcome of a commit whose output number `failed` (from 0)
/// could not be renamed into place: the outputs renamed before it were undone.
fn undone(failed: usize) -> &'static str {
    match failed {
        0 => "no file was changed",
        1 => "the output renamed before it was undone, so every file is as it was",
        _ => "the 2 outputs renamed before it were undone, so every file is as it was",
    }
}

#[test]
fn a_rename_onto_a_directory_made_while_the_outputs_are_written_restores_the_others() {
    let dir = temp_dir();
    let model = fan_out_model(dir.path(), &["a", "b", "c"], None);
    let outdir = dir.path().join("out");
    std::fs::create_dir(&outdir).unwrap();
    std::fs::write(outdir.join("a.npy"), b"old a").unwrap();
    std::fs::write(outdir.join("c.npy"), b"old c").unwrap();
    let out = run_slowly_with(dir.path(), &model, &outdir, || {
        std::fs::remove_file(outdir.join("c.npy")).unwrap();
        std::fs::create_dir(outdir.join("c.npy")).unwrap();
        std::fs::write(outdir.join("c.npy").join("inside"), b"keep").unwrap();
    });
    assert_error(
        &out,
        &[
            &format!(
                "{}: cannot rename the finished output into place",
                outdir.join("c.npy").display()
            ),
            undone(2),
        ],
    );
    assert_eq!(
        file_names(&outdir),
        ["a.npy", "c.npy"],
        "no temporary or copy"
    );
    assert_eq!(std::fs::read(outdir.join("a.npy")).unwrap(), b"old a");
    assert_eq!(
        std::fs::read(outdir.join("c.npy").join("inside")).unwrap(),
        b"keep"
    );
}

/// Opens `path` as a program that maps or edits it may: sharing reading only, not
/// its deletion, which is what a rename over it needs.
#[cfg(windows)]
fn hold_open(path: &Path) -> std::fs::File {
    use std::os::windows::fs::OpenOptionsExt;
    const FILE_SHARE_READ: u32 = 1;
    std::fs::OpenOptions::new()
        .read(true)
        .share_mode(FILE_SHARE_READ)
        .open(path)
        .unwrap()
}

/// OUTDIR `dir/out` holding `a.npy`, `b.npy` and `c.npy` (old bytes), with a hard link
/// to `a.npy` outside it at `dir/a-elsewhere.npy`.
#[cfg(windows)]
fn outdir_of_three(dir: &Path) -> PathBuf {
    let outdir = dir.join("out");
    std::fs::create_dir(&outdir).unwrap();
    for n in ["a.npy", "b.npy", "c.npy"] {
        std::fs::write(outdir.join(n), format!("old {n}")).unwrap();
    }
    std::fs::hard_link(outdir.join("a.npy"), dir.join("a-elsewhere.npy")).unwrap();
    outdir
}

/// On Windows a file held open without `FILE_SHARE_DELETE` cannot be replaced: found
/// before any input is read, and refused naming it and what to do.
#[test]
#[cfg(windows)]
fn an_output_held_open_by_another_program_is_refused_before_the_inputs_are_read() {
    for name in ["a.npy", "b.npy", "c.npy"] {
        let dir = temp_dir();
        let model = fan_out_model(dir.path(), &["a", "b", "c"], Some(&[2]));
        let outdir = outdir_of_three(dir.path());
        let before = snapshot(&outdir);
        let holder = hold_open(&outdir.join(name));
        let never = dir.path().join("never-made.npy");
        let out =
            ewise_within(run_args(&model, &never, &outdir, &[]), LIMIT).expect("ewise finishes");
        drop(holder);
        assert_error(
            &out,
            &[
                &format!("{}: cannot replace it now", outdir.join(name).display()),
                "another program has it open without sharing its deletion",
                "close it there, then run again",
            ],
        );
        assert_eq!(snapshot(&outdir), before, "{name} held: OUTDIR changed");
    }
}

/// Windows' own way for a rename over OUT to fail after the checks: another program
/// opens OUT without `FILE_SHARE_DELETE` while the outputs are written. Whichever
/// output it is, the commit stops there (before keeping a copy of it, or at its
/// rename), the outputs renamed before it are undone (each replaced file renamed back
/// from the copy kept aside, each created file removed), and OUTDIR is byte for byte
/// as it was, with no temporary or copy left.
#[test]
#[cfg(windows)]
fn a_file_opened_by_another_program_while_the_outputs_are_written_restores_the_others() {
    for (held, name) in ["a.npy", "b.npy", "c.npy"].into_iter().enumerate() {
        let dir = temp_dir();
        let model = fan_out_model(dir.path(), &["a", "b", "c"], None);
        let outdir = outdir_of_three(dir.path());
        let before = snapshot(&outdir);
        let mut holder = None;
        let out = run_slowly_with(dir.path(), &model, &outdir, || {
            holder = Some(hold_open(&outdir.join(name)));
        });
        assert_eq!(
            snapshot(&outdir),
            before,
            "{name} held: OUTDIR is exactly as it was"
        );
        drop(holder);
        // The last output needs no copy: its rename is what fails.
        let how = if held < 2 {
            "cannot keep a copy of the file it replaces: another program has it open without sharing its deletion"
        } else {
            "cannot rename the finished output into place: Permission denied"
        };
        assert_error(
            &out,
            &[
                &format!("{}: {how}", outdir.join(name).display()),
                undone(held),
            ],
        );
        let elsewhere = std::fs::read(dir.path().join("a-elsewhere.npy")).unwrap();
        assert_eq!(elsewhere, b"old a.npy", "{name} held");
    }
}

/// Windows' counterpart of a file the user may not write: the read-only attribute
/// refuses the target before any input is read, and OUTDIR stays as it was.
#[test]
#[cfg(windows)]
fn a_read_only_output_is_refused_and_outdir_is_left_as_it_was() {
    let dir = temp_dir();
    let model = fan_out_model(dir.path(), &["a", "b"], Some(&[2]));
    let outdir = dir.path().join("out");
    std::fs::create_dir(&outdir).unwrap();
    let b = outdir.join("b.npy");
    std::fs::write(&b, b"keep me").unwrap();
    let mut permissions = std::fs::metadata(&b).unwrap().permissions();
    permissions.set_readonly(true);
    std::fs::set_permissions(&b, permissions).unwrap();
    let never = dir.path().join("never-made.npy");
    let out = ewise_within(run_args(&model, &never, &outdir, &[]), LIMIT).expect("ewise finishes");
    assert_error(
        &out,
        &[
            &format!("{}: cannot replace it", b.display()),
            "has the read-only attribute",
            "attrib -R",
        ],
    );
    assert_eq!(file_names(&outdir), ["b.npy"]);
    assert_eq!(std::fs::read(&b).unwrap(), b"keep me");
    assert!(std::fs::metadata(&b).unwrap().permissions().readonly());
}

/// OUTDIR over 260 characters (Windows' old MAX_PATH) under non-ASCII names, graph
/// outputs with non-ASCII names and one of 255 bytes: written, replaced, nothing else
/// left; a failed run there leaves it as it was.
#[test]
fn outdirs_over_260_characters_and_non_ascii_output_names_work() {
    let dir = temp_dir();
    let long = "a".repeat(251);
    let names = ["données-Ω-日本", "無限", long.as_str()];
    let model = fan_out_model(dir.path(), &names, Some(&[2]));
    let x = x_npy(dir.path());
    let mut outdir = dir.path().to_path_buf();
    for i in 0..5 {
        outdir.push(format!("{i}-{}", "répertoire".repeat(6)));
    }
    outdir.push("sortie-Ω");
    assert!(outdir.as_os_str().len() > 300);
    let mut expected: Vec<String> = names.iter().map(|n| format!("{n}.npy")).collect();
    expected.sort();
    for _ in 0..2 {
        assert_ok(&ewise(run_args(&model, &x, &outdir, &[])));
        assert_eq!(file_names(&outdir), expected, "no temporary or copy left");
        for n in &expected {
            assert_eq!(std::fs::read(outdir.join(n)).unwrap(), signs(), "{n}");
        }
    }
    let before = snapshot(&outdir);
    let bad = dir.path().join("bad.npy");
    write_npy(&bad, "<f4", false, &[2], &[0; 4]);
    let out = ewise(run_args(&model, &bad, &outdir, &[]));
    assert_error(&out, &["bad.npy", "truncated"]);
    assert_eq!(snapshot(&outdir), before);
}
