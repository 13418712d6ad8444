//! Output file names as each OS takes them (`ewise_cli::file_name`): a graph output's
//! name or OUT that Windows would read as a drive, a stream or a device, and two graph
//! outputs that a file system ignoring case would make one file, are refused before any
//! input is opened, with a message naming the rule, and nothing is written anywhere.
//! Run on Linux and, as a Windows program, under wine (scripts/windows-test.sh).

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use common::*;

const LIMIT: Duration = Duration::from_secs(60);

/// ONNX element type number of bool.
const BOOL: i32 = 9;

/// An input that must never be opened: on Unix a FIFO nobody writes to (opening it
/// blocks, so the command would not finish), on Windows a file that does not exist (a
/// command that opens it fails naming it). A refusal naming an output shows that the
/// outputs were checked first.
fn input_never_to_open(dir: &Path) -> PathBuf {
    #[cfg(unix)]
    {
        let fifo = dir.join("never-written.fifo");
        mkfifo(&fifo);
        fifo
    }
    #[cfg(not(unix))]
    {
        dir.join("never-made.npy")
    }
}

/// A model with graph input `x` (float32 `[2]`) and one output per `(op, name)`.
fn model_with_outputs(dir: &Path, outputs: &[(&str, &str)]) -> PathBuf {
    let bytes = model_bytes(
        13,
        outputs
            .iter()
            .map(|(op, name)| node(op, "x", name, &[]))
            .collect(),
        vec![value("x", FLOAT, Some(&[2]))],
        outputs
            .iter()
            .map(|(op, name)| value(name, if *op == "IsInf" { BOOL } else { FLOAT }, None))
            .collect(),
    );
    let path = dir.join("m.onnx");
    std::fs::write(&path, bytes).unwrap();
    path
}

/// `ewise run MODEL -i x=INPUT -o OUTDIR` in `cwd`, within [`LIMIT`].
fn run_in(cwd: &Path, model: &Path, input: &Path, outdir: &Path) -> Output {
    let mut command = ewise_command();
    command.current_dir(cwd).args([
        "run".as_ref(),
        model.as_os_str(),
        "-i".as_ref(),
        format!("x={}", input.display()).as_ref(),
        "-o".as_ref(),
        outdir.as_os_str(),
    ]);
    output_within(command, LIMIT).expect("ewise run opened its input before refusing")
}

/// Output names Windows would not write as `OUTDIR/NAME.npy`, with what the error says.
const WINDOWS_UNSAFE: &[(&str, &str)] = &[
    ("C:x", "drive"),
    ("Z:x", "drive"),
    ("x:stream", "alternate data stream"),
    ("CON", "Windows device name"),
    ("prn", "Windows device name"),
    ("Aux", "Windows device name"),
    ("NUL", "Windows device name"),
    ("nul.tar", "Windows device name"),
    ("COM1", "Windows device name"),
    ("lpt9", "Windows device name"),
    ("LPT1", "Windows device name"),
    ("CONOUT$", "Windows device name"),
    ("q?", "does not allow"),
    ("a|b", "does not allow"),
    ("a\\b", "path separator"),
];

#[test]
fn output_names_are_checked_by_the_rules_of_this_os() {
    for (name, rule) in WINDOWS_UNSAFE {
        let dir = temp_dir();
        let cwd = dir.path().join("cwd");
        std::fs::create_dir(&cwd).unwrap();
        let model = model_with_outputs(dir.path(), &[("Sign", name)]);
        let outdir = dir.path().join("out");
        if cfg!(windows) {
            let input = input_never_to_open(dir.path());
            let out = run_in(&cwd, &model, &input, &outdir);
            let message = assert_error(&out, &[&format!("{name:?}"), rule, "plain file names"]);
            assert_eq!(message.lines().count(), 1, "{message}");
            assert!(!outdir.exists(), "{name}: OUTDIR was created");
            assert!(
                file_names(&cwd).is_empty(),
                "{name}: {:?}",
                file_names(&cwd)
            );
        } else {
            let input = dir.path().join("x.npy");
            write_npy(&input, "<f4", false, &[2], &f32_bytes(&[-2.0, 0.5]));
            let out = run_in(&cwd, &model, &input, &outdir);
            assert_ok(&out);
            let (_, data) = read_npy(&outdir.join(format!("{name}.npy")));
            assert_eq!(data, f32_bytes(&[-1.0, 1.0]), "{name}");
            assert!(
                file_names(&cwd).is_empty(),
                "{name}: {:?}",
                file_names(&cwd)
            );
        }
    }
}

