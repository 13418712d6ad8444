//! The data path: elements move through fixed-size buffers, chunk by chunk, in the
//! order they are stored, so memory stays bounded whatever the file size.

use std::io::Read;

use anyhow::Result;
use ewise_cli::npy::{swap_bytes, ElementType};

use crate::input::NpyInput;
use crate::interrupt;
use crate::job::Kernels;
use crate::output::Output;
use crate::paths::{at, describe_io};
use crate::positioned::{ReadAt, WriteAt};
use crate::progress::Progress;

/// Bytes of input per chunk. The buffers of a run total at most twice this.
pub const CHUNK_BYTES: usize = 4 << 20;

fn chunk_elements(element_size: usize, count: u64) -> usize {
    let most = CHUNK_BYTES / element_size;
    usize::try_from(count).map_or(most, |c| c.min(most))
}

/// Reads every element of `input` (positioned at its data), applies the operator and
/// writes the results, in `output`'s byte order, to `out`.
pub fn transform(
    input: &mut NpyInput,
    output: ElementType,
    kernels: &mut Kernels,
    out: &mut Output,
    progress: &Progress,
) -> Result<()> {
    let (in_size, out_size) = (input.element.size(), output.size());
    let chunk = chunk_elements(in_size, input.count);
    let mut src = vec![0u8; chunk * in_size];
    let mut dst = vec![0u8; chunk * out_size];
    let mut remaining = input.count;
    while remaining > 0 {
        let n = chunk.min(usize::try_from(remaining).unwrap_or(usize::MAX));
        let (src, dst) = (&mut src[..n * in_size], &mut dst[..n * out_size]);
        input
            .file
            .read_exact(src)
            .map_err(|e| at(&input.path, describe_io("read failed", &e)))?;
        interrupt::check()?;
        if input.element.needs_swap() {
            swap_bytes(src, in_size);
        }
        kernels.get(n)?.execute_slices(src, dst)?;
        if output.needs_swap() {
            swap_bytes(dst, out_size);
        }
        out.write_all(dst)?;
        remaining -= n as u64;
        progress.advance(src.len() as u64);
    }
    Ok(())
}

/// Applies SIGN to `input`'s data where it lies, chunk by chunk: each chunk is read,
/// computed and written back to the same bytes. The header is never written. A file
/// truncated by another program meanwhile stops the run with an error before the next
/// read or write ([`NpyInput::check_not_truncated`]), so it is never grown again.
pub fn transform_in_place(
    input: &NpyInput,
    kernels: &mut Kernels,
    progress: &Progress,
) -> Result<()> {
    let size = input.element.size();
    let chunk = chunk_elements(size, input.count);
    let mut buf = vec![0u8; chunk * size];
    let mut done = 0u64;
    while done < input.count {
        if interrupt::requested() {
            anyhow::bail!(
                "{}: interrupted after {done} of {} elements; run the same command again to finish (SIGN is idempotent)",
                input.path.display(),
                input.count
            );
        }
        let n = chunk.min(usize::try_from(input.count - done).unwrap_or(usize::MAX));
        let data = &mut buf[..n * size];
        let offset = input.data_offset + done * size as u64;
        input.check_not_truncated(done)?;
        input.file.read_exact_at(data, offset).map_err(|e| {
            input
                .check_not_truncated(done)
                .err()
                .unwrap_or_else(|| at(&input.path, describe_io("read failed", &e)))
        })?;
        if input.element.needs_swap() {
            swap_bytes(data, size);
        }
        kernels.get(n)?.execute_in_place_slice(data)?;
        if input.element.needs_swap() {
            swap_bytes(data, size);
        }
        input.check_not_truncated(done)?;
        input
            .file
            .write_all_at(data, offset)
            .map_err(|e| at(&input.path, describe_io("write failed", &e)))?;
        done += n as u64;
        progress.advance(data.len() as u64);
    }
    input
        .file
        .sync_data()
        .map_err(|e| at(&input.path, describe_io("write failed", &e)))
}
