//! External tensor data on hostile input: locations are confined to the model's
//! directory with no symbolic link on the way, only regular files are read and a FIFO
//! never blocks, claimed sizes are checked and allocated fallibly, initializers no run
//! reads are never read, and one byte range named many times is read once. A load that
//! leaves the data in its files ([`ExternalData::Deferred`]) refuses the same models,
//! reads only what is asked for through the handles it opened or, beyond the few it
//! keeps open, files opened again and checked to be the ones it opened (hundreds of data
//! files run under a limit of 64 open files), and reports a file shrunk or replaced
//! after it as a typed error.
//!
//! Every bad thing is made for real: symbolic links, FIFOs, sparse files of 1 TiB.
//! Cases that must not abort on a failed allocation run in a child process (this test
//! binary again, filtered to the one test) under an address-space limit.
//!
//! The tests run on Windows too (FIFOs, `/dev` devices and address-space limits stay
//! Unix's), where links are file and directory symbolic links and junctions, and where
//! locations naming DOS devices (`NUL`, `COM1`, `sub\NUL`), drive letters, UNC and
//! device prefixes and backslash `..` forms have tests of their own. A link this system
//! cannot make (Windows without the privilege to make symbolic links; wine, whose
//! `CreateSymbolicLinkW` reports success and makes nothing) skips what needs it, saying
//! so in one line on standard error.

mod common;

use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use common::*;
use ewise_onnx::proto::{DataLocation, Message, ModelProto, StringStringEntryProto, TensorProto};
use ewise_onnx::{
    DataType, Error, ExternalData, FileKind, Model, Refusal, Scratch, SourceKind, Streaming, Tensor,
};

/// Bytes that appear only in files outside the model's directory.
const SECRET: &[u8] = b"EWISE-SECRET-OUTSIDE-4f1c9a";

fn entry(key: &str, value: &str) -> StringStringEntryProto {
    StringStringEntryProto {
        key: key.into(),
        value: value.into(),
    }
}

/// A uint8 tensor of `len` elements whose data is at `location`, from `offset`.
fn external(name: &str, len: u64, location: &str, offset: u64) -> TensorProto {
    TensorProto {
        name: name.into(),
        data_type: UINT8,
        dims: vec![i64::try_from(len).unwrap()],
        data_location: DataLocation::External as i32,
        external_data: vec![
            entry("location", location),
            entry("offset", &offset.to_string()),
        ],
        ..Default::default()
    }
}

/// Sign of each of `used` (outputs `y_<name>`), with `unused` as further initializers.
fn sign_of_each(used: Vec<TensorProto>, unused: Vec<TensorProto>) -> ModelProto {
    let nodes = used
        .iter()
        .map(|t| node("Sign", &t.name, &format!("y_{}", t.name)))
        .collect();
    let outputs = used
        .iter()
        .map(|t| value(&format!("y_{}", t.name), UINT8, None))
        .collect();
    let mut g = graph(nodes, vec![], outputs);
    g.initializer = used;
    g.initializer.extend(unused);
    model(13, g)
}

/// Writes `m` as `dir/model.onnx` and loads it with `Model::load`, as the CLI does.
fn load_in(dir: &Path, m: &ModelProto) -> ewise_onnx::Result<Model> {
    let path = dir.join("model.onnx");
    std::fs::write(&path, m.encode_to_vec()).unwrap();
    Model::load(path)
}

/// `f`'s result, or a failure if it takes longer than 20 s (a blocked open).
fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(f());
    });
    finished
        .recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("{what} did not finish within 20 s"))
}

#[cfg(all(unix, not(target_vendor = "apple")))]
fn make_fifo(path: &Path) {
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        path,
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
    )
    .unwrap();
}

#[cfg(target_vendor = "apple")]
fn make_fifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

/// One way of making a link: a name, and a function making `link` point at `target`.
type MakeLink = (&'static str, fn(&Path, &Path) -> io::Result<()>);

/// The ways of making a link to a file.
#[cfg(unix)]
const FILE_LINKS: &[MakeLink] = &[("symbolic link", |t, l| std::os::unix::fs::symlink(t, l))];
#[cfg(windows)]
const FILE_LINKS: &[MakeLink] = &[("file symbolic link", |t, l| {
    std::os::windows::fs::symlink_file(t, l)
})];

/// The ways of making a link to a directory: on Windows a directory symbolic link (which
/// needs Developer Mode or an administrator) and a junction (which needs neither).
#[cfg(unix)]
const DIR_LINKS: &[MakeLink] = FILE_LINKS;
#[cfg(windows)]
const DIR_LINKS: &[MakeLink] = &[
    ("directory symbolic link", |t, l| {
        std::os::windows::fs::symlink_dir(t, l)
    }),
    ("junction", junction),
];

/// Makes `link` a junction (a mount point) to the directory `target` with `mklink /J`.
#[cfg(windows)]
fn junction(target: &Path, link: &Path) -> io::Result<()> {
    // A junction holds an absolute target.
    let target = std::path::absolute(target)?;
    let output = Command::new("cmd")
        .args(["/c", "mklink", "/J"])
        .arg(link)
        .arg(target)
        .output()?;
    // wine's cmd says "Failed to open" on standard error and exits with 0.
    if output.status.success() && output.stderr.is_empty() {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "mklink /J exited with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )))
    }
}

/// Makes `link` a link to `target` the way `how` says, and returns whether a link is now
/// there. Where none is (the system refused, or, as wine 8.0 does, reported success and
/// made nothing), says on one line of standard error that `test` skips what needs it and
/// returns false; on Unix that is a failure instead.
fn link(test: &str, how: &MakeLink, target: impl AsRef<Path>, link: &Path) -> bool {
    let (what, make) = how;
    ewise_testkit::link_made(test, what, make(target.as_ref(), link), link)
}

/// [`link`] to a file, the first way this system has.
fn link_file(test: &str, target: impl AsRef<Path>, at: &Path) -> bool {
    link(test, &FILE_LINKS[0], target, at)
}

/// A model directory and, beside it, a directory outside it holding `secret.bin`.
struct Tree {
    _root: tempfile::TempDir,
    model_dir: PathBuf,
    outside: PathBuf,
}

fn tree() -> Tree {
    let root = tempfile::tempdir().unwrap();
    let model_dir = root.path().join("model");
    let outside = root.path().join("outside");
    std::fs::create_dir(&model_dir).unwrap();
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("secret.bin"), SECRET).unwrap();
    Tree {
        model_dir,
        outside,
        _root: root,
    }
}

