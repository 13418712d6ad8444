//! External tensor data: where a `TensorProto`'s `external_data` entries say its bytes
//! are ([`Location`]), and the [`Reader`] that fetches them for one load, confined to
//! the model's directory, each byte range read once.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Refusal, Result};
use crate::files::{self, FileId, OpenError, ReadError};
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
                        "external_data {} is {v:?} (a non-negative integer is required)",
                        entry.key
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

/// Reads the external data of one load. Each location is opened under the model's
/// directory with [`files::open_confined`] (no symbolic links, regular files only); the
/// claimed range is checked against the file's size before any allocation, and the
/// allocation itself is fallible; a range of a file that was read already (the same
/// file, offset and length) is shared, not read again.
#[derive(Debug)]
pub(crate) struct Reader<'a> {
    base: Option<&'a Path>,
    files: Vec<PathBuf>,
    opened: HashSet<FileId>,
    ranges: HashMap<(FileId, u64, usize), Arc<Vec<u8>>>,
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
            reads: 0,
        }
    }

    /// The little-endian bytes at `location`, for the tensor named `tensor` (named in
    /// errors with the location and the reason).
    pub fn read(&mut self, tensor: &str, location: &Location<'_>) -> Result<Arc<Vec<u8>>> {
        let text = location.text;
        let base = self.base.ok_or_else(|| Error::InvalidTensor {
            name: tensor.to_string(),
            reason: format!(
                "external data location {text:?} needs the model's directory, but none was given"
            ),
        })?;
        let path = location
            .components
            .iter()
            .fold(base.to_path_buf(), |path, c| path.join(c));
        let io = |source| Error::Io {
            path: path.clone(),
            source,
        };
        let mut opened = match files::open_confined(base, &location.components) {
            Ok(opened) => opened,
            Err(OpenError::Refused(reason)) => {
                return Err(Error::ExternalDataRefused {
                    tensor: tensor.to_string(),
                    location: text.to_string(),
                    reason,
                })
            }
            Err(OpenError::Io(source)) => return Err(io(source)),
        };
        let (offset, len) = (location.offset, location.len);
        let end = u64::try_from(len).ok().and_then(|n| offset.checked_add(n));
        if end.is_none_or(|end| end > opened.len) {
            return Err(Error::InvalidTensor {
                name: tensor.to_string(),
                reason: format!(
                    "external data claims {len} bytes at offset {offset} of {text:?}, which has {} bytes",
                    opened.len
                ),
            });
        }
        if self.opened.insert(opened.id.clone()) {
            self.files.push(path.clone());
        }
        let key = (opened.id.clone(), offset, len);
        if let Some(data) = self.ranges.get(&key) {
            return Ok(Arc::clone(data));
        }
        let data = files::read_range(&mut opened.file, offset, len).map_err(|e| match e {
            ReadError::OutOfMemory => Error::OutOfMemory {
                what: format!(
                    "the external data of tensor {tensor:?} (location {text:?}, offset {offset})"
                ),
                bytes: u64::try_from(len).unwrap_or(u64::MAX),
            },
            ReadError::Io(source) => io(source),
        })?;
        self.reads += 1;
        let data = Arc::new(data);
        self.ranges.insert(key, Arc::clone(&data));
        Ok(data)
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
