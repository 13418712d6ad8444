//! The inputs of `ewise run`: `-i NAME=FILE` matched with the model's inputs, and their
//! data read in chunks, read whole, or drained.

use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};
use ewise_cli::npy::{swap_bytes, Header, TypeStr, RAW_TYPES};
use ewise_onnx::{dtype, DataType, Model};

use crate::input::NpyInput;
use crate::interrupt;
use crate::paths::{at, describe_io};
use crate::stream::CHUNK_BYTES;

/// An input file, opened and matched with the graph input it is given for.
pub(super) struct Source {
    pub(super) name: String,
    pub(super) file: NpyInput,
    pub(super) data_type: DataType,
    pub(super) shape: Vec<usize>,
}

/// Opens every `-i NAME=FILE`, checking names and element types against the model.
pub(super) fn open_inputs(model: &Model, given: &[(String, PathBuf)]) -> Result<Vec<Source>> {
    let accepted = || {
        let names: Vec<&str> = model.inputs().iter().map(|i| i.name.as_str()).collect();
        if names.is_empty() {
            "the model takes no inputs".to_string()
        } else {
            format!("its inputs: {}", names.join(", "))
        }
    };
    for (i, (name, path)) in given.iter().enumerate() {
        if let Some((_, first)) = given[..i].iter().find(|(n, _)| n == name) {
            bail!(
                "input {name:?} is given twice (-i {name}={} and -i {name}={})",
                first.display(),
                path.display()
            );
        }
        if model.input(name).is_none() {
            bail!(
                "-i {name}={}: {name:?} is not an input of the model ({})",
                path.display(),
                accepted()
            );
        }
    }
    for input in model.inputs() {
        if !input.has_default && !given.iter().any(|(n, _)| *n == input.name) {
            let required: Vec<&str> = model
                .inputs()
                .iter()
                .filter(|i| !i.has_default)
                .map(|i| i.name.as_str())
                .collect();
            bail!(
                "input {:?} ({} {}) is required but was not given (pass -i {}=FILE.npy; required: {})",
                input.name,
                dtype::name(input.data_type),
                declared_shape(input),
                input.name,
                required.join(", ")
            );
        }
    }
    given
        .iter()
        .map(|(name, path)| {
            let declared = model.input(name).map_or(DataType::Unknown, |i| i.data_type);
            open_input(name, path, declared)
        })
        .collect()
}

fn declared_shape(input: &ewise_onnx::ValueInfo) -> String {
    match &input.shape {
        None => "of any shape".to_string(),
        Some(dims) => {
            let dims: Vec<String> = dims.iter().map(ToString::to_string).collect();
            format!("[{}]", dims.join(", "))
        }
    }
}

/// Opens the file for input `name`, which the model declares as `declared`.
fn open_input(name: &str, path: &Path, declared: DataType) -> Result<Source> {
    let requested = match peek_type(path) {
        Some(ts) if ts.kind == 'V' || (ts.kind == 'f' && ts.size == 1) => {
            if RAW_TYPES.contains(&declared) && declared.size_in_bytes() == Some(ts.size) {
                Some(declared)
            } else {
                return Err(at(
                    path,
                    format!(
                        "input {name:?} holds raw {}-byte items ('{ts}'), but the model declares it as {} (raw items are read only for inputs declared as bfloat16, 2 bytes, or float8, 1 byte)",
                        ts.size,
                        dtype::name(declared)
                    ),
                ));
            }
        }
        _ => None,
    };
    let file = NpyInput::open(path, requested, false)?;
    let data_type = file.element.data_type;
    if data_type != declared {
        return Err(at(
            path,
            format!(
                "input {name:?} is {} ('{}'), but the model declares it as {}",
                dtype::name(data_type),
                file.header.descr,
                dtype::name(declared)
            ),
        ));
    }
    let shape = file
        .header
        .shape
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<Vec<usize>, _>>()
        .map_err(|_| {
            at(
                path,
                format!(
                    "shape {} is too large for this machine",
                    file.header.shape_text()
                ),
            )
        })?;
    Ok(Source {
        name: name.to_string(),
        file,
        data_type,
        shape,
    })
}

/// The type string of a regular `.npy` file, if its header can be read; errors are left
/// to [`NpyInput::open`], which reports them. A FIFO or device is not opened here (it is
/// opened once, by [`NpyInput::open`]).
fn peek_type(path: &Path) -> Option<TypeStr> {
    if !fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let mut file = File::open(path).ok()?;
    let parsed = Header::read(&mut file).ok()?;
    TypeStr::parse(&parsed.header.descr).ok()
}

