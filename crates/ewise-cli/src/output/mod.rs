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
//! the run fails, and synced and closed once complete ([`Staged`]). An output written in
//! pieces ([`Staging`]) is held open only while few are written at once; otherwise each
//! piece reopens its temporary, so a run never holds a file open per output.
//!
//! A run killed outright cannot remove its temporaries. Before creating its own, a
//! command reads each directory it writes to once and removes the temporaries of its
//! output names whose process is known to have ended (`/proc` on Linux, `OpenProcess`
//! on Windows; elsewhere none is removed) and that have not been modified for a minute.
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
//! Without Unix (Windows): "may not write" is the read-only attribute of a file (not of
//! a directory, where Windows does not honour it: the creation of the temporary
//! decides); a file another program holds open without `FILE_SHARE_DELETE`, which no
//! rename can replace, is refused as well, before anything is read, and again at the
//! commit before a copy of it is kept; a file name over 255 UTF-16 units is refused;
//! file identity is the volume serial number and file index; directories are not synced
//! (the standard library cannot open one; NTFS journals renames); there are no FIFOs, so
//! a device is opened as usual, and the null device (`NUL`), whose metadata Windows does
//! not give, is recognised by its name; new files get the system's default permissions.
//! Everything else is as above.

mod commit;
mod liveness;
mod target;
mod temporary;

#[cfg(not(unix))]
use std::fs::OpenOptions;
use std::fs::{self, File, Metadata};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::paths::{at, describe_io};

pub use commit::{commit_all, Staged, Staging};
pub use target::{check, Existing, Target};
pub use temporary::remove_stale_temporaries;
use temporary::{create_temporary, Temporary};

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
        let sink = match target.existing() {
            Existing::Special(meta) => {
                Sink::Direct(open_direct(dest, target.path(), meta.as_ref())?)
            }
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
fn open_direct(given: &Path, path: &Path, meta: Option<&Metadata>) -> Result<File> {
    use rustix::fs::{fcntl_getfl, fcntl_setfl, Mode, OFlags, CWD};
    use std::os::unix::fs::FileTypeExt;
    let fifo = meta.is_some_and(|meta| meta.file_type().is_fifo());
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
fn open_direct(given: &Path, path: &Path, _meta: Option<&Metadata>) -> Result<File> {
    OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| at(given, describe_io("cannot open for writing", &e)))
}
