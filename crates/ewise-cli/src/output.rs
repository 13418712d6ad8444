//! Output files: where an output really goes, the checks made before any data is read,
//! and the commit that makes finished outputs appear, all of a set or none.
//!
//! # Where an output goes ([`Target::resolve`])
//!
//! - A symbolic link is followed, a chain of them too (relative links from the link's
//!   own directory, at most 40): its final target is what is written, and the links
//!   stay. A dangling link gets its target created, as `cp` does; a target whose
//!   directory does not exist is refused.
//! - OUT ending in a path separator (`o.npy/`), OUT whose directory does not exist or is
//!   not a directory, a directory, and a socket are refused, in one line naming OUT.
//! - [`check`] also refuses, before the command reads its input: OUT that is the input
//!   under any spelling or link, an existing file this process may not write (as
//!   `access(W_OK)` decides with the effective ids: mode bits, ACLs, read-only mounts and
//!   immutable files count; the superuser may replace any file, as with `cp`), and a
//!   directory it may not create files in.
//! - An existing FIFO or device (reached through any links, `/dev/stdout` included) is
//!   written directly, in place. A FIFO is opened without blocking and then switched to
//!   blocking writes; one without a reader is refused ("is a FIFO with no reader")
//!   instead of waiting for one forever.
//!
//! # Temporary files
//!
//! A regular-file output is written to a temporary file in its target's directory, named
//! `.NAME.ewise-PID-RANDOM.tmp`; a NAME too long for that to fit in 255 bytes is cut at
//! a character boundary and followed by `~` and a hash of the whole name. The temporary
//! gets the permission bits of the file it replaces (`mode & 0o777`: never setuid,
//! setgid or sticky, and not reduced by the umask), or `0o666` less the umask for a new
//! file. It is registered with [`crate::interrupt::track`] while it exists, removed if
//! the run fails, and synced and closed once complete ([`Staged`]), so a run holds no
//! file open per output.
//!
//! A run killed outright cannot remove its temporaries. Before creating its own, a
//! command reads each directory it writes to once and removes the temporaries of its
//! output names whose process no longer exists (checked in `/proc`, so only where it
//! exists) and that have not been modified for a minute.
//!
//! # Commit ([`commit_all`])
//!
//! The renames of a set of finished outputs run inside [`crate::interrupt::critical`],
//! so a signal cannot cut them in two. For each output in order, except the last:
//! a copy of the file it replaces is kept under a temporary name in the same directory
//! (a hard link, or where the file system has none, the file itself renamed there);
//! then the temporary is renamed over the target. The last output needs no copy: its
//! rename is the last step. Once every rename succeeded, each directory written to is
//! synced, then the copies are removed; if a sync fails, the error says the outputs are
//! in place but may not survive a crash.
//!
//! If a step fails, the outputs renamed before it are undone, last first: each replaced
//! file is renamed back from its copy and each created file is removed; the directories
//! are synced, and the error names the output that failed and says that every file is
//! as it was. If undoing fails too, the error says, for each such file, where its
//! previous contents are (the copy is then kept). Not covered: a process killed
//! outright (`kill -9`) or a power loss during the commit, which can leave some outputs
//! replaced and the copies of the files they replaced under temporary names (which the
//! next run's clean-up removes a minute later, as above).
//!
//! # Other platforms
//!
//! Without Unix (Windows): "may not write" is the read-only attribute; directories are
//! not synced (the standard library cannot open one; NTFS journals renames); there are
//! no FIFOs, so a device is opened as usual; new files get the system's default
//! permissions. Everything else is as above.

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::fs::{self, File, Metadata, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, Result};

use crate::interrupt::{self, Tracked};
use crate::paths::{
    at, check_writable, describe_io, ends_with_separator, same_file, same_path, sync_dir,
};

/// Symbolic links followed from an output path before giving up (Linux's limit).
const MAX_LINKS: usize = 40;

/// Temporary files are `.{stem}{TEMP_MARK}{pid}-{random}{TEMP_SUFFIX}`.
const TEMP_MARK: &str = ".ewise-";
const TEMP_SUFFIX: &str = ".tmp";

