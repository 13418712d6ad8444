//! One-line error messages that name the file, file identity, and the file system
//! queries the output rules need (write permission, directory sync).

use std::fmt::Display;
use std::fs::{self, Metadata};
use std::io;
use std::path::Path;

/// An error about `path`: `path: message`.
pub fn at(path: &Path, message: impl Display) -> anyhow::Error {
    anyhow::anyhow!("{}: {message}", path.display())
}

/// `what: reason` for an I/O error, with the full-disk case spelled out, and on Windows
/// a missing file or a refused access worded as on Unix.
pub fn describe_io(what: &str, err: &io::Error) -> String {
    match err.kind() {
        io::ErrorKind::StorageFull => {
            format!("{what}: no space left on device (the disk is full)")
        }
        io::ErrorKind::QuotaExceeded => format!("{what}: disk quota exceeded"),
        io::ErrorKind::UnexpectedEof => {
            format!("{what}: the file ended early (truncated, or shrank while being read)")
        }
        #[cfg(windows)]
        io::ErrorKind::NotFound | io::ErrorKind::PermissionDenied => match err.raw_os_error() {
            Some(code) => format!("{what}: {} (os error {code})", os_wording(err.kind())),
            None => format!("{what}: {err}"),
        },
        _ => format!("{what}: {err}"),
    }
}

/// On Windows, the words Unix's `strerror` gives a missing file (ENOENT) and a refused
/// access (EACCES), so that a message reads as it does on Unix, where the system's own
/// text is kept (it tells EACCES from EPERM); Windows says "The system cannot find the
/// file specified." and "Access is denied.".
#[cfg(windows)]
fn os_wording(kind: io::ErrorKind) -> &'static str {
    match kind {
        io::ErrorKind::NotFound => "No such file or directory",
        _ => "Permission denied",
    }
}

/// Whether two metadata records describe the same file (same device and inode on
/// Unix: catches other spellings, symbolic links and hard links).
#[cfg(unix)]
pub fn same_file(a: &Metadata, b: &Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

/// Whether two metadata records describe the same file (size and modification time
/// where inodes are not available; paths are compared as well by the caller).
#[cfg(not(unix))]
pub fn same_file(a: &Metadata, b: &Metadata) -> bool {
    a.len() == b.len()
        && a.modified().ok() == b.modified().ok()
        && a.created().ok() == b.created().ok()
}

/// A file's identity, device and inode, where the platform has one.
#[cfg(unix)]
pub fn file_id(meta: &Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

/// A file's identity: none without Unix inodes (callers compare paths and
/// [`same_file`] instead).
#[cfg(not(unix))]
pub fn file_id(_meta: &Metadata) -> Option<(u64, u64)> {
    None
}

/// Whether two paths name the same existing file once every link is resolved.
pub fn same_path(a: &Path, b: &Path) -> bool {
    match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Whether a path ends with a separator (`out.npy/`), which [`Path::file_name`] hides:
/// such a path names a directory, never a file to create.
pub fn ends_with_separator(path: &Path) -> bool {
    let bytes = path.as_os_str().as_encoded_bytes();
    bytes
        .last()
        .is_some_and(|&b| std::path::is_separator(char::from(b)))
}

/// Checks that this process may write `path` (an existing file, or a directory to
/// create files in), as `open` for writing would decide it: the effective user and
/// groups, the mode bits, ACLs, read-only mounts and immutable files all count, and
/// the superuser may write any file on a writable mount.
#[cfg(unix)]
pub fn check_writable(path: &Path) -> io::Result<()> {
    use rustix::fs::{accessat, Access, AtFlags, CWD};
    let metadata = fs::metadata(path)?;
    let access = if metadata.is_dir() {
        Access::WRITE_OK | Access::EXEC_OK
    } else {
        Access::WRITE_OK
    };
    accessat(CWD, path, access, AtFlags::EACCESS).map_err(io::Error::from)
}

/// Checks that `path` is not marked read-only: without Unix's `access`, the read-only
/// attribute is what a write would be refused for (ACLs are left to the write itself).
#[cfg(not(unix))]
pub fn check_writable(path: &Path) -> io::Result<()> {
    if fs::metadata(path)?.permissions().readonly() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "it is read-only",
        ));
    }
    Ok(())
}

/// Makes the entries of directory `dir` (renames into it, removals) durable. File
/// systems that cannot sync a directory (`EINVAL`) count as done.
#[cfg(unix)]
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    match fs::File::open(dir).and_then(|d| d.sync_all()) {
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::INVAL.raw_os_error()) => Ok(()),
        result => result,
    }
}

/// Makes the entries of directory `dir` durable: a no-op where the standard library
/// cannot open a directory as a file (Windows; NTFS journals renames itself).
#[cfg(not(unix))]
pub fn sync_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}
