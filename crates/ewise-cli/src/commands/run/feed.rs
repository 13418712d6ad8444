//! Where a streamed source's bytes come from: an input file read chunk by chunk (in
//! file order, or a column-major one panel by panel with positioned reads), an
//! initializer or input default in an external data file read chunk by chunk with
//! positioned reads ([`Streaming::read_initializer`]), or bytes held in memory (an
//! initializer or input default stored in the `.onnx` file, or a column-major input
//! from a pipe, reordered whole). Either way a [`Feed`] hands out consecutive element
//! ranges, row-major, in this machine's byte order.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use anyhow::Result;
use ewise_onnx::Streaming;

use super::fortran::{self, ColumnMajor};
use super::inputs::{read_chunk, read_data, Source};
use crate::paths::at;

/// A source of elements, read front to back in chunks.
pub(super) struct Feed<'a> {
    kind: Kind<'a>,
    /// The buffer [`Feed::chunk`] reads file chunks into, allocated on first use.
    buffer: Vec<u8>,
    /// Bytes per element.
    size: usize,
    /// Where the bytes come from, for error messages.
    origin: PathBuf,
    /// The source's name in the model.
    name: String,
}

enum Kind<'a> {
    /// An input file positioned at the data of the next chunk.
    File(Source),
    /// A column-major input file (a regular file), reordered by `reader`.
    Columns {
        source: Source,
        reader: Box<ColumnMajor>,
    },
    /// Every element, held whole.
    Memory(Cow<'a, [u8]>),
    /// Source `source` of `plan`, which the model holds in an external data file.
    External { plan: &'a Streaming, source: usize },
}

impl<'a> Feed<'a> {
    /// The elements of input `source`, of `size` bytes each, read in chunks of at most
    /// `chunk` elements. A column-major input with more than one axis longer than 1 is
    /// reordered as it is read: from a regular file panel by panel with positioned reads
    /// ([`ColumnMajor`], its panel holding about as many bytes as the chunk, and at least
    /// [`fortran::PANEL_BYTES`]); from a pipe, which can only be read in order, whole,
    /// here.
    pub(super) fn input(mut source: Source, size: usize, chunk: usize) -> Result<Feed<'a>> {
        let origin = source.file.path.clone();
        let name = source.name.clone();
        let column_major = source.file.header.fortran_order && fortran::reorders(&source.shape);
        let kind = if column_major && !fortran::positioned(&source.file.file) {
            Kind::Memory(Cow::Owned(
                read_data(&mut source).map_err(|e| at(&origin, e))?,
            ))
        } else if column_major {
            let budget = chunk.saturating_mul(size).max(fortran::PANEL_BYTES);
            let reader =
                ColumnMajor::new(&source.shape, size, budget).map_err(|e| at(&origin, e))?;
            Kind::Columns {
                source,
                reader: Box::new(reader),
            }
        } else {
            Kind::File(source)
        };
        Ok(Feed {
            kind,
            buffer: Vec::new(),
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
            buffer: Vec::new(),
            size,
            origin: model.to_path_buf(),
            name: name.to_string(),
        }
    }

    /// Source `source` of `plan`, of `size` bytes per element, which the model holds in
    /// an external data file (its [`Streaming::initializer_bytes`] are `None`): each
    /// chunk read with [`Streaming::read_initializer`]. Named `name` in the model file
    /// `model`.
    pub(super) fn external(
        plan: &'a Streaming,
        source: usize,
        size: usize,
        model: &Path,
        name: &str,
    ) -> Feed<'a> {
        Feed {
            kind: Kind::External { plan, source },
            buffer: Vec::new(),
            size,
            origin: model.to_path_buf(),
            name: name.to_string(),
        }
    }

    /// The `n` elements from element `start` on: the next chunk, as chunks are asked for
    /// in order from element 0. A file's chunk is read into a buffer of the feed, grown
    /// (fallibly) to the longest chunk asked for; bytes held in memory are lent as they
    /// are.
    pub(super) fn chunk(&mut self, start: usize, n: usize) -> Result<&[u8]> {
        let (from, len) = (start * self.size, n * self.size);
        if !matches!(self.kind, Kind::Memory(_)) {
            let role = match self.kind {
                Kind::External { .. } => "initializer",
                _ => "input",
            };
            if self.buffer.len() < len {
                self.buffer
                    .try_reserve_exact(len - self.buffer.len())
                    .map_err(|_| {
                        at(
                            &self.origin,
                            format!(
                                "cannot allocate {len} bytes for a chunk of {role} {:?}",
                                self.name
                            ),
                        )
                    })?;
                self.buffer.resize(len, 0);
            }
            let mut buffer = std::mem::take(&mut self.buffer);
            let read = self.read_into(start, &mut buffer[..len]);
            self.buffer = buffer;
            read?;
        }
        match &self.kind {
            Kind::Memory(data) => data
                .get(from..from + len)
                .ok_or_else(|| short(&self.origin, &self.name, data.len())),
            _ => Ok(&self.buffer[..len]),
        }
    }

    /// Fills `out` with the elements from element `start` on (a whole number of them):
    /// the next chunk, as [`Feed::chunk`] gives it, without the feed's own buffer.
    pub(super) fn read_into(&mut self, start: usize, out: &mut [u8]) -> Result<()> {
        let from = start * self.size;
        match &mut self.kind {
            Kind::File(source) => {
                read_chunk(&mut source.file, out, from as u64).map_err(|e| at(&self.origin, e))
            }
            Kind::Columns { source, reader } => reader
                .read(&source.file, start, out)
                .map_err(|e| at(&self.origin, e)),
            Kind::Memory(data) => {
                let bytes = data
                    .get(from..from + out.len())
                    .ok_or_else(|| short(&self.origin, &self.name, data.len()))?;
                out.copy_from_slice(bytes);
                Ok(())
            }
            Kind::External { plan, source } => plan
                .read_initializer(*source, start, out)
                .map_err(|e| at(&self.origin, format!("run failed: {e}"))),
        }
    }
}

/// The error for bytes held in memory that are fewer (`held`) than the shape of source
/// `name` needs.
fn short(origin: &Path, name: &str, held: usize) -> anyhow::Error {
    at(
        origin,
        format!("the data of {name:?} holds {held} bytes, fewer than its shape needs"),
    )
}
