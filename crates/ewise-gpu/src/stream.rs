//! Streaming an operator, or a [`StreamProgram`] of them, over any number of elements,
//! chunk by chunk, through a ring of GPU buffers: while the GPU uploads, computes and
//! downloads one chunk, the caller's [`ChunkEnds`] reads the next one in and writes the
//! previous one out. Memory stays bounded whatever the count: on the host one staging
//! buffer of at most one chunk (plus the caller's own), on the GPU [`SLOTS`] sets of
//! buffers of one chunk each (an upload buffer, the input, each output, each scratch
//! buffer of the program, and one download buffer holding every output). The upload
//! and download buffers are host-visible and made once: each is mapped again as soon as
//! its chunk is submitted, so a chunk's transfers never create a buffer or wait for one
//! to map.
//!
//! ```no_run
//! use ewise_core::{DataType, NanPolicy};
//! use ewise_gpu::stream::{ChunkEnds, GpuStream, StreamOp, DEFAULT_CHUNK_BYTES};
//! use ewise_gpu::{GpuDevice, GpuError};
//!
//! /// Elements from one slice into another.
//! struct Slices<'a> {
//!     input: &'a [u8],
//!     output: &'a mut [u8],
//! }
//!
//! impl ChunkEnds for Slices<'_> {
//!     type Error = GpuError;
//!     fn read(&mut self, start: u64, bytes: &mut [u8]) -> Result<(), GpuError> {
//!         let at = start as usize * 4;
//!         bytes.copy_from_slice(&self.input[at..at + bytes.len()]);
//!         Ok(())
//!     }
//!     fn write(&mut self, start: u64, outputs: &[&[u8]]) -> Result<(), GpuError> {
//!         let at = start as usize * 4;
//!         self.output[at..at + outputs[0].len()].copy_from_slice(outputs[0]);
//!         Ok(())
//!     }
//!     fn stop_before(&mut self, _start: u64) -> Result<bool, GpuError> {
//!         Ok(false)
//!     }
//! }
//!
//! let device = GpuDevice::new()?;
//! let op = StreamOp::Sign(NanPolicy::Zero);
//! let t = DataType::Float32;
//! let mut stream = GpuStream::new(&device, op, t, t, DEFAULT_CHUNK_BYTES)?;
//! let input: Vec<u8> = [-2.5f32, 0.0, 7.0].iter().flat_map(|x| x.to_ne_bytes()).collect();
//! let mut output = vec![0u8; input.len()];
//! let mut ends = Slices { input: &input, output: &mut output };
//! assert_eq!(stream.run(3, &mut ends)?, 3);
//! # Ok::<(), GpuError>(())
//! ```

mod program;

use std::sync::mpsc::{self, Receiver};

use ewise_core::layout::no_kernel;
use ewise_core::{BufferBinding, DataType, InfinityMode, NanPolicy, OperatorDesc, TensorDesc};

use crate::buffer::GpuBuffer;
use crate::device::{self, GpuDevice};
use crate::error::{GpuError, Result};
use crate::operator::GpuCompiledOperator;
use program::element_size;
pub use program::{Place, ProgramStep, StreamProgram};

/// Bytes of input per chunk that suit most uses: large enough that per-chunk costs
/// vanish, small enough that the buffers of a stream stay a few tens of MiB.
pub const DEFAULT_CHUNK_BYTES: usize = 8 << 20;

/// Chunks in flight at once: while the GPU copies in, computes and copies out the
/// submitted ones, the caller writes out the oldest finished chunk and reads in the next,
/// so the host's reads, the GPU's work and the host's writes of three chunks overlap.
pub const SLOTS: usize = 3;

/// Compiled operators a stream keeps, for the chunk lengths used most recently.
const KEPT_LENGTHS: usize = 4;

/// The operator a [`GpuStream`] applies to every element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StreamOp {
    /// SIGN, with this NaN policy for float types.
    Sign(NanPolicy),
    /// IS_INFINITY with this mode.
    IsInfinity(InfinityMode),
}

