//! Where an output goes: [`Target`] resolves an output path to the file really written
//! and holds what is there now ([`Existing`]); [`check`] makes the refusals the module
//! docs list before any data is read.

use std::fs::{self, Metadata};
use std::io;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};
use ewise_cli::file_name::{self, Rules};

use crate::paths::{
    at, check_not_held, check_writable, describe_io, ends_with_separator, same_file, same_path,
};

/// Symbolic links followed from an output path before giving up (Linux's limit).
const MAX_LINKS: usize = 40;

/// What is at an output's target now.
#[derive(Debug, Clone)]
pub enum Existing {
    /// Nothing: the output creates the file.
    Absent,
    /// A regular file, which the output replaces.
    File(Metadata),
    /// A directory.
    Directory,
    /// A FIFO, a device or a socket, with its metadata where the platform gives it
    /// (Windows gives none for the null device).
    Special(Option<Metadata>),
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
        let special = if is_null_device(given) {
            Some(None)
        } else {
            check_file_name(given, given)?;
            fs::metadata(given)
                .ok()
                .filter(|meta| !meta.is_file() && !meta.is_dir())
                .map(Some)
        };
        if let Some(meta) = special {
            return Ok(Target {
                given: given.to_path_buf(),
                path: given.to_path_buf(),
                existing: Existing::Special(meta),
            });
        }
        let mut path = given.to_path_buf();
        for _ in 0..=MAX_LINKS {
            let meta = match fs::symlink_metadata(&path) {
                Ok(meta) => meta,
                Err(e) => {
                    check_directory(given, &path)?;
                    check_file_name(given, &path)?;
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
                Existing::Special(Some(meta))
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

    /// Refuses an existing file this process may not write, or (Windows) that another
    /// program holds open so that it cannot be replaced (see the module docs).
    pub fn check_replaceable(&self) -> Result<()> {
        if let Existing::File(meta) = &self.existing {
            if let Err(e) = check_writable(&self.path) {
                return Err(at(
                    &self.given,
                    format!(
                        "{}{}; like cp, ewise replaces only files you may write",
                        describe_io("cannot replace it", &e),
                        mode_note(&self.path, meta)
                    ),
                ));
            }
            check_not_held(&self.path)
                .map_err(|e| at(&self.given, describe_io("cannot replace it now", &e)))?;
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
    pub(super) fn check_not_input(&self, input: &Path, input_meta: &Metadata) -> Result<()> {
        let same = match &self.existing {
            Existing::File(meta) | Existing::Special(Some(meta)) => {
                same_file(&self.path, meta, input, input_meta) || same_path(&self.path, input)
            }
            Existing::Special(None) => same_path(&self.path, input),
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
    pub(super) fn check_kind(&self) -> Result<()> {
        match &self.existing {
            Existing::Directory => Err(at(
                &self.given,
                "is a directory; give a file name for the output",
            )),
            Existing::Special(Some(meta)) if is_socket(meta) => Err(at(
                &self.given,
                "is a socket; outputs are regular files, FIFOs or devices",
            )),
            _ => Ok(()),
        }
    }
}

/// What explains a refusal of the file `path`: ` (mode 0444)` on Unix; on Windows, for a
/// read-only file, how to clear the attribute.
fn mode_note(path: &Path, meta: &Metadata) -> String {
    #[cfg(unix)]
    {
        let _ = path;
        use std::os::unix::fs::PermissionsExt;
        format!(" (mode {:04o})", meta.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        if meta.permissions().readonly() {
            format!(" (`attrib -R {}` clears it)", path.display())
        } else {
            String::new()
        }
    }
}

/// Refuses a target whose file name, as given or at the end of its links, is not a
/// safe file name on this OS ([`ewise_cli::file_name`]: a Windows device name, a drive
/// prefix or stream, a name Windows would change, a name too long), naming `given`:
/// checked before anything is read, because what the system says of such names varies
/// and comes late (under wine, `LPT1.npy` fails only at the final rename).
fn check_file_name(given: &Path, path: &Path) -> Result<()> {
    let Some(name) = path.file_name() else {
        return Ok(());
    };
    let name = match name.to_str() {
        Some(name) => std::borrow::Cow::Borrowed(name),
        None if cfg!(windows) => name.to_string_lossy(),
        None => return Ok(()),
    };
    file_name::check(&name, Rules::HOST).map_err(|why| {
        if path == given {
            at(given, format!("cannot be an output file name: {why}"))
        } else {
            at(
                given,
                format!(
                    "is a symbolic link to {}, which cannot be an output file name: {why}",
                    path.display()
                ),
            )
        }
    })
}

/// Whether `path` names Windows' null device, which has no file metadata: `NUL` in
/// any case, alone, in a directory or as `\\.\NUL`. (Windows 11 takes other reserved
/// names, `CON`, `COM1`, `NUL.txt`, as ordinary files; where an older Windows does not,
/// their metadata fails and the output is refused.)
#[cfg(windows)]
fn is_null_device(path: &Path) -> bool {
    path.as_os_str().eq_ignore_ascii_case(r"\\.\NUL")
        || path
            .file_name()
            .is_some_and(|name| name.eq_ignore_ascii_case("NUL"))
}

/// Whether `path` names a device with no file metadata: never, outside Windows.
#[cfg(not(windows))]
fn is_null_device(_path: &Path) -> bool {
    false
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