fn refusal(result: ewise_onnx::Result<Model>) -> (Refusal, String) {
    match result {
        Err(e @ Error::ExternalDataRefused { .. }) => {
            let text = e.to_string();
            let Error::ExternalDataRefused { reason, .. } = e else {
                unreachable!()
            };
            (reason, text)
        }
        Err(e) => panic!("expected a refusal, got: {e}"),
        Ok(_) => panic!("expected a refusal, but the model loaded"),
    }
}

fn secret_len() -> u64 {
    SECRET.len() as u64
}

#[test]
fn a_data_file_linking_outside_is_refused_and_the_secret_never_read() {
    let t = tree();
    let test = "a_data_file_linking_outside_is_refused_and_the_secret_never_read";
    if !link_file(
        test,
        t.outside.join("secret.bin"),
        &t.model_dir.join("w.bin"),
    ) {
        return;
    }
    let m = sign_of_each(vec![external("w", secret_len(), "w.bin", 0)], vec![]);
    let (reason, text) = refusal(load_in(&t.model_dir, &m));
    assert_eq!(reason, Refusal::SymbolicLink);
    assert_eq!(
        text,
        "external data location \"w.bin\" of tensor \"w\" is a symbolic link; ewise reads \
         only regular files inside the model's directory"
    );
    assert!(!text.contains(std::str::from_utf8(SECRET).unwrap()));
}

#[test]
fn a_link_to_a_file_inside_the_directory_is_refused_too() {
    let t = tree();
    std::fs::write(t.model_dir.join("real.bin"), [1u8, 2]).unwrap();
    let m = sign_of_each(vec![external("w", 2, "real.bin", 0)], vec![]);
    let y = load_in(&t.model_dir, &m)
        .unwrap()
        .run(Vec::<(String, Tensor)>::new());
    assert_eq!(y.unwrap()[0].1.data, [1, 1]);
    let test = "a_link_to_a_file_inside_the_directory_is_refused_too";
    if link_file(test, "real.bin", &t.model_dir.join("w.bin")) {
        let m = sign_of_each(vec![external("w", 2, "w.bin", 0)], vec![]);
        assert_eq!(refusal(load_in(&t.model_dir, &m)).0, Refusal::SymbolicLink);
    }
}

#[test]
fn a_linked_directory_on_the_way_is_refused() {
    let test = "a_linked_directory_on_the_way_is_refused";
    for how in DIR_LINKS {
        let t = tree();
        if !link(test, how, &t.outside, &t.model_dir.join("weights")) {
            continue;
        }
        let m = sign_of_each(
            vec![external("w", secret_len(), "weights/secret.bin", 0)],
            vec![],
        );
        let (reason, text) = refusal(load_in(&t.model_dir, &m));
        assert_eq!(
            reason,
            Refusal::LinkedDirectory {
                component: "weights".into()
            },
            "{}",
            how.0
        );
        assert!(
            text.contains("passes through \"weights\", a symbolic link"),
            "{text}"
        );
        std::fs::create_dir(t.model_dir.join("real")).unwrap();
        assert!(link(
            test,
            how,
            &t.outside,
            &t.model_dir.join("real/deeper")
        ));
        let m = sign_of_each(
            vec![external("w", secret_len(), "./real/deeper/secret.bin", 0)],
            vec![],
        );
        assert_eq!(
            refusal(load_in(&t.model_dir, &m)).0,
            Refusal::LinkedDirectory {
                component: "real/deeper".into()
            },
            "{}",
            how.0
        );
    }
}

#[test]
fn absolute_and_parent_locations_are_refused() {
    let t = tree();
    let absolute = t.outside.join("secret.bin");
    for location in [
        absolute.to_str().unwrap(),
        "../outside/secret.bin",
        "a/../../x",
    ] {
        let m = sign_of_each(vec![external("w", secret_len(), location, 0)], vec![]);
        let (reason, text) = refusal(load_in(&t.model_dir, &m));
        assert_eq!(reason, Refusal::OutsideDirectory, "{location}");
        assert!(
            text.contains("resolves outside the model's directory"),
            "{text}"
        );
    }
}

/// The index of the first of `location`'s components that Windows reads under `dir` as a
/// DOS device, if one is: the first whose leading components' full path, as Windows makes
/// it (`GetFullPathNameW`, as every open does), is no longer under `dir` (`dir\NUL` is
/// `\\.\NUL`; `dir\NUL.txt` was too before Windows 11).
#[cfg(windows)]
fn first_device(dir: &Path, location: &str) -> Option<usize> {
    let dir = std::path::absolute(dir).unwrap();
    let mut path = dir.clone();
    Path::new(location)
        .components()
        .filter(|c| *c != std::path::Component::CurDir)
        .position(|c| {
            path.push(c);
            !std::path::absolute(&path).unwrap().starts_with(&dir)
        })
}

/// Loads `m` from `dir` both ways (reading its data, and deferred) in a thread, failing
/// if that takes longer than 20 s; returns the two errors, which must be the same.
fn both_loads_fail(what: &str, dir: &Path, m: ModelProto) -> Error {
    let dir = dir.to_path_buf();
    let (read, deferred) = within(what, move || {
        let read = load_in(&dir, &m).map(|_| ());
        let deferred = load_deferred(&dir, &m).map(|_| ());
        (read, deferred)
    });
    let (read, deferred) = match (read, deferred) {
        (Err(read), Err(deferred)) => (read, deferred),
        (read, deferred) => panic!("{what}: expected two errors, got {read:?} and {deferred:?}"),
    };
    assert_eq!(read.to_string(), deferred.to_string(), "{what}");
    read
}