impl StreamOp {
    /// The description of the operator over a chunk of `len` elements from `input` to
    /// `output` elements, both packed, the output's total size its minimum. The chunk is
    /// 4-D, `[1, 1, 1, len]`: the one shape that every feature level accepts (levels
    /// before 3_0 take exactly 4 dimensions).
    pub fn chunk_desc(self, input: DataType, output: DataType, len: u32) -> OperatorDesc {
        let input = TensorDesc::new(input, &[1, 1, 1, len]);
        let mut out = input.clone();
        out.data_type = output;
        out.total_tensor_size_in_bytes = out.min_size_in_bytes().unwrap_or(0);
        match self {
            StreamOp::Sign(_) => OperatorDesc::sign(input, out),
            StreamOp::IsInfinity(mode) => OperatorDesc::is_infinity(input, out, mode),
        }
    }
}

/// Where the elements of a [`GpuStream::run`] come from and where the results go. Every
/// element is a whole number of bytes in native byte order; `start` is an element index.
pub trait ChunkEnds {
    /// The error of the ends, which GPU errors convert into.
    type Error: From<GpuError>;

    /// Fills `bytes` with the input elements from `start` on (`bytes.len()` is a whole
    /// number of input elements). Chunks are read in order, each once.
    fn read(&mut self, start: u64, bytes: &mut [u8]) -> Result<(), Self::Error>;

    /// Takes the results for the elements from `start` on: one slice per output of the
    /// stream's program, in order, each the same number of elements of that output's
    /// type. Chunks are written in order, each once, after they were read.
    fn write(&mut self, start: u64, outputs: &[&[u8]]) -> Result<(), Self::Error>;

    /// Whether to read no more: asked before reading each chunk (`start` is its first
    /// element), never again once it says `true`. The chunks already read are then
    /// computed and written before the run returns.
    fn stop_before(&mut self, start: u64) -> Result<bool, Self::Error>;
}

/// A [`StreamProgram`] (often one operator) applied to contiguous elements chunk by
/// chunk on a GPU, any number of times. It keeps what it builds between runs: the
/// staging buffer, the GPU buffers and the operators compiled for the latest chunk
/// lengths.
///
/// Made on a device from another process (a fork), every run fails with
/// [`GpuError::Forked`], and dropping it leaks its wgpu objects.
#[derive(Debug)]
pub struct GpuStream {
    device: GpuDevice,
    program: StreamProgram,
    /// Input element size, and each output's, in bytes.
    in_size: usize,
    out_sizes: Vec<usize>,
    /// Elements per chunk.
    chunk: usize,
    /// Compiled operators (one per step) by chunk length, most recently used first.
    compiled: Vec<(usize, Vec<GpuCompiledOperator>)>,
    slots: Vec<Slot>,
    /// The host staging buffer that chunks are read into and uploaded from.
    host: Vec<u8>,
}

impl Drop for GpuStream {
    /// Releases the stream's buffers, and polls the device once (without waiting) so
    /// that wgpu frees those its finished submissions still referenced now, rather than
    /// at some later call: memory held after a dropped stream does not depend on what
    /// the device is asked next.
    fn drop(&mut self) {
        if device::forked(self.device.shared.pid) {
            let transfers: Vec<(wgpu::Buffer, wgpu::Buffer)> = self
                .slots
                .iter()
                .map(|s| (s.upload.clone(), s.download.clone()))
                .collect();
            std::mem::forget(transfers);
            return;
        }
        self.release();
        let _ = self.device.wgpu_device().poll(wgpu::PollType::Poll);
    }
}

impl GpuStream {
    /// A stream applying `op` to `input` elements, giving `output` elements (the input
    /// type for SIGN; `uint8` or `bool` for IS_INFINITY): [`GpuStream::program`] of
    /// [`StreamProgram::single`].
    pub fn new(
        device: &GpuDevice,
        op: StreamOp,
        input: DataType,
        output: DataType,
        chunk_bytes: usize,
    ) -> Result<GpuStream> {
        let desc = op.chunk_desc(input, output, 1);
        device.create_operator(&desc)?;
        if let Some(t) = [input, output]
            .into_iter()
            .find(|t| t.size_in_bytes().is_none())
        {
            return Err(GpuError::Op(no_kernel(desc.operator_type(), t)));
        }
        let program = StreamProgram::single(op, input, output);
        GpuStream::program(device, program, chunk_bytes)
    }

