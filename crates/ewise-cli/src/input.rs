//! Opening a `.npy` input: header, element type, and the check that the data is there.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};
use ewise_cli::npy::{ElementType, Header};
use ewise_cpu::DataType;

use crate::paths::{at, describe_io};

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

impl NpyInput {
    /// Opens `path` for reading (and writing, for in-place runs) and checks that the
    /// header is sound and the file holds all the data it promises.
    pub fn open(path: &Path, requested: Option<DataType>, write: bool) -> Result<NpyInput> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(write)
            .open(path)
            .map_err(|e| at(path, describe_io("cannot open", &e)))?;
        let meta = file
            .metadata()
            .map_err(|e| at(path, describe_io("cannot read metadata", &e)))?;
        if meta.is_dir() {
            return Err(at(path, "is a directory, not a .npy file"));
        }
        let parsed = Header::read(&mut file).map_err(|e| at(path, e))?;
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
        if meta.is_file() {
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
        } else if write {
            return Err(anyhow!(
                "{}: not a regular file, cannot rewrite it in place",
                path.display()
            ));
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
}
