//! `ewise run` on models written by an attacker: external data that is a symbolic link
//! out of the model's folder, sits behind a linked directory or is a FIFO, and sizes the
//! files do not hold. Each is refused with one line before any output exists, and no
//! byte from outside the folder reaches OUTDIR. A size memory cannot hold is streamed
//! within an address-space limit, and a data file shrunk while it is streamed ends the
//! run with one line and no output.
//!
//! The tests run on Windows too (FIFOs and address-space limits stay Unix's), where the
//! links are symbolic links (a link this system cannot make skips its test, saying so
//! in one line: Windows without the privilege, or wine 8.0, whose `CreateSymbolicLinkW`
//! reports success and makes nothing), and where a location naming a DOS device
//! (`NUL`, `COM1`, `sub\CON`) is refused without opening it.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use ewise_onnx::proto::{self, DataLocation, StringStringEntryProto, TensorProto};

/// Bytes that exist only outside the model's folder.
const SECRET: &[u8] = b"-----BEGIN OPENSSH PRIVATE KEY----- ewise-test";

const UINT8: i32 = 2;

/// A uint8 initializer `w` of `len` bytes stored at `location`.
fn external(len: u64, location: &str) -> TensorProto {
    let entry = |key: &str, value: String| StringStringEntryProto {
        key: key.into(),
        value,
    };
    TensorProto {
        name: "w".into(),
        data_type: UINT8,
        dims: vec![len as i64],
        data_location: DataLocation::External as i32,
        external_data: vec![
            entry("location", location.into()),
            entry("offset", "0".into()),
            entry("length", len.to_string()),
        ],
        ..Default::default()
    }
}

/// A model whose graph output is the initializer `w` itself: a successful run copies
/// its bytes verbatim into `OUTDIR/w.npy`.
fn exfiltrating_model(w: TensorProto) -> Vec<u8> {
    graph_model_bytes(
        13,
        proto::GraphProto {
            name: "hostile".into(),
            initializer: vec![w],
            output: vec![value("w", UINT8, None)],
            ..Default::default()
        },
    )
}

/// A model folder `model/` and, beside it, `outside/secret` and an empty OUTDIR path.
struct Archive {
    _root: tempfile::TempDir,
    model_dir: PathBuf,
    outside: PathBuf,
    outdir: PathBuf,
}

fn archive() -> Archive {
    let root = temp_dir();
    let model_dir = root.path().join("model");
    let outside = root.path().join("outside");
    std::fs::create_dir(&model_dir).unwrap();
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("secret"), SECRET).unwrap();
    Archive {
        outdir: root.path().join("out"),
        model_dir,
        outside,
        _root: root,
    }
}

impl Archive {
    /// Writes the model and runs `ewise run` on it.
    fn run(&self, model: &[u8]) -> std::process::Output {
        let path = self.model_dir.join("model.onnx");
        std::fs::write(&path, model).unwrap();
        ewise_within(
            [
                Path::new("run"),
                &path,
                Path::new("-o"),
                self.outdir.as_path(),
            ],
            std::time::Duration::from_secs(60),
        )
        .expect("ewise run finished within 60 s")
    }

    /// Asserts nothing was written: OUTDIR is missing or empty.
    fn assert_no_output(&self) {
        if self.outdir.exists() {
            assert_eq!(file_names(&self.outdir), Vec::<String>::new());
        }
    }
}

#[test]
fn the_control_model_copies_its_data_verbatim() {
    let a = archive();
    std::fs::write(a.model_dir.join("w.bin"), b"inside").unwrap();
    let out = a.run(&exfiltrating_model(external(6, "w.bin")));
    assert_ok(&out);
    let (_, data) = read_npy(&a.outdir.join("w.npy"));
    assert_eq!(data, b"inside");
}

/// Makes `link` a symbolic link to `target` (a directory if `dir`), and returns whether
/// one is now there; where none is (the system refused, or as wine 8.0 does, reported
/// success and made nothing), says on one line that `test` skips (on Unix, fails).
fn symlink(test: &str, target: &Path, link: &Path, dir: bool) -> bool {
    #[cfg(unix)]
    let made = {
        let _ = dir;
        std::os::unix::fs::symlink(target, link)
    };
    #[cfg(windows)]
    let made = if dir {
        std::os::windows::fs::symlink_dir(target, link)
    } else {
        std::os::windows::fs::symlink_file(target, link)
    };
    ewise_testkit::link_made(test, "symbolic link", made, link)
}

#[test]
fn data_linked_to_a_file_outside_the_folder_is_refused() {
    let a = archive();
    let test = "data_linked_to_a_file_outside_the_folder_is_refused";
    if !symlink(
        test,
        &a.outside.join("secret"),
        &a.model_dir.join("w.bin"),
        false,
    ) {
        return;
    }
    let out = a.run(&exfiltrating_model(external(SECRET.len() as u64, "w.bin")));
    let err = assert_error(&out, &["\"w.bin\"", "symbolic link"]);
    assert!(!err.contains("OPENSSH"), "{err}");
    a.assert_no_output();
}

#[test]
fn data_behind_a_linked_directory_is_refused() {
    let a = archive();
    let test = "data_behind_a_linked_directory_is_refused";
    if !symlink(test, &a.outside, &a.model_dir.join("weights"), true) {
        return;
    }
    let out = a.run(&exfiltrating_model(external(
        SECRET.len() as u64,
        "weights/secret",
    )));
    assert_error(&out, &["weights"]);
    a.assert_no_output();
}

#[test]
#[cfg(unix)]
fn data_that_is_a_fifo_is_refused_without_waiting_for_a_writer() {
    let a = archive();
    mkfifo(&a.model_dir.join("w.bin"));
    let out = a.run(&exfiltrating_model(external(4, "w.bin")));
    assert_error(&out, &["\"w.bin\"", "FIFO"]);
    a.assert_no_output();
}

