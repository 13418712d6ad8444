//! The data path on the GPU: [`ewise_gpu::stream`] moves the elements through a ring
//! of GPU buffers, chunk by chunk, while the ends here read them from the input file and
//! write the results out. Memory stays bounded, on the host and on the GPU, whatever
//! the file size: on the GPU, [`ewise_gpu::stream::SLOTS`] sets of four buffers (upload,
//! input, output, download), each at most [`GPU_CHUNK_BYTES`] long.

use std::io::Read;

use anyhow::Result;
use ewise_cli::npy::{swap_bytes, ElementType};
use ewise_cpu::DataType;
use ewise_gpu::stream::{ChunkEnds, GpuStream, StreamOp, DEFAULT_CHUNK_BYTES};
use ewise_gpu::{GpuDevice, GpuError};

use crate::input::NpyInput;
use crate::interrupt;
use crate::job::{Job, Op};
use crate::output::Output;
use crate::paths::{at, describe_io};
use crate::positioned::{ReadAt, WriteAt};
use crate::progress::Progress;

/// Bytes of input per chunk.
pub const GPU_CHUNK_BYTES: usize = DEFAULT_CHUNK_BYTES;

/// The GPU stream of a run, or why the job cannot run on the device (reported when the
/// run starts, as compiling the first chunk would).
pub struct GpuKernels {
    stream: std::result::Result<GpuStream, GpuError>,
}

impl GpuKernels {
    /// The stream applying `job` to `input` elements, giving `output` elements, on
    /// `device`.
    pub fn new(job: &Job, device: GpuDevice, input: DataType, output: DataType) -> GpuKernels {
        let op = match job.op {
            Op::Sign(policy) => StreamOp::Sign(policy),
            Op::IsInfinity(mode) => StreamOp::IsInfinity(mode),
        };
        GpuKernels {
            stream: GpuStream::new(&device, op, input, output, GPU_CHUNK_BYTES),
        }
    }

    fn stream(&mut self) -> Result<&mut GpuStream> {
        self.stream.as_mut().map_err(|e| e.clone().into())
    }
}

/// A file read in order into an atomic output.
struct ToFile<'a> {
    input: &'a mut NpyInput,
    output: ElementType,
    out: &'a mut Output,
    progress: &'a Progress,
    swapped: Vec<u8>,
}

impl ChunkEnds for ToFile<'_> {
    type Error = anyhow::Error;

    fn read(&mut self, _start: u64, bytes: &mut [u8]) -> Result<()> {
        self.input
            .file
            .read_exact(bytes)
            .map_err(|e| at(&self.input.path, describe_io("read failed", &e)))?;
        if self.input.element.needs_swap() {
            swap_bytes(bytes, self.input.element.size());
        }
        Ok(())
    }

    fn write(&mut self, _start: u64, outputs: &[&[u8]]) -> Result<()> {
        let bytes = only(outputs)?;
        if self.output.needs_swap() {
            self.swapped.clear();
            self.swapped.extend_from_slice(bytes);
            swap_bytes(&mut self.swapped, self.output.size());
            self.out.write_all(&self.swapped)?;
        } else {
            self.out.write_all(bytes)?;
        }
        let in_bytes = bytes.len() / self.output.size() * self.input.element.size();
        self.progress.advance(in_bytes as u64);
        Ok(())
    }

    fn stop_before(&mut self, _start: u64) -> Result<bool> {
        interrupt::check()?;
        Ok(false)
    }
}

/// Reads every element of `input` (positioned at its data), applies the operator on
/// the GPU and writes the results, in `output`'s byte order, to `out`.
pub fn transform(
    input: &mut NpyInput,
    output: ElementType,
    kernels: &mut GpuKernels,
    out: &mut Output,
    progress: &Progress,
) -> Result<()> {
    let count = input.count;
    let mut ends = ToFile {
        input,
        output,
        out,
        progress,
        swapped: Vec::new(),
    };
    kernels.stream()?.run(count, &mut ends)?;
    interrupt::check()
}

/// A file rewritten where it lies.
struct InPlace<'a> {
    input: &'a NpyInput,
    progress: &'a Progress,
    swapped: Vec<u8>,
    stopped: bool,
}

impl ChunkEnds for InPlace<'_> {
    type Error = anyhow::Error;

    fn read(&mut self, start: u64, bytes: &mut [u8]) -> Result<()> {
        let size = self.input.element.size();
        self.input.check_not_truncated(start)?;
        self.input
            .file
            .read_exact_at(bytes, self.input.data_offset + start * size as u64)
            .map_err(|e| {
                self.input
                    .check_not_truncated(start)
                    .err()
                    .unwrap_or_else(|| at(&self.input.path, describe_io("read failed", &e)))
            })?;
        if self.input.element.needs_swap() {
            swap_bytes(bytes, size);
        }
        Ok(())
    }

    fn write(&mut self, start: u64, outputs: &[&[u8]]) -> Result<()> {
        let bytes = only(outputs)?;

        let size = self.input.element.size();
        let data = if self.input.element.needs_swap() {
            self.swapped.clear();
            self.swapped.extend_from_slice(bytes);
            swap_bytes(&mut self.swapped, size);
            &self.swapped[..]
        } else {
            bytes
        };
        self.input.check_not_truncated(start)?;
        self.input
            .file
            .write_all_at(data, self.input.data_offset + start * size as u64)
            .map_err(|e| at(&self.input.path, describe_io("write failed", &e)))?;
        self.progress.advance(bytes.len() as u64);
        Ok(())
    }

    fn stop_before(&mut self, _start: u64) -> Result<bool> {
        self.stopped |= interrupt::requested();
        Ok(self.stopped)
    }
}

/// Applies SIGN on the GPU to `input`'s data where it lies, chunk by chunk: each chunk
/// is read, computed and written back to the same bytes; the header is never written.
/// On Ctrl-C the chunks already on the GPU are finished and written, then it stops.
pub fn transform_in_place(
    input: &NpyInput,
    kernels: &mut GpuKernels,
    progress: &Progress,
) -> Result<()> {
    let mut ends = InPlace {
        input,
        progress,
        swapped: Vec::new(),
        stopped: false,
    };
    let done = kernels.stream()?.run(input.count, &mut ends)?;
    if ends.stopped {
        anyhow::bail!(
            "{}: interrupted after {done} of {} elements; run the same command again to finish (SIGN is idempotent)",
            input.path.display(),
            input.count
        );
    }
    input
        .file
        .sync_data()
        .map_err(|e| at(&input.path, describe_io("write failed", &e)))
}

/// The one output of a one-step stream's chunk.
fn only<'a>(outputs: &[&'a [u8]]) -> Result<&'a [u8]> {
    match outputs {
        [bytes] => Ok(bytes),
        _ => anyhow::bail!(
            "a one-operator GPU stream gave {} outputs for a chunk",
            outputs.len()
        ),
    }
}
