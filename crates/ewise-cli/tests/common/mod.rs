//! Helpers shared by the integration tests: running the binary, writing and reading
//! `.npy` files, and test data with the values that matter.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ewise_cli::npy::Header;
use ewise_cpu::reference::{is_infinity_bits, sign_bits};
use ewise_cpu::{DataType, InfinityMode, NanPolicy};

// Re-exported so that `use common::*` brings them in; a test binary that uses none of
// them would otherwise warn.
mod models;
#[allow(unused_imports)]
pub use models::*;

mod process;
#[allow(unused_imports)]
pub use process::*;

#[cfg(windows)]
mod console;
#[cfg(windows)]
#[allow(unused_imports)]
pub use console::*;

/// Environment variable naming a command line that runs the `ewise` binary for the
/// tests, e.g. `qemu-aarch64 -L /usr/aarch64-linux-gnu` when it is cross-compiled
/// (`scripts/cross-check.sh`): without binfmt_misc an emulated test cannot execute
/// another foreign binary itself.
pub const RUNNER_ENV: &str = "EWISE_CLI_RUNNER";

/// The `ewise` binary as a command to which arguments can be added, through the
/// [`RUNNER_ENV`] command when that is set.
pub fn ewise_command() -> Command {
    let binary = env!("CARGO_BIN_EXE_ewise");
    let runner = std::env::var(RUNNER_ENV).unwrap_or_default();
    let mut words = runner.split_whitespace();
    match words.next() {
        Some(program) => {
            let mut c = Command::new(program);
            c.args(words).arg(binary);
            c
        }
        None => Command::new(binary),
    }
}

/// Runs `ewise` with these arguments.
pub fn ewise<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    use std::process::Stdio;
    let mut command = ewise_command();
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    start(&mut command)
        .wait_with_output()
        .expect("the ewise binary runs")
}

/// Starts `command`, trying again (up to 5 times) where wine's `CreateProcess` fails
/// with `ERROR_INTERNAL_ERROR` (1359), as it now and then does while many processes
/// start at once: nothing started, so another try is safe. Any other failure panics.
pub fn start(command: &mut Command) -> std::process::Child {
    const WINE_INTERNAL_ERROR: i32 = 1359;
    let mut tries = 0;
    loop {
        match command.spawn() {
            Ok(child) => return child,
            Err(e)
                if cfg!(windows) && e.raw_os_error() == Some(WINE_INTERNAL_ERROR) && tries < 5 =>
            {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(50 * tries));
            }
            Err(e) => panic!("{command:?} does not start: {e}"),
        }
    }
}

/// Standard error as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts a run succeeded, showing its stderr if not.
pub fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "ewise failed ({}): {}",
        out.status,
        stderr(out)
    );
}

/// Asserts a run failed cleanly: exit code 1, one line on stderr that starts with
/// `ewise: error:` and contains every fragment, and no panic.
pub fn assert_error(out: &Output, fragments: &[&str]) -> String {
    let err = stderr(out);
    assert_error_exit(out.status, 1, &err, fragments);
    err
}

/// Asserts a run ended with exit code `code` (1 for an error, 2 for a usage error),
/// `err` being its standard error: one line that starts with `ewise: error:` and
/// contains every fragment, and no panic.
pub fn assert_error_exit(
    status: std::process::ExitStatus,
    code: i32,
    err: &str,
    fragments: &[&str],
) {
    assert_eq!(
        status.code(),
        Some(code),
        "expected exit {code}, got {status}, stderr: {err}"
    );
    assert!(err.starts_with("ewise: error: "), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for f in fragments {
        assert!(err.contains(f), "missing {f:?} in: {err}");
    }
}

/// A fresh temporary directory.
pub fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temporary directory")
}

/// Writes a `.npy` file with this header and raw data.
pub fn write_npy(path: &Path, descr: &str, fortran_order: bool, shape: &[u64], data: &[u8]) {
    let header = Header {
        descr: descr.to_string(),
        fortran_order,
        shape: shape.to_vec(),
    };
    let mut bytes = header.to_bytes();
    bytes.extend_from_slice(data);
    std::fs::write(path, bytes).expect("write test input");
}

/// Reads a `.npy` file: its header and its data bytes.
pub fn read_npy(path: &Path) -> (Header, Vec<u8>) {
    let bytes = std::fs::read(path).expect("read output");
    let parsed = Header::parse(&bytes).expect("output header parses");
    (parsed.header, bytes[parsed.data_offset as usize..].to_vec())
}

