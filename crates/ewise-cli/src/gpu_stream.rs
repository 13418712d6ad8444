//! The data path on the GPU: chunks of elements pass through a ring of GPU buffers, so
//! that reading the next chunk from the file and writing the previous one overlap the
//! GPU's upload, compute and download of the current one. Memory stays bounded, on the
//! host and on the GPU, whatever the file size: [`SLOTS`] slots of four buffers, each
//! at most [`GPU_CHUNK_BYTES`] long.

use std::io::Read;
use std::sync::mpsc::{self, Receiver};

use anyhow::{anyhow, Result};
use ewise_cli::npy::{swap_bytes, ElementType};
use ewise_cpu::{BufferBinding, NanPolicy, OperatorDesc};
use ewise_gpu::wgpu;
use ewise_gpu::{GpuBuffer, GpuCompiledOperator, GpuDevice};

use crate::input::NpyInput;
use crate::interrupt;
use crate::job::{ChunkDevice, Kernels};
use crate::output::Output;
use crate::paths::{at, describe_io};
use crate::progress::Progress;

/// Bytes of input per chunk.
pub const GPU_CHUNK_BYTES: usize = 8 << 20;

/// Chunks in flight at once: one computing while the previous one is written out and
/// the next one read in.
pub const SLOTS: usize = 2;

/// Compiled 1-D GPU operators over chunks of elements, one per chunk length seen.
pub type GpuKernels = Kernels<GpuDevice>;

impl ChunkDevice for GpuDevice {
    type Compiled = GpuCompiledOperator;

    fn compile_chunk(
        &self,
        desc: &OperatorDesc,
        policy: Option<NanPolicy>,
    ) -> Result<GpuCompiledOperator> {
        let mut operator = self.create_operator(desc)?;
        if let Some(policy) = policy {
            operator = operator.with_nan_policy(policy);
        }
        Ok(operator.compile()?)
    }
}

/// Runs `f` inside wgpu's validation and out-of-memory error scopes.
fn scoped<T>(device: &wgpu::Device, during: &str, f: impl FnOnce() -> T) -> Result<T> {
    let memory = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let value = f();
    let first = pollster::block_on(validation.pop());
    let second = pollster::block_on(memory.pop());
    match first.or(second) {
        Some(e) => Err(anyhow!("GPU error while {during}: {e}")),
        None => Ok(value),
    }
}

type Mapped = Receiver<Result<(), wgpu::BufferAsyncError>>;

fn map(buffer: &wgpu::Buffer, mode: wgpu::MapMode) -> Mapped {
    let (sender, receiver) = mpsc::channel();
    buffer.map_async(mode, .., move |r| {
        let _ = sender.send(r);
    });
    receiver
}

/// Waits until `submission` has finished and `mapped` has reported.
fn wait(
    device: &wgpu::Device,
    submission: &wgpu::SubmissionIndex,
    mapped: &Mapped,
    during: &str,
) -> Result<()> {
    device
        .poll(wgpu::PollType::Wait {
            submission_index: Some(submission.clone()),
            timeout: None,
        })
        .map_err(|e| anyhow!("GPU error while {during}: {e}"))?;
    let report = match mapped.try_recv() {
        Ok(r) => r,
        Err(_) => {
            device
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(|e| anyhow!("GPU error while {during}: {e}"))?;
            mapped
                .try_recv()
                .map_err(|_| anyhow!("GPU error while {during}: the buffer never mapped"))?
        }
    };
    report.map_err(|e| anyhow!("GPU error while {during}: {e}"))
}

/// A chunk on the GPU.
struct InFlight {
    /// Index of its first element.
    start: u64,
    /// Its elements.
    len: usize,
    submission: wgpu::SubmissionIndex,
    downloaded: Mapped,
}

/// One chunk's buffers: the queue uploads it to `input`, the operator writes `output`,
/// which is copied to `download` to be read.
struct Slot {
    input: GpuBuffer,
    output: GpuBuffer,
    download: wgpu::Buffer,
    in_flight: Option<InFlight>,
}

fn words(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4).max(1) * 4
}

impl Slot {
    fn new(device: &GpuDevice, in_bytes: usize, out_bytes: usize) -> Result<Slot> {
        let wgpu_device = device.wgpu_device();
        let download = scoped(wgpu_device, "creating a download buffer", || {
            wgpu_device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("ewise stream download"),
                size: words(out_bytes),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })?;
        Ok(Slot {
            input: GpuBuffer::zeroed(device, words(in_bytes))?,
            output: GpuBuffer::zeroed(device, words(out_bytes))?,
            download,
            in_flight: None,
        })
    }
}

/// Where chunks come from and go to.
trait Ends {
    /// Fills `bytes` with the elements from `start` on, in native byte order.
    fn read(&mut self, start: u64, bytes: &mut [u8]) -> Result<()>;
    /// Stores the results for the elements from `start` on, in native byte order.
    fn write(&mut self, start: u64, bytes: &[u8]) -> Result<()>;
    /// Whether to stop before reading the chunk that starts at `start`; an error ends
    /// the run at once.
    fn stop_before(&mut self, start: u64) -> Result<bool>;
}

/// Sizes of one run.
struct Shape {
    count: u64,
    in_size: usize,
    out_size: usize,
}

