//! Staging and the all-or-none commit: [`Staged`] outputs, synced and closed in their
//! temporary files, and [`commit_all`], which renames them into place or undoes them.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::{anyhow, Result};

use crate::interrupt;
use crate::paths::{
    at, check_not_held, describe_io, file_id, file_id_of, same_size_and_times, sync_dir, FileId,
};

use super::target::Target;
use super::temporary::{create_temporary, create_unique, Temporary};

/// A complete output in its temporary file, synced and closed, waiting for
/// [`commit_all`]. Dropping it removes the temporary.
#[derive(Debug)]
pub struct Staged {
    temp: Temporary,
    target: Target,
    /// The temporary's metadata and identity, to recognise the file once renamed.
    written: Metadata,
    written_id: Option<FileId>,
}

impl Staged {
    pub(super) fn finish(file: File, temp: Temporary, target: Target) -> Result<Staged> {
        file.sync_all()
            .map_err(|e| at(target.given(), describe_io("write failed", &e)))?;
        let written = file
            .metadata()
            .map_err(|e| at(target.given(), describe_io("cannot read metadata", &e)))?;
        let written_id = file_id_of(&file);
        Ok(Staged {
            temp,
            target,
            written,
            written_id,
        })
    }
}

/// An output being written to its temporary file in pieces; [`Staging::finish`] makes
/// it [`Staged`]. Dropping it removes the temporary.
///
/// Created with `keep_open`, it holds the file open until finished. Without, it holds
/// no file open between calls: each [`Staging::append`] and [`Staging::finish`] opens
/// the temporary again by its path, without following a symbolic link, and refuses it
/// unless it is still the file created (same identity), so any number of
/// outputs can be written at once under a low limit on open files.
#[derive(Debug)]
pub struct Staging {
    temp: Temporary,
    target: Target,
    file: Option<File>,
    created: Option<FileId>,
}

impl Staging {
    /// Creates the temporary file for `target`, empty.
    pub fn create(target: &Target, keep_open: bool) -> Result<Staging> {
        let (temp, file) = create_temporary(target)?;
        let created = file_id_of(&file);
        Ok(Staging {
            temp,
            target: target.clone(),
            file: keep_open.then_some(file),
            created,
        })
    }

    /// Writes `bytes` after what was written so far.
    pub fn append(&mut self, bytes: &[u8]) -> Result<()> {
        let given = self.target.given();
        match &mut self.file {
            Some(file) => file.write_all(bytes),
            None => self.reopen()?.write_all(bytes),
        }
        .map_err(|e| at(given, describe_io("write failed", &e)))
    }

    /// Syncs and closes the file: the output is complete.
    pub fn finish(mut self) -> Result<Staged> {
        let file = match self.file.take() {
            Some(file) => file,
            None => self.reopen()?,
        };
        Staged::finish(file, self.temp, self.target)
    }

    /// The temporary, opened again for appending; refused if it is no longer the file
    /// created.
    fn reopen(&self) -> Result<File> {
        let given = self.target.given();
        let mut options = OpenOptions::new();
        options.append(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
        }
        let replaced = || {
            at(
                given,
                format!(
                    "its temporary file {} was removed or replaced by another program while being written",
                    self.temp.path.display()
                ),
            )
        };
        let file = options.open(&self.temp.path).map_err(|_| replaced())?;
        if file_id_of(&file) != self.created {
            return Err(replaced());
        }
        Ok(file)
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
    written_id: Option<FileId>,
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
    let mut left = Vec::new();
    for (i, staged) in outputs.into_iter().enumerate() {
        let Staged {
            temp,
            target,
            written,
            written_id,
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
                        target.given(),
                        describe_io("cannot keep a copy of the file it replaces", &e),
                    ));
                    break;
                }
            }
        } else {
            Prior::Unkept
        };
        if let Err(e) = fs::rename(&temp.path, target.path()) {
            failure = Some(at(
                target.given(),
                describe_io("cannot rename the finished output into place", &e),
            ));
            match prior {
                Prior::MovedAside(copy) => {
                    if let Err(problem) = restore(&target, copy) {
                        problems.push(problem);
                    }
                }
                Prior::Linked(copy) => {
                    let path = copy.path.clone();
                    if let Err(e) = copy.remove() {
                        left.push(format!(
                            "{}, a copy of {} kept for the commit, could not be removed ({e})",
                            path.display(),
                            target.path().display()
                        ));
                    }
                }
                Prior::Absent | Prior::Unkept => {}
            }
            break;
        }
        temp.renamed();
        renamed.push(Renamed {
            target,
            prior,
            written,
            written_id,
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
    let left = if left.is_empty() {
        String::new()
    } else {
        format!("; left behind: {}", left.join("; "))
    };
    if !problems.is_empty() {
        return Err(anyhow!(
            "{failure}; restoring the files as they were then failed: {}{left}",
            problems.join("; ")
        ));
    }
    if count == 1 {
        return Err(anyhow!("{failure}{left}"));
    }
    let undone = match undone {
        0 => "no file was changed".to_string(),
        1 => "the output renamed before it was undone, so every file is as it was".to_string(),
        n => format!("the {n} outputs renamed before it were undone, so every file is as it was"),
    };
    Err(anyhow!("{failure}; {undone}{left}"))
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
                    output.target.given().display()
                );
            }
        }
    }
    synced
}

/// Keeps what is at `target` before an output replaces it: a hard link to it, or where
/// the file system cannot link, the file itself renamed aside. A directory is left
/// alone (the rename onto it then fails). On Windows a file another program holds open
/// without sharing its deletion is refused first: the rename over it would fail, and a
/// hard link to it could not be removed while it is held.
fn keep_prior(target: &Target) -> io::Result<Prior> {
    check_not_held(target.path())?;
    let dir = target.dir();
    let name = target.path().file_name().unwrap_or(OsStr::new("output"));
    let link_error = match create_unique(&dir, name, |copy| fs::hard_link(target.path(), copy)) {
        Ok((copy, ())) => return Ok(Prior::Linked(copy)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Prior::Absent),
        Err(e) => e,
    };
    match fs::symlink_metadata(target.path()) {
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
    match fs::rename(target.path(), &copy.path) {
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
    match fs::rename(&copy.path, target.path()) {
        Ok(()) => {
            copy.renamed();
            Ok(())
        }
        Err(e) => {
            let kept = copy.keep();
            Err(format!(
                "{} could not be restored ({e}); its previous contents are in {}",
                target.path().display(),
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
                output.target.path().display()
            )),
            Prior::Absent => {
                let path = output.target.path();
                let ours = fs::symlink_metadata(path).is_ok_and(|meta| {
                    match (file_id(path, &meta), output.written_id) {
                        (Some(now), Some(written)) => now == written,
                        _ => same_size_and_times(&meta, &output.written),
                    }
                });
                if ours {
                    if let Err(e) = fs::remove_file(output.target.path()) {
                        problems.push(format!(
                            "{} holds this run's output and could not be removed ({e})",
                            output.target.path().display()
                        ));
                    }
                }
            }
        }
    }
    problems
}
