//! External tensor data: where a `TensorProto`'s `external_data` entries say its bytes
//! are ([`Location`]), and the [`Reader`] that opens them for one load, confined to the
//! model's directory, then either reads each byte range once ([`Reader::read`]) or
//! describes the range ([`Reader::describe`], an [`Extent`]) for positioned reads
//! later, chunk by chunk, through a [`DataFile`] (a bounded number kept open).

use ewise_cpu::text::quoted;
use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Refusal, Result};
use crate::files::{self, FileId, OpenError, Opened, ReadError};
use crate::handles::DataFile;
use crate::proto::TensorProto;

/// Where an external tensor's bytes are, as its `external_data` entries say, checked
/// without touching the file system.
#[derive(Debug, Clone)]
pub(crate) struct Location<'a> {
    /// The location as the model gives it.
    text: &'a str,
    /// Its components, `.` left out.
    components: Vec<&'a OsStr>,
    /// The first byte.
    offset: u64,
    /// The number of bytes: the tensor's byte size.
    len: usize,
}

impl<'a> Location<'a> {
    /// The location of `proto`'s data, a tensor of `len` bytes. Refused: no or an empty
    /// `location`; one that is absolute, has a drive prefix or a `..`
    /// ([`Refusal::OutsideDirectory`]); an `offset` or `length` that is not a
    /// non-negative integer; a `length` other than `len`.
    /// Other keys are ignored, as ONNX allows.
    pub fn parse(proto: &'a TensorProto, len: usize) -> Result<Location<'a>> {
        let name = proto.name.as_str();
        let invalid = |reason: String| Error::InvalidTensor {
            name: name.to_string(),
            reason,
        };
        let mut text = None;
        let mut offset = 0u64;
        let mut length = None;
        for entry in &proto.external_data {
            let number = |v: &str| {
                v.parse::<u64>().map_err(|_| {
                    invalid(format!(
                        "external_data {} is {} (a non-negative integer is required)",
                        entry.key,
                        quoted(v)
                    ))
                })
            };
            match entry.key.as_str() {
                "location" => text = Some(entry.value.as_str()),
                "offset" => offset = number(&entry.value)?,
                "length" => length = Some(number(&entry.value)?),
                _ => {}
            }
        }
        let text = text.filter(|l| !l.is_empty()).ok_or_else(|| {
            invalid("data_location is EXTERNAL but external_data has no location".into())
        })?;
        let mut components = Vec::new();
        for component in Path::new(text).components() {
            match component {
                Component::Normal(c) => components.push(c),
                Component::CurDir => {}
                Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                    return Err(Error::ExternalDataRefused {
                        tensor: name.to_string(),
                        location: text.to_string(),
                        reason: Refusal::OutsideDirectory,
                    })
                }
            }
        }
        if let Some(length) = length {
            if u64::try_from(len).ok() != Some(length) {
                return Err(invalid(format!(
                    "external data length is {length}, but the tensor needs {len} bytes"
                )));
            }
        }
        Ok(Location {
            text,
            components,
            offset,
            len,
        })
    }
}

/// A byte range of an external data file, checked when the model was loaded (the file
/// then held it) and read later through the handle the load opened or, once that was
/// closed, one opened again as the load opened it and checked to be the same file
/// ([`DataFile::handle`]): a link or another file put in its place afterwards is never
/// read.
#[derive(Debug)]
pub(crate) struct Extent {
    file: Arc<DataFile>,
    /// The path the file was opened by, for errors of the operating system.
    path: PathBuf,
    /// The location, as the model gives it.
    location: String,
    offset: u64,
    len: usize,
}

impl Extent {
    /// Fills `out` with the range's bytes from byte `start` of the range on, as stored
    /// (little-endian), by positioned reads, for the tensor named `tensor`.
    ///
    /// Errors: bytes beyond the range are [`Error::InvalidChunk`]; a file that now ends
    /// before them (shrunk since the load) is [`Error::ExternalDataTruncated`]; a file
    /// opened again that is refused, or is no longer the one the load checked, is
    /// [`Error::ExternalDataRefused`]; other failures are [`Error::Io`] naming the file.
    pub fn read_at(&self, tensor: &str, start: usize, out: &mut [u8]) -> Result<()> {
        let end = start.checked_add(out.len());
        if end.is_none_or(|end| end > self.len) {
            return Err(Error::InvalidChunk {
                reason: format!(
                    "{} bytes from byte {start} of tensor {}, which holds {} bytes",
                    out.len(),
                    quoted(tensor),
                    self.len
                ),
            });
        }
        let at = self.offset + start as u64;
        let file = self
            .file
            .handle()
            .map_err(|e| open_error(tensor, &self.location, &self.path, e))?;
        files::read_exact_at(&file, out, at).map_err(|source| {
            if source.kind() == std::io::ErrorKind::UnexpectedEof {
                self.truncated(tensor, &file)
            } else {
                Error::Io {
                    path: self.path.clone(),
                    source,
                }
            }
        })
    }