/// Every file name in a directory.
pub fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("list directory")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `dir/name` as a path.
pub fn path(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

/// Deterministic pseudo-random numbers (SplitMix64).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Bits per element.
pub fn bits_of(t: DataType) -> u32 {
    t.size_in_bytes().expect("sized type") as u32 * 8
}

/// Element bit patterns worth testing for `t`: zeros of both signs, ±1, extremes,
/// infinities, subnormals and NaNs for floats, then `random` pseudo-random patterns.
pub fn patterns(t: DataType, random: usize, seed: u64) -> Vec<u64> {
    let bits = bits_of(t);
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let top = 1u64 << (bits - 1);
    let mut v: Vec<u64> = vec![0, 1, 2, top, top | 1, mask, mask - 1, top - 1];
    if t.is_float() {
        let man = match t {
            DataType::Float32 => 23,
            DataType::Float64 => 52,
            DataType::Float16 => 10,
            DataType::Bfloat16 => 7,
            DataType::Float8E4M3Fn | DataType::Float8E4M3Fnuz => 3,
            _ => 2,
        };
        let inf = (top - 1) & !((1u64 << man) - 1);
        let quiet = 1u64 << (man - 1);
        v.extend([
            inf,
            top | inf,
            inf | quiet,
            top | inf | quiet,
            inf | 1,
            inf - 1,
            top | (inf - 1),
        ]);
    }
    let mut rng = Rng(seed);
    v.extend((0..random).map(|_| rng.next() & mask));
    v
}

/// Little-endian bytes of these patterns, `size` bytes each.
pub fn to_le(patterns: &[u64], size: usize) -> Vec<u8> {
    patterns
        .iter()
        .flat_map(|p| p.to_le_bytes().into_iter().take(size))
        .collect()
}

/// Patterns back from little-endian bytes.
pub fn from_le(bytes: &[u8], size: usize) -> Vec<u64> {
    bytes
        .chunks_exact(size)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..size].copy_from_slice(c);
            u64::from_le_bytes(b)
        })
        .collect()
}

/// The reference SIGN of each pattern.
pub fn expected_sign(t: DataType, input: &[u64], policy: NanPolicy) -> Vec<u64> {
    input
        .iter()
        .map(|&b| sign_bits(t, b, policy).expect("SIGN defined for the type"))
        .collect()
}

/// The reference IS_INFINITY of each pattern, as 0 or 1.
pub fn expected_is_infinity(t: DataType, input: &[u64], mode: InfinityMode) -> Vec<u64> {
    input
        .iter()
        .map(|&b| {
            u64::from(is_infinity_bits(t, b, mode).expect("IS_INFINITY defined for the type"))
        })
        .collect()
}

/// Whether `--device gpu` has an adapter (as `ewise devices` chooses it); says why not,
/// or fails when one is required.
pub fn gpu() -> bool {
    let out = ewise(["devices", "--json"]);
    assert_ok(&out);
    let json = String::from_utf8_lossy(&out.stdout);
    if json.contains("\"chosen\": true") {
        return true;
    }
    ewise_testkit::skip_without_gpu(format!(
        "`ewise devices` finds no GPU adapter for --device gpu: {json}"
    ));
    false
}

/// Runs `command` (standard input empty, output captured); kills it and returns `None`
/// if it has not finished within `limit`.
pub fn output_within(mut command: Command, limit: std::time::Duration) -> Option<Output> {
    use std::process::Stdio;
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    wait_within(start(&mut command), limit)
}

/// Waits for `child` and returns its output, reading its piped standard output and
/// error as it runs (so a full pipe cannot stall it); kills it and returns `None` if it
/// has not finished within `limit`.
pub fn wait_within(mut child: std::process::Child, limit: std::time::Duration) -> Option<Output> {
    fn read_all(
        stream: Option<impl std::io::Read + Send + 'static>,
    ) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut stream) = stream {
                let _ = stream.read_to_end(&mut bytes);
            }
            bytes
        })
    }
    let stdout = read_all(child.stdout.take());
    let stderr = read_all(child.stderr.take());
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the command") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    Some(Output {
        status,
        stdout: stdout.join().expect("stdout reader"),
        stderr: stderr.join().expect("stderr reader"),
    })
}

/// `ewise` with these arguments, as [`output_within`] runs it.
pub fn ewise_within<I, S>(args: I, limit: std::time::Duration) -> Option<Output>
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let mut command = ewise_command();
    command.args(args);
    output_within(command, limit)
}

/// Whether the tests run as the superuser.
pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Makes a named pipe at `path`.
pub fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo {}", path.display());
}

/// The user id [`as_other_user`] runs as (`nobody`).
pub const OTHER_UID: u32 = 65534;

