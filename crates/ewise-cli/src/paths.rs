//! One-line error messages that name the file, and file identity.

use std::fmt::Display;
use std::fs::Metadata;
use std::io;
use std::path::Path;

/// An error about `path`: `path: message`.
pub fn at(path: &Path, message: impl Display) -> anyhow::Error {
    anyhow::anyhow!("{}: {message}", path.display())
}

/// `what: reason` for an I/O error, with the full-disk case spelled out.
pub fn describe_io(what: &str, err: &io::Error) -> String {
    match err.kind() {
        io::ErrorKind::StorageFull => {
            format!("{what}: no space left on device (the disk is full)")
        }
        io::ErrorKind::QuotaExceeded => format!("{what}: disk quota exceeded"),
        io::ErrorKind::UnexpectedEof => {
            format!("{what}: the file ended early (truncated, or shrank while being read)")
        }
        _ => format!("{what}: {err}"),
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
