//! Opening a `.npy` input: what kinds of file are accepted, header, element type, and
//! the check that the data is there (and stays there while it is rewritten in place).
//!
//! Accepted inputs, decided from the path's type before it is opened and checked again
//! on the opened handle:
//! - a regular file, for every command and for `--in-place`;
//! - for reading only, a FIFO or pipe (`mkfifo`, `/dev/stdin` in a pipeline, `<(...)`)
//!   that a program writes a `.npy` file into. Waiting for that program to open the
//!   FIFO is interruptible: Ctrl-C stops it at once.
//!
//! Directories, sockets and devices are refused, and `--in-place` refuses anything but
//! a regular file, all before anything is opened. No open ever blocks the command.

use std::fs::{File, Metadata, OpenOptions};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};
use ewise_cli::npy::{ElementType, Header};
use ewise_cpu::DataType;

use crate::interrupt;
use crate::paths::{at, describe_io};

/// What the inputs of plain runs may be, for error messages.
const ACCEPTED: &str =
    "accepted: a regular .npy file, or a FIFO or pipe that a program writes one into";

/// An open `.npy` file, positioned at its first data byte.
pub struct NpyInput {
    /// The file.
    pub file: File,
    /// Its path, as given.
    pub path: PathBuf,
    /// Its header.
    pub header: Header,
    /// Bytes before the data.
    pub data_offset: u64,
    /// What its elements are.
    pub element: ElementType,
    /// Number of elements.
    pub count: u64,
}

/// The kinds of input file that are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(unix), allow(dead_code))]
enum Kind {
    Regular,
    Pipe,
}

impl NpyInput {
    /// Opens `path` for reading (and writing, for in-place runs: `write`) and checks that
    /// the header is sound and the file holds all the data it promises.
    ///
    /// The path must name a regular file, or for reading only a FIFO or pipe (see the
    /// module documentation); anything else is refused before it is opened. A FIFO is
    /// opened once a program opens it for writing; a stop requested meanwhile
    /// (Ctrl-C) ends the wait with an "interrupted" error.
    pub fn open(path: &Path, requested: Option<DataType>, write: bool) -> Result<NpyInput> {
        let meta = std::fs::metadata(path).map_err(|e| at(path, describe_io("cannot open", &e)))?;
        let kind = kind(path, &meta, write)?;
        let mut file = match kind {
            Kind::Regular => open_regular(path, write)?,
            Kind::Pipe => open_pipe(path)?,
        };
        let meta = file
            .metadata()
            .map_err(|e| at(path, describe_io("cannot read metadata", &e)))?;
        let opened = kind_of(&meta);
        if opened != Some(kind) {
            return Err(at(
                path,
                "was replaced by another kind of file while being opened; run the command again",
            ));
        }
        let parsed = Header::read(&mut file).map_err(|e| match e {
            ewise_cli::npy::NpyError::TooShort { len: 0 } if kind == Kind::Pipe => at(
                path,
                "the pipe delivered nothing: its writer closed it without writing a .npy file",
            ),
            e => at(path, e),
        })?;
        let header = parsed.header;
        let element = ElementType::from_descr(&header.descr, requested).map_err(|e| at(path, e))?;
        let count = header.element_count().unwrap_or(u64::MAX);
        let needed = header.data_len(element.size() as u64).ok_or_else(|| {
            at(
                path,
                format!(
                    "shape {} of '{}' holds more bytes than a 64-bit size can count",
                    header.shape_text(),
                    header.descr
                ),
            )
        })?;
        if kind == Kind::Regular {
            let available = meta.len().saturating_sub(parsed.data_offset);
            if available < needed {
                return Err(at(
                    path,
                    format!(
                        "truncated or lying header: shape {} of '{}' needs {needed} bytes of data, but only {available} follow the header",
                        header.shape_text(),
                        header.descr
                    ),
                ));
            }
        }
        Ok(NpyInput {
            file,
            path: path.to_path_buf(),
            header,
            data_offset: parsed.data_offset,
            element,
            count,
        })
    }

    /// The offset just past the last data byte: the size the file must keep.
    pub fn data_end(&self) -> u64 {
        self.count
            .saturating_mul(self.element.size() as u64)
            .saturating_add(self.data_offset)
    }

    /// Fails, naming the file, when it is now shorter than [`NpyInput::data_end`] (another
    /// program truncated it while it is rewritten in place); `done` is how many elements
    /// were rewritten so far, for the message. Called before each chunk is read and
    /// before it is written back, so that a truncated file is never written past its
    /// new end, which would grow it again.
    pub fn check_not_truncated(&self, done: u64) -> Result<()> {
        let len = self
            .file
            .metadata()
            .map_err(|e| at(&self.path, describe_io("cannot read metadata", &e)))?
            .len();
        let end = self.data_end();
        if len < end {
            return Err(at(
                &self.path,
                format!(
                    "was truncated to {len} bytes by another program while being rewritten in place (its data ends at byte {end}); stopped after {done} of {} elements without writing past its new end",
                    self.count
                ),
            ));
        }
        Ok(())
    }
}