/// A command that runs the `ewise` binary as user and group [`OTHER_UID`], for tests
/// of what an ordinary user may do; `None`, saying why, unless the tests run as root
/// with `setpriv` and without a runner, and that user can execute the binary.
pub fn as_other_user() -> Option<Command> {
    if !is_root() {
        eprintln!("skipping: needs root to run ewise as another user");
        return None;
    }
    if std::env::var(RUNNER_ENV).is_ok_and(|r| !r.trim().is_empty()) {
        eprintln!("skipping: {RUNNER_ENV} is set");
        return None;
    }
    let command = || {
        let mut c = Command::new("setpriv");
        c.args([
            format!("--reuid={OTHER_UID}"),
            format!("--regid={OTHER_UID}"),
            "--clear-groups".to_string(),
        ])
        .arg(env!("CARGO_BIN_EXE_ewise"));
        c
    };
    let works = command()
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !works {
        eprintln!("skipping: `setpriv` cannot run ewise as user {OTHER_UID}");
        return None;
    }
    Some(command())
}

/// Sets a file's permission bits.
#[cfg(unix)]
pub fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// A file's permission bits, setuid, setgid and sticky included.
#[cfg(unix)]
pub fn mode_of(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .expect("metadata")
        .permissions()
        .mode()
        & 0o7777
}

/// Whether `chattr` can set and clear the immutable flag on a scratch file in `dir`.
pub fn chattr_works(dir: &Path) -> bool {
    let probe = dir.join(".chattr-probe");
    std::fs::write(&probe, b"").expect("write probe");
    let set = Command::new("chattr")
        .arg("+i")
        .arg(&probe)
        .status()
        .is_ok_and(|s| s.success());
    let cleared = Command::new("chattr")
        .arg("-i")
        .arg(&probe)
        .status()
        .is_ok_and(|s| s.success());
    let _ = std::fs::remove_file(&probe);
    if !(set && cleared) {
        eprintln!(
            "skipping: chattr +i does not work here (needs root and a file system with the flag)"
        );
    }
    set && cleared
}

/// A file or directory made immutable with `chattr +i`, made mutable again on drop.
pub struct Immutable(pub PathBuf);

impl Immutable {
    /// Makes `path` immutable.
    pub fn set(path: &Path) -> Immutable {
        let ok = Command::new("chattr")
            .arg("+i")
            .arg(path)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "chattr +i {}", path.display());
        Immutable(path.to_path_buf())
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").arg(&self.0).status();
    }
}

/// Whether `strace` can trace a command here; says why not.
pub fn strace_works() -> bool {
    let works = Command::new("strace")
        .args(["-f", "-o", "/dev/null", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !works {
        eprintln!("skipping: strace is not installed or cannot trace here");
    }
    works
}

/// The `.npy` header of a little-endian float32 vector of `n` elements.
pub fn f32_header(n: u64) -> Vec<u8> {
    Header {
        descr: "<f4".into(),
        fortran_order: false,
        shape: vec![n],
    }
    .to_bytes()
}

/// The `.npy` bytes of a little-endian float32 vector.
pub fn f32_npy_bytes(values: &[f32]) -> Vec<u8> {
    let mut bytes = f32_header(values.len() as u64);
    bytes.extend(values.iter().flat_map(|v| v.to_le_bytes()));
    bytes
}

/// `ewise ARGS` with its address space limited to about 1 GB (`ulimit -v`), through
/// `sh`, which `exec`s it (so the process started is `ewise` itself).
fn limited_command(args: &[&str]) -> Command {
    let ewise = ewise_command();
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg("ulimit -v 1000000 && exec \"$@\"")
        .arg("sh")
        .arg(ewise.get_program())
        .args(ewise.get_args())
        .args(args)
        .stdin(std::process::Stdio::null());
    command
}

/// Runs `ewise ARGS` with its address space limited to about 1 GB (`ulimit -v`).
pub fn under_a_memory_limit(args: &[&str]) -> Output {
    limited_command(args).output().expect("sh runs")
}

/// Starts `ewise ARGS` with its address space limited to about 1 GB (`ulimit -v`) and
/// standard output and error piped; the child's id is `ewise`'s.
pub fn spawn_under_a_memory_limit(args: &[&str]) -> std::process::Child {
    limited_command(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("sh runs")
}

/// The bits of float32 element `i` of a test input: special values (infinities, zeros,
/// NaNs with payloads, subnormals, extremes), then a spread of ordinary ones over every
/// bit pattern, so that every chunk boundary falls on different values.
pub fn float32_pattern(i: usize) -> u32 {
    const SPECIAL: [u32; 9] = [
        0xFF80_0000, // -inf
        0x7F80_0000, // +inf
        0x8000_0000, // -0
        0x0000_0000, // +0
        0x7FC0_0001, // NaN with a payload
        0xFFC0_0000, // negative NaN
        0x0000_0001, // smallest subnormal
        0x8080_0000, // -smallest normal
        0x7F7F_FFFF, // largest finite
    ];
    match i % 13 {
        k if k < SPECIAL.len() => SPECIAL[k],
        _ => (i as u32).wrapping_mul(0x9E37_79B9),
    }
}