#[test]
#[cfg(windows)]
fn dos_device_names_are_refused_never_read_or_waited_for() {
    let t = tree();
    std::fs::create_dir(t.model_dir.join("sub")).unwrap();
    std::fs::write(t.model_dir.join("w.bin"), [1u8; 4]).unwrap();
    for location in [
        "NUL",
        "nul",
        "CON",
        "CONIN$",
        "CONOUT$",
        "AUX",
        "PRN",
        "COM1",
        "COM9",
        "LPT1",
        // Devices on some Windows versions, ordinary names on others (wine 8.0).
        "COM0",
        "LPT¹",
        "sub/NUL",
        r"sub\NUL",
        r".\sub\COM1",
        "NUL.txt",
        "COM1.bin",
        "NUL ",
        "NUL/w.bin",
        r"sub\AUX\w.bin",
    ] {
        let m = sign_of_each(vec![external("w", 4, location, 0)], vec![]);
        let what = format!("loading a model whose data is at {location:?}");
        let err = both_loads_fail(&what, &t.model_dir, m);
        let components: Vec<String> = Path::new(location)
            .components()
            .filter(|c| *c != std::path::Component::CurDir)
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        match first_device(&t.model_dir, location) {
            Some(i) => {
                let text = err.to_string();
                let Error::ExternalDataRefused {
                    tensor,
                    location: named,
                    reason,
                } = err
                else {
                    panic!("{location:?} is a device here, but the load said: {text}");
                };
                assert_eq!((tensor.as_str(), named.as_str()), ("w", location));
                let expected = if i + 1 == components.len() {
                    Refusal::NotRegularFile {
                        kind: FileKind::CharacterDevice,
                    }
                } else {
                    Refusal::NotADirectory {
                        component: components[..=i].join("/"),
                    }
                };
                assert_eq!(reason, expected, "{location:?}: {text}");
            }
            // Where Windows keeps the name (Windows 11: NUL.txt), a missing file.
            None => match err {
                Error::Io { path, source } => {
                    assert_eq!(path, t.model_dir.join(location), "{location:?}");
                    assert_eq!(source.kind(), io::ErrorKind::NotFound, "{location:?}");
                }
                other => panic!("{location:?}: expected an I/O error, got {other}"),
            },
        }
    }
}

#[test]
#[cfg(windows)]
fn drive_unc_and_device_prefixes_and_backslash_parents_are_refused() {
    let t = tree();
    std::fs::create_dir(t.model_dir.join("sub")).unwrap();
    std::fs::write(t.model_dir.join("w.bin"), [1u8; 4]).unwrap();
    let secret = t.outside.join("secret.bin");
    let verbatim = std::fs::canonicalize(&secret).unwrap();
    for location in [
        r"C:\x",
        "C:x",
        "C:secret.bin",
        r"\\server\share\x",
        r"\\?\C:\x",
        r"\\?\UNC\server\share\x",
        r"\\.\pipe\x",
        r"\\.\NUL",
        r"\\.\C:\x",
        r"\x",
        r"a\..\..\x",
        r"..\outside\secret.bin",
        r".\sub\..\..\outside\secret.bin",
        r"sub\..\w.bin",
        secret.to_str().unwrap(),
        verbatim.to_str().unwrap(),
    ] {
        let m = sign_of_each(vec![external("w", secret_len(), location, 0)], vec![]);
        let what = format!("loading a model whose data is at {location:?}");
        let err = both_loads_fail(&what, &t.model_dir, m);
        let (reason, text) = refusal(Err(err));
        assert_eq!(reason, Refusal::OutsideDirectory, "{location:?}");
        assert!(
            text.contains("resolves outside the model's directory"),
            "{text}"
        );
    }
}

#[test]
#[cfg(windows)]
fn a_dos_device_as_the_model_file_is_an_error_never_read_or_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    for path in [
        PathBuf::from("NUL"),
        PathBuf::from(r"\\.\NUL"),
        PathBuf::from("CON"),
        PathBuf::from("COM1"),
        dir.path().join("NUL"),
        dir.path().join("sub").join("COM1.onnx"),
    ] {
        let what = format!("loading {} as a model", path.display());
        let err = within(&what, {
            let path = path.clone();
            move || Model::load(path).map(|_| ()).unwrap_err()
        });
        assert!(
            matches!(&err, Error::Io { path: named, .. } if *named == path),
            "{what}: {err}"
        );
    }
}

#[test]
#[cfg(unix)]
fn a_fifo_as_data_file_is_refused_without_blocking() {
    let t = tree();
    make_fifo(&t.model_dir.join("w.bin"));
    let m = sign_of_each(vec![external("w", 4, "w.bin", 0)], vec![]);
    let dir = t.model_dir.clone();
    let result = within("loading a model whose data is a FIFO", move || {
        load_in(&dir, &m)
    });
    let (reason, text) = refusal(result);
    assert_eq!(
        reason,
        Refusal::NotRegularFile {
            kind: FileKind::Fifo
        }
    );
    assert!(text.contains("is a FIFO (named pipe)"), "{text}");
}

#[test]
fn a_device_reached_through_a_link_is_refused() {
    let t = tree();
    let device = if cfg!(windows) {
        r"\\.\NUL"
    } else {
        "/dev/zero"
    };
    let test = "a_device_reached_through_a_link_is_refused";
    if !link_file(test, device, &t.model_dir.join("w.bin")) {
        return;
    }
    let m = sign_of_each(vec![external("w", 1 << 20, "w.bin", 0)], vec![]);
    assert_eq!(refusal(load_in(&t.model_dir, &m)).0, Refusal::SymbolicLink);
}

