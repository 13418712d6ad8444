//! One-line error messages that name the file, file identity, and the file system
//! queries the output rules need (write permission, directory sync).

use std::fmt::Display;
use std::fs::{self, File, Metadata};
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

/// A file's identity: device and inode on Unix; volume serial number and file index
/// on Windows. Equal identities are one file, whatever the names (other spellings,
/// symbolic links, hard links).
pub type FileId = (u64, u64);

/// Whether the files at `a` and `b`, with these metadata, are one file: by identity
/// where the platform gives one ([`file_id`]), else (neither Unix nor Windows) by size
/// and times, the caller comparing paths as well.
pub fn same_file(a: &Path, a_meta: &Metadata, b: &Path, b_meta: &Metadata) -> bool {
    match (file_id(a, a_meta), file_id(b, b_meta)) {
        (Some(a), Some(b)) => a == b,
        _ => same_size_and_times(a_meta, b_meta),
    }
}

/// Whether two metadata records have the same size, modification and creation times:
/// what tells one file where no identity is to be had.
pub fn same_size_and_times(a: &Metadata, b: &Metadata) -> bool {
    a.len() == b.len()
        && a.modified().ok() == b.modified().ok()
        && a.created().ok() == b.created().ok()
}

/// The identity of the file at `path`, whose metadata is `meta` (Unix reads it there).
#[cfg(unix)]
pub fn file_id(_path: &Path, meta: &Metadata) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

/// The identity of the file at `path` (links followed), asked of the file itself:
/// Windows keeps it out of [`Metadata`] on stable Rust.
#[cfg(windows)]
pub fn file_id(path: &Path, _meta: &Metadata) -> Option<FileId> {
    use std::os::windows::fs::OpenOptionsExt;
    use windows_sys::Win32::Storage::FileSystem::FILE_FLAG_BACKUP_SEMANTICS;
    // No access asked (only attributes), so another program's sharing mode does not
    // matter; backup semantics open directories too. This is how `fs::metadata` opens.
    let file = fs::OpenOptions::new()
        .access_mode(0)
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
        .open(path)
        .ok()?;
    file_id_of(&file)
}

/// No identity on other platforms (callers compare paths and [`same_file`] instead).
#[cfg(not(any(unix, windows)))]
pub fn file_id(_path: &Path, _meta: &Metadata) -> Option<FileId> {
    None
}

/// The identity of an open file.
#[cfg(unix)]
pub fn file_id_of(file: &File) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    file.metadata().ok().map(|meta| (meta.dev(), meta.ino()))
}

/// The identity of an open file: `GetFileInformationByHandle`'s volume serial number
/// and file index.
#[cfg(windows)]
pub fn file_id_of(file: &File) -> Option<FileId> {
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::Storage::FileSystem::{
        GetFileInformationByHandle, BY_HANDLE_FILE_INFORMATION,
    };

    // SAFETY: plain data, all zeros a valid value.
    let mut information: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: the handle is open for the call (borrowed from `file`), and
    // `information` is a writable BY_HANDLE_FILE_INFORMATION.
    let done = unsafe { GetFileInformationByHandle(file.as_raw_handle(), &mut information) };
    (done != 0).then(|| {
        (
            u64::from(information.dwVolumeSerialNumber),
            u64::from(information.nFileIndexHigh) << 32 | u64::from(information.nFileIndexLow),
        )
    })
}

/// No identity on other platforms.
#[cfg(not(any(unix, windows)))]
pub fn file_id_of(_file: &File) -> Option<FileId> {
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

/// Checks that the file `path` is not marked read-only: without Unix's `access`, the
/// read-only attribute is what a write would be refused for (ACLs are left to the write
/// itself). A directory always passes: Windows does not honour the attribute on
/// directories (Explorer sets it on folders it customises, which still take new files),
/// so whether one takes files is left to the creation of the temporary.
#[cfg(not(unix))]
pub fn check_writable(path: &Path) -> io::Result<()> {
    let meta = fs::metadata(path)?;
    if !meta.is_dir() && meta.permissions().readonly() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "it has the read-only attribute",
        ));
    }
    Ok(())
}

/// Windows' error for an open that another program's sharing mode refuses.
#[cfg(windows)]
pub const ERROR_SHARING_VIOLATION: i32 = 32;

/// Checks that no other program holds the file `path` open in a way that stops its
/// replacement: on Windows, open without `FILE_SHARE_DELETE` (as a program that maps
/// it, such as numpy's `mmap_mode`, or an editor, may), which makes a rename over it
/// fail. Asked by opening it for deletion (`DELETE` access) and closing it at once;
/// only a sharing violation counts, the rename deciding anything else.
#[cfg(windows)]
pub fn check_not_held(path: &Path) -> io::Result<()> {
    use std::os::windows::fs::OpenOptionsExt;
    const DELETE: u32 = 0x0001_0000;
    const FILE_SHARE_ALL: u32 = 0x7;
    match fs::OpenOptions::new()
        .access_mode(DELETE)
        .share_mode(FILE_SHARE_ALL)
        .open(path)
    {
        Err(e) if e.raw_os_error() == Some(ERROR_SHARING_VIOLATION) => Err(io::Error::new(
            e.kind(),
            format!(
                "another program has it open without sharing its deletion (os error {ERROR_SHARING_VIOLATION}); close it there, then run again"
            ),
        )),
        _ => Ok(()),
    }
}

/// Nothing to check where an open file never stops a rename over it.
#[cfg(not(windows))]
pub fn check_not_held(_path: &Path) -> io::Result<()> {
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
