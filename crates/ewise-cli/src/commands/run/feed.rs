//! Where a streamed source's bytes come from: an input file read chunk by chunk, or
//! bytes held in memory (an initializer, an input's default, or a column-major input
//! reordered). Either way a [`Feed`] hands out consecutive element ranges, row-major, in
//! this machine's byte order.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::inputs::{read_chunk, read_data, Source};
use crate::paths::at;

/// A source of elements, read front to back in chunks.
pub(super) struct Feed<'a> {
    kind: Kind<'a>,
    /// Bytes per element.
    size: usize,
    /// Where the bytes come from, for error messages.
    origin: PathBuf,
    /// The source's name in the model.
    name: String,
}

enum Kind<'a> {
    /// An input file positioned at the data of the next chunk, with the buffer chunks
    /// are read into.
    File { source: Source, buffer: Vec<u8> },
    /// Every element, held whole.
    Memory(Cow<'a, [u8]>),
}

impl<'a> Feed<'a> {
    /// The elements of input `source`, of `size` bytes each, read in chunks of at most
    /// `chunk` elements. A column-major input of more than one dimension is read and
    /// reordered whole here.
    pub(super) fn input(mut source: Source, size: usize, chunk: usize) -> Result<Feed<'a>> {
        let origin = source.file.path.clone();
        let name = source.name.clone();
        let kind = if source.file.header.fortran_order && source.shape.len() > 1 {
            Kind::Memory(Cow::Owned(
                read_data(&mut source).map_err(|e| at(&origin, e))?,
            ))
        } else {
            let len = chunk.saturating_mul(size);
            let mut buffer = Vec::new();
            buffer.try_reserve_exact(len).map_err(|_| {
                at(
                    &origin,
                    format!("cannot allocate {len} bytes for a chunk of input {name:?}"),
                )
            })?;
            buffer.resize(len, 0);
            Kind::File { source, buffer }
        };
        Ok(Feed {
            kind,
            size,
            origin,
            name,
        })
    }

    /// The elements of `bytes`, of `size` bytes each: a source the model holds, named
    /// `name` in the model file `model`.
    pub(super) fn memory(bytes: &'a [u8], size: usize, model: &Path, name: &str) -> Feed<'a> {
        Feed {
            kind: Kind::Memory(Cow::Borrowed(bytes)),
            size,
            origin: model.to_path_buf(),
            name: name.to_string(),
        }
    }

    /// The `n` elements from element `start` on: the next chunk, as chunks are asked for
    /// in order from element 0. A file chunk is at most the `chunk` given to
    /// [`Feed::input`].
    pub(super) fn chunk(&mut self, start: usize, n: usize) -> Result<&[u8]> {
        let (from, len) = (start * self.size, n * self.size);
        match &mut self.kind {
            Kind::File { source, buffer } => {
                let buf = &mut buffer[..len];
                read_chunk(&mut source.file, buf, from as u64).map_err(|e| at(&self.origin, e))?;
                Ok(buf)
            }
            Kind::Memory(data) => {
                let held = data.len();
                data.get(from..from + len).ok_or_else(|| {
                    at(
                        &self.origin,
                        format!(
                            "the data of {:?} holds {held} bytes, fewer than its shape needs",
                            self.name
                        ),
                    )
                })
            }
        }
    }
}