#[test]
fn a_directory_as_data_file_is_refused() {
    let t = tree();
    std::fs::create_dir(t.model_dir.join("w.bin")).unwrap();
    for location in ["w.bin", "w.bin/", "."] {
        let m = sign_of_each(vec![external("w", 4, location, 0)], vec![]);
        let (reason, text) = refusal(load_in(&t.model_dir, &m));
        assert_eq!(
            reason,
            Refusal::NotRegularFile {
                kind: FileKind::Directory
            },
            "{location}"
        );
        assert!(text.contains("is a directory"), "{text}");
    }
}

#[test]
fn a_file_used_as_a_directory_is_named() {
    let t = tree();
    std::fs::write(t.model_dir.join("w.bin"), [0u8; 4]).unwrap();
    let m = sign_of_each(vec![external("w", 4, "w.bin/x", 0)], vec![]);
    assert_eq!(
        refusal(load_in(&t.model_dir, &m)).0,
        Refusal::NotADirectory {
            component: "w.bin".into()
        }
    );
}

#[test]
fn a_claim_beyond_the_file_is_one_line_naming_the_tensor_and_the_sizes() {
    let t = tree();
    std::fs::write(t.model_dir.join("w.bin"), [0u8; 16]).unwrap();
    let m = sign_of_each(vec![external("w", 1 << 20, "w.bin", 8)], vec![]);
    let err = load_in(&t.model_dir, &m).unwrap_err().to_string();
    assert_eq!(
        err,
        "tensor \"w\": external data claims 1048576 bytes at offset 8 of \"w.bin\", which has \
         16 bytes"
    );
    let m = sign_of_each(vec![external("w", 8, "w.bin", u64::MAX)], vec![]);
    let err = load_in(&t.model_dir, &m).unwrap_err().to_string();
    assert!(err.contains("which has 16 bytes"), "{err}");
}

#[test]
fn a_missing_data_file_is_an_io_error_naming_its_path() {
    let t = tree();
    let m = sign_of_each(vec![external("w", 4, "./sub/w.bin", 0)], vec![]);
    match load_in(&t.model_dir, &m) {
        Err(Error::Io { path, .. }) => assert_eq!(path, t.model_dir.join("sub/w.bin")),
        other => panic!("expected an I/O error, got {other:?}"),
    }
}

/// The variable naming the test a child process runs.
const CHILD: &str = "EWISE_ONNX_TEST_CHILD";

/// Whether this process is the child [`run_child`] started for the test `name`.
fn is_child(name: &str) -> bool {
    std::env::var(CHILD).as_deref() == Ok(name)
}

/// Runs the test `name` again in a child process (this test binary, filtered to it), in
/// the directory `dir` when given, and asserts that it passed (an abort fails it).
fn run_child(name: &str, dir: Option<&Path>) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, name);
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let output = command.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success() && text.contains("1 passed"),
        "the child process running {name} failed ({}):\n{text}",
        output.status
    );
}

/// Runs `body` in a child process whose address space is limited to `limit` bytes, and
/// asserts that it passed: an allocation the limit refuses must be an error, not an
/// abort. (Linux only: macOS does not enforce `RLIMIT_AS`.)
#[cfg(target_os = "linux")]
fn limited(name: &str, limit: u64, body: impl FnOnce()) {
    if !is_child(name) {
        return run_child(name, None);
    }
    let limit = rustix::process::Rlimit {
        current: Some(limit),
        maximum: Some(limit),
    };
    rustix::process::setrlimit(rustix::process::Resource::As, limit).unwrap();
    body();
}

#[test]
fn a_bare_model_file_name_finds_its_data_in_the_current_directory() {
    let name = "a_bare_model_file_name_finds_its_data_in_the_current_directory";
    if is_child(name) {
        let model = Model::load("model.onnx").unwrap();
        assert_eq!(model.data_files(), [Path::new("w.bin")]);
        let y = model.run(Vec::<(String, Tensor)>::new()).unwrap();
        assert_eq!(y[0].1.data, [1, 0, 1]);
        return;
    }
    let t = tree();
    std::fs::write(t.model_dir.join("w.bin"), [4u8, 0, 4]).unwrap();
    let m = sign_of_each(vec![external("w", 3, "w.bin", 0)], vec![]);
    std::fs::write(t.model_dir.join("model.onnx"), m.encode_to_vec()).unwrap();
    run_child(name, Some(&t.model_dir));
}

#[cfg(target_os = "linux")]
const GIB: u64 = 1 << 30;

#[test]
#[cfg(target_os = "linux")]
fn a_sparse_1_tib_claim_is_an_error_not_an_abort() {
    limited("a_sparse_1_tib_claim_is_an_error_not_an_abort", GIB, || {
        let t = tree();
        let file = std::fs::File::create(t.model_dir.join("huge.bin")).unwrap();
        file.set_len(1 << 40).unwrap();
        let m = sign_of_each(vec![external("w", 1 << 40, "huge.bin", 0)], vec![]);
        let err = load_in(&t.model_dir, &m).unwrap_err();
        assert!(matches!(err, Error::OutOfMemory { bytes, .. } if bytes == 1 << 40));
        assert_eq!(
            err.to_string(),
            "cannot allocate 1099511627776 bytes for the external data of tensor \"w\" \
                 (location \"huge.bin\", offset 0) (out of memory)"
        );
    });
}

#[test]
fn model_files_that_are_not_regular_files_are_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    #[cfg(unix)]
    {
        let fifo = dir.path().join("model.onnx");
        make_fifo(&fifo);
        let err = within("loading a FIFO as a model", move || {
            Model::load(&fifo).unwrap_err()
        });
        assert!(matches!(err, Error::Io { .. }), "{err}");
        assert!(
            err.to_string()
                .ends_with(": a FIFO (named pipe), not a regular file"),
            "{err}"
        );
    }
    let err = Model::load(dir.path()).unwrap_err().to_string();
    assert!(err.ends_with(": a directory, not a regular file"), "{err}");
}