    /// The whole range, as stored, in a buffer reserved fallibly
    /// ([`Error::OutOfMemory`]); errors as for [`Extent::read_at`].
    pub fn read_all(&self, tensor: &str) -> Result<Vec<u8>> {
        let mut data = Vec::new();
        data.try_reserve_exact(self.len)
            .map_err(|_| Error::OutOfMemory {
                what: format!(
                    "the external data of tensor {} (location {}, offset {})",
                    quoted(tensor),
                    quoted(&self.location),
                    self.offset
                ),
                bytes: self.len as u64,
            })?;
        data.resize(self.len, 0);
        self.read_at(tensor, 0, &mut data)?;
        Ok(data)
    }

    /// The error for a file that ended before the range: its size now, from `file`.
    fn truncated(&self, tensor: &str, file: &std::fs::File) -> Error {
        Error::ExternalDataTruncated {
            tensor: tensor.to_string(),
            location: self.location.clone(),
            offset: self.offset,
            len: self.len as u64,
            size: file.metadata().map_or(0, |m| m.len()),
        }
    }
}

/// The error of opening `location` (opened by `path`) for the tensor named `tensor`.
fn open_error(tensor: &str, location: &str, path: &Path, e: OpenError) -> Error {
    match e {
        OpenError::Refused(reason) => Error::ExternalDataRefused {
            tensor: tensor.to_string(),
            location: location.to_string(),
            reason,
        },
        OpenError::Io(source) => Error::Io {
            path: path.to_path_buf(),
            source,
        },
    }
}

/// Opens the external data of one load. Each location is opened under the model's
/// directory with [`files::open_confined`] (no symbolic links, regular files only) and
/// the claimed range is checked against the file's size. [`Reader::read`] then reads
/// it, allocating fallibly, a range of a file read already (the same file, offset and
/// length) shared, not read again; [`Reader::describe`] keeps the file instead (one
/// [`DataFile`] per file, its handle among a bounded number kept open) and returns the
/// range as an [`Extent`], one per range. At most one file is open at a time beyond
/// those [`DataFile`]s keep, however many files the model names.
#[derive(Debug)]
pub(crate) struct Reader<'a> {
    base: Option<&'a Path>,
    files: Vec<PathBuf>,
    opened: HashSet<FileId>,
    ranges: HashMap<(FileId, u64, usize), Arc<Vec<u8>>>,
    data_files: HashMap<FileId, Arc<DataFile>>,
    extents: HashMap<(FileId, u64, usize), Arc<Extent>>,
    reads: usize,
}

impl<'a> Reader<'a> {
    /// A reader resolving locations under `base` (the model's directory); without one,
    /// every read fails.
    pub fn new(base: Option<&'a Path>) -> Reader<'a> {
        Reader {
            base,
            files: Vec::new(),
            opened: HashSet::new(),
            ranges: HashMap::new(),
            data_files: HashMap::new(),
            extents: HashMap::new(),
            reads: 0,
        }
    }

    /// Opens `location` for the tensor named `tensor` and checks its range against the
    /// file's size; returns the opened file and the path it was opened by. Errors name
    /// the tensor, the location and the reason.
    fn open(&mut self, tensor: &str, location: &Location<'_>) -> Result<(Opened, PathBuf)> {
        let text = location.text;
        let base = self.base(tensor, text)?;
        let path = location
            .components
            .iter()
            .fold(base.to_path_buf(), |path, c| path.join(c));
        let opened = files::open_confined(base, &location.components)
            .map_err(|e| open_error(tensor, text, &path, e))?;
        let (offset, len) = (location.offset, location.len);
        let end = u64::try_from(len).ok().and_then(|n| offset.checked_add(n));
        if end.is_none_or(|end| end > opened.len) {
            return Err(Error::InvalidTensor {
                name: tensor.to_string(),
                reason: format!(
                    "external data claims {len} bytes at offset {offset} of {}, which has {} bytes",
                    quoted(text),
                    opened.len
                ),
            });
        }
        if self.opened.insert(opened.id.clone()) {
            self.files.push(path.clone());
        }
        Ok((opened, path))
    }

    /// The model's directory, which the location `text` of the tensor named `tensor`
    /// needs; an error if none was given.
    fn base(&self, tensor: &str, text: &str) -> Result<&'a Path> {
        self.base.ok_or_else(|| Error::InvalidTensor {
            name: tensor.to_string(),
            reason: format!(
                "external data location {} needs the model's directory, but none was given",
                quoted(text)
            ),
        })
    }

