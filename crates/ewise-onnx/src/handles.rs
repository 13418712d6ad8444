//! Handles to the external data files that models loaded with
//! [`crate::ExternalData::Deferred`] read after the load: at most [`OPEN_LIMIT`] open at
//! once in the whole process, however many files the models name. Beyond the limit
//! the least recently used handle is closed; a file whose handle was closed is opened
//! again when it is next read, through the same confined open the load used
//! ([`files::open_confined`]: no symbolic link below the model's directory, regular
//! files only), and read only if it is still the file the load checked: the same
//! identity, size and modification time.
//!
//! A handle taken for a read stays open until that read ends, so threads reading at
//! once can hold a few more than the limit for as long as their reads take.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::SystemTime;

use crate::error::Refusal;
use crate::files::{self, FileId, OpenError, Opened};

/// The most handles to external data files kept open at once, in the whole process.
pub(crate) const OPEN_LIMIT: usize = 32;

/// The open handles by [`DataFile::key`], least recently used first.
static OPEN: Mutex<Vec<(u64, Arc<File>)>> = Mutex::new(Vec::new());

/// The next [`DataFile::key`].
static NEXT_KEY: AtomicU64 = AtomicU64::new(0);

fn open_handles() -> MutexGuard<'static, Vec<(u64, Arc<File>)>> {
    OPEN.lock().unwrap_or_else(PoisonError::into_inner)
}

/// An external data file as a load opened and checked it, read through a handle kept
/// open or, once that was closed, opened again and checked.
#[derive(Debug)]
pub(crate) struct DataFile {
    key: u64,
    /// The model's directory, absolute as the load resolved it.
    base: PathBuf,
    components: Vec<OsString>,
    id: FileId,
    len: u64,
    modified: Option<SystemTime>,
}

impl DataFile {
    /// The file `opened`, which [`files::open_confined`] opened from `base` through
    /// `components`. Its handle joins the open ones, closing the least recently used
    /// beyond [`OPEN_LIMIT`].
    pub fn new(base: &Path, components: &[&OsStr], opened: Opened) -> DataFile {
        let base = if base.as_os_str().is_empty() {
            Path::new(".")
        } else {
            base
        };
        let file = DataFile {
            key: NEXT_KEY.fetch_add(1, Ordering::Relaxed),
            base: std::path::absolute(base).unwrap_or_else(|_| base.to_path_buf()),
            components: components.iter().map(|c| c.to_os_string()).collect(),
            id: opened.id,
            len: opened.len,
            modified: opened.modified,
        };
        keep(file.key, Arc::new(opened.file));
        file
    }

    /// A handle to the file, the most recently used from now on: the one kept open, or
    /// the file opened again as the load opened it. Errors are those of
    /// [`files::open_confined`], and [`Refusal::Changed`] for a file that is not the one
    /// the load checked (another identity, size or modification time); nothing was
    /// read from it.
    pub fn handle(&self) -> Result<Arc<File>, OpenError> {
        if let Some(file) = self.kept() {
            return Ok(file);
        }
        let components: Vec<&OsStr> = self.components.iter().map(OsString::as_os_str).collect();
        let opened = files::open_confined(&self.base, &components)?;
        if opened.id != self.id || opened.len != self.len || opened.modified != self.modified {
            return Err(OpenError::Refused(Refusal::Changed));
        }
        let file = Arc::new(opened.file);
        keep(self.key, Arc::clone(&file));
        Ok(file)
    }

    /// The kept handle, moved to the most recently used end.
    fn kept(&self) -> Option<Arc<File>> {
        let mut open = open_handles();
        let i = open.iter().position(|(key, _)| *key == self.key)?;
        let entry = open.remove(i);
        let file = Arc::clone(&entry.1);
        open.push(entry);
        Some(file)
    }