/// Reads an input's whole data, row-major, in this machine's byte order.
pub(super) fn read_data(source: &mut Source) -> Result<Vec<u8>> {
    let file = &mut source.file;
    let size = file.element.size();
    let len = file
        .count
        .checked_mul(size as u64)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| anyhow!("the data is too large for this machine's memory"))?;
    let mut data = Vec::new();
    data.try_reserve_exact(len)
        .map_err(|_| anyhow!("cannot allocate {len} bytes for the data"))?;
    (&mut file.file)
        .take(len as u64)
        .read_to_end(&mut data)
        .map_err(|e| anyhow!(describe_io("read failed", &e)))?;
    if data.len() != len {
        bail!(
            "truncated: shape {} of '{}' needs {len} bytes of data, but only {} follow the header",
            file.header.shape_text(),
            file.header.descr,
            data.len()
        );
    }
    if file.element.needs_swap() {
        swap_bytes(&mut data, size);
    }
    if file.header.fortran_order && source.shape.len() > 1 {
        data = fortran_to_c(&data, &source.shape, size);
    }
    Ok(data)
}

/// Fills `buf` with the next bytes of an input's data, in this machine's byte order;
/// `done` bytes of it were read before. A file that ends early is reported with the
/// bytes the shape needs and, for a regular file (shrunk by another program while it
/// was read), the bytes it now holds after the header, or for a pipe the bytes it
/// delivered.
pub(super) fn read_chunk(file: &mut NpyInput, buf: &mut [u8], done: u64) -> Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.file.read(&mut buf[filled..]) {
            Ok(0) => return Err(ended_early(file, done + filled as u64)),
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => bail!(describe_io("read failed", &e)),
        }
    }
    if file.element.needs_swap() {
        swap_bytes(buf, file.element.size());
    }
    Ok(())
}

/// The error for an input's data ending after `read` bytes: the bytes its shape needs,
/// and what a regular file now holds after its header (it was complete when opened, so
/// it shrank meanwhile) or how many bytes a pipe delivered.
fn ended_early(file: &NpyInput, read: u64) -> anyhow::Error {
    let needed = file.count.saturating_mul(file.element.size() as u64);
    let what = format!(
        "shape {} of '{}' needs {needed} bytes of data",
        file.header.shape_text(),
        file.header.descr
    );
    match file.file.metadata() {
        Ok(meta) if meta.is_file() => anyhow!(
            "truncated while being read: {what}, but the file now holds {} bytes after the header (it ended after {read} bytes of data were read)",
            meta.len().saturating_sub(file.data_offset)
        ),
        _ => anyhow!("truncated: {what}, but the pipe ended after {read} bytes of data"),
    }
}

/// Reads and discards the data of a given input that no output derives from, when it
/// is a pipe: its writer is not left blocked, and a pipe that ends early is reported.
/// A regular file's length was checked when it was opened.
pub(super) fn drain(mut source: Source) -> Result<()> {
    let file = &mut source.file;
    if file.file.metadata().is_ok_and(|m| m.is_file()) {
        return Ok(());
    }
    let total = file.count.saturating_mul(file.element.size() as u64);
    let mut buf = vec![0u8; usize::try_from(total).map_or(CHUNK_BYTES, |t| t.min(CHUNK_BYTES))];
    let mut done = 0u64;
    while done < total {
        interrupt::check()?;
        let n = usize::try_from(total - done).map_or(buf.len(), |r| r.min(buf.len()));
        let path = file.path.clone();
        read_chunk(file, &mut buf[..n], done).map_err(|e| at(&path, e))?;
        done += n as u64;
    }
    Ok(())
}

/// Reorders the elements of a column-major array of `shape` into row-major order.
pub(super) fn fortran_to_c(data: &[u8], shape: &[usize], size: usize) -> Vec<u8> {
    let mut strides = Vec::with_capacity(shape.len());
    let mut stride = 1;
    for &d in shape {
        strides.push(stride);
        stride *= d;
    }
    let count = data.len() / size;
    let mut index = vec![0usize; shape.len()];
    let mut out = Vec::with_capacity(data.len());
    for _ in 0..count {
        let at: usize = index.iter().zip(&strides).map(|(i, s)| i * s).sum();
        out.extend_from_slice(&data[at * size..(at + 1) * size]);
        for (i, &d) in index.iter_mut().zip(shape).rev() {
            *i += 1;
            if *i < d {
                break;
            }
            *i = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fortran_order_is_reordered_to_row_major() {
        let data: Vec<u8> = (0..6).collect();
        assert_eq!(fortran_to_c(&data, &[2, 3], 1), [0, 2, 4, 1, 3, 5]);
        let wide: Vec<u8> = (0..12).collect();
        assert_eq!(
            fortran_to_c(&wide, &[3, 2], 2),
            [0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11]
        );
        assert_eq!(fortran_to_c(&[], &[0, 4], 4), Vec::<u8>::new());
    }
}