/// Characters of the random part of a temporary's name.
const RANDOM_LEN: usize = 6;

/// The longest file name most file systems take, in bytes.
const NAME_MAX: usize = 255;

/// The longest stem that keeps a temporary's name within [`NAME_MAX`]: the leading dot,
/// the mark, a 32-bit process id, the dash, the random part and the suffix take the rest.
const MAX_STEM: usize = NAME_MAX - (1 + TEMP_MARK.len() + 10 + 1 + RANDOM_LEN + TEMP_SUFFIX.len());

/// Temporaries left this long without a write are stale if their process is gone.
const STALE_AFTER: Duration = Duration::from_secs(60);

/// What is at an output's target now.
#[derive(Debug, Clone)]
pub enum Existing {
    /// Nothing: the output creates the file.
    Absent,
    /// A regular file, which the output replaces.
    File(Metadata),
    /// A directory.
    Directory,
    /// A FIFO, a device or a socket.
    Special(Metadata),
}

/// An output path resolved to the file that is really written.
#[derive(Debug, Clone)]
pub struct Target {
    given: PathBuf,
    path: PathBuf,
    existing: Existing,
}

impl Target {
    /// Resolves `given`: follows symbolic links to the final target, and refuses a path
    /// ending in a separator and a target whose directory does not exist or is not a
    /// directory. Errors are one line naming `given`. A path that leads to a FIFO, device
    /// or socket is kept as given, so that links only the kernel can follow
    /// (`/dev/stdout` to a pipe) still lead there.
    pub fn resolve(given: &Path) -> Result<Target> {
        if ends_with_separator(given) {
            return Err(at(
                given,
                "ends with a path separator, so it names a directory; give a file name for the output",
            ));
        }
        if let Ok(meta) = fs::metadata(given) {
            if !meta.is_file() && !meta.is_dir() {
                return Ok(Target {
                    given: given.to_path_buf(),
                    path: given.to_path_buf(),
                    existing: Existing::Special(meta),
                });
            }
        }
        let mut path = given.to_path_buf();
        for _ in 0..=MAX_LINKS {
            let meta = match fs::symlink_metadata(&path) {
                Ok(meta) => meta,
                Err(e) => {
                    check_directory(given, &path)?;
                    if e.kind() != io::ErrorKind::NotFound {
                        return Err(at(given, describe_io("cannot read metadata", &e)));
                    }
                    if ends_with_separator(&path) || path.file_name().is_none() {
                        return Err(if path == given {
                            at(given, "is not a file name")
                        } else {
                            at(
                                given,
                                format!(
                                    "is a symbolic link to {}, which is not a file name",
                                    path.display()
                                ),
                            )
                        });
                    }
                    return Ok(Target {
                        given: given.to_path_buf(),
                        path,
                        existing: Existing::Absent,
                    });
                }
            };
            if meta.file_type().is_symlink() {
                let link = fs::read_link(&path).map_err(|e| {
                    at(
                        given,
                        describe_io(
                            &format!("cannot read the symbolic link {}", path.display()),
                            &e,
                        ),
                    )
                })?;
                path = match path.parent() {
                    Some(dir) if !dir.as_os_str().is_empty() => dir.join(link),
                    _ => link,
                };
                continue;
            }
            let existing = if meta.is_dir() {
                Existing::Directory
            } else if meta.is_file() {
                Existing::File(meta)
            } else {
                Existing::Special(meta)
            };
            return Ok(Target {
                given: given.to_path_buf(),
                path,
                existing,
            });
        }
        Err(at(
            given,
            format!("more than {MAX_LINKS} levels of symbolic links"),
        ))
    }

    /// A target for `path`, a file in a directory that does not exist yet.
    pub fn absent(path: &Path) -> Target {
        Target {
            given: path.to_path_buf(),
            path: path.to_path_buf(),
            existing: Existing::Absent,
        }
    }