    /// A stream running `program` over chunks of `chunk_bytes` bytes of input rounded
    /// down to whole elements (at least one element, at most `u32::MAX`). Every step is
    /// validated as a 1-D operator at the device's feature level and extensions (the
    /// errors of [`GpuDevice::create_operator`]); nothing is allocated until the first
    /// run.
    pub fn program(
        device: &GpuDevice,
        program: StreamProgram,
        chunk_bytes: usize,
    ) -> Result<GpuStream> {
        for step in program.steps() {
            device.create_operator(&step.op.chunk_desc(step.input_type, step.output_type, 1))?;
        }
        let in_size = element_size(program.input())?;
        let out_sizes = program
            .outputs()
            .iter()
            .map(|&t| element_size(t))
            .collect::<Result<Vec<usize>>>()?;
        let most = usize::try_from(u32::MAX).unwrap_or(usize::MAX);
        Ok(GpuStream {
            device: device.clone(),
            program,
            in_size,
            out_sizes,
            chunk: (chunk_bytes / in_size).clamp(1, most),
            compiled: Vec::new(),
            slots: Vec::new(),
            host: Vec::new(),
        })
    }

    /// The bytes of memory the stream holds between runs: its GPU buffers (each slot's
    /// upload, input, outputs, scratch and download) and its host staging buffer. They
    /// are sized for the largest chunk run so far: at most `chunk_bytes` of input per
    /// slot, fewer for runs of fewer elements.
    pub fn held_bytes(&self) -> u64 {
        let slots: u64 = self
            .slots
            .iter()
            .map(|s| {
                let outputs = s
                    .outputs
                    .iter()
                    .enumerate()
                    .filter(|&(k, _)| !self.program.is_copy(k))
                    .map(|(_, b)| b.len());
                s.upload.size()
                    + s.download.size()
                    + s.input.len()
                    + outputs.sum::<u64>()
                    + s.scratch.iter().map(GpuBuffer::len).sum::<u64>()
            })
            .sum();
        slots + self.host.capacity() as u64
    }

    /// The device it runs on.
    pub fn device(&self) -> &GpuDevice {
        &self.device
    }

    /// The program it runs on every chunk.
    pub fn stream_program(&self) -> &StreamProgram {
        &self.program
    }

    /// The input element type.
    pub fn input_type(&self) -> DataType {
        self.program.input()
    }

    /// Elements per chunk.
    pub fn chunk_elements(&self) -> usize {
        self.chunk
    }

    /// Moves `count` elements through the GPU: reads them from `ends` chunk by chunk,
    /// runs the program and writes the results to `ends`, in order. Returns how many
    /// elements were written: `count`, or fewer when [`ChunkEnds::stop_before`] stopped
    /// the run. The first error of `ends` or of the GPU ends the run at once and is
    /// returned; the chunks then in flight are dropped, unwritten.
    ///
    /// A chunk whose tensors exceed the device's largest buffer is
    /// [`GpuError::BufferTooLarge`], before anything is allocated; a host staging buffer
    /// of one chunk that cannot be allocated is [`GpuError::OutOfHostMemory`]; GPU
    /// buffers that cannot be created are [`GpuError::Wgpu`].
    pub fn run<E: ChunkEnds>(&mut self, count: u64, ends: &mut E) -> Result<u64, E::Error> {
        self.device.check_process()?;
        let result = self.pump(count, ends);
        if result.is_err() {
            self.release();
        }
        result
    }

    /// Drops the GPU buffers, and the compiled operators whose kept recordings would
    /// hold them.
    fn release(&mut self) {
        self.slots.clear();
        self.compiled.clear();
    }

