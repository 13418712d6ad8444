//! Temporary files: their names (`.NAME.ewise-PID-RANDOM.tmp`), their creation with
//! the permissions the module docs give, and the removal of those that killed runs left.

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
#[cfg(unix)]
use std::fs::Metadata;
use std::fs::{self, File, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Result;

use crate::interrupt::{self, Tracked};
use crate::paths::{at, describe_io};

use super::liveness::may_be_running;
#[cfg(unix)]
use super::target::Existing;
use super::target::Target;

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

/// A file this process created under a temporary name: registered with
/// [`interrupt::track`], and removed when dropped unless it was renamed away
/// ([`Temporary::renamed`]) or deliberately kept ([`Temporary::keep`]).
#[derive(Debug)]
pub struct Temporary {
    pub(super) path: PathBuf,
    armed: bool,
    _tracked: Tracked,
}

impl Temporary {
    /// The file no longer exists under this name (it was renamed); forgets it.
    pub(super) fn renamed(mut self) {
        self.armed = false;
    }

    /// Leaves the file in place and returns its path.
    pub(super) fn keep(mut self) -> PathBuf {
        self.armed = false;
        std::mem::take(&mut self.path)
    }

    /// Removes the file now, reporting a failure.
    pub(super) fn remove(mut self) -> io::Result<()> {
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
pub(super) fn create_unique<R>(
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
    let mut stems: HashMap<PathBuf, HashSet<Vec<u8>>> = HashMap::new();
    for target in targets {
        if let Some(name) = target.path().file_name() {
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
            if meta.is_file() && idle && !may_be_running(pid) {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
}

/// Creates the temporary file for `target`, with the permissions the module docs give.
pub(super) fn create_temporary(target: &Target) -> Result<(Temporary, File)> {
    let dir = target.dir();
    let name = target
        .path()
        .file_name()
        .ok_or_else(|| at(target.given(), "is not a file name"))?;
    #[cfg(unix)]
    let mode = match target.existing() {
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
            target.given(),
            describe_io(&format!("cannot create a file in {}", dir.display()), &e),
        )
    })?;
    #[cfg(unix)]
    if let Some(mode) = mode {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(fs::Permissions::from_mode(mode))
            .map_err(|e| {
                at(
                    target.given(),
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