    /// The little-endian bytes at `location`, for the tensor named `tensor` (named in
    /// errors with the location and the reason).
    pub fn read(&mut self, tensor: &str, location: &Location<'_>) -> Result<Arc<Vec<u8>>> {
        let (mut opened, path) = self.open(tensor, location)?;
        let (offset, len) = (location.offset, location.len);
        let key = (opened.id.clone(), offset, len);
        if let Some(data) = self.ranges.get(&key) {
            return Ok(Arc::clone(data));
        }
        let data = files::read_range(&mut opened.file, offset, len).map_err(|e| match e {
            ReadError::OutOfMemory => Error::OutOfMemory {
                what: format!(
                    "the external data of tensor {} (location {}, offset {offset})",
                    quoted(tensor),
                    quoted(location.text)
                ),
                bytes: u64::try_from(len).unwrap_or(u64::MAX),
            },
            ReadError::Io(source) => Error::Io { path, source },
        })?;
        self.reads += 1;
        let data = Arc::new(data);
        self.ranges.insert(key, Arc::clone(&data));
        Ok(data)
    }

    /// The range at `location`, for the tensor named `tensor`, opened and checked as
    /// [`Reader::read`] does but not read: the file is kept as a [`DataFile`] (the first
    /// handle opened to it and the way it was reached, whatever location names it later)
    /// and the range is returned for positioned reads later. One range (file, offset,
    /// length) named many times gives one [`Extent`].
    pub fn describe(&mut self, tensor: &str, location: &Location<'_>) -> Result<Arc<Extent>> {
        let (opened, path) = self.open(tensor, location)?;
        let key = (opened.id.clone(), location.offset, location.len);
        if let Some(extent) = self.extents.get(&key) {
            return Ok(Arc::clone(extent));
        }
        let base = self.base(tensor, location.text)?;
        let file = Arc::clone(
            self.data_files
                .entry(opened.id.clone())
                .or_insert_with(|| Arc::new(DataFile::new(base, &location.components, opened))),
        );
        let extent = Arc::new(Extent {
            file,
            path,
            location: location.text.to_string(),
            offset: location.offset,
            len: location.len,
        });
        self.extents.insert(key, Arc::clone(&extent));
        Ok(extent)
    }

    /// How many ranges were read from files (ranges shared are counted once).
    #[cfg(test)]
    pub fn reads(&self) -> usize {
        self.reads
    }

    /// The files opened, each once (by identity), in first-use order, under the path
    /// they were first opened by: the directory joined with the location's components
    /// (`.` left out).
    pub fn into_files(self) -> Vec<PathBuf> {
        self.files
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{DataLocation, StringStringEntryProto};

    fn external(name: &str, location: &str, offset: u64) -> TensorProto {
        let entry = |key: &str, value: String| StringStringEntryProto {
            key: key.into(),
            value,
        };
        TensorProto {
            name: name.into(),
            data_type: 2,
            dims: vec![4],
            data_location: DataLocation::External as i32,
            external_data: vec![
                entry("location", location.into()),
                entry("offset", offset.to_string()),
            ],
            ..TensorProto::default()
        }
    }

    #[test]
    fn one_range_named_twice_is_read_once_and_shared() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("w.bin"), [1u8, 2, 3, 4, 5, 6, 7, 8]).unwrap();
        let protos = [
            external("a", "w.bin", 0),
            external("b", "./w.bin", 0),
            external("c", "w.bin", 4),
        ];
        let mut reader = Reader::new(Some(dir.path()));
        let read: Vec<Arc<Vec<u8>>> = protos
            .iter()
            .map(|p| {
                let location = Location::parse(p, 4).unwrap();
                reader.read(&p.name, &location).unwrap()
            })
            .collect();
        assert_eq!(*read[0], [1, 2, 3, 4]);
        assert!(Arc::ptr_eq(&read[0], &read[1]));
        assert_eq!(*read[2], [5, 6, 7, 8]);
        assert_eq!(reader.reads(), 2);
        assert_eq!(reader.into_files(), [dir.path().join("w.bin")]);
    }

    #[test]
    fn locations_leaving_the_directory_are_refused_before_any_file_is_touched() {
        for location in ["../w.bin", "/etc/passwd", "a/../../w.bin"] {
            let proto = external("w", location, 0);
            assert!(matches!(
                Location::parse(&proto, 4),
                Err(Error::ExternalDataRefused {
                    reason: Refusal::OutsideDirectory,
                    ..
                })
            ));
        }
    }
}