    fn pump<E: ChunkEnds>(&mut self, count: u64, ends: &mut E) -> Result<u64, E::Error> {
        if count == 0 {
            return Ok(0);
        }
        let in_size = self.in_size;
        let chunk = usize::try_from(count).map_or(self.chunk, |c| c.min(self.chunk));
        if self.slots.iter().any(|s| s.capacity < chunk) {
            self.release();
        }
        compiled(&mut self.compiled, &self.device, &self.program, chunk)?;
        grow(&mut self.host, words(chunk * in_size))?;
        let device = self.device.clone();
        let wgpu_device = device.wgpu_device();
        let mut in_flight: [Option<InFlight>; SLOTS] = Default::default();
        let mut active = 0usize;
        let mut next = 0u64;
        let mut written = 0u64;
        let mut turn = 0usize;
        let mut stopped = false;
        loop {
            if active < SLOTS && next < count && !stopped {
                if self.slots.len() == active {
                    self.slots.push(Slot::new(&device, chunk, &self.program)?);
                }
                active += 1;
            }
            if active == 0 {
                return Ok(written);
            }
            let k = turn % active;
            turn += 1;
            let slot = &self.slots[k];
            if let Some(done) = in_flight[k].take() {
                written += finish(&device, slot, done, &self.out_sizes, ends)?;
            }
            if next < count && !stopped {
                stopped = ends.stop_before(next)?;
            }
            if next >= count || stopped {
                if in_flight.iter().all(Option::is_none) {
                    return Ok(written);
                }
                continue;
            }
            let n = chunk.min(usize::try_from(count - next).unwrap_or(usize::MAX));
            ends.read(next, &mut self.host[..n * in_size])?;
            let operators = compiled(&mut self.compiled, &device, &self.program, n)?;
            let upload_len = words(n * in_size);
            slot.fill_upload(&self.host[..upload_len])?;
            let mut encoder = wgpu_device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("ewise stream"),
            });
            device.catch("uploading a chunk", || {
                slot.upload.unmap();
                encoder.copy_buffer_to_buffer(
                    &slot.upload,
                    0,
                    slot.input.wgpu_buffer(),
                    0,
                    upload_len as u64,
                );
            })?;
            for (step, operator) in self.program.steps().iter().zip(operators) {
                let (in_total, out_total) = (
                    operator.input_desc().total_tensor_size_in_bytes,
                    operator.output_desc().total_tensor_size_in_bytes,
                );
                let (from, to) = (slot.buffer(step.from), slot.buffer(step.to));
                if step.from == step.to {
                    operator.record(
                        &mut encoder,
                        &[from],
                        &[BufferBinding::new(0, 0, in_total)],
                        &[BufferBinding::new(0, 0, out_total)],
                    )?;
                } else {
                    operator.record(
                        &mut encoder,
                        &[from, to],
                        &[BufferBinding::new(0, 0, in_total)],
                        &[BufferBinding::new(1, 0, out_total)],
                    )?;
                }
            }
            let submission = device.catch("submitting a chunk", || {
                for (k, (&size, &at)) in self.out_sizes.iter().zip(&slot.regions).enumerate() {
                    let from = slot.buffer(if self.program.is_copy(k) {
                        Place::Input
                    } else {
                        Place::Output(k)
                    });
                    encoder.copy_buffer_to_buffer(
                        from.wgpu_buffer(),
                        0,
                        &slot.download,
                        at,
                        words(n * size) as u64,
                    );
                }
                device.wgpu_queue().submit([encoder.finish()])
            })?;
            in_flight[k] = Some(InFlight {
                start: next,
                len: n,
                submission,
                downloaded: map(&slot.download, wgpu::MapMode::Read),
                uploadable: map(&slot.upload, wgpu::MapMode::Write),
            });
            next += n as u64;
        }
    }
}

/// Bytes of whole 4-byte words holding `bytes` bytes (at least one word).
fn words(bytes: usize) -> usize {
    bytes.div_ceil(4).max(1) * 4
}

/// `bytes` rounded up to [`wgpu::MAP_ALIGNMENT`], so that regions of one download
/// buffer can be read separately.
fn mappable(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(wgpu::MAP_ALIGNMENT) * wgpu::MAP_ALIGNMENT
}

/// Makes `host` `len` bytes long, allocating fallibly.
fn grow(host: &mut Vec<u8>, len: usize) -> Result<()> {
    if host.len() < len {
        host.try_reserve_exact(len - host.len())
            .map_err(|_| GpuError::OutOfHostMemory {
                bytes: len as u64,
                during: "a chunk's staging buffer",
            })?;
        host.resize(len, 0);
    }
    Ok(())
}

