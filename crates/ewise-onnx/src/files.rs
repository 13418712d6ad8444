//! Opening and reading the files a model names, on hostile input.
//!
//! - [`open_regular`] opens the `.onnx` file a user names: links on its path are the
//!   user's choice and are followed, but it must be a regular file, and opening never
//!   blocks (a FIFO is refused before it is opened).
//! - [`open_confined`] opens external tensor data: a regular file reached from the
//!   model's directory through plain directories, following no symbolic link at any
//!   step, so a link swapped in after a check is refused rather than followed.
//! - [`read_range`] reads a byte range, allocating fallibly; [`read_exact_at`] fills a
//!   buffer with a positioned read, for data read chunk by chunk after the load
//!   (through the handles of `crate::handles`).
//!
//! On Unix the confined open walks the location one component at a time with `openat`
//! relative to the previous directory's descriptor, each directory opened with
//! `O_DIRECTORY | O_NOFOLLOW` and the file with `O_NOFOLLOW | O_NONBLOCK`, then `fstat`
//! decides. Elsewhere it is best effort: every component is checked with
//! `symlink_metadata`, the canonical path must lie under the canonical directory, and the
//! opened handle (on Windows opened without following reparse points) must be a regular
//! file.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;
use std::time::SystemTime;

use crate::error::{Error, FileKind, Refusal};

/// The identity of an opened file: equal for two opens of the same file, whatever the
/// path. On Unix the device and inode numbers; elsewhere the canonical path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct FileId(Identity);

#[cfg(unix)]
type Identity = (u64, u64);
#[cfg(not(unix))]
type Identity = std::path::PathBuf;

/// A regular file opened for reading, with its size, identity and modification time at
/// the time of opening (the time where the platform reports one).
#[derive(Debug)]
pub(crate) struct Opened {
    pub file: File,
    pub len: u64,
    pub id: FileId,
    pub modified: Option<SystemTime>,
}

/// Why [`open_confined`] opened nothing.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// The location is not one ewise reads from.
    Refused(Refusal),
    /// The operating system failed (e.g. no such file).
    Io(io::Error),
}

impl From<io::Error> for OpenError {
    fn from(e: io::Error) -> Self {
        OpenError::Io(e)
    }
}

/// Why [`read_range`] read nothing.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The buffer could not be allocated.
    OutOfMemory,
    /// The read failed, or the file ended before the range did.
    Io(io::Error),
}

/// Opens the file at `path` for reading, following links, and refuses anything but a
/// regular file (with an `io::Error` naming what it is) without blocking: the path's
/// metadata is checked before opening, the open does not wait for a FIFO's writer, and
/// the opened handle is checked again. Returns the file and its size.
pub(crate) fn open_regular(path: &Path) -> io::Result<(File, u64)> {
    let before = std::fs::metadata(path)?;
    if !before.is_file() {
        return Err(not_regular(kind_of(&before.file_type())));
    }
    let file = imp::open_read(path)?;
    let after = file.metadata()?;
    if !after.is_file() {
        return Err(not_regular(kind_of(&after.file_type())));
    }
    Ok((file, after.len()))
}

fn not_regular(kind: FileKind) -> io::Error {
    let what = match kind {
        FileKind::Other => "not a regular file".to_string(),
        kind => format!("{kind}, not a regular file"),
    };
    io::Error::new(io::ErrorKind::InvalidInput, what)
}

/// Opens the regular file reached from the directory `base` through `components` (plain
/// names: the caller has removed `.` and refused `..`, roots and prefixes), following no
/// symbolic link below `base` (`base` itself and its ancestors may be links), refusing
/// directories, FIFOs, devices and sockets, and never blocking. An empty `base` (the
/// parent of a bare file name) is the current directory.
pub(crate) fn open_confined(base: &Path, components: &[&OsStr]) -> Result<Opened, OpenError> {
    let base = if base.as_os_str().is_empty() {
        Path::new(".")
    } else {
        base
    };
    let Some((last, dirs)) = components.split_last() else {
        return Err(OpenError::Refused(Refusal::NotRegularFile {
            kind: FileKind::Directory,
        }));
    };
    imp::open_confined(base, dirs, last)
}