#[test]
#[cfg(target_os = "linux")]
fn a_device_as_the_model_file_is_refused_before_it_is_read() {
    limited(
        "a_device_as_the_model_file_is_refused_before_it_is_read",
        GIB,
        || {
            let err = Model::load("/dev/zero").unwrap_err().to_string();
            assert_eq!(
                err,
                "cannot read /dev/zero: a character device, not a regular file"
            );
        },
    );
}

#[test]
fn a_model_file_and_directory_reached_through_links_are_the_users_choice() {
    let t = tree();
    std::fs::write(t.model_dir.join("w.bin"), [7u8, 0]).unwrap();
    let m = sign_of_each(vec![external("w", 2, "w.bin", 0)], vec![]);
    std::fs::write(t.model_dir.join("real.onnx"), m.encode_to_vec()).unwrap();
    let test = "a_model_file_and_directory_reached_through_links_are_the_users_choice";
    if link_file(test, "real.onnx", &t.model_dir.join("link.onnx")) {
        let model = Model::load(t.model_dir.join("link.onnx")).unwrap();
        assert_eq!(model.data_files(), [t.model_dir.join("w.bin")]);
    }
    for (i, how) in DIR_LINKS.iter().enumerate() {
        let linked_dir = t.outside.join(format!("linked_dir{i}"));
        if !link(test, how, &t.model_dir, &linked_dir) {
            continue;
        }
        let model = Model::load(linked_dir.join("real.onnx")).unwrap();
        assert_eq!(model.data_files(), [linked_dir.join("w.bin")], "{}", how.0);
        let y = model.run(Vec::<(String, Tensor)>::new()).unwrap();
        assert_eq!(y[0].1.data, [1, 0]);
    }
}

#[test]
fn unused_initializers_are_never_read() {
    let t = tree();
    // On Windows a serial port's name instead of a FIFO (opening one waits under wine),
    // and no 1 TiB file (NTFS would allocate it).
    #[cfg(unix)]
    let (pipe, huge_len) = {
        make_fifo(&t.model_dir.join("pipe"));
        ("pipe", 1 << 40)
    };
    #[cfg(windows)]
    let (pipe, huge_len) = ("COM1", 1 << 20);
    let huge = std::fs::File::create(t.model_dir.join("huge.bin")).unwrap();
    huge.set_len(huge_len).unwrap();
    // Without a link, "secret.bin" is a missing file, which is not read either.
    let test = "unused_initializers_are_never_read";
    link_file(
        test,
        t.outside.join("secret.bin"),
        &t.model_dir.join("secret.bin"),
    );
    std::fs::write(t.model_dir.join("w.bin"), [5u8, 0, 9]).unwrap();
    let mut unused = Vec::new();
    for i in 0..50 {
        unused.push(external(&format!("pipe{i}"), 1 << 20, pipe, 0));
        unused.push(external(&format!("huge{i}"), 1 << 40, "huge.bin", 0));
        unused.push(external(
            &format!("secret{i}"),
            secret_len(),
            "secret.bin",
            0,
        ));
        unused.push(external(&format!("missing{i}"), 4, "missing.bin", 0));
    }
    let m = sign_of_each(vec![external("w", 3, "w.bin", 0)], unused);
    let dir = t.model_dir.clone();
    let model = within("loading a model with unused initializers", move || {
        load_in(&dir, &m).unwrap()
    });
    assert_eq!(model.data_files(), [t.model_dir.join("w.bin")]);
    let outputs = model.run(Vec::<(String, Tensor)>::new()).unwrap();
    assert_eq!(outputs.len(), 1);
    assert_eq!(outputs[0].1.data, [1, 0, 1]);
}

#[test]
fn graph_outputs_and_defaults_of_inputs_that_are_read_are_read() {
    let t = tree();
    std::fs::write(t.model_dir.join("x.bin"), [0u8, 3, 250]).unwrap();
    std::fs::write(t.model_dir.join("z.bin"), [42u8, 43]).unwrap();
    let mut g = graph(
        vec![node("Sign", "x", "y")],
        vec![value("x", INT8, None), value("unread", UINT8, None)],
        vec![value("y", INT8, None), value("z", UINT8, None)],
    );
    let mut x = external("x", 3, "x.bin", 0);
    x.data_type = INT8;
    g.initializer = vec![
        external("unused", 4, "missing.bin", 0),
        x,
        external("z", 2, "z.bin", 0),
        external("unread", 4, "missing.bin", 0),
    ];
    let model = load_in(&t.model_dir, &model(13, g)).unwrap();
    assert_eq!(
        model.data_files(),
        [t.model_dir.join("x.bin"), t.model_dir.join("z.bin")]
    );
    let outputs = model.run(Vec::<(String, Tensor)>::new()).unwrap();
    assert_eq!(outputs[0].1.values::<i8>().unwrap(), [0, 1, -1]);
    assert_eq!(outputs[1].1.data, [42, 43]);
}

#[test]
fn data_files_lists_each_file_once_in_first_use_order() {
    let t = tree();
    std::fs::write(t.model_dir.join("a.bin"), [1u8; 8]).unwrap();
    std::fs::create_dir(t.model_dir.join("sub")).unwrap();
    std::fs::write(t.model_dir.join("sub/b.bin"), [2u8; 8]).unwrap();
    let m = sign_of_each(
        vec![
            external("p", 4, "sub/b.bin", 0),
            external("q", 4, "a.bin", 0),
            external("r", 4, "./sub/./b.bin", 4),
            external("s", 4, "a.bin", 4),
        ],
        vec![],
    );
    let model = load_in(&t.model_dir, &m).unwrap();
    assert_eq!(
        model.data_files(),
        [t.model_dir.join("sub/b.bin"), t.model_dir.join("a.bin")]
    );
}