/// The operators of `program`'s steps for a chunk of `len` elements, from `cache`,
/// compiled on first use; the cache keeps the latest [`KEPT_LENGTHS`] lengths.
fn compiled<'a>(
    cache: &'a mut Vec<(usize, Vec<GpuCompiledOperator>)>,
    device: &GpuDevice,
    program: &StreamProgram,
    len: usize,
) -> Result<&'a [GpuCompiledOperator]> {
    match cache.iter().position(|(n, _)| *n == len) {
        Some(i) => cache[..=i].rotate_right(1),
        None => {
            let size = u32::try_from(len).unwrap_or(u32::MAX);
            let operators = program
                .steps()
                .iter()
                .map(|step| {
                    let desc = step.op.chunk_desc(step.input_type, step.output_type, size);
                    let mut operator = device.create_operator(&desc)?;
                    if let StreamOp::Sign(policy) = step.op {
                        operator = operator.with_nan_policy(policy);
                    }
                    operator.compile()
                })
                .collect::<Result<Vec<_>>>()?;
            cache.insert(0, (len, operators));
            cache.truncate(KEPT_LENGTHS);
        }
    }
    Ok(&cache[0].1)
}

/// One chunk's GPU buffers: it is written to `upload` and copied to `input`, the steps
/// write `outputs` (through `scratch`), which are copied to their regions of `download`
/// to be read. `upload` is mapped whenever no chunk of the slot is in flight.
#[derive(Debug)]
struct Slot {
    upload: wgpu::Buffer,
    input: GpuBuffer,
    /// Per output: its buffer; the input's for an output that is a copy of it.
    outputs: Vec<GpuBuffer>,
    scratch: Vec<GpuBuffer>,
    download: wgpu::Buffer,
    /// Per output: the offset of its region of `download`.
    regions: Vec<u64>,
    /// Elements it holds.
    capacity: usize,
}

impl Slot {
    fn new(device: &GpuDevice, capacity: usize, program: &StreamProgram) -> Result<Slot> {
        let input_size = element_size(program.input())?;
        let input = GpuBuffer::zeroed(device, words(capacity * input_size) as u64)?;
        let mut outputs = Vec::with_capacity(program.outputs().len());
        let mut regions = Vec::with_capacity(program.outputs().len());
        let mut download_len = 0u64;
        for (k, &t) in program.outputs().iter().enumerate() {
            let bytes = words(capacity * element_size(t)?);
            outputs.push(if program.is_copy(k) {
                input.clone()
            } else {
                GpuBuffer::zeroed(device, bytes as u64)?
            });
            regions.push(download_len);
            download_len += mappable(bytes);
        }
        let scratch = program
            .scratch_widths()
            .iter()
            .map(|&width| GpuBuffer::zeroed(device, words(capacity * width) as u64))
            .collect::<Result<Vec<_>>>()?;
        let wgpu_device = device.wgpu_device();
        let upload = device.catch("creating an upload buffer", || {
            wgpu_device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("ewise stream upload"),
                size: words(capacity * input_size) as u64,
                usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: true,
            })
        })?;
        let download = device.catch("creating a download buffer", || {
            wgpu_device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("ewise stream download"),
                size: download_len.max(wgpu::MAP_ALIGNMENT),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })?;
        Ok(Slot {
            upload,
            input,
            outputs,
            scratch,
            download,
            regions,
            capacity,
        })
    }

    /// Copies `bytes` (at most the input's capacity, in whole words) to the start of
    /// the mapped upload buffer.
    fn fill_upload(&self, bytes: &[u8]) -> Result<()> {
        let mut view = self
            .upload
            .get_mapped_range_mut(..bytes.len() as u64)
            .map_err(|e| wgpu_error("uploading a chunk", e))?;
        view.copy_from_slice(bytes);
        Ok(())
    }

    /// The buffer at `place`.
    fn buffer(&self, place: Place) -> &GpuBuffer {
        match place {
            Place::Input => &self.input,
            Place::Output(k) => &self.outputs[k],
            Place::Scratch(x) => &self.scratch[x],
        }
    }
}

type Mapped = Receiver<Result<(), wgpu::BufferAsyncError>>;