#[test]
fn outputs_one_file_apart_only_in_case_are_refused_on_every_os() {
    let pairs = [("Y", "y"), ("Out", "OUT"), ("Straße", "STRASSE")];
    for (first, second) in pairs {
        for outdir_exists in [false, true] {
            let dir = temp_dir();
            let model = model_with_outputs(dir.path(), &[("Sign", first), ("IsInf", second)]);
            let outdir = dir.path().join("out");
            if outdir_exists {
                std::fs::create_dir(&outdir).unwrap();
            }
            let input = input_never_to_open(dir.path());
            let out = run_in(dir.path(), &model, &input, &outdir);
            assert_error(
                &out,
                &[
                    &format!("{first:?}"),
                    &format!("{second:?}"),
                    "ignores case",
                    "each output needs its own file",
                ],
            );
            assert_eq!(outdir.exists(), outdir_exists);
            if outdir_exists {
                assert!(file_names(&outdir).is_empty());
            }
        }
    }
}

#[test]
fn a_hostile_output_name_is_cut_in_messages() {
    let dir = temp_dir();
    let name = format!("{}:{}", "C".repeat(100_000), "x");
    let bytes = format!("{}/{}", "a".repeat(100_000), "b");
    let input = input_never_to_open(dir.path());
    for name in [name, bytes] {
        let model = model_with_outputs(dir.path(), &[("Sign", &name)]);
        let out = run_in(dir.path(), &model, &input, &dir.path().join("out"));
        let message = assert_error(&out, &["…(100002 chars)"]);
        assert!(message.len() < 1_000, "{} bytes", message.len());
    }
}

/// OUT of `ewise sign` and `is-infinity` that Windows would read as a device, a stream
/// or a name it changes, with what the error says.
const WINDOWS_UNSAFE_OUT: &[(&str, &str)] = &[
    ("CON", "Windows device name"),
    ("con.npy", "Windows device name"),
    ("LPT1.npy", "Windows device name"),
    ("PRN", "Windows device name"),
    ("nul.npy", "Windows device name"),
    ("COM3.x.npy", "Windows device name"),
    ("AUX .npy", "Windows device name"),
    ("o.npy:stream", "alternate data stream"),
    ("o.npy.", "drops"),
    ("o.npy ", "drops"),
    ("o?.npy", "does not allow"),
];

#[test]
fn out_is_checked_by_the_rules_of_this_os() {
    for (name, rule) in WINDOWS_UNSAFE_OUT {
        for op in ["sign", "is-infinity"] {
            let dir = temp_dir();
            let dest = dir.path().join(name);
            if cfg!(windows) {
                let input = input_never_to_open(dir.path());
                let out = ewise_within([op.as_ref(), input.as_os_str(), dest.as_os_str()], LIMIT)
                    .unwrap_or_else(|| panic!("{op} to {name} opened its input before refusing"));
                assert_error(&out, &[name.trim_end(), rule]);
                assert!(
                    file_names(dir.path()).is_empty(),
                    "{op} {name}: {:?}",
                    file_names(dir.path())
                );
            } else {
                let input = dir.path().join("x.npy");
                write_npy(&input, "<f4", false, &[2], &f32_bytes(&[-2.0, 0.5]));
                assert_ok(&ewise([op.as_ref(), input.as_os_str(), dest.as_os_str()]));
                assert!(dest.is_file(), "{op} {name}");
            }
        }
    }
}

/// `NUL` alone stays Windows' null device, as `/dev/null` is on Unix.
#[cfg(windows)]
#[test]
fn nul_alone_is_still_the_null_device() {
    let dir = temp_dir();
    let input = dir.path().join("x.npy");
    write_npy(&input, "<f4", false, &[2], &f32_bytes(&[-2.0, 0.5]));
    for dest in ["NUL", "nul"] {
        assert_ok(&ewise(["sign".as_ref(), input.as_os_str(), dest.as_ref()]));
    }
    assert_eq!(file_names(dir.path()), ["x.npy"]);
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}
