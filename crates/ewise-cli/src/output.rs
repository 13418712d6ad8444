//! Output files that appear only when complete: a temporary file beside the target,
//! renamed over it on success. Devices and pipes are written directly.
//!
//! A run killed by a signal cannot remove its temporary file; the next run for the same
//! output removes it once its process is gone and it has sat unwritten for a minute.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{anyhow, Result};
use tempfile::NamedTempFile;

use crate::paths::{at, describe_io, same_file};

/// Where output goes until it is committed.
pub enum Output {
    /// A temporary file in the target's directory, renamed to `dest` on commit.
    Atomic {
        /// The temporary file.
        temp: NamedTempFile,
        /// The final path.
        dest: PathBuf,
    },
    /// An existing device or pipe, written as the data comes.
    Direct {
        /// The open device.
        file: File,
        /// Its path.
        dest: PathBuf,
    },
}

impl Output {
    /// Prepares output to `dest` for a run that reads `input`. Refuses a destination
    /// that is the input itself under any spelling (links included) or a directory.
    pub fn create(dest: &Path, input: &Path) -> Result<Output> {
        let input_meta =
            fs::metadata(input).map_err(|e| at(input, describe_io("cannot read metadata", &e)))?;
        let existing = fs::metadata(dest).ok();
        if let Some(meta) = &existing {
            if same_file(meta, &input_meta) || same_path(dest, input) {
                return Err(anyhow!(
                    "{}: is the input file {} (to rewrite a file, use `ewise sign --in-place {}`)",
                    dest.display(),
                    input.display(),
                    input.display()
                ));
            }
            if meta.is_dir() {
                return Err(at(dest, "is a directory; give a file name for the output"));
            }
            if !meta.is_file() {
                let file = fs::OpenOptions::new()
                    .write(true)
                    .open(dest)
                    .map_err(|e| at(dest, describe_io("cannot open for writing", &e)))?;
                return Ok(Output::Direct {
                    file,
                    dest: dest.to_path_buf(),
                });
            }
        }
        let target = match fs::symlink_metadata(dest) {
            Ok(m) if m.file_type().is_symlink() => {
                fs::canonicalize(dest).unwrap_or_else(|_| dest.to_path_buf())
            }
            _ => dest.to_path_buf(),
        };
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| at(dest, "is not a file name"))?;
        remove_stale_temporaries(&dir, &name);
        let prefix = format!("{}{}-", temp_prefix(&name), std::process::id());
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(TEMP_SUFFIX);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = existing
                .as_ref()
                .map_or(0o666, |m| m.permissions().mode() & 0o7777);
            builder.permissions(fs::Permissions::from_mode(mode));
        }
        let temp = builder.tempfile_in(&dir).map_err(|e| {
            at(
                dest,
                describe_io(&format!("cannot create a file in {}", dir.display()), &e),
            )
        })?;
        Ok(Output::Atomic { temp, dest: target })
    }

    /// The file to write to.
    pub fn file(&mut self) -> &mut File {
        match self {
            Output::Atomic { temp, .. } => temp.as_file_mut(),
            Output::Direct { file, .. } => file,
        }
    }

    /// The path the output is for.
    pub fn dest(&self) -> &Path {
        match self {
            Output::Atomic { dest, .. } | Output::Direct { dest, .. } => dest,
        }
    }

    /// Writes `bytes`, naming the destination in any error.
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<()> {
        let result = self.file().write_all(bytes);
        result.map_err(|e| at(self.dest(), describe_io("write failed", &e)))
    }

    /// Makes the output durable and, for a temporary file, renames it to its final
    /// path. Until this returns, the destination is untouched.
    pub fn commit(self) -> Result<()> {
        match self {
            Output::Atomic { temp, dest } => {
                temp.as_file()
                    .sync_all()
                    .map_err(|e| at(&dest, describe_io("write failed", &e)))?;
                temp.persist(&dest).map_err(|e| {
                    at(
                        &dest,
                        describe_io("cannot rename the finished output into place", &e.error),
                    )
                })?;
                Ok(())
            }
            Output::Direct { mut file, dest } => file
                .flush()
                .map_err(|e| at(&dest, describe_io("write failed", &e))),
        }
    }
}

const TEMP_SUFFIX: &str = ".tmp";

/// Temporary outputs left this long without a write are stale if their process is gone.
const STALE_AFTER: Duration = Duration::from_secs(60);

/// Temporary outputs for `name` are `.{name}.ewise-{pid}-{random}.tmp`.
fn temp_prefix(name: &str) -> String {
    format!(".{name}.ewise-")
}

/// Removes the temporary outputs for `name` that an interrupted run left in `dir`: those
/// whose process no longer exists (checked in `/proc`, so only where it exists) and
/// that nothing has written to for [`STALE_AFTER`].
fn remove_stale_temporaries(dir: &Path, name: &str) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let prefix = temp_prefix(name);
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(rest) = file_name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .filter(|rest| rest.ends_with(TEMP_SUFFIX))
        else {
            continue;
        };
        let Some(pid) = rest
            .split_once('-')
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let idle = entry
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .is_some_and(|age| age >= STALE_AFTER);
        let gone = pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists();
        if idle && gone {
            let _ = fs::remove_file(entry.path());
        }
    }
}

fn same_path(a: &Path, b: &Path) -> bool {
    match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