/// The kind of input `meta` describes, if it is one that is read.
fn kind_of(meta: &Metadata) -> Option<Kind> {
    if meta.is_file() {
        return Some(Kind::Regular);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if meta.file_type().is_fifo() {
            return Some(Kind::Pipe);
        }
    }
    None
}

/// The kind of input `path` (with metadata `meta`) is, or why it is refused: in place
/// (`write`) only regular files are rewritten.
fn kind(path: &Path, meta: &Metadata, write: bool) -> Result<Kind> {
    let kind = kind_of(meta);
    if kind == Some(Kind::Regular) {
        return Ok(Kind::Regular);
    }
    let what = describe_type(meta);
    if write {
        return Err(at(
            path,
            format!("is {what}, not a regular file; --in-place rewrites regular files only"),
        ));
    }
    match kind {
        Some(kind) => Ok(kind),
        None if meta.is_dir() => Err(at(
            path,
            format!("is a directory, not a .npy file ({ACCEPTED})"),
        )),
        None => Err(at(path, format!("is {what}, not a .npy file ({ACCEPTED})"))),
    }
}

/// What kind of file `meta` describes, with its article.
fn describe_type(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_char_device() {
            return "a character device";
        }
    }
    "not a regular file"
}

/// Opens a path that named a regular file, for reading (and writing: `write`). On Unix
/// the open never blocks, even if the path was replaced by a FIFO meanwhile (the
/// caller then refuses the handle).
///
/// On Windows a file opened for writing (`--in-place`) is not shared for writing: while
/// ewise rewrites it, no other program can open it to write or truncate it, and a file
/// another program already has open for writing is refused, naming why.
fn open_regular(path: &Path, write: bool) -> Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(write);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    #[cfg(windows)]
    if write {
        use std::os::windows::fs::OpenOptionsExt;
        use windows_sys::Win32::Storage::FileSystem::{FILE_SHARE_DELETE, FILE_SHARE_READ};
        options.share_mode(FILE_SHARE_READ | FILE_SHARE_DELETE);
    }
    let file = options
        .open(path)
        .map_err(|e| at(path, open_error(&e, write)))?;
    #[cfg(unix)]
    {
        use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};
        fcntl_getfl(&file)
            .and_then(|flags| fcntl_setfl(&file, flags - OFlags::NONBLOCK))
            .map_err(|e| at(path, describe_io("cannot open", &e.into())))?;
    }
    Ok(file)
}

/// What a failed open of a regular file says. On Windows a sharing violation names the
/// other program's hold on the file, which Windows' own text does not.
fn open_error(err: &std::io::Error, write: bool) -> String {
    #[cfg(windows)]
    {
        use crate::paths::ERROR_SHARING_VIOLATION;
        if err.raw_os_error() == Some(ERROR_SHARING_VIOLATION) {
            let held = if write {
                "another program has it open for writing, or without sharing it"
            } else {
                "another program has it open without sharing its reading"
            };
            return format!(
                "cannot open: {held} (os error {ERROR_SHARING_VIOLATION}); close it there, then run again"
            );
        }
    }
    #[cfg(not(windows))]
    let _ = write;
    describe_io("cannot open", err)
}

/// How often a wait for a FIFO's writer looks for a stop request.
const WAIT_STEP: std::time::Duration = std::time::Duration::from_millis(20);

/// Opens a FIFO for reading once a program opens it for writing. The open, which blocks
/// until then, runs on a helper thread while this one waits for it or for a stop
/// request; a stop leaves the helper blocked until the process exits.
fn open_pipe(path: &Path) -> Result<File> {
    let (sent, received) = std::sync::mpsc::channel();
    let owned = path.to_path_buf();
    std::thread::Builder::new()
        .name("ewise-open-fifo".into())
        .spawn(move || {
            let _ = sent.send(File::open(owned));
        })
        .map_err(|e| at(path, describe_io("cannot open", &e)))?;
    loop {
        interrupt::check().map_err(|_| {
            anyhow!(
                "{}: interrupted while waiting for a program to write into the FIFO; no output was written",
                path.display()
            )
        })?;
        match received.recv_timeout(WAIT_STEP) {
            Ok(opened) => return opened.map_err(|e| at(path, describe_io("cannot open", &e))),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(at(path, "cannot open: the opening thread stopped"))
            }
        }
    }
}