/// Asks for `buffer` to be mapped in `mode` once the work submitted so far is done.
fn map(buffer: &wgpu::Buffer, mode: wgpu::MapMode) -> Mapped {
    let (sender, receiver) = mpsc::channel();
    buffer.map_async(mode, .., move |r| {
        let _ = sender.send(r);
    });
    receiver
}

/// A chunk on the GPU.
struct InFlight {
    /// Index of its first element.
    start: u64,
    /// Its elements.
    len: usize,
    submission: wgpu::SubmissionIndex,
    /// The download buffer's mapping, for reading the results.
    downloaded: Mapped,
    /// The upload buffer's mapping, for the slot's next chunk.
    uploadable: Mapped,
}

/// Waits for a chunk, hands its results to `ends` and releases the download buffer.
fn finish<E: ChunkEnds>(
    device: &GpuDevice,
    slot: &Slot,
    done: InFlight,
    out_sizes: &[usize],
    ends: &mut E,
) -> Result<u64, E::Error> {
    let during = "downloading a chunk";
    wait(device, &done, during)?;
    {
        let view = slot
            .download
            .get_mapped_range(..)
            .map_err(|e| wgpu_error(during, e))?;
        let outputs: Vec<&[u8]> = out_sizes
            .iter()
            .zip(&slot.regions)
            .map(|(&size, &at)| &view[at as usize..at as usize + done.len * size])
            .collect();
        ends.write(done.start, &outputs)?;
    }
    slot.download.unmap();
    Ok(done.len as u64)
}

fn wgpu_error(during: &'static str, e: impl std::fmt::Display) -> GpuError {
    GpuError::Wgpu {
        during,
        message: e.to_string(),
    }
}

/// How long [`wait`] waits for a chunk's buffers to map once its submission is done.
const MAP_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Waits until the chunk's submission has finished and its upload and download buffers
/// are mapped. A mapping's callback may run on another thread that polls the same
/// device (after this thread's poll has returned), so the reports are awaited, not only
/// looked for.
fn wait(device: &GpuDevice, chunk: &InFlight, during: &'static str) -> Result<()> {
    device
        .wgpu_device()
        .poll(wgpu::PollType::Wait {
            submission_index: Some(chunk.submission.clone()),
            timeout: None,
        })
        .map_err(|e| wgpu_error(during, e))?;
    let deadline = std::time::Instant::now() + MAP_WAIT;
    for mapping in [&chunk.downloaded, &chunk.uploadable] {
        await_mapping(device, mapping, deadline, during)?;
    }
    device.take_uncaptured(during)
}

/// Waits for `mapping`'s report, polling the device, until `deadline`.
fn await_mapping(
    device: &GpuDevice,
    mapping: &Mapped,
    deadline: std::time::Instant,
    during: &'static str,
) -> Result<()> {
    let report = loop {
        match mapping.try_recv() {
            Ok(r) => break r,
            Err(mpsc::TryRecvError::Empty) if std::time::Instant::now() < deadline => {
                device
                    .wgpu_device()
                    .poll(wgpu::PollType::wait_indefinitely())
                    .map_err(|e| wgpu_error(during, e))?;
                let pause = std::time::Duration::from_millis(1);
                if let Ok(r) = mapping.recv_timeout(pause) {
                    break r;
                }
            }
            Err(_) => return Err(wgpu_error(during, "the buffer never mapped")),
        }
    };
    report.map_err(|e| wgpu_error(during, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staging_that_cannot_be_allocated_is_a_typed_error() {
        let mut host = Vec::new();
        let err = grow(&mut host, usize::MAX).unwrap_err();
        assert!(
            matches!(err, GpuError::OutOfHostMemory { bytes, .. } if bytes == usize::MAX as u64),
            "{err}"
        );
        assert!(err.to_string().starts_with("out of host memory"), "{err}");
        grow(&mut host, 10).unwrap();
        assert_eq!(host.len(), 10);
        grow(&mut host, 4).unwrap();
        assert_eq!(host.len(), 10);
    }

    #[test]
    fn chunks_span_whole_words() {
        assert_eq!(words(0), 4);
        assert_eq!(words(5), 8);
        assert_eq!(words(8), 8);
    }

    #[test]
    fn streams_can_move_between_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<GpuStream>();
    }
}