/// The leading `components` up to and including number `index`, joined with `/`, as
/// refusals name them.
fn prefix(components: &[&OsStr], index: usize) -> String {
    let parts: Vec<String> = components[..=index]
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

/// Reads exactly `len` bytes of `file` from `offset`, reserving the buffer fallibly
/// first; a file that ends early is an `UnexpectedEof` error.
pub(crate) fn read_range(file: &mut File, offset: u64, len: usize) -> Result<Vec<u8>, ReadError> {
    let mut data = Vec::new();
    data.try_reserve_exact(len)
        .map_err(|_| ReadError::OutOfMemory)?;
    file.seek(SeekFrom::Start(offset)).map_err(ReadError::Io)?;
    let limit = u64::try_from(len).unwrap_or(u64::MAX);
    file.take(limit)
        .read_to_end(&mut data)
        .map_err(ReadError::Io)?;
    if data.len() != len {
        return Err(ReadError::Io(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!(
                "the file ended after {} of the {len} bytes at offset {offset}",
                data.len()
            ),
        )));
    }
    Ok(data)
}

/// Fills `buf` with the bytes of `file` from `offset` on by positioned reads (`pread` on
/// Unix, a read at an offset elsewhere), so one handle serves reads of any range in any
/// order; a file that ends first is an `UnexpectedEof` error.
pub(crate) fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        file.read_exact_at(buf, offset)
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::FileExt;
        let mut filled = 0;
        while filled < buf.len() {
            let at = offset + filled as u64;
            match file.seek_read(&mut buf[filled..], at) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("the file ended at byte {at}"),
                    ))
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
    #[cfg(not(any(unix, windows)))]
    {
        let mut file = file;
        file.seek(SeekFrom::Start(offset))?;
        file.read_exact(buf)
    }
}

/// The bytes of the regular file at `path` (opened with [`open_regular`]), its buffer
/// reserved fallibly at the file's size. Errors are [`Error::Io`] naming the path
/// (also for what is not a regular file), or [`Error::OutOfMemory`].
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>, Error> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let (mut file, file_len) = open_regular(path).map_err(io)?;
    let len = usize::try_from(file_len).map_err(|_| {
        io(io::Error::new(
            io::ErrorKind::FileTooLarge,
            "the file is larger than this machine's address space",
        ))
    })?;
    read_range(&mut file, 0, len).map_err(|e| match e {
        ReadError::OutOfMemory => Error::OutOfMemory {
            what: format!("the file {}", path.display()),
            bytes: file_len,
        },
        ReadError::Io(source) => io(source),
    })
}

/// The kind of a file that is not a regular file.
fn kind_of(file_type: &std::fs::FileType) -> FileKind {
    if file_type.is_dir() {
        return FileKind::Directory;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return FileKind::Fifo;
        }
        if file_type.is_char_device() {
            return FileKind::CharacterDevice;
        }
        if file_type.is_block_device() {
            return FileKind::BlockDevice;
        }
        if file_type.is_socket() {
            return FileKind::Socket;
        }
    }
    FileKind::Other
}

#[cfg(unix)]
mod imp {
    use std::ffi::OsStr;
    use std::fs::File;
    use std::io;
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::fs::MetadataExt;
    use std::path::Path;

    use rustix::fs::{AtFlags, FileType, Mode, OFlags};
    use rustix::io::Errno;

    use super::{kind_of, prefix, FileId, OpenError, Opened};
    use crate::error::{FileKind, Refusal};

    /// Opens `path` for reading without waiting for a FIFO's writer or acquiring a
    /// terminal; the returned file blocks as usual.
    pub(super) fn open_read(path: &Path) -> io::Result<File> {
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        clear_nonblock(&fd)?;
        Ok(File::from(fd))
    }

    fn clear_nonblock(fd: impl AsFd) -> io::Result<()> {
        let flags = rustix::fs::fcntl_getfl(&fd)?;
        if flags.contains(OFlags::NONBLOCK) {
            rustix::fs::fcntl_setfl(&fd, flags - OFlags::NONBLOCK)?;
        }
        Ok(())
    }