    /// Closes the kept handle, as reaching the limit would.
    #[cfg(all(test, unix))]
    pub fn close(&self) {
        open_handles().retain(|(key, _)| *key != self.key);
    }
}

impl Drop for DataFile {
    fn drop(&mut self) {
        open_handles().retain(|(key, _)| *key != self.key);
    }
}

/// Adds `file` as the handle of the data file `key`, unless one is kept already,
/// closing the least recently used beyond [`OPEN_LIMIT`].
fn keep(key: u64, file: Arc<File>) {
    let mut open = open_handles();
    if open.iter().any(|(k, _)| *k == key) {
        return;
    }
    open.push((key, file));
    if open.len() > OPEN_LIMIT {
        let excess = open.len() - OPEN_LIMIT;
        open.drain(..excess);
    }
}

#[cfg(all(test, unix))]
fn kept_handles() -> usize {
    open_handles().len()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn data_file(dir: &Path, name: &str) -> DataFile {
        let components = [OsStr::new(name)];
        let opened = files::open_confined(dir, &components).unwrap();
        DataFile::new(dir, &components, opened)
    }

    fn read(file: &DataFile) -> Result<Vec<u8>, OpenError> {
        let handle = file.handle()?;
        let mut bytes = vec![0; 4];
        files::read_exact_at(&handle, &mut bytes, 0).unwrap();
        Ok(bytes)
    }

    fn refusal(result: Result<Vec<u8>, OpenError>) -> Refusal {
        match result {
            Err(OpenError::Refused(r)) => r,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn at_most_the_limit_is_kept_open_and_closed_files_are_opened_again() {
        let dir = tempfile::tempdir().unwrap();
        let n = 3 * OPEN_LIMIT;
        let files: Vec<DataFile> = (0..n)
            .map(|i| {
                let name = format!("w{i}.bin");
                std::fs::write(dir.path().join(&name), (i as u32).to_le_bytes()).unwrap();
                let file = data_file(dir.path(), &name);
                assert!(kept_handles() <= OPEN_LIMIT);
                file
            })
            .collect();
        for _ in 0..2 {
            for (i, file) in files.iter().enumerate() {
                assert_eq!(read(file).unwrap(), (i as u32).to_le_bytes());
                assert!(kept_handles() <= OPEN_LIMIT);
            }
        }
    }

    #[test]
    fn a_file_changed_while_its_handle_was_closed_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = |name: &str| dir.path().join(name);
        for name in ["same", "other", "link", "longer", "touched", "gone"] {
            std::fs::write(path(name), b"abcd").unwrap();
        }
        std::fs::write(path("elsewhere"), b"abcd").unwrap();
        let files: Vec<DataFile> = ["same", "other", "link", "longer", "touched", "gone"]
            .iter()
            .map(|name| data_file(dir.path(), name))
            .collect();
        for file in &files {
            file.close();
        }
        std::fs::write(path("new"), b"abcd").unwrap();
        std::fs::rename(path("new"), path("other")).unwrap();
        std::fs::remove_file(path("link")).unwrap();
        std::os::unix::fs::symlink("elsewhere", path("link")).unwrap();
        std::fs::write(path("longer"), b"abcde").unwrap();
        let later = SystemTime::now() + std::time::Duration::from_secs(10);
        let touched = std::fs::File::options()
            .write(true)
            .open(path("touched"))
            .unwrap();
        touched.set_modified(later).unwrap();
        std::fs::remove_file(path("gone")).unwrap();

        assert_eq!(read(&files[0]).unwrap(), b"abcd");
        assert_eq!(refusal(read(&files[1])), Refusal::Changed);
        assert_eq!(refusal(read(&files[2])), Refusal::SymbolicLink);
        assert_eq!(refusal(read(&files[3])), Refusal::Changed);
        assert_eq!(refusal(read(&files[4])), Refusal::Changed);
        assert!(matches!(
            read(&files[5]),
            Err(OpenError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound
        ));
    }
}