#[test]
fn a_claim_beyond_the_file_is_one_line_naming_the_tensor_and_sizes() {
    let a = archive();
    std::fs::write(a.model_dir.join("w.bin"), [7u8; 16]).unwrap();
    let out = a.run(&exfiltrating_model(external(1 << 20, "w.bin")));
    assert_error(&out, &["tensor \"w\"", "1048576", "16"]);
    a.assert_no_output();
}

/// Locations that leave the model's folder, whatever the separator: refused naming the
/// location, with nothing from outside in the message or in OUTDIR.
#[test]
fn data_outside_the_folder_by_an_absolute_or_parent_location_is_refused() {
    let a = archive();
    let absolute = a.outside.join("secret");
    let mut locations = vec![
        absolute.to_str().unwrap().to_string(),
        "../outside/secret".to_string(),
        "weights/../../outside/secret".to_string(),
    ];
    if cfg!(windows) {
        locations.extend([
            r"..\outside\secret".to_string(),
            r"C:secret".to_string(),
            r"\\?\".to_string() + absolute.to_str().unwrap(),
        ]);
    }
    for location in &locations {
        let out = a.run(&exfiltrating_model(external(SECRET.len() as u64, location)));
        let err = assert_error(
            &out,
            &[
                &format!("external data location {location:?} of tensor \"w\""),
                "resolves outside the model's directory",
            ],
        );
        assert!(!err.contains("OPENSSH"), "{err}");
        a.assert_no_output();
    }
}

/// A location naming a DOS device (which Windows opens whatever directory it is in) is
/// refused without being opened: opening `COM1` can block, `CON` reads the console.
#[test]
#[cfg(windows)]
fn data_at_a_dos_device_name_is_refused_without_opening_it() {
    let a = archive();
    std::fs::create_dir(a.model_dir.join("sub")).unwrap();
    for (location, why) in [
        ("NUL", "is a character device"),
        ("COM1", "is a character device"),
        ("CON", "is a character device"),
        (r"sub\NUL", "is a character device"),
        (
            r"NUL\w.bin",
            "passes through \"NUL\", which is not a directory",
        ),
    ] {
        let out = a.run(&exfiltrating_model(external(4, location)));
        assert_error(
            &out,
            &[&format!(
                "external data location {location:?} of tensor \"w\" {why}"
            )],
        );
        a.assert_no_output();
    }
}

/// The temporary `ewise run` writes `w.npy` into, in `outdir`, and its size, once it
/// exists.
#[cfg(target_os = "linux")]
fn temporary_size(outdir: &Path) -> Option<u64> {
    std::fs::read_dir(outdir)
        .ok()?
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .and_then(|e| e.metadata().ok())
        .map(|m| m.len())
}

#[test]
#[cfg(target_os = "linux")]
fn a_claim_larger_than_memory_streams_within_an_address_space_limit() {
    if std::env::var(RUNNER_ENV).is_ok_and(|r| !r.trim().is_empty()) {
        eprintln!("skipping: an emulator under {RUNNER_ENV} reserves address space itself");
        return;
    }
    let a = archive();
    let data = std::fs::File::create(a.model_dir.join("w.bin")).unwrap();
    data.set_len(1 << 40).unwrap();
    drop(data);
    let model = a.model_dir.join("model.onnx");
    std::fs::write(&model, exfiltrating_model(external(1 << 40, "w.bin"))).unwrap();
    let mut child = spawn_under_a_memory_limit(&[
        "run",
        model.to_str().unwrap(),
        "-o",
        a.outdir.to_str().unwrap(),
    ]);
    let limit = std::time::Duration::from_secs(120);
    wait_until(
        &mut child,
        "1.25 GiB of the output was written",
        limit,
        || temporary_size(&a.outdir).is_some_and(|n| n > 5 << 28),
    );
    send_signal(&child, "INT");
    let (status, _, err) = finish_within(child, limit);
    assert_eq!(status.code(), Some(130), "status {status}, stderr: {err}");
    assert!(err.contains("interrupted"), "{err}");
    a.assert_no_output();
}

#[test]
#[cfg(target_os = "linux")]
fn external_data_shrunk_while_streamed_is_one_line_naming_the_tensor_and_sizes() {
    const LEN: u64 = 1 << 30;
    let a = archive();
    let model = a.model_dir.join("model.onnx");
    std::fs::write(&model, exfiltrating_model(external(LEN, "w.bin"))).unwrap();
    let limit = std::time::Duration::from_secs(120);
    for _ in 0..5 {
        let data = std::fs::File::create(a.model_dir.join("w.bin")).unwrap();
        data.set_len(LEN).unwrap();
        let mut child = spawn_ewise(&[
            "run",
            model.to_str().unwrap(),
            "-o",
            a.outdir.to_str().unwrap(),
            "--chunk-size",
            "4Ki",
        ]);
        wait_until(&mut child, "the output's temporary exists", limit, || {
            temporary_size(&a.outdir).is_some()
        });
        data.set_len(4096).unwrap();
        let (status, _, err) = finish_within(child, limit);
        if status.success() {
            eprintln!("ewise finished before w.bin was truncated; again");
            std::fs::remove_dir_all(&a.outdir).unwrap();
            continue;
        }
        assert_error_exit(
            status,
            1,
            &err,
            &[
                "model.onnx",
                "external data location \"w.bin\" of tensor \"w\" shrank after the model was loaded",
                "bytes 0 to 1073741824",
                "now holds 4096 bytes",
            ],
        );
        a.assert_no_output();
        return;
    }
    panic!("ewise finished before w.bin could be truncated, five times");
}