    fn kind(file_type: FileType) -> FileKind {
        match file_type {
            FileType::Directory => FileKind::Directory,
            FileType::Fifo => FileKind::Fifo,
            FileType::CharacterDevice => FileKind::CharacterDevice,
            FileType::BlockDevice => FileKind::BlockDevice,
            FileType::Socket => FileKind::Socket,
            _ => FileKind::Other,
        }
    }

    /// `O_NOFOLLOW` met a symbolic link: `ELOOP` on Linux and macOS, `EMLINK` on FreeBSD.
    fn is_link_error(e: Errno) -> bool {
        e == Errno::LOOP || e == Errno::MLINK
    }

    pub(super) fn open_confined(
        base: &Path,
        dirs: &[&OsStr],
        last: &OsStr,
    ) -> Result<Opened, OpenError> {
        let all: Vec<&OsStr> = dirs.iter().copied().chain([last]).collect();
        let mut dir: OwnedFd = rustix::fs::open(
            base,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(io::Error::from)?;
        for (i, name) in dirs.iter().enumerate() {
            let linked = || {
                OpenError::Refused(Refusal::LinkedDirectory {
                    component: prefix(&all, i),
                })
            };
            let not_dir = || {
                OpenError::Refused(Refusal::NotADirectory {
                    component: prefix(&all, i),
                })
            };
            let stat = rustix::fs::statat(&dir, *name, AtFlags::SYMLINK_NOFOLLOW)
                .map_err(io::Error::from)?;
            match FileType::from_raw_mode(stat.st_mode) {
                FileType::Directory => {}
                FileType::Symlink => return Err(linked()),
                _ => return Err(not_dir()),
            }
            dir = rustix::fs::openat(
                &dir,
                *name,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| match e {
                e if is_link_error(e) => linked(),
                Errno::NOTDIR => not_dir(),
                e => OpenError::Io(e.into()),
            })?;
        }
        let stat =
            rustix::fs::statat(&dir, last, AtFlags::SYMLINK_NOFOLLOW).map_err(io::Error::from)?;
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile => open_file_nofollow(&dir, last),
            FileType::Symlink => Err(OpenError::Refused(Refusal::SymbolicLink)),
            other => Err(OpenError::Refused(Refusal::NotRegularFile {
                kind: kind(other),
            })),
        }
    }

    /// Opens `name` in the directory `dir` if it is a regular file: a symbolic link is
    /// refused by the open itself (`O_NOFOLLOW`), so one swapped in after a check is
    /// not followed; the open does not block (`O_NONBLOCK`, cleared once `fstat` has
    /// shown a regular file) and does not acquire a terminal (`O_NOCTTY`).
    pub(super) fn open_file_nofollow(dir: impl AsFd, name: &OsStr) -> Result<Opened, OpenError> {
        let fd = rustix::fs::openat(
            dir,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| {
            if is_link_error(e) {
                OpenError::Refused(Refusal::SymbolicLink)
            } else {
                OpenError::Io(e.into())
            }
        })?;
        let file = File::from(fd);
        let metadata = file.metadata()?;
        if !metadata.is_file() {
            return Err(OpenError::Refused(Refusal::NotRegularFile {
                kind: kind_of(&metadata.file_type()),
            }));
        }
        clear_nonblock(&file)?;
        Ok(Opened {
            len: metadata.len(),
            id: FileId((metadata.dev(), metadata.ino())),
            modified: metadata.modified().ok(),
            file,
        })
    }
}

#[cfg(not(unix))]
mod imp {
    use std::ffi::OsStr;
    use std::fs::{File, OpenOptions};
    use std::io;
    use std::path::{Component, Path, Prefix};

    use super::{kind_of, prefix, FileId, OpenError, Opened};
    use crate::error::{FileKind, Refusal};

    /// Windows' `FILE_FLAG_OPEN_REPARSE_POINT`: open a link itself rather than its
    /// target.
    #[cfg(windows)]
    const OPEN_REPARSE_POINT: u32 = 0x0020_0000;