#[test]
#[cfg(target_os = "linux")]
fn one_byte_range_named_by_many_initializers_is_read_once() {
    limited(
        "one_byte_range_named_by_many_initializers_is_read_once",
        GIB,
        || {
            const LEN: u64 = 32 << 20;
            let t = tree();
            std::fs::write(t.model_dir.join("w.bin"), vec![3u8; LEN as usize]).unwrap();
            let used: Vec<TensorProto> = (0..40)
                .map(|i| external(&format!("w{i}"), LEN, "w.bin", 0))
                .collect();
            let model = load_in(&t.model_dir, &sign_of_each(used, vec![])).unwrap();
            assert_eq!(model.data_files(), [t.model_dir.join("w.bin")]);
        },
    );
}

/// Writes `m` as `dir/model.onnx` and loads it with its external data left in its files
/// ([`ExternalData::Deferred`]), as `ewise run` does.
fn load_deferred(dir: &Path, m: &ModelProto) -> ewise_onnx::Result<Model> {
    let path = dir.join("model.onnx");
    std::fs::write(&path, m.encode_to_vec()).unwrap();
    Model::load_with(path, ExternalData::Deferred)
}

/// Elements `[start, start + len)` of source `s`, read as `ewise run` reads a source
/// the model holds.
fn read_source(streaming: &Streaming, s: usize, start: usize, len: usize) -> Vec<u8> {
    let mut out = vec![0xA5; len];
    streaming.read_initializer(s, start, &mut out).unwrap();
    out
}

#[test]
fn a_deferred_load_refuses_what_a_reading_load_refuses_with_the_same_error() {
    let t = tree();
    let test = "a_deferred_load_refuses_what_a_reading_load_refuses_with_the_same_error";
    let mut claims = Vec::new();
    if link_file(
        test,
        t.outside.join("secret.bin"),
        &t.model_dir.join("link.bin"),
    ) {
        claims.push(external("w", secret_len(), "link.bin", 0));
    }
    for (i, how) in DIR_LINKS.iter().enumerate() {
        let name = format!("linked{i}");
        if link(test, how, &t.outside, &t.model_dir.join(&name)) {
            claims.push(external(
                "w",
                secret_len(),
                &format!("{name}/secret.bin"),
                0,
            ));
        }
    }
    #[cfg(unix)]
    {
        make_fifo(&t.model_dir.join("pipe"));
        claims.push(external("w", 4, "pipe", 0));
    }
    #[cfg(windows)]
    for location in [
        "NUL",
        "CON",
        "COM1",
        "sub/NUL",
        "NUL.txt",
        r"C:\x",
        "C:x",
        r"\\server\share\x",
        r"\\?\C:\x",
        r"\\.\pipe\x",
        r"a\..\..\x",
    ] {
        claims.push(external("w", 4, location, 0));
    }
    std::fs::write(t.model_dir.join("w.bin"), [1u8; 16]).unwrap();
    let absolute = t.outside.join("secret.bin");
    let mut lying = external("w", 8, "w.bin", 0);
    lying.external_data.push(entry("length", "9"));
    claims.extend([
        external("w", 4, absolute.to_str().unwrap(), 0),
        external("w", 4, "../outside/secret.bin", 0),
        external("w", 4, "missing.bin", 0),
        external("w", 16, "w.bin", 1),
        external("w", 1, "w.bin", u64::MAX),
        lying,
    ]);
    for claim in claims {
        let m = sign_of_each(vec![claim.clone()], vec![]);
        let what = format!("loading a hostile model both ways ({claim:?})");
        let err = both_loads_fail(&what, &t.model_dir, m).to_string();
        assert!(!err.contains(std::str::from_utf8(SECRET).unwrap()));
    }
}

#[test]
#[cfg(target_os = "linux")]
fn a_deferred_load_streams_a_sparse_1_tib_claim_under_a_1_gib_limit() {
    use std::os::unix::fs::FileExt;
    limited(
        "a_deferred_load_streams_a_sparse_1_tib_claim_under_a_1_gib_limit",
        GIB,
        || {
            const TIB: u64 = 1 << 40;
            let t = tree();
            let file = std::fs::File::create(t.model_dir.join("huge.bin")).unwrap();
            file.set_len(TIB).unwrap();
            file.write_all_at(&[5, 0, 250], 0).unwrap();
            file.write_all_at(&[0, 77, 1], TIB - 3).unwrap();
            drop(file);
            let m = sign_of_each(vec![external("w", TIB, "huge.bin", 0)], vec![]);
            let model = load_deferred(&t.model_dir, &m).unwrap();
            assert_eq!(model.data_files(), [t.model_dir.join("huge.bin")]);
            let streaming = model.streaming(&[]).unwrap();
            assert_eq!(streaming.sources()[0].kind, SourceKind::Initializer);
            assert_eq!(streaming.sources()[0].elements as u64, TIB);
            assert_eq!(streaming.initializer_bytes(0), None);
            let mut scratch = Scratch::new();
            for (start, bytes, signs) in [
                (0, [5, 0, 250], [1, 0, 1]),
                (TIB - 3, [0, 77, 1], [0, 1, 1]),
            ] {
                let chunk = read_source(&streaming, 0, start as usize, 3);
                assert_eq!(chunk, bytes);
                let mut y = [0xA5u8; 3];
                streaming
                    .run_chunk(0, &chunk, &mut [&mut y], &mut scratch)
                    .unwrap();
                assert_eq!(y, signs);
            }
            let err = model.run(Vec::<(String, Tensor)>::new()).unwrap_err();
            assert_eq!(
                err.to_string(),
                "cannot allocate 1099511627776 bytes for the external data of tensor \"w\" \
                 (location \"huge.bin\", offset 0) (out of memory)"
            );
        },
    );
}