/// Moves every element through the GPU; returns how many were written.
fn pump(kernels: &mut GpuKernels, shape: &Shape, ends: &mut dyn Ends) -> Result<u64> {
    let device = kernels.device().clone();
    let wgpu_device = device.wgpu_device();
    let chunk = (GPU_CHUNK_BYTES / shape.in_size).max(1);
    let chunk = usize::try_from(shape.count).map_or(chunk, |c| c.min(chunk));
    let mut host = vec![0u8; words(chunk * shape.in_size) as usize];
    let mut slots = Vec::with_capacity(SLOTS);
    let mut next = 0u64;
    let mut written = 0u64;
    let mut turn = 0usize;
    loop {
        if slots.len() < SLOTS && next < shape.count {
            slots.push(Slot::new(
                &device,
                chunk * shape.in_size,
                chunk * shape.out_size,
            )?);
        }
        if slots.is_empty() {
            return Ok(written);
        }
        let count = slots.len();
        let slot = &mut slots[turn % count];
        turn += 1;
        if let Some(done) = slot.in_flight.take() {
            written += finish(wgpu_device, slot, done, shape.out_size, ends)?;
        }
        if next >= shape.count || ends.stop_before(next)? {
            if slots.iter().all(|s| s.in_flight.is_none()) {
                return Ok(written);
            }
            continue;
        }
        let n = chunk.min(usize::try_from(shape.count - next).unwrap_or(usize::MAX));
        ends.read(next, &mut host[..n * shape.in_size])?;
        let operator = kernels.get(n)?;
        let (in_total, out_total) = (
            operator.input_desc().total_tensor_size_in_bytes,
            operator.output_desc().total_tensor_size_in_bytes,
        );
        let mut encoder = wgpu_device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("ewise stream"),
        });
        let in_words = words(n * shape.in_size) as usize;
        let out_words = words(n * shape.out_size);
        scoped(wgpu_device, "uploading a chunk", || {
            device
                .wgpu_queue()
                .write_buffer(slot.input.wgpu_buffer(), 0, &host[..in_words]);
        })?;
        operator.record(
            &mut encoder,
            &[&slot.input, &slot.output],
            &[BufferBinding::new(0, 0, in_total)],
            &[BufferBinding::new(1, 0, out_total)],
        )?;
        let submission = scoped(wgpu_device, "submitting a chunk", || {
            encoder.copy_buffer_to_buffer(
                slot.output.wgpu_buffer(),
                0,
                &slot.download,
                0,
                out_words,
            );
            device.wgpu_queue().submit([encoder.finish()])
        })?;
        slot.in_flight = Some(InFlight {
            start: next,
            len: n,
            submission,
            downloaded: map(&slot.download, wgpu::MapMode::Read),
        });
        next += n as u64;
    }
}

/// Waits for a chunk, hands its results to `ends` and releases the download buffer.
fn finish(
    device: &wgpu::Device,
    slot: &mut Slot,
    done: InFlight,
    out_size: usize,
    ends: &mut dyn Ends,
) -> Result<u64> {
    wait(
        device,
        &done.submission,
        &done.downloaded,
        "downloading a chunk",
    )?;
    {
        let view = slot
            .download
            .get_mapped_range(..)
            .map_err(|e| anyhow!("GPU error while reading a download buffer: {e}"))?;
        ends.write(done.start, &view[..done.len * out_size])?;
    }
    slot.download.unmap();
    Ok(done.len as u64)
}

/// A file read in order into an atomic output.
struct ToFile<'a> {
    input: &'a mut NpyInput,
    output: ElementType,
    out: &'a mut Output,
    progress: &'a Progress,
    swapped: Vec<u8>,
}

impl Ends for ToFile<'_> {
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

    fn write(&mut self, _start: u64, bytes: &[u8]) -> Result<()> {
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
    let shape = Shape {
        count: input.count,
        in_size: input.element.size(),
        out_size: output.size(),
    };
    let mut ends = ToFile {
        input,
        output,
        out,
        progress,
        swapped: Vec::new(),
    };
    pump(kernels, &shape, &mut ends)?;
    interrupt::check()
}

/// A file rewritten where it lies.
#[cfg(unix)]
struct InPlace<'a> {
    input: &'a NpyInput,
    progress: &'a Progress,
    swapped: Vec<u8>,
    stopped: bool,
}

#[cfg(unix)]
impl Ends for InPlace<'_> {
    fn read(&mut self, start: u64, bytes: &mut [u8]) -> Result<()> {
        use std::os::unix::fs::FileExt;

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

    fn write(&mut self, start: u64, bytes: &[u8]) -> Result<()> {
        use std::os::unix::fs::FileExt;

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
#[cfg(unix)]
pub fn transform_in_place(
    input: &NpyInput,
    kernels: &mut GpuKernels,
    progress: &Progress,
) -> Result<()> {
    let shape = Shape {
        count: input.count,
        in_size: input.element.size(),
        out_size: input.element.size(),
    };
    let mut ends = InPlace {
        input,
        progress,
        swapped: Vec::new(),
        stopped: false,
    };
    let done = pump(kernels, &shape, &mut ends)?;
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

/// In-place rewriting needs positioned reads and writes.
#[cfg(not(unix))]
pub fn transform_in_place(input: &NpyInput, _: &mut GpuKernels, _: &Progress) -> Result<()> {
    Err(at(
        &input.path,
        "--in-place is only available on Unix systems",
    ))
}