    fn options() -> OpenOptions {
        let mut options = OpenOptions::new();
        options.read(true);
        #[cfg(windows)]
        {
            use std::os::windows::fs::OpenOptionsExt;
            options.custom_flags(OPEN_REPARSE_POINT);
        }
        options
    }

    /// Opens `path` for reading.
    pub(super) fn open_read(path: &Path) -> io::Result<File> {
        File::open(path)
    }

    /// Whether Windows reads `path` as a DOS device: whether its full path, made as every
    /// open makes it (`GetFullPathNameW`), is a bare device (`\\.\NUL`). Which names
    /// are devices depends on the version: up to Windows 10 (and in wine) a last
    /// component that is a DOS device name (`NUL`, `CON`, `AUX`, `PRN`, `COM1`, `LPT1`,
    /// `CONIN$`, ...), also with an extension or trailing spaces (`NUL.txt`), whatever
    /// the directories before it; in Windows 11 such a name alone, and `NUL` as the last
    /// component of a path whose directory exists. Never true elsewhere, nor for a
    /// verbatim (`\\?\`) path, which Windows takes as it is.
    fn is_dos_device(path: &Path) -> io::Result<bool> {
        let full = std::path::absolute(path)?;
        let mut components = full.components().filter(|c| *c != Component::RootDir);
        Ok(matches!(
            (components.next(), components.next()),
            (Some(Component::Prefix(p)), None) if matches!(p.kind(), Prefix::DeviceNS(_))
        ))
    }