#[test]
fn a_deferred_model_reads_the_file_it_opened_never_the_path_again() {
    let t = tree();
    std::fs::write(t.model_dir.join("w.bin"), [9u8, 0, 7, 0]).unwrap();
    let m = sign_of_each(vec![external("w", 4, "w.bin", 0)], vec![]);
    let model = load_deferred(&t.model_dir, &m).unwrap();
    std::fs::rename(t.model_dir.join("w.bin"), t.outside.join("moved.bin")).unwrap();
    let test = "a_deferred_model_reads_the_file_it_opened_never_the_path_again";
    let w = t.model_dir.join("w.bin");
    if !link_file(test, t.outside.join("secret.bin"), &w) {
        // Then a regular file of other bytes in its place, which must not be read either.
        std::fs::write(&w, SECRET).unwrap();
    }
    let streaming = model.streaming(&[]).unwrap();
    assert_eq!(read_source(&streaming, 0, 0, 4), [9, 0, 7, 0]);
    let y = model.run(Vec::<(String, Tensor)>::new()).unwrap();
    assert_eq!(y[0].1.data, [1, 0, 1, 0]);
}

#[test]
fn a_data_file_shrunk_after_a_deferred_load_is_a_typed_error() {
    let t = tree();
    let bytes: Vec<u8> = (0..64).collect();
    std::fs::write(t.model_dir.join("w.bin"), &bytes).unwrap();
    let m = sign_of_each(vec![external("w", 32, "w.bin", 16)], vec![]);
    let model = load_deferred(&t.model_dir, &m).unwrap();
    let streaming = model.streaming(&[]).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(t.model_dir.join("w.bin"))
        .unwrap()
        .set_len(40)
        .unwrap();
    assert_eq!(read_source(&streaming, 0, 0, 24), bytes[16..40]);
    let mut rest = [0u8; 8];
    let err = streaming.read_initializer(0, 24, &mut rest).unwrap_err();
    assert!(
        matches!(
            &err,
            Error::ExternalDataTruncated { tensor, location, offset: 16, len: 32, size: 40 }
                if tensor == "w" && location == "w.bin"
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "external data location \"w.bin\" of tensor \"w\" shrank after the model was loaded: \
         the tensor needs bytes 16 to 48 of the file (32 bytes), but it now holds 40 bytes"
    );
    let err = model.run(Vec::<(String, Tensor)>::new()).unwrap_err();
    assert!(
        matches!(err, Error::ExternalDataTruncated { size: 40, .. }),
        "{err}"
    );
}

/// How many data files [`one_file_per_tensor`] writes: far more than a process may
/// hold open under the limit of [`hundreds_of_data_files_load_and_run_under_a_64_file_limit`].
const MANY_FILES: usize = 300;

/// The bytes of initializer `w<i>` of [`one_file_per_tensor`].
fn many_bytes(i: usize) -> [u8; 3] {
    [(i % 256) as u8, 0, 200]
}

/// Sign of each of [`MANY_FILES`] uint8 initializers `w<i>`, each in a file of its own,
/// `w<i>.bin` (as ONNX's `save_as_external_data(all_tensors_to_one_file=False)` stores
/// tensors), written into `dir`.
fn one_file_per_tensor(dir: &Path) -> ModelProto {
    let used = (0..MANY_FILES)
        .map(|i| {
            let location = format!("w{i}.bin");
            std::fs::write(dir.join(&location), many_bytes(i)).unwrap();
            external(&format!("w{i}"), 3, &location, 0)
        })
        .collect();
    sign_of_each(used, vec![])
}

#[test]
#[cfg(unix)]
fn hundreds_of_data_files_load_and_run_under_a_64_file_limit() {
    let name = "hundreds_of_data_files_load_and_run_under_a_64_file_limit";
    if !is_child(name) {
        return run_child(name, None);
    }
    let limit = rustix::process::Rlimit {
        current: Some(64),
        maximum: Some(64),
    };
    rustix::process::setrlimit(rustix::process::Resource::Nofile, limit).unwrap();
    let t = tree();
    let m = one_file_per_tensor(&t.model_dir);
    let read = load_in(&t.model_dir, &m).unwrap();
    let deferred = load_deferred(&t.model_dir, &m).unwrap();
    assert_eq!(deferred.data_files().len(), MANY_FILES);
    let none = || Vec::<(String, Tensor)>::new();
    let y = deferred.run(none()).unwrap();
    assert_eq!(y, read.run(none()).unwrap());
    for (i, (name, tensor)) in y.iter().enumerate() {
        assert_eq!(*name, format!("y_w{i}"));
        assert_eq!(tensor.data, [u8::from(i % 256 != 0), 0, 1], "{name}");
    }
    let streaming = deferred.streaming(&[]).unwrap();
    for _ in 0..2 {
        for (s, source) in streaming.sources().iter().enumerate() {
            let i: usize = source.name[1..].parse().unwrap();
            assert_eq!(read_source(&streaming, s, 0, 3), many_bytes(i));
        }
    }
}

#[test]
fn a_data_file_replaced_after_its_handle_was_closed_is_refused() {
    let t = tree();
    let m = one_file_per_tensor(&t.model_dir);
    let model = load_deferred(&t.model_dir, &m).unwrap();
    // w0 and w1 were opened first of 300 files; the load has closed their handles since.
    let replacement = t.model_dir.join("replacement.bin");
    std::fs::write(&replacement, &SECRET[..3]).unwrap();
    std::fs::rename(&replacement, t.model_dir.join("w1.bin")).unwrap();
    let test = "a_data_file_replaced_after_its_handle_was_closed_is_refused";
    let w0 = t.model_dir.join("w0.bin");
    std::fs::remove_file(&w0).unwrap();
    let linked = link_file(test, t.outside.join("secret.bin"), &w0);
    if !linked {
        std::fs::write(&w0, many_bytes(0)).unwrap();
    }
    let streaming = model.streaming(&[]).unwrap();
    let source = |name: &str| {
        streaming
            .sources()
            .iter()
            .position(|s| s.name == name)
            .unwrap()
    };
    let mut out = [0xA5u8; 3];
    let err = streaming
        .read_initializer(source("w1"), 0, &mut out)
        .unwrap_err();
    assert!(
        matches!(&err, Error::ExternalDataRefused { tensor, location, reason: Refusal::Changed }
            if tensor == "w1" && location == "w1.bin"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "external data location \"w1.bin\" of tensor \"w1\" is no longer the file the model \
         was loaded with (it was replaced, resized or modified since); ewise reads only regular \
         files inside the model's directory"
    );
    if linked {
        let err = streaming
            .read_initializer(source("w0"), 0, &mut out)
            .unwrap_err();
        assert!(
            matches!(
                &err,
                Error::ExternalDataRefused {
                    reason: Refusal::SymbolicLink,
                    ..
                }
            ),
            "{err:?}"
        );
    }
    assert_eq!(out, [0xA5; 3], "nothing was read");
    assert_eq!(read_source(&streaming, source("w2"), 0, 3), many_bytes(2));
    let err = model.run(Vec::<(String, Tensor)>::new()).unwrap_err();
    assert!(matches!(err, Error::ExternalDataRefused { .. }), "{err}");
}

/// float32 `x` (a graph input whose default is external) and `w` (an initializer
/// stored twice, as `w` and `v`, in one range of one file, also a graph output): `y =
/// Sign(x)`, `z = IsInf(Sign(w))`, `u = Sign(v)`, and `w` itself.
fn mixed_model(dir: &Path, n: usize) -> ModelProto {
    let data: Vec<u8> = (0..2 * n as u32)
        .flat_map(|i| {
            match i % 5 {
                0 => f32::INFINITY,
                1 => -0.0,
                2 => f32::NAN,
                _ => i as f32 - n as f32,
            }
            .to_le_bytes()
        })
        .collect();
    std::fs::write(dir.join("data.bin"), data).unwrap();
    let float = |name: &str, offset: u64| {
        let mut t = external(name, 4 * n as u64, "data.bin", offset);
        t.data_type = FLOAT;
        t.dims = vec![n as i64];
        t
    };
    let mut g = graph(
        vec![
            node("Sign", "x", "y"),
            node("Sign", "w", "s"),
            node("IsInf", "s", "z"),
            node("Sign", "v", "u"),
        ],
        vec![value("x", FLOAT, None)],
        vec![
            value("y", FLOAT, None),
            value("z", BOOL, None),
            value("u", FLOAT, None),
            value("w", FLOAT, None),
        ],
    );
    g.initializer = vec![
        float("x", 0),
        float("w", 4 * n as u64),
        float("v", 4 * n as u64),
    ];
    model(20, g)
}

#[test]
fn a_deferred_model_runs_and_streams_as_a_reading_one() {
    let t = tree();
    let n = 1000;
    let m = mixed_model(&t.model_dir, n);
    let read = load_in(&t.model_dir, &m).unwrap();
    let deferred = load_deferred(&t.model_dir, &m).unwrap();
    assert_eq!(read.data_files(), deferred.data_files());
    let none = || Vec::<(String, Tensor)>::new();
    let whole = read.run_with_stats(none()).unwrap();
    assert_eq!(deferred.run_with_stats(none()).unwrap(), whole);
    let x = Tensor::from_values(vec![3], &[-2.0f32, 0.0, 5.0]).unwrap();
    assert_eq!(
        deferred.run([("x", x.clone())]).unwrap(),
        read.run([("x", x)]).unwrap()
    );

    let read = read.streaming(&[]).unwrap();
    let plan = deferred.streaming(&[]).unwrap();
    assert_eq!(plan.sources(), read.sources());
    let mut scratch = Scratch::new();
    for (s, source) in plan.sources().iter().enumerate() {
        assert_ne!(source.kind, SourceKind::Input);
        assert_eq!(plan.initializer_bytes(s), None);
        let held = read.initializer_bytes(s).unwrap();
        let mut outputs: Vec<Vec<u8>> = plan.outputs_of(s).iter().map(|_| Vec::new()).collect();
        for start in (0..n).step_by(7) {
            let len = 7.min(n - start);
            let chunk = read_source(&plan, s, start, 4 * len);
            assert_eq!(chunk, held[4 * start..4 * (start + len)]);
            let mut slices: Vec<Vec<u8>> = plan
                .outputs_of(s)
                .iter()
                .map(|&o| {
                    vec![0; len * plan.outputs()[o].data_type.size_in_bytes().unwrap() as usize]
                })
                .collect();
            let mut refs: Vec<&mut [u8]> = slices.iter_mut().map(Vec::as_mut_slice).collect();
            plan.run_chunk(s, &chunk, &mut refs, &mut scratch).unwrap();
            for (all, part) in outputs.iter_mut().zip(&slices) {
                all.extend_from_slice(part);
            }
        }
        for (&o, bytes) in plan.outputs_of(s).iter().zip(&outputs) {
            assert_eq!(*bytes, whole.0[o].1.data, "output {o}");
        }
    }
}

#[test]
fn read_initializer_refuses_what_is_not_model_data_within_the_source() {
    let t = tree();
    let m = mixed_model(&t.model_dir, 10);
    let model = load_deferred(&t.model_dir, &m).unwrap();
    let x = [("x", DataType::Float32, &[4usize][..])];
    let plan = model.streaming(&x).unwrap();
    let chunk = |s: usize, start: usize, len: usize| {
        let mut out = vec![0u8; len];
        match plan.read_initializer(s, start, &mut out) {
            Err(Error::InvalidChunk { reason }) => reason,
            other => panic!("expected an invalid chunk, got {other:?}"),
        }
    };
    assert_eq!(plan.sources()[0].kind, SourceKind::Input);
    assert!(chunk(0, 0, 4).contains("a graph input the caller gives"));
    assert!(chunk(9, 0, 4).contains("out of range"));
    assert!(chunk(1, 0, 6).contains("not whole float elements"));
    assert!(chunk(1, 8, 12).contains("within its 10 elements"));
    assert!(chunk(1, usize::MAX, 4).contains("within its 10 elements"));
    let mut last = [0u8; 8];
    plan.read_initializer(1, 8, &mut last).unwrap();
}