    /// The path as given, which messages name.
    pub fn given(&self) -> &Path {
        &self.given
    }

    /// The file written: the given path with its symbolic links followed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What is at the target now.
    pub fn existing(&self) -> &Existing {
        &self.existing
    }

    /// The directory the target is in, where its temporary file goes.
    pub fn dir(&self) -> PathBuf {
        parent_dir(&self.path)
    }

    /// Refuses an existing file this process may not write (see the module docs).
    pub fn check_replaceable(&self) -> Result<()> {
        if let Existing::File(meta) = &self.existing {
            if let Err(e) = check_writable(&self.path) {
                return Err(at(
                    &self.given,
                    format!(
                        "{}{}; like cp, ewise replaces only files you may write",
                        describe_io("cannot replace it", &e),
                        mode_note(meta)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Refuses a target whose directory this process may not create files in.
    pub fn check_directory_writable(&self) -> Result<()> {
        let dir = self.dir();
        check_writable(&dir).map_err(|e| {
            at(
                &self.given,
                describe_io(&format!("cannot create a file in {}", dir.display()), &e),
            )
        })
    }

    /// Refuses a target that is `input` under any spelling or link.
    fn check_not_input(&self, input: &Path, input_meta: &Metadata) -> Result<()> {
        let same = match &self.existing {
            Existing::File(meta) | Existing::Special(meta) => {
                same_file(meta, input_meta) || same_path(&self.path, input)
            }
            Existing::Absent | Existing::Directory => false,
        };
        if same {
            return Err(anyhow!(
                "{}: is the input file {} (to rewrite a file, use `ewise sign --in-place {}`)",
                self.given.display(),
                input.display(),
                input.display()
            ));
        }
        Ok(())
    }

    /// Refuses a directory or socket as the output of `ewise sign` or `is-infinity`.
    fn check_kind(&self) -> Result<()> {
        match &self.existing {
            Existing::Directory => Err(at(
                &self.given,
                "is a directory; give a file name for the output",
            )),
            Existing::Special(meta) if is_socket(meta) => Err(at(
                &self.given,
                "is a socket; outputs are regular files, FIFOs or devices",
            )),
            _ => Ok(()),
        }
    }
}

/// `, mode 0444` for a file whose permissions explain a refusal (Unix only).
fn mode_note(meta: &Metadata) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        format!(" (mode {:04o})", meta.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        String::new()
    }
}

#[cfg(unix)]
fn is_socket(meta: &Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    meta.file_type().is_socket()
}

#[cfg(not(unix))]
fn is_socket(_meta: &Metadata) -> bool {
    false
}

/// The directory `path` is in (`.` for a bare name).
fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Refuses `path` (resolved from `given`) if its directory does not exist or is not a
/// directory.
fn check_directory(given: &Path, path: &Path) -> Result<()> {
    let dir = parent_dir(path);
    let cannot = if path == given {
        format!("cannot create a file in {}", dir.display())
    } else {
        format!(
            "is a symbolic link to {}, but cannot create a file in {}",
            path.display(),
            dir.display()
        )
    };
    match fs::metadata(&dir) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(at(given, format!("{cannot}: it is not a directory"))),
        Err(e) => Err(at(given, describe_io(&cannot, &e))),
    }
}

/// Checks an output of `ewise sign` or `is-infinity` before anything is read: resolves
/// it and applies every refusal of the module docs, without creating anything.
pub fn check(dest: &Path, input: &Path) -> Result<()> {
    let target = Target::resolve(dest)?;
    target.check_kind()?;
    if let Ok(input_meta) = fs::metadata(input) {
        target.check_not_input(input, &input_meta)?;
    }
    target.check_replaceable()?;
    if matches!(target.existing, Existing::Absent | Existing::File(_)) {
        target.check_directory_writable()?;
    }
    Ok(())
}

/// Where output goes until it is committed.
pub struct Output {
    given: PathBuf,
    sink: Sink,
}

enum Sink {
    /// A temporary file, renamed over the target on commit.
    Temporary {
        file: File,
        temp: Temporary,
        target: Box<Target>,
    },
    /// An existing FIFO or device, written as the data comes.
    Direct(File),
}

impl Output {
    /// Prepares output to `dest` for a run that reads `input`: resolves it, refuses what
    /// the module docs list, removes stale temporaries of its name and creates its
    /// temporary file, or opens an existing FIFO or device.
    pub fn create(dest: &Path, input: &Path) -> Result<Output> {
        let input_meta =
            fs::metadata(input).map_err(|e| at(input, describe_io("cannot read metadata", &e)))?;
        let target = Target::resolve(dest)?;
        target.check_kind()?;
        target.check_not_input(input, &input_meta)?;
        target.check_replaceable()?;
        let sink = match &target.existing {
            Existing::Special(meta) => Sink::Direct(open_direct(dest, target.path(), meta)?),
            _ => {
                remove_stale_temporaries([&target]);
                let (temp, file) = create_temporary(&target)?;
                Sink::Temporary {
                    file,
                    temp,
                    target: Box::new(target),
                }
            }
        };
        Ok(Output {
            given: dest.to_path_buf(),
            sink,
        })
    }

    /// Writes `bytes`, naming the output in any error.
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<()> {
        let file = match &mut self.sink {
            Sink::Temporary { file, .. } | Sink::Direct(file) => file,
        };
        file.write_all(bytes)
            .map_err(|e| at(&self.given, describe_io("write failed", &e)))
    }

    /// Makes the output durable and, for a temporary file, renames it over its target
    /// and syncs the directory. Until the rename, the target is untouched.
    pub fn commit(self) -> Result<()> {
        match self.sink {
            Sink::Temporary { file, temp, target } => {
                commit_all(vec![Staged::finish(file, temp, *target)?])
            }
            Sink::Direct(mut file) => file
                .flush()
                .map_err(|e| at(&self.given, describe_io("write failed", &e))),
        }
    }
}

/// Opens an existing FIFO or device for writing without ever blocking in `open`.
#[cfg(unix)]
fn open_direct(given: &Path, path: &Path, meta: &Metadata) -> Result<File> {
    use rustix::fs::{fcntl_getfl, fcntl_setfl, Mode, OFlags, CWD};
    use std::os::unix::fs::FileTypeExt;
    let fifo = meta.file_type().is_fifo();
    let flags = OFlags::WRONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    let fd = rustix::fs::openat(CWD, path, flags, Mode::empty()).map_err(|e| {
        if fifo && e == rustix::io::Errno::NXIO {
            at(
                given,
                "is a FIFO with no reader; start the program that reads it first",
            )
        } else {
            at(given, describe_io("cannot open for writing", &e.into()))
        }
    })?;
    let file = File::from(fd);
    let opened = file
        .metadata()
        .map_err(|e| at(given, describe_io("cannot read metadata", &e)))?;
    if opened.is_file() || opened.is_dir() {
        return Err(at(
            given,
            "was replaced while being opened; run the command again",
        ));
    }
    fcntl_getfl(&file)
        .and_then(|flags| fcntl_setfl(&file, flags - OFlags::NONBLOCK))
        .map_err(|e| at(given, describe_io("cannot open for writing", &e.into())))?;
    Ok(file)
}

/// Opens an existing device for writing.
#[cfg(not(unix))]
fn open_direct(given: &Path, path: &Path, _meta: &Metadata) -> Result<File> {
    OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| at(given, describe_io("cannot open for writing", &e)))
}

/// A file this process created under a temporary name: registered with
/// [`interrupt::track`], and removed when dropped unless it was renamed away
/// ([`Temporary::renamed`]) or deliberately kept ([`Temporary::keep`]).
#[derive(Debug)]
pub struct Temporary {
    path: PathBuf,
    armed: bool,
    _tracked: Tracked,
}

impl Temporary {
    /// The file no longer exists under this name (it was renamed); forgets it.
    fn renamed(mut self) {
        self.armed = false;
    }

    /// Leaves the file in place and returns its path.
    fn keep(mut self) -> PathBuf {
        self.armed = false;
        std::mem::take(&mut self.path)
    }

    /// Removes the file now, reporting a failure.
    fn remove(mut self) -> io::Result<()> {
        self.armed = false;
        fs::remove_file(&self.path)
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        if self.armed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Creates a new temporary name in `dir` for a file named `name` with `make` (which
/// must fail with `AlreadyExists` when the name is taken), trying other random names
/// while it does.
fn create_unique<R>(
    dir: &Path,
    name: &OsStr,
    mut make: impl FnMut(&Path) -> io::Result<R>,
) -> io::Result<(Temporary, R)> {
    let stem = temp_stem(name);
    for _ in 0..64 {
        let mut file_name = OsString::from(".");
        file_name.push(&stem);
        file_name.push(format!(
            "{TEMP_MARK}{}-{}{TEMP_SUFFIX}",
            std::process::id(),
            random_tag()
        ));
        let path = dir.join(file_name);
        match make(&path) {
            Ok(made) => {
                let tracked = interrupt::track(&path);
                let temp = Temporary {
                    path,
                    armed: true,
                    _tracked: tracked,
                };
                return Ok((temp, made));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "every temporary name tried is taken",
    ))
}

/// The part of a temporary's name that stands for the file name `name`: `name` itself,
/// or when that would make the temporary's name too long, its first bytes (cut at a
/// character boundary) followed by `~` and a 64-bit hash of the whole name.
fn temp_stem(name: &OsStr) -> OsString {
    let bytes = name.as_encoded_bytes();
    if bytes.len() <= MAX_STEM {
        return name.to_os_string();
    }
    let hash = format!("~{:016x}", fnv1a(bytes));
    let mut stem = truncated(name, MAX_STEM - hash.len());
    stem.push(hash);
    stem
}

/// The first at most `max` bytes of `name`, cut at a character boundary when the name
/// is UTF-8 (any byte boundary otherwise: Unix names are bytes).
#[cfg(unix)]
fn truncated(name: &OsStr, max: usize) -> OsString {
    use std::os::unix::ffi::OsStrExt;
    let bytes = name.as_bytes();
    let cut = match std::str::from_utf8(bytes) {
        Ok(text) => char_floor(text, max),
        Err(_) => max.min(bytes.len()),
    };
    OsStr::from_bytes(&bytes[..cut]).to_os_string()
}

/// The first at most `max` bytes of `name`, cut at a character boundary.
#[cfg(not(unix))]
fn truncated(name: &OsStr, max: usize) -> OsString {
    let text = name.to_string_lossy();
    OsString::from(&text[..char_floor(&text, max)])
}

/// The largest character boundary of `text` at or below `max`.
fn char_floor(text: &str, max: usize) -> usize {
    (0..=max.min(text.len()))
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

/// FNV-1a, 64-bit: a hash that stays the same across builds and platforms, so a later
/// run recognises the temporaries of an earlier one.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// [`RANDOM_LEN`] random letters and digits.
fn random_tag() -> String {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    if let Ok(now) = SystemTime::now().duration_since(UNIX_EPOCH) {
        hasher.write_u128(now.as_nanos());
    }
    let mut bits = hasher.finish();
    (0..RANDOM_LEN)
        .map(|_| {
            let c = ALPHABET[(bits % ALPHABET.len() as u64) as usize];
            bits /= ALPHABET.len() as u64;
            char::from(c)
        })
        .collect()
}

/// The stem and process id of a temporary's name, if `name` is one.
fn parse_temp_name(name: &OsStr) -> Option<(&[u8], u32)> {
    let rest = name
        .as_encoded_bytes()
        .strip_prefix(b".")?
        .strip_suffix(TEMP_SUFFIX.as_bytes())?;
    let mark = TEMP_MARK.as_bytes();
    let at = rest.windows(mark.len()).rposition(|w| w == mark)?;
    let (stem, tail) = (&rest[..at], &rest[at + mark.len()..]);
    let dash = tail.iter().position(|&b| b == b'-')?;
    let (pid, random) = (&tail[..dash], &tail[dash + 1..]);
    if random.is_empty() || !random.iter().all(u8::is_ascii_alphanumeric) {
        return None;
    }
    let pid = std::str::from_utf8(pid).ok()?.parse().ok()?;
    Some((stem, pid))
}

/// Removes the temporaries that killed runs left for these targets (see the module
/// docs), reading each directory once however many targets it holds.
pub fn remove_stale_temporaries<'a>(targets: impl IntoIterator<Item = &'a Target>) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let mut stems: HashMap<PathBuf, HashSet<Vec<u8>>> = HashMap::new();
    for target in targets {
        if let Some(name) = target.path.file_name() {
            let stem = temp_stem(name).as_encoded_bytes().to_vec();
            stems.entry(target.dir()).or_default().insert(stem);
        }
    }
    let me = std::process::id();
    for (dir, stems) in &stems {
        let Ok(entries) = fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some((stem, pid)) = parse_temp_name(&name) else {
                continue;
            };
            if pid == me || !stems.contains(stem) {
                continue;
            }
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            let idle = meta
                .modified()
                .ok()
                .and_then(|t| SystemTime::now().duration_since(t).ok())
                .is_some_and(|age| age >= STALE_AFTER);
            let gone = !Path::new(&format!("/proc/{pid}")).exists();
            if meta.is_file() && idle && gone {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
}

/// Creates the temporary file for `target`, with the permissions the module docs give.
fn create_temporary(target: &Target) -> Result<(Temporary, File)> {
    let dir = target.dir();
    let name = target
        .path
        .file_name()
        .ok_or_else(|| at(&target.given, "is not a file name"))?;
    #[cfg(unix)]
    let mode = match &target.existing {
        Existing::File(meta) => Some(permission_bits(meta)),
        _ => None,
    };
    let (temp, file) = create_unique(&dir, name, |path| {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(mode.unwrap_or(0o666));
        }
        options.open(path)
    })
    .map_err(|e| {
        at(
            &target.given,
            describe_io(&format!("cannot create a file in {}", dir.display()), &e),
        )
    })?;
    #[cfg(unix)]
    if let Some(mode) = mode {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(fs::Permissions::from_mode(mode))
            .map_err(|e| {
                at(
                    &target.given,
                    describe_io("cannot set the permissions of the new file", &e),
                )
            })?;
    }
    Ok((temp, file))
}

/// The permission bits a replacement of this file gets: read, write and execute for
/// owner, group and others, never setuid, setgid or sticky. (Elsewhere a new file gets
/// the system's default permissions.)
#[cfg(unix)]
fn permission_bits(meta: &Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o777
}

/// A complete output in its temporary file, synced and closed, waiting for
/// [`commit_all`]. Dropping it removes the temporary.
#[derive(Debug)]
pub struct Staged {
    temp: Temporary,
    target: Target,
    /// The temporary's metadata, to recognise the file once renamed.
    written: Metadata,
}

impl Staged {
    /// Writes `parts` one after the other to a new temporary file for `target`, then
    /// syncs and closes it.
    pub fn write(target: &Target, parts: &[&[u8]]) -> Result<Staged> {
        let (temp, mut file) = create_temporary(target)?;
        for part in parts {
            file.write_all(part)
                .map_err(|e| at(&target.given, describe_io("write failed", &e)))?;
        }
        Staged::finish(file, temp, target.clone())
    }

    fn finish(file: File, temp: Temporary, target: Target) -> Result<Staged> {
        file.sync_all()
            .map_err(|e| at(&target.given, describe_io("write failed", &e)))?;
        let written = file
            .metadata()
            .map_err(|e| at(&target.given, describe_io("cannot read metadata", &e)))?;
        Ok(Staged {
            temp,
            target,
            written,
        })
    }
}

/// What was at a target before its output was renamed there.
enum Prior {
    /// Nothing.
    Absent,
    /// A file, with a hard link to it kept under a temporary name.
    Linked(Temporary),
    /// A file, renamed to a temporary name.
    MovedAside(Temporary),
    /// Not looked at: the last output, whose rename ends the commit.
    Unkept,
}

/// An output renamed into place, and how to undo that.
struct Renamed {
    target: Target,
    prior: Prior,
    written: Metadata,
}

/// Renames finished outputs over their targets, all or none, as the module docs
/// describe; the error names the output that failed and, where undoing failed too,
/// where each file that could not be restored is.
pub fn commit_all(outputs: Vec<Staged>) -> Result<()> {
    let _critical = interrupt::critical();
    let count = outputs.len();
    let mut renamed: Vec<Renamed> = Vec::with_capacity(count);
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut seen_dirs: HashSet<PathBuf> = HashSet::new();
    let mut failure = None;
    let mut problems = Vec::new();
    for (i, staged) in outputs.into_iter().enumerate() {
        let Staged {
            temp,
            target,
            written,
        } = staged;
        let dir = target.dir();
        if seen_dirs.insert(dir.clone()) {
            dirs.push(dir);
        }
        let prior = if i + 1 < count {
            match keep_prior(&target) {
                Ok(prior) => prior,
                Err(e) => {
                    failure = Some(at(
                        &target.given,
                        describe_io("cannot keep a copy of the file it replaces", &e),
                    ));
                    break;
                }
            }
        } else {
            Prior::Unkept
        };
        if let Err(e) = fs::rename(&temp.path, &target.path) {
            failure = Some(at(
                &target.given,
                describe_io("cannot rename the finished output into place", &e),
            ));
            match prior {
                Prior::MovedAside(copy) => {
                    if let Err(problem) = restore(&target, copy) {
                        problems.push(problem);
                    }
                }
                Prior::Linked(copy) => drop(copy),
                Prior::Absent | Prior::Unkept => {}
            }
            break;
        }
        temp.renamed();
        renamed.push(Renamed {
            target,
            prior,
            written,
        });
    }
    let Some(failure) = failure else {
        return finish_commit(renamed, &dirs);
    };
    let undone = renamed.len();
    problems.extend(undo(renamed));
    for dir in &dirs {
        if let Err(e) = sync_dir(dir) {
            problems.push(describe_io(
                &format!("directory {} cannot be synced", dir.display()),
                &e,
            ));
        }
    }
    if !problems.is_empty() {
        return Err(anyhow!(
            "{failure}; restoring the files as they were then failed: {}",
            problems.join("; ")
        ));
    }
    if count == 1 {
        return Err(failure);
    }
    let undone = match undone {
        0 => "no file was changed".to_string(),
        1 => "the output renamed before it was undone, so every file is as it was".to_string(),
        n => format!("the {n} outputs renamed before it were undone, so every file is as it was"),
    };
    Err(anyhow!("{failure}; {undone}"))
}

/// Every rename succeeded: syncs the directories, then removes the copies.
fn finish_commit(renamed: Vec<Renamed>, dirs: &[PathBuf]) -> Result<()> {
    let synced = dirs.iter().try_for_each(|dir| {
        sync_dir(dir).map_err(|e| {
            at(
                dir,
                describe_io(
                    "the outputs are in place, but syncing their directory failed (they may not survive a crash)",
                    &e,
                ),
            )
        })
    });
    for output in renamed {
        if let Prior::Linked(copy) | Prior::MovedAside(copy) = output.prior {
            let path = copy.path.clone();
            if let Err(e) = copy.remove() {
                eprintln!(
                    "ewise: warning: {}: cannot remove the copy of the file {} replaced: {e}",
                    path.display(),
                    output.target.given.display()
                );
            }
        }
    }
    synced
}

/// Keeps what is at `target` before an output replaces it: a hard link to it, or where
/// the file system cannot link, the file itself renamed aside. A directory is left
/// alone (the rename onto it then fails).
fn keep_prior(target: &Target) -> io::Result<Prior> {
    let dir = target.dir();
    let name = target.path.file_name().unwrap_or(OsStr::new("output"));
    let link_error = match create_unique(&dir, name, |copy| fs::hard_link(&target.path, copy)) {
        Ok((copy, ())) => return Ok(Prior::Linked(copy)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Prior::Absent),
        Err(e) => e,
    };
    match fs::symlink_metadata(&target.path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Prior::Absent),
        Ok(meta) if meta.is_dir() => return Ok(Prior::Absent),
        _ => {}
    }
    let (copy, ()) = create_unique(&dir, name, |place| {
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(place)
            .map(drop)
    })?;
    match fs::rename(&target.path, &copy.path) {
        Ok(()) => Ok(Prior::MovedAside(copy)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Prior::Absent),
        Err(e) => Err(io::Error::new(
            e.kind(),
            format!("hard link: {link_error}; rename: {e}"),
        )),
    }
}

/// Puts the file kept in `copy` back at `target`; on failure, keeps the copy and says
/// where it is.
fn restore(target: &Target, copy: Temporary) -> std::result::Result<(), String> {
    match fs::rename(&copy.path, &target.path) {
        Ok(()) => {
            copy.renamed();
            Ok(())
        }
        Err(e) => {
            let kept = copy.keep();
            Err(format!(
                "{} could not be restored ({e}); its previous contents are in {}",
                target.path.display(),
                kept.display()
            ))
        }
    }
}

/// Undoes renamed outputs, last first; returns what could not be undone.
fn undo(renamed: Vec<Renamed>) -> Vec<String> {
    let mut problems = Vec::new();
    for output in renamed.into_iter().rev() {
        match output.prior {
            Prior::Linked(copy) | Prior::MovedAside(copy) => {
                if let Err(problem) = restore(&output.target, copy) {
                    problems.push(problem);
                }
            }
            Prior::Unkept => problems.push(format!(
                "{} holds this run's output; the file it replaced was not kept",
                output.target.path.display()
            )),
            Prior::Absent => {
                let ours = fs::symlink_metadata(&output.target.path)
                    .is_ok_and(|meta| same_file(&meta, &output.written));
                if ours {
                    if let Err(e) = fs::remove_file(&output.target.path) {
                        problems.push(format!(
                            "{} holds this run's output and could not be removed ({e})",
                            output.target.path.display()
                        ));
                    }
                }
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names_fit_and_are_recognised() {
        for len in [1, 100, MAX_STEM, MAX_STEM + 1, 230, 255] {
            let name = OsString::from("é".repeat(len / 2) + &"x".repeat(len % 2));
            let stem = temp_stem(&name);
            let mut file_name = OsString::from(".");
            file_name.push(&stem);
            file_name.push(format!(
                "{TEMP_MARK}{}-{}{TEMP_SUFFIX}",
                u32::MAX,
                random_tag()
            ));
            assert!(file_name.len() <= NAME_MAX, "{len}: {}", file_name.len());
            assert!(stem.to_str().is_some(), "cut at a character boundary");
            let (parsed, pid) = parse_temp_name(&file_name).unwrap();
            assert_eq!(parsed, stem.as_encoded_bytes());
            assert_eq!(pid, u32::MAX);
        }
        let a = temp_stem(OsStr::new(&"a".repeat(250)));
        let b = temp_stem(OsStr::new(&("a".repeat(249) + "b")));
        assert_ne!(a, b, "long names differing at the end get different stems");
    }

    #[test]
    fn other_names_are_not_temporaries() {
        for name in [
            "out.npy",
            ".out.npy.ewise-12-abc.tmp.npy",
            ".out.npy.ewise-x-abc.tmp",
            ".out.npy.ewise-12-.tmp",
            ".out.npy.ewise-12-a/b.tmp",
        ] {
            assert!(parse_temp_name(OsStr::new(name)).is_none(), "{name}");
        }
        let (stem, pid) = parse_temp_name(OsStr::new(".a.ewise-b.ewise-7-Zz9.tmp")).unwrap();
        assert_eq!((stem, pid), (&b"a.ewise-b"[..], 7));
    }
}