    /// The confined open of [`super::open_confined`], best effort: each leading part of
    /// the location is checked in turn, before anything is opened: one that Windows reads
    /// as a DOS device ([`is_dos_device`]: `NUL`, `sub/COM1`) is refused without touching
    /// it (the last component as a character device, a directory on the way as not a
    /// directory), so no device is opened, read or waited for (opening a serial port can
    /// block); one that is a link (any name-surrogate reparse point: symbolic links and
    /// junctions) is refused; directories must be directories and the last a regular
    /// file. Then the canonical path must lie under the canonical `base`, and the file,
    /// opened without following a reparse point, must still be a regular file. A name
    /// this Windows keeps as a file name (Windows 11: `NUL.txt`, `sub/COM1`) is an
    /// ordinary file name.
    pub(super) fn open_confined(
        base: &Path,
        dirs: &[&OsStr],
        last: &OsStr,
    ) -> Result<Opened, OpenError> {
        let all: Vec<&OsStr> = dirs.iter().copied().chain([last]).collect();
        let mut path = base.to_path_buf();
        for (i, name) in all.iter().enumerate() {
            path.push(name);
            let is_last = i + 1 == all.len();
            if is_dos_device(&path)? {
                return Err(OpenError::Refused(if is_last {
                    Refusal::NotRegularFile {
                        kind: FileKind::CharacterDevice,
                    }
                } else {
                    Refusal::NotADirectory {
                        component: prefix(&all, i),
                    }
                }));
            }
            let metadata = std::fs::symlink_metadata(&path)?;
            let file_type = metadata.file_type();
            if file_type.is_symlink() {
                return Err(OpenError::Refused(if is_last {
                    Refusal::SymbolicLink
                } else {
                    Refusal::LinkedDirectory {
                        component: prefix(&all, i),
                    }
                }));
            }
            if !is_last && !file_type.is_dir() {
                return Err(OpenError::Refused(Refusal::NotADirectory {
                    component: prefix(&all, i),
                }));
            }
            if is_last && !file_type.is_file() {
                return Err(OpenError::Refused(Refusal::NotRegularFile {
                    kind: kind_of(&file_type),
                }));
            }
        }
        let canonical_base = std::fs::canonicalize(base)?;
        let canonical = std::fs::canonicalize(&path)?;
        if !canonical.starts_with(&canonical_base) {
            return Err(OpenError::Refused(Refusal::OutsideDirectory));
        }
        let file = options().open(&path)?;
        let metadata = file.metadata()?;
        if metadata.file_type().is_symlink() {
            return Err(OpenError::Refused(Refusal::SymbolicLink));
        }
        if !metadata.is_file() {
            return Err(OpenError::Refused(Refusal::NotRegularFile {
                kind: kind_of(&metadata.file_type()),
            }));
        }
        Ok(Opened {
            len: metadata.len(),
            id: FileId(canonical),
            modified: metadata.modified().ok(),
            file,
        })
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    fn names(location: &str) -> Vec<&OsStr> {
        location.split('/').map(OsStr::new).collect()
    }

    fn refusal(result: Result<Opened, OpenError>) -> Refusal {
        match result {
            Err(OpenError::Refused(r)) => r,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    fn dir_fd(path: &Path) -> std::os::fd::OwnedFd {
        rustix::fs::open(
            path,
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY,
            rustix::fs::Mode::empty(),
        )
        .unwrap()
    }

    #[test]
    fn the_open_itself_refuses_a_link_that_passed_no_check() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("real"), b"bytes").unwrap();
        symlink("real", dir.path().join("link")).unwrap();
        let fd = dir_fd(dir.path());
        assert_eq!(
            refusal(imp::open_file_nofollow(&fd, OsStr::new("link"))),
            Refusal::SymbolicLink
        );
        assert_eq!(
            refusal(open_confined(dir.path(), &names("link"))),
            Refusal::SymbolicLink
        );
        let mut real = imp::open_file_nofollow(&fd, OsStr::new("real")).unwrap();
        assert_eq!(read_range(&mut real.file, 1, 3).unwrap(), b"yte");
    }

    #[test]
    fn the_open_itself_refuses_a_fifo_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            dir.path().join("pipe"),
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap();
        let path = dir.path().to_path_buf();
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let fd = dir_fd(&path);
            let _ = done.send(refusal(imp::open_file_nofollow(&fd, OsStr::new("pipe"))));
        });
        let refused = finished
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("opening a FIFO blocked");
        assert_eq!(
            refused,
            Refusal::NotRegularFile {
                kind: FileKind::Fifo
            }
        );
    }

    #[test]
    fn a_linked_directory_and_a_file_used_as_a_directory_are_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/w.bin"), b"x").unwrap();
        symlink("sub", dir.path().join("via")).unwrap();
        assert_eq!(
            refusal(open_confined(dir.path(), &names("via/w.bin"))),
            Refusal::LinkedDirectory {
                component: "via".into()
            }
        );
        assert_eq!(
            refusal(open_confined(dir.path(), &names("sub/w.bin/x"))),
            Refusal::NotADirectory {
                component: "sub/w.bin".into()
            }
        );
        assert!(open_confined(dir.path(), &names("sub/w.bin")).is_ok());
    }

    #[test]
    fn a_base_directory_reached_through_a_link_is_the_users_choice() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("models")).unwrap();
        std::fs::write(dir.path().join("models/w.bin"), b"x").unwrap();
        symlink("models", dir.path().join("alias")).unwrap();
        assert!(open_confined(&dir.path().join("alias"), &names("w.bin")).is_ok());
    }

    #[test]
    fn an_empty_base_is_the_current_directory() {
        let cwd = std::env::current_dir().unwrap();
        let name = std::fs::read_dir(&cwd)
            .unwrap()
            .map(|e| e.unwrap())
            .find(|e| e.file_type().unwrap().is_file())
            .expect("a regular file in the current directory")
            .file_name();
        assert!(open_confined(Path::new(""), &[name.as_os_str()]).is_ok());
    }

    #[test]
    fn reads_past_the_end_fail_without_allocating_the_claim_first() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("w"), b"1234").unwrap();
        let mut opened = open_confined(dir.path(), &names("w")).unwrap();
        assert!(matches!(
            read_range(&mut opened.file, 2, 4),
            Err(ReadError::Io(e)) if e.kind() == io::ErrorKind::UnexpectedEof
        ));
        assert!(matches!(
            read_range(&mut opened.file, 0, usize::MAX),
            Err(ReadError::OutOfMemory)
        ));
    }
}
