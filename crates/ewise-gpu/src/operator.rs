//! Operators on a GPU: create -> compile -> record into an encoder / execute.

use std::sync::{Arc, Mutex, OnceLock};

use ewise_core::layout::{no_kernel, too_large, Dim, Layouts};
use ewise_core::{
    check_bindings, BufferBinding, NanPolicy, OperatorDesc, OperatorSupport, OperatorType,
    Placement, TensorDesc, TensorRole,
};
use wgpu::util::DeviceExt;

use crate::buffer::GpuBuffer;
use crate::chunk::{Chunk, Limits, Plan};
use crate::device::{self, GpuDevice, Submission};
use crate::error::{GpuError, Result};
use crate::shader::{KernelKey, Op, Walk, PARAMS_HEADER, UNIT_BYTES, WORKGROUP};
use crate::signal;

mod rows;

use rows::RowKernels;
pub(crate) use rows::MIN_ROW_UNITS;

/// Elements one dispatch handles at most, so that linear indices fit in 32 bits.
const MAX_DISPATCH_ELEMENTS: u64 = 1 << 31;

/// Dispatches recorded with one parameter buffer: a recording of more is made in
/// batches of about this many, and an execution submits each batch on its own, so host
/// memory per recording stays bounded however many dispatches a layout needs.
const BATCH_DISPATCHES: usize = 1024;

/// A validated operator on a GPU device, not yet compiled.
#[derive(Debug, Clone)]
pub struct GpuOperator {
    device: GpuDevice,
    desc: OperatorDesc,
    nan_policy: NanPolicy,
}

impl GpuOperator {
    pub(crate) fn new(device: GpuDevice, desc: OperatorDesc, nan_policy: NanPolicy) -> Self {
        GpuOperator {
            device,
            desc,
            nan_policy,
        }
    }

    /// The description it was created from.
    pub fn desc(&self) -> &OperatorDesc {
        &self.desc
    }

    /// The NaN policy compilation will use (SIGN on float types only).
    pub fn nan_policy(&self) -> NanPolicy {
        self.nan_policy
    }

    /// This operator with another NaN policy.
    pub fn with_nan_policy(mut self, policy: NanPolicy) -> GpuOperator {
        self.nan_policy = policy;
        self
    }

    /// Chooses the kernel, builds its pipeline (once per kernel key on the device) and
    /// splits the walk into dispatches that fit the device's binding and grid limits.
    pub fn compile(&self) -> Result<GpuCompiledOperator> {
        self.device.check_process()?;
        GpuCompiledOperator::new(&self.device, &self.desc, self.nan_policy)
    }
}

/// A compiled operator: records into command encoders or executes, any number of times.
#[derive(Debug, Clone)]
pub struct GpuCompiledOperator {
    device: GpuDevice,
    operator: OperatorType,
    input: TensorDesc,
    output: TensorDesc,
    in_place: bool,
    same_layout: bool,
    key: KernelKey,
    /// How the walk is split into dispatches; chunks are made as they are recorded.
    plan: Plan,
    /// Exact byte span of the input layout (at most its TotalTensorSizeInBytes).
    in_span: u64,
    /// Exact byte span of the output layout (at most its TotalTensorSizeInBytes).
    out_span: u64,
    pipeline: Arc<wgpu::ComputePipeline>,
    shared_pipeline: OnceLock<Arc<wgpu::ComputePipeline>>,
    /// The vectorized kernel of a contiguous walk and its pipeline.
    vector: Option<(KernelKey, Arc<wgpu::ComputePipeline>)>,
    /// The row kernels of a strided walk whose rows can run in 16-byte units.
    rows: Option<RowKernels>,
    /// Units a row's body needs for the row kernel (the device's [`crate::Tuning`] when
    /// compiled).
    min_row_units: u64,
    /// The latest recordings, most recent first (shared by clones).
    recorded: Arc<Recordings>,
}

/// Recordings by what they were made for.
type Kept = Vec<(RecordKey, Arc<Recorded>)>;

/// The recordings of a compiled operator and its clones; leaked rather than released in
/// a process forked from the one that made them.
#[derive(Debug)]
struct Recordings {
    kept: Mutex<Kept>,
    pid: u32,
}

impl Drop for Recordings {
    fn drop(&mut self) {
        if device::forked(self.pid) {
            std::mem::forget(
                self.kept
                    .get_mut()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone(),
            );
        }
    }
}

/// Recordings kept per compiled operator: a loop over a few sets of buffers (a ring of
/// two, an input and an output swapped) records without building anything.
const KEPT_RECORDINGS: usize = 2;

/// What determines a recording's dispatches, besides the operator itself.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RecordKey {
    input: wgpu::Buffer,
    in_offset: u64,
    output: wgpu::Buffer,
    out_offset: u64,
    shared: bool,
}

/// The objects one recording needs: per dispatch its pipeline, bind group (which keeps
/// the parameter buffer and the bound buffers alive) and grid.
#[derive(Debug)]
struct Recorded {
    steps: Vec<(Arc<wgpu::ComputePipeline>, wgpu::BindGroup, (u32, u32))>,
    /// Each dispatch's walk, for tests that check which kernels a layout takes.
    #[cfg(all(test, not(target_arch = "wasm32")))]
    walks: Vec<Walk>,
}

impl Recorded {
    /// Records one compute pass that runs the dispatches in order.
    fn encode(&self, encoder: &mut wgpu::CommandEncoder) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("ewise"),
            timestamp_writes: None,
        });
        for (pipeline, group, grid) in &self.steps {
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, group, &[]);
            pass.dispatch_workgroups(grid.0, grid.1, 1);
        }
    }
}

/// One dispatch: a pipeline, its bindings and its grid.
struct Dispatch {
    pipeline: Arc<wgpu::ComputePipeline>,
    /// The pipeline's walk (it names the bind group).
    walk: Walk,
    params: Vec<u32>,
    /// The output binding's buffer, window offset and size.
    dst: (wgpu::Buffer, u64, u64),
    /// The input binding's, absent when the input is read through the output binding.
    src: Option<(wgpu::Buffer, u64, u64)>,
    grid: (u32, u32),
}

/// Where the input of an execution is read from.
struct Source {
    buffer: wgpu::Buffer,
    offset: u64,
    /// Read through the output's binding.
    shared: bool,
}

/// Where recorded batches go.
enum Target<'a> {
    /// A caller's encoder ([`GpuCompiledOperator::record`]).
    Encoder(&'a mut wgpu::CommandEncoder),
    /// The device's queue, each batch submitted on its own encoder
    /// ([`GpuCompiledOperator::execute_async`]), at most two batches in flight.
    Queue {
        /// The latest submission.
        last: Option<Submission>,
    },
}

impl Target<'_> {
    /// Records `recorded` into the caller's encoder, or submits it and waits for the
    /// submission before it (the only wait of a recording).
    async fn take(&mut self, device: &GpuDevice, recorded: &Recorded) -> Result<()> {
        match self {
            Target::Encoder(encoder) => {
                device.catch("recording an operator", || recorded.encode(encoder))
            }
            Target::Queue { last } => {
                let index = device.catch("submitting an operator", || {
                    let mut encoder = device.wgpu_device().create_command_encoder(
                        &wgpu::CommandEncoderDescriptor {
                            label: Some("ewise execute"),
                        },
                    );
                    recorded.encode(&mut encoder);
                    device.wgpu_queue().submit([encoder.finish()])
                })?;
                match last.replace(device.submission(index)) {
                    Some(previous) => {
                        device
                            .wait_submission(previous, "running an operator")
                            .await
                    }
                    None => Ok(()),
                }
            }
        }
    }
}

/// The dispatches of a recording not yet handed to its target, and how many batches
/// were.
struct Batches {
    pending: Vec<Dispatch>,
    handed: usize,
}

impl Batches {
    /// Hands the pending dispatches over as one batch once there are
    /// [`BATCH_DISPATCHES`] of them.
    async fn hand_over_full(&mut self, device: &GpuDevice, target: &mut Target<'_>) -> Result<()> {
        if self.pending.len() >= BATCH_DISPATCHES {
            self.hand_over(device, target).await?;
        }
        Ok(())
    }

    /// Hands the pending dispatches over as one batch, and returns it; `None` when none
    /// are pending.
    async fn hand_over(
        &mut self,
        device: &GpuDevice,
        target: &mut Target<'_>,
    ) -> Result<Option<Recorded>> {
        if self.pending.is_empty() {
            return Ok(None);
        }
        let recorded = device.catch("recording an operator", || prepare(device, &self.pending))?;
        self.pending.clear();
        target.take(device, &recorded).await?;
        self.handed += 1;
        Ok(Some(recorded))
    }
}

/// Writes `bytes` at the start of `buffer` (at least as long), the last word padded with
/// zeros.
fn upload_prefix(device: &GpuDevice, buffer: &GpuBuffer, bytes: &[u8]) -> Result<()> {
    let whole = bytes.len() / 4 * 4;
    buffer.write(device, 0, &bytes[..whole])?;
    if whole < bytes.len() {
        let mut tail = [0u8; 4];
        tail[..bytes.len() - whole].copy_from_slice(&bytes[whole..]);
        buffer.write(device, whole as u64, &tail)?;
    }
    Ok(())
}

/// Fills `bytes` from the start of `buffer` (at least as long, rounded up to 4 bytes).
async fn download_prefix(device: &GpuDevice, buffer: &GpuBuffer, bytes: &mut [u8]) -> Result<()> {
    let padded = (bytes.len() as u64).div_ceil(4) * 4;
    let read = buffer.read_range_async(device, 0, padded).await?;
    bytes.copy_from_slice(&read[..bytes.len()]);
    Ok(())
}

/// A window of a buffer that a binding may cover: `[start, end)` bytes, and the offset of
/// the first element from `start`.
fn window(first_byte: u64, span_bytes: u64, alignment: u64) -> (u64, u64) {
    let start = first_byte - first_byte % alignment;
    (start, (first_byte + span_bytes).div_ceil(4) * 4)
}

/// What binding windows start on: the device's storage offset alignment, and 16 bytes so
/// that vectors of the vector walk line up with their windows.
fn window_alignment(limits: &device::DispatchLimits) -> u64 {
    limits.storage_alignment.max(UNIT_BYTES)
}

/// The 16-byte aligned body of a contiguous run: `head` elements before it, then
/// `units` units of `per` elements (16 bytes of output each); the rest is the tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Body {
    head: u64,
    units: u64,
    per: u64,
}

impl Body {
    /// The body of a run of `count` elements of `sizes` (input, output; the input's a
    /// multiple of the output's) whose first input and output bytes lie at byte
    /// addresses `in_at` and `out_at`: from the first element at which both tensors
    /// are on 16 bytes, as many whole units as follow. `None` where no element puts both
    /// on 16 bytes (their phases differ: the run stays scalar) or no whole unit fits.
    fn of(in_at: u64, out_at: u64, count: u64, (is, os): (u64, u64)) -> Option<Body> {
        let head = (0..UNIT_BYTES).find(|k| {
            (in_at + k * is).is_multiple_of(UNIT_BYTES)
                && (out_at + k * os).is_multiple_of(UNIT_BYTES)
        })?;
        let per = UNIT_BYTES / os;
        let units = count.checked_sub(head)? / per;
        (units > 0).then_some(Body { head, units, per })
    }

    /// Elements in the body.
    fn elements(&self) -> u64 {
        self.units * self.per
    }
}

impl GpuCompiledOperator {
    #[cfg_attr(
        target_arch = "wasm32",
        allow(
            clippy::arc_with_non_send_sync,
            reason = "wgpu's WebGPU objects are neither Send nor Sync; a browser runs one thread"
        )
    )]
    fn new(
        device: &GpuDevice,
        desc: &OperatorDesc,
        policy: NanPolicy,
    ) -> Result<GpuCompiledOperator> {
        let operator = desc.operator_type();
        let (input, output) = (desc.input(), desc.output());
        let op = match desc {
            OperatorDesc::Sign(d) => Op::sign(d.input.data_type, policy),
            OperatorDesc::IsInfinity(d) => Op::is_infinity(d.input.data_type, d.mode),
        };
        let op = op.ok_or_else(|| no_kernel(operator, input.data_type))?;
        let layouts = Layouts::of(desc)?;
        let size_of = |t: &TensorDesc, role| {
            t.data_type
                .size_in_bytes()
                .ok_or_else(|| too_large(operator, role, t))
        };
        let in_size = size_of(input, TensorRole::Input)?;
        let out_size = size_of(output, TensorRole::Output)?;
        let dims = layouts.walk;
        let plan = Plan::new(&dims, chunk_limits(device, (in_size, out_size)));
        let walk = match dims.as_slice() {
            [d] if d.in_stride == 1 && d.out_stride == 1 => Walk::Contiguous,
            _ if out_size < 4 && packed_output(&dims) && plan.is_nested() => Walk::StridedWords {
                dims: dims.len() as u32,
            },
            _ => Walk::Strided {
                dims: dims.len() as u32,
            },
        };
        let tuning = device.tuning();
        let key = KernelKey {
            op,
            in_size: in_size as u32,
            out_size: out_size as u32,
            walk,
            shared: false,
            loads: tuning.loads_in_flight,
        };
        let pipeline = device.pipeline(&key)?;
        let vector = match key.vector() {
            Some(v) => Some((v, device.pipeline(&v)?)),
            None => None,
        };
        let rows = RowKernels::of(device, &key, &dims)?;
        Ok(GpuCompiledOperator {
            device: device.clone(),
            operator,
            input: input.clone(),
            output: output.clone(),
            in_place: OperatorSupport::of(operator).in_place,
            same_layout: layouts.same_layout,
            key,
            plan,
            in_span: input
                .exact_span_in_bytes()
                .unwrap_or(input.total_tensor_size_in_bytes),
            out_span: output
                .exact_span_in_bytes()
                .unwrap_or(output.total_tensor_size_in_bytes),
            pipeline,
            shared_pipeline: OnceLock::new(),
            vector,
            rows,
            min_row_units: tuning.min_row_units,
            recorded: Arc::new(Recordings {
                kept: Mutex::new(Vec::new()),
                pid: device.shared.pid,
            }),
        })
    }

    /// The operator this runs.
    pub fn operator_type(&self) -> OperatorType {
        self.operator
    }

    /// The input tensor's description.
    pub fn input_desc(&self) -> &TensorDesc {
        &self.input
    }

    /// The output tensor's description.
    pub fn output_desc(&self) -> &TensorDesc {
        &self.output
    }

    /// How many parts one execution is split into (more than one when the tensors span
    /// more than one binding window or grid; 0 for empty tensors). Each part records
    /// one dispatch, and one more for the unaligned ends of a contiguous run that runs
    /// in 16-byte vectors, or up to two more (the columns before and after the bodies)
    /// for rows that run in 16-byte vectors; an input copied first records the copy's
    /// too. Found without walking the parts (it saturates at `usize::MAX`).
    pub fn dispatches(&self) -> usize {
        usize::try_from(self.plan.len()).unwrap_or(usize::MAX)
    }

    /// Records the operator into `encoder`, as DirectML's `RecordDispatch`: nothing runs
    /// until the caller submits the encoder's commands to the device's queue, so many
    /// operators can share one submission. Bindings follow the CPU backend's rules and
    /// give its errors: one input and one output binding, buffer indices into `buffers`,
    /// offsets that are multiples of 16 (or the tensor's GuaranteedBaseOffsetAlignment),
    /// bound sizes of at least TotalTensorSizeInBytes inside their buffers, and no
    /// hazards (the same non-empty range for input and output only for SIGN, in place).
    /// Two entries of `buffers` holding the same wgpu buffer count as one buffer. Bytes of
    /// the output range that no element covers are left as they were.
    ///
    /// The operator keeps what it built for its two latest sets of buffers and offsets
    /// (parameters and bind groups, as a DirectML binding table) when it records at most
    /// about a thousand dispatches, so recording again with either builds nothing; those
    /// buffers therefore stay allocated until the operator records with others or is
    /// dropped. Larger recordings are built in batches as they are recorded: the host
    /// memory they take while recording is bounded, but `encoder` holds every batch's
    /// parameters and bind groups until it is submitted and done.
    pub fn record(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        buffers: &[&GpuBuffer],
        inputs: &[BufferBinding],
        outputs: &[BufferBinding],
    ) -> Result<()> {
        let target = &mut Target::Encoder(encoder);
        signal::at_once(self.record_into(target, buffers, inputs, outputs)).unwrap_or_else(|| {
            Err(GpuError::Wgpu {
                during: "recording an operator into an encoder",
                message: "the recording waited for the device, which it never does".into(),
            })
        })
    }

    /// Records into `target` in batches of about [`BATCH_DISPATCHES`] dispatches, each
    /// made when the previous one was handed over. Waits only where `target` does.
    async fn record_into(
        &self,
        target: &mut Target<'_>,
        buffers: &[&GpuBuffer],
        inputs: &[BufferBinding],
        outputs: &[BufferBinding],
    ) -> Result<()> {
        self.device.check_process()?;
        for buffer in buffers {
            buffer.check_process()?;
        }
        let operator = self.operator;
        let bound = check_bindings(
            operator,
            (&self.input, &self.output),
            (inputs, outputs),
            |i| buffers.get(i).map(|b| b.len()),
            buffers.len(),
        )?;
        let (mut inb, outb) = (bound.input, bound.output);
        let (in_buffer, out_buffer) = (buffers[inb.buffer], buffers[outb.buffer]);
        if in_buffer.wgpu_buffer() == out_buffer.wgpu_buffer() {
            inb.buffer = outb.buffer;
        }
        let placement = ewise_core::Bindings {
            input: inb,
            output: outb,
        }
        .placement(operator, self.in_place)?;
        if self.plan.len() == 0 {
            return Ok(());
        }
        let dst = out_buffer.wgpu_buffer();
        let shared = match placement {
            Placement::Separate => false,
            Placement::InPlace => self.same_layout,
            Placement::Disjoint => self.shared_windows_fit(inb.offset, outb.offset),
        };
        let direct = placement == Placement::Separate || shared;
        let key = RecordKey {
            input: in_buffer.wgpu_buffer().clone(),
            in_offset: inb.offset,
            output: dst.clone(),
            out_offset: outb.offset,
            shared,
        };
        if direct {
            if let Some(recorded) = self.kept(&key) {
                return target.take(&self.device, &recorded).await;
            }
        }
        let mut batches = Batches {
            pending: Vec::new(),
            handed: 0,
        };
        let source = if direct {
            Source {
                buffer: in_buffer.wgpu_buffer().clone(),
                offset: inb.offset,
                shared,
            }
        } else {
            self.copy_to_scratch(in_buffer, inb.offset, &mut batches, target)
                .await?
        };
        let pipeline = if source.shared {
            self.shared_pipeline()?
        } else {
            Arc::clone(&self.pipeline)
        };
        let vector = self.vector_pipeline(source.shared)?;
        let rows = match &self.rows {
            Some(r) => Some(r.with_source(&self.device, source.shared)?),
            None => None,
        };
        for chunk in self.plan.chunks() {
            let chunk = &chunk;
            let out = (dst, outb.offset);
            let dispatches = &mut batches.pending;
            let rows_body = rows
                .as_ref()
                .and_then(|r| Some((r, self.row_body(chunk, &source, outb.offset)?)));
            if let Some((rows, body)) = rows_body {
                self.row_dispatches(rows, chunk, body, &source, out, dispatches);
            } else {
                let body = vector
                    .as_ref()
                    .and_then(|_| self.body(chunk, &source, outb.offset));
                match (&vector, body) {
                    (Some(v), Some(body)) => {
                        dispatches.push(self.vector_dispatch(v, chunk, body, &source, out));
                        let hole = Some((body.head, body.elements()));
                        let edges = self
                            .chunk_dispatch_with(self.key, chunk, &pipeline, &source, out, hole);
                        dispatches.extend(edges);
                    }
                    _ => dispatches.extend(self.chunk_dispatch(chunk, &pipeline, &source, out)),
                }
            }
            batches.hand_over_full(&self.device, target).await?;
        }
        let whole = batches.handed == 0;
        if let Some(recorded) = batches.hand_over(&self.device, target).await? {
            if direct && whole {
                self.keep(key, recorded);
            }
        }
        Ok(())
    }

    /// A kept recording for `key`, moved to the front.
    fn kept(&self, key: &RecordKey) -> Option<Arc<Recorded>> {
        let mut kept = self.recorded.kept.lock().unwrap_or_else(|e| e.into_inner());
        let i = kept.iter().position(|(k, _)| k == key)?;
        let entry = kept.remove(i);
        let recorded = Arc::clone(&entry.1);
        kept.insert(0, entry);
        Some(recorded)
    }

    fn keep(&self, key: RecordKey, recorded: Recorded) {
        let mut kept = self.recorded.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.insert(0, (key, Arc::new(recorded)));
        kept.truncate(KEPT_RECORDINGS);
    }

    /// Records into a new encoder, submits it to the device's queue and waits for it.
    /// [`GpuCompiledOperator::execute_async`], waited for on this thread.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn execute(
        &self,
        buffers: &[&GpuBuffer],
        inputs: &[BufferBinding],
        outputs: &[BufferBinding],
    ) -> Result<()> {
        signal::block_on(self.execute_async(buffers, inputs, outputs))
    }

    /// As [`GpuCompiledOperator::execute`], as a future (see
    /// [`GpuDevice::synchronize_async`] for how it waits): the same bindings, rules and
    /// errors. A recording of more than one batch submits each batch when it is made,
    /// with at most two in flight.
    pub async fn execute_async(
        &self,
        buffers: &[&GpuBuffer],
        inputs: &[BufferBinding],
        outputs: &[BufferBinding],
    ) -> Result<()> {
        self.device.check_process()?;
        let mut target = Target::Queue { last: None };
        self.record_into(&mut target, buffers, inputs, outputs)
            .await?;
        self.device.idle("running an operator").await
    }

    /// Runs on byte slices that start at the tensors' bases, as the CPU backend's
    /// `CompiledOperator::execute_slices`: each slice must hold its tensor's exact span
    /// ([`TensorDesc::exact_span_in_bytes`], no rounding to 4 bytes), else
    /// [`ewise_core::Error::BytesTooShort`] (in [`crate::GpuError::Op`]); bytes after the
    /// span are neither read nor written, and bytes of the output's span that no
    /// element covers are left as they were. The input is uploaded into a new buffer of
    /// its TotalTensorSizeInBytes, the output computed into another (uploaded first
    /// where elements leave gaps) and its span read back.
    /// [`GpuCompiledOperator::execute_slices_async`], waited for on this thread.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn execute_slices(&self, input: &[u8], output: &mut [u8]) -> Result<()> {
        signal::block_on(self.execute_slices_async(input, output))
    }

    /// As [`GpuCompiledOperator::execute_slices`], as a future (see
    /// [`GpuDevice::synchronize_async`] for how it waits): bytes in, bytes out, the
    /// path a browser takes.
    pub async fn execute_slices_async(&self, input: &[u8], output: &mut [u8]) -> Result<()> {
        let device = &self.device;
        device.check_process()?;
        self.check_span(TensorRole::Input, self.in_span, input.len())?;
        self.check_span(TensorRole::Output, self.out_span, output.len())?;
        let in_total = self.input.total_tensor_size_in_bytes;
        let out_total = self.output.total_tensor_size_in_bytes;
        let source = GpuBuffer::zeroed(device, in_total)?;
        upload_prefix(device, &source, &input[..self.in_span as usize])?;
        let target = GpuBuffer::zeroed(device, out_total)?;
        let output = &mut output[..self.out_span as usize];
        if !self.dense_output() {
            upload_prefix(device, &target, output)?;
        }
        self.execute_async(
            &[&source, &target],
            &[BufferBinding::new(0, 0, in_total)],
            &[BufferBinding::new(1, 0, out_total)],
        )
        .await?;
        download_prefix(device, &target, output).await
    }

    /// Runs in place on one byte slice holding the input, which the output replaces, as
    /// the CPU backend's `CompiledOperator::execute_in_place_slice`: only for an
    /// operator that supports in-place execution (SIGN) with input and output
    /// descriptions that place every element at the same bytes, else
    /// [`ewise_core::Error::InPlaceUnsupported`]; the slice must hold the exact span,
    /// else [`ewise_core::Error::BytesTooShort`] (both in [`crate::GpuError::Op`]).
    /// [`GpuCompiledOperator::execute_in_place_slice_async`], waited for on this thread.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn execute_in_place_slice(&self, data: &mut [u8]) -> Result<()> {
        signal::block_on(self.execute_in_place_slice_async(data))
    }

    /// As [`GpuCompiledOperator::execute_in_place_slice`], as a future (see
    /// [`GpuDevice::synchronize_async`] for how it waits).
    pub async fn execute_in_place_slice_async(&self, data: &mut [u8]) -> Result<()> {
        let device = &self.device;
        device.check_process()?;
        let reason = if !self.in_place {
            "the operator does not support in-place execution"
        } else if !self.same_layout {
            "the input and output layouts place elements at different bytes"
        } else {
            ""
        };
        if !reason.is_empty() {
            return Err(ewise_core::Error::InPlaceUnsupported {
                operator: self.operator,
                reason,
            }
            .into());
        }
        self.check_span(TensorRole::Input, self.in_span, data.len())?;
        let total = self
            .input
            .total_tensor_size_in_bytes
            .max(self.output.total_tensor_size_in_bytes);
        let buffer = GpuBuffer::zeroed(device, total)?;
        let data = &mut data[..self.in_span as usize];
        upload_prefix(device, &buffer, data)?;
        let whole = BufferBinding::new(0, 0, total);
        self.execute_async(&[&buffer], &[whole], &[whole]).await?;
        download_prefix(device, &buffer, data).await
    }

    /// [`ewise_core::Error::BytesTooShort`] where `len` bytes cannot hold `required`.
    fn check_span(&self, tensor: TensorRole, required: u64, len: usize) -> Result<()> {
        if (len as u64) < required {
            return Err(ewise_core::Error::BytesTooShort {
                operator: self.operator,
                tensor,
                given: len as u64,
                required,
            }
            .into());
        }
        Ok(())
    }

    /// Whether the output's elements cover every byte of its exact span.
    fn dense_output(&self) -> bool {
        let size = self.output.data_type.size_in_bytes().unwrap_or(0);
        let elements = self.output.element_count().unwrap_or(0);
        elements.checked_mul(size) == Some(self.out_span)
    }

    /// The vector kernel and its pipeline, reading through the output binding when
    /// `shared`; `None` for walks without one.
    fn vector_pipeline(
        &self,
        shared: bool,
    ) -> Result<Option<(KernelKey, Arc<wgpu::ComputePipeline>)>> {
        Ok(match &self.vector {
            Some((key, _)) if shared => {
                let key = KernelKey {
                    shared: true,
                    ..*key
                };
                Some((key, self.device.pipeline(&key)?))
            }
            Some((key, p)) => Some((*key, Arc::clone(p))),
            None => None,
        })
    }

    /// The vector body of `chunk` with the input read from `source` and the output at
    /// `out_offset` of its buffer.
    fn body(&self, chunk: &Chunk, source: &Source, out_offset: u64) -> Option<Body> {
        let sizes = (u64::from(self.key.in_size), u64::from(self.key.out_size));
        let in_at = source.offset + chunk.in_first * sizes.0;
        let out_at = out_offset + chunk.out_first * sizes.1;
        Body::of(in_at, out_at, chunk.count, sizes)
    }

    /// The dispatch of `chunk`'s vector body.
    fn vector_dispatch(
        &self,
        kernel: &(KernelKey, Arc<wgpu::ComputePipeline>),
        chunk: &Chunk,
        body: Body,
        source: &Source,
        (dst, dst_offset): (&wgpu::Buffer, u64),
    ) -> Dispatch {
        let (is, os) = (u64::from(kernel.0.in_size), u64::from(kernel.0.out_size));
        let run = Units {
            in_first: source.offset + (chunk.in_first + body.head) * is,
            in_bytes: body.elements() * is,
            out_first: dst_offset + (chunk.out_first + body.head) * os,
            out_bytes: body.units * UNIT_BYTES,
            units: body.units,
        };
        self.units_dispatch(kernel, source, dst, run, None)
    }

    /// The dispatch of a vector kernel over `run`: windows from the first vectors, vector
    /// bases, one invocation per `key.unroll()` units, in whole workgroup blocks. `rows`,
    /// for the row kernel: the units of one row and the outer dimensions' parameters.
    fn units_dispatch(
        &self,
        (key, pipeline): &(KernelKey, Arc<wgpu::ComputePipeline>),
        source: &Source,
        dst: &wgpu::Buffer,
        run: Units,
        rows: Option<(u32, Vec<u32>)>,
    ) -> Dispatch {
        let limits = &self.device.shared.limits;
        let bound = bind(
            source,
            (run.in_first, run.in_bytes),
            (run.out_first, run.out_bytes),
            window_alignment(limits),
            (UNIT_BYTES, UNIT_BYTES),
        );
        let block = u64::from(WORKGROUP) * u64::from(key.unroll());
        let groups = run.units.div_ceil(block);
        let (gx, gy) = grid(groups, limits.workgroups);
        let mut params = vec![
            (groups * u64::from(WORKGROUP)) as u32,
            gx * WORKGROUP,
            bound.in_base as u32,
            bound.out_base as u32,
            run.units as u32,
            0,
            0,
            0,
        ];
        if let Some((row_units, dims)) = rows {
            params[5] = row_units;
            params.extend(dims);
        }
        Dispatch {
            pipeline: Arc::clone(pipeline),
            walk: key.walk,
            params,
            dst: (dst.clone(), bound.dst.0, bound.dst.1 - bound.dst.0),
            src: bound.src,
            grid: (gx, gy),
        }
    }

    fn shared_pipeline(&self) -> Result<Arc<wgpu::ComputePipeline>> {
        if let Some(p) = self.shared_pipeline.get() {
            return Ok(Arc::clone(p));
        }
        let key = KernelKey {
            shared: true,
            ..self.key
        };
        let p = self.device.pipeline(&key)?;
        Ok(Arc::clone(self.shared_pipeline.get_or_init(|| p)))
    }

    /// Whether every chunk's input and output windows, joined, fit one binding: at once
    /// where both tensors' whole ranges do, chunk by chunk for plans of at most
    /// [`BATCH_DISPATCHES`] chunks; `false` for larger plans otherwise (their input is
    /// copied first).
    fn shared_windows_fit(&self, in_offset: u64, out_offset: u64) -> bool {
        let limits = &self.device.shared.limits;
        let align = window_alignment(limits);
        let a = window(in_offset, self.in_span, align);
        let b = window(out_offset, self.out_span, align);
        if a.1.max(b.1) - a.0.min(b.0) <= limits.binding {
            return true;
        }
        if self.plan.len() > BATCH_DISPATCHES as u64 {
            return false;
        }
        let (is, os) = (u64::from(self.key.in_size), u64::from(self.key.out_size));
        self.plan.chunks().all(|c| {
            let a = window(
                in_offset + c.in_first * is,
                c.in_span * is,
                window_alignment(limits),
            );
            let b = window(
                out_offset + c.out_first * os,
                c.out_span * os,
                window_alignment(limits),
            );
            a.1.max(b.1) - a.0.min(b.0) <= limits.binding
        })
    }

    /// Copies the words holding the input's span into a new buffer, for in-place
    /// execution between different layouts and for disjoint ranges of one buffer too far
    /// apart for one binding; the input is then read from the copy.
    async fn copy_to_scratch(
        &self,
        buffer: &GpuBuffer,
        offset: u64,
        batches: &mut Batches,
        target: &mut Target<'_>,
    ) -> Result<Source> {
        let start = offset & !3;
        let words = (offset + self.in_span).div_ceil(4) - start / 4;
        let scratch = GpuBuffer::zeroed(&self.device, words * 4)?;
        let key = KernelKey {
            op: Op::Copy,
            in_size: 4,
            out_size: 4,
            walk: Walk::Contiguous,
            shared: false,
            loads: self.key.loads,
        };
        let pipeline = self.device.pipeline(&key)?;
        let source = Source {
            buffer: buffer.wgpu_buffer().clone(),
            offset: start,
            shared: false,
        };
        let plan = Plan::new(&[Dim::new(words, 1, 1)], chunk_limits(&self.device, (4, 4)));
        for chunk in plan.chunks() {
            batches.pending.extend(self.chunk_dispatch_with(
                key,
                &chunk,
                &pipeline,
                &source,
                (scratch.wgpu_buffer(), 0),
                None,
            ));
            batches.hand_over_full(&self.device, target).await?;
        }
        Ok(Source {
            buffer: scratch.wgpu_buffer().clone(),
            offset: offset - start,
            shared: false,
        })
    }

    fn chunk_dispatch(
        &self,
        chunk: &Chunk,
        pipeline: &Arc<wgpu::ComputePipeline>,
        source: &Source,
        dst: (&wgpu::Buffer, u64),
    ) -> Option<Dispatch> {
        self.chunk_dispatch_with(self.key, chunk, pipeline, source, dst, None)
    }

    /// The dispatch of `chunk` with kernel `key`; with `hole` (`(head, body)` elements of
    /// a contiguous walk), without the `body` elements after the first `head`, which a
    /// vector dispatch writes. `None` when nothing is left to run.
    fn chunk_dispatch_with(
        &self,
        key: KernelKey,
        chunk: &Chunk,
        pipeline: &Arc<wgpu::ComputePipeline>,
        source: &Source,
        (dst, dst_offset): (&wgpu::Buffer, u64),
        hole: Option<(u64, u64)>,
    ) -> Option<Dispatch> {
        let limits = &self.device.shared.limits;
        let (is, os) = (u64::from(key.in_size), u64::from(key.out_size));
        let bound = bind(
            source,
            (source.offset + chunk.in_first * is, chunk.in_span * is),
            (dst_offset + chunk.out_first * os, chunk.out_span * os),
            window_alignment(limits),
            (is, os),
        );
        let (in_base, out_base) = (bound.in_base, bound.out_base);
        let all = key.invocations(chunk.count, out_base);
        let (skip_at, skip) = match hole {
            Some(hole) => hole_invocations(hole, out_base, os),
            None => (all, 0),
        };
        let invocations = all - skip;
        if invocations == 0 {
            return None;
        }
        let (gx, gy) = grid(
            invocations.div_ceil(u64::from(WORKGROUP)),
            limits.workgroups,
        );
        // Chunk limits keep every value below 2^32: counts below 2^31, offsets inside
        // one binding window, and so the strides of dimensions of more than one index;
        // a dimension of one index multiplies its stride by 0.
        let mut params = vec![
            invocations as u32,
            gx * WORKGROUP,
            in_base as u32,
            out_base as u32,
            chunk.count as u32,
            skip_at as u32,
            skip as u32,
            0,
        ];
        if let Walk::Strided { .. } | Walk::StridedWords { .. } = key.walk {
            for d in &chunk.dims {
                params.extend([d.size as u32, d.in_stride as u32, d.out_stride as u32, 0]);
            }
        }
        Some(Dispatch {
            pipeline: Arc::clone(pipeline),
            walk: key.walk,
            params,
            dst: (dst.clone(), bound.dst.0, bound.dst.1 - bound.dst.0),
            src: bound.src,
            grid: (gx, gy),
        })
    }
}

/// Vector units of one dispatch: their first input and output bytes (16-byte aligned),
/// the bytes from there to one past the last each tensor's units cover, and how many.
struct Units {
    in_first: u64,
    in_bytes: u64,
    out_first: u64,
    out_bytes: u64,
    units: u64,
}

/// The binding windows of one dispatch and its bases in them.
struct Bound {
    /// The output window, `[start, end)` bytes.
    dst: (u64, u64),
    /// The input binding (buffer, offset, size), absent when it is the output's.
    src: Option<(wgpu::Buffer, u64, u64)>,
    /// The first input and output bytes from their windows' starts, in `units`.
    in_base: u64,
    out_base: u64,
}

/// Windows (aligned to `align`) for `(first, bytes)` of the input in `source` and of
/// the output, joined into the output's binding when the source is shared; bases in
/// units of `units` bytes (input, output).
fn bind(
    source: &Source,
    (in_first, in_bytes): (u64, u64),
    (out_first, out_bytes): (u64, u64),
    align: u64,
    (iu, ou): (u64, u64),
) -> Bound {
    let a = window(in_first, in_bytes, align);
    let b = window(out_first, out_bytes, align);
    let (dst, src, in_start) = if source.shared {
        let joined = (a.0.min(b.0), a.1.max(b.1));
        (joined, None, joined.0)
    } else {
        (b, Some((source.buffer.clone(), a.0, a.1 - a.0)), a.0)
    };
    Bound {
        dst,
        src,
        in_base: (in_first - in_start) / iu,
        out_base: (out_first - dst.0) / ou,
    }
}

/// A grid of at least `groups` workgroups (at least one), rows of at most `per_row`.
fn grid(groups: u64, per_row: u32) -> (u32, u32) {
    let gx = groups.clamp(1, u64::from(per_row));
    (gx as u32, groups.div_ceil(gx).max(1) as u32)
}

/// The contiguous walk's hole for `(head, body)` elements, in its invocations
/// (`skip_at`, `skip`): one per element for outputs of 4 bytes and more, one per output
/// word below, from the word of element `out_base`. The body starts on a word.
fn hole_invocations((head, body): (u64, u64), out_base: u64, os: u64) -> (u64, u64) {
    if os >= 4 {
        (head, body)
    } else {
        let first = out_base * os / 4;
        ((out_base + head) * os / 4 - first, body * os / 4)
    }
}

/// Whether the output of the walk `dims` (outermost first) is packed in walking order:
/// each dimension's output stride is the product of the sizes inside it, so linear index
/// `t` is output element `t`, in every chunk of the walk too.
fn packed_output(dims: &[Dim]) -> bool {
    let mut inner = 1u64;
    for d in dims.iter().rev() {
        if d.size > 1 && d.out_stride != inner {
            return false;
        }
        inner = inner.saturating_mul(d.size);
    }
    true
}

/// Chunk limits for elements of these sizes on `device`: a window's span leaves room for
/// aligning its start down and its end up.
fn chunk_limits(device: &GpuDevice, (in_size, out_size): (u64, u64)) -> Limits {
    let l = &device.shared.limits;
    let per_grid = u64::from(WORKGROUP) * u64::from(l.workgroups) * u64::from(l.workgroups);
    Limits {
        bytes: l.binding - window_alignment(l) - 4,
        elements: MAX_DISPATCH_ELEMENTS.min(per_grid / 2),
        sizes: (in_size, out_size),
    }
}

/// Writes the dispatches' parameters into one uniform buffer and makes their bind groups.
fn prepare(device: &GpuDevice, dispatches: &[Dispatch]) -> Recorded {
    let wgpu_device = device.wgpu_device();
    let align = device.shared.limits.uniform_alignment;
    let slot = dispatches
        .iter()
        .map(|d| (d.params.len() as u64 * 4).div_ceil(align) * align)
        .max()
        .unwrap_or(align)
        .max(PARAMS_HEADER);
    let mut bytes = vec![0u8; (slot * dispatches.len() as u64) as usize];
    for (k, d) in dispatches.iter().enumerate() {
        let at = k * slot as usize;
        bytes[at..at + d.params.len() * 4].copy_from_slice(bytemuck::cast_slice(&d.params));
    }
    let uniforms = wgpu_device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("ewise parameters"),
        contents: &bytes,
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let groups: Vec<wgpu::BindGroup> = dispatches
        .iter()
        .enumerate()
        .map(|(k, d)| {
            fn range(
                (buffer, offset, size): &(wgpu::Buffer, u64, u64),
            ) -> wgpu::BindingResource<'_> {
                wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer,
                    offset: *offset,
                    size: wgpu::BufferSize::new(*size),
                })
            }
            let mut entries = vec![
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: &uniforms,
                        offset: k as u64 * slot,
                        size: wgpu::BufferSize::new(d.params.len() as u64 * 4),
                    }),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: range(&d.dst),
                },
            ];
            if let Some(src) = &d.src {
                entries.push(wgpu::BindGroupEntry {
                    binding: 2,
                    resource: range(src),
                });
            }
            wgpu_device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(d.walk.label()),
                layout: &d.pipeline.get_bind_group_layout(0),
                entries: &entries,
            })
        })
        .collect();
    Recorded {
        steps: dispatches
            .iter()
            .zip(groups)
            .map(|(d, group)| (Arc::clone(&d.pipeline), group, d.grid))
            .collect(),
        #[cfg(all(test, not(target_arch = "wasm32")))]
        walks: dispatches.iter().map(|d| d.walk).collect(),
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn windows_align_down_and_round_up() {
        assert_eq!(window(100, 10, 32), (96, 112));
        assert_eq!(window(64, 4, 32), (64, 68));
        assert_eq!(window(3, 1, 256), (0, 4));
    }

    #[test]
    fn bodies_start_where_both_tensors_reach_16_bytes() {
        let body = |head, units, per| Some(Body { head, units, per });
        // SIGN float32, both aligned: no head; 10 elements are 2 units and a tail of 2.
        assert_eq!(Body::of(32, 64, 10, (4, 4)), body(0, 2, 4));
        // Both 4 bytes past 16: a head of 3 elements.
        assert_eq!(Body::of(20, 52, 11, (4, 4)), body(3, 2, 4));
        // int8 at byte 1 of a vector, uint8 output at byte 1: 15 elements of head.
        assert_eq!(Body::of(1, 17, 47, (1, 1)), body(15, 2, 16));
        // IS_INFINITY float32 -> uint8: the output at byte 3 needs 13 elements, which
        // put the input at 4 + 52 = 56, not on 16 bytes: phases differ.
        assert_eq!(Body::of(4, 3, 100, (4, 1)), None);
        // The input at 12 meets it: 12 + 52 = 64.
        assert_eq!(Body::of(12, 3, 100, (4, 1)), body(13, 5, 16));
        // float64 -> uint8 at output byte 15: head 1, input 8 + 8 = 16.
        assert_eq!(Body::of(8, 15, 33, (8, 1)), body(1, 2, 16));
        // float16 SIGN with the output 2 bytes further than the input: never both.
        assert_eq!(Body::of(0, 2, 100, (2, 2)), None);
        // Runs too short for a whole unit after the head.
        assert_eq!(Body::of(0, 0, 3, (4, 4)), None);
        assert_eq!(Body::of(4, 4, 4, (4, 4)), None);
        assert_eq!(Body::of(4, 4, 7, (4, 4)), body(3, 1, 4));
        assert_eq!(Body::of(1, 1, 10, (1, 1)), None);
    }

    /// The walks of the dispatches one execution of `desc` records with the input at
    /// `offsets.0` of one buffer and the output at `offsets.1` of another, in order;
    /// `None` without an adapter.
    pub(super) fn walks(desc: &OperatorDesc, offsets: (u64, u64)) -> Option<Vec<Walk>> {
        let device = crate::device::tests::any_device()?;
        Some(walks_on(&device, desc, offsets))
    }

    /// As [`walks`], on `device` (with its tuning).
    pub(super) fn walks_on(
        device: &GpuDevice,
        desc: &OperatorDesc,
        offsets: (u64, u64),
    ) -> Vec<Walk> {
        let dispatches = dispatches(device, desc, offsets);
        dispatches.into_iter().map(|(walk, _)| walk).collect()
    }

    /// The walk and grid of each dispatch one execution of `desc` on `device` records
    /// with the input at `offsets.0` of one buffer and the output at `offsets.1` of
    /// another, in order.
    fn dispatches(
        device: &GpuDevice,
        desc: &OperatorDesc,
        offsets: (u64, u64),
    ) -> Vec<(Walk, (u32, u32))> {
        let device = device.clone();
        let op = device.create_operator(desc).unwrap().compile().unwrap();
        let (inb, outb) = (&desc.input(), &desc.output());
        let a = GpuBuffer::zeroed(&device, offsets.0 + inb.total_tensor_size_in_bytes).unwrap();
        let b = GpuBuffer::zeroed(&device, offsets.1 + outb.total_tensor_size_in_bytes).unwrap();
        let mut encoder = device
            .wgpu_device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        op.record(
            &mut encoder,
            &[&a, &b],
            &[BufferBinding::new(
                0,
                offsets.0,
                inb.total_tensor_size_in_bytes,
            )],
            &[BufferBinding::new(
                1,
                offsets.1,
                outb.total_tensor_size_in_bytes,
            )],
        )
        .unwrap();
        let kept = op.recorded.kept.lock().unwrap();
        let recorded = &kept[0].1;
        let grids = recorded.steps.iter().map(|step| step.2);
        recorded.walks.iter().copied().zip(grids).collect()
    }

    #[test]
    fn dispatches_beyond_a_row_of_workgroups_take_a_second_grid_dimension() {
        use ewise_core::DataType::*;
        let Some(device) = crate::device::tests::any_device() else {
            return;
        };
        let capped = GpuDevice::builder()
            .allow_software(true)
            .adapter(device.adapter().name.clone())
            .max_workgroups_per_dimension(256)
            .build()
            .unwrap();
        assert_eq!(capped.shared.limits.workgroups, 256);
        // Beyond 256 x 256 x 4 units (4 Mi int8, 1 Mi float32) and 256 x 256 words.
        let n = 5 << 20;
        let f16 = TensorDesc::new(Float16, &[n]).with_alignment(2);
        let cases = [
            (Float32, (0, 0), true),
            (Int8, (0, 0), true),
            (Float16, (0, 2), false),
        ];
        for (data_type, offsets, vector) in cases {
            let size = data_type.size_in_bytes().unwrap() as u32;
            let t = TensorDesc::new(data_type, &[n]).with_alignment(size);
            let desc = if data_type == Float16 {
                OperatorDesc::sign(f16.clone(), f16.clone())
            } else {
                OperatorDesc::sign(t.clone(), t)
            };
            let recorded = dispatches(&capped, &desc, offsets);
            let (walk, grid) = recorded[0];
            assert_eq!(matches!(walk, Walk::Vector), vector, "{walk:?}");
            assert_eq!(grid.0, 256, "{data_type:?}: {recorded:?}");
            assert!(grid.1 >= 2, "{data_type:?}: {recorded:?}");
        }
        let transposed = OperatorDesc::sign(
            TensorDesc::strided(Float32, &[1024, 1280], &[1, 1024]),
            TensorDesc::new(Float32, &[1024, 1280]),
        );
        let rows = OperatorDesc::sign(
            TensorDesc::strided(Float32, &[1024, 1200], &[1280, 1]),
            TensorDesc::new(Float32, &[1024, 1200]),
        );
        let tall = |recorded: &[(Walk, (u32, u32))], rows: bool| {
            recorded
                .iter()
                .any(|(walk, grid)| matches!(walk, Walk::Rows { .. }) == rows && grid.1 >= 2)
        };
        let recorded = dispatches(&capped, &transposed, (0, 0));
        assert!(tall(&recorded, false), "{recorded:?}");
        let recorded = dispatches(&capped, &rows, (0, 0));
        assert!(tall(&recorded, true), "{recorded:?}");
    }

    /// The dispatches one execution of SIGN or IS_INFINITY (to UINT8) on `n` packed
    /// elements of `data_type` records with the input at `in_offset` of one buffer and
    /// the output at `out_offset` of another; `None` without an adapter.
    fn steps(
        data_type: ewise_core::DataType,
        sign: bool,
        n: u32,
        offsets: (u64, u64),
    ) -> Option<usize> {
        use ewise_core::{DataType, InfinityMode};
        let size = data_type.size_in_bytes().unwrap() as u32;
        let input = TensorDesc::new(data_type, &[n]).with_alignment(size);
        let desc = if sign {
            OperatorDesc::sign(input.clone(), input)
        } else {
            let output = TensorDesc::new(DataType::Uint8, &[n]).with_alignment(1);
            OperatorDesc::is_infinity(input, output, InfinityMode::Either)
        };
        Some(walks(&desc, offsets)?.len())
    }

    #[test]
    fn vector_runs_add_a_dispatch_only_for_unaligned_ends() {
        use ewise_core::DataType::*;
        let cases = [
            // Whole vectors, aligned: the vector dispatch alone.
            (Float32, true, 64, (0, 0), 1),
            (Int8, true, 48, (16, 32), 1),
            (Float16, false, 32, (0, 0), 1),
            // A tail, a head, both: a second dispatch for them.
            (Float32, true, 65, (0, 0), 2),
            (Int8, true, 48, (3, 3), 2),
            (Float64, false, 40, (8, 15), 2),
            // No whole vector, or phases that never meet: the scalar walk alone.
            (Float32, true, 3, (0, 0), 1),
            (Float32, true, 64, (4, 0), 1),
            (Float32, false, 64, (0, 1), 1),
        ];
        for (data_type, sign, n, offsets, want) in cases {
            let Some(got) = steps(data_type, sign, n, offsets) else {
                return;
            };
            assert_eq!(got, want, "{data_type} sign={sign} n={n} {offsets:?}");
        }
    }

    #[test]
    fn holes_count_invocations_of_the_scalar_walk() {
        // Elements of 4 and 8 bytes: one invocation each.
        assert_eq!(hole_invocations((3, 8), 5, 4), (3, 8));
        assert_eq!(hole_invocations((1, 4), 1, 8), (1, 4));
        // uint8 output from element 13 of its window: words 3.. ; the body at element
        // 13 + 3 = 16 (word 4) is 32 elements (8 words).
        assert_eq!(hole_invocations((3, 32), 13, 1), (1, 8));
        // float16 from element 0: a body from element 8 is word 4 on.
        assert_eq!(hole_invocations((8, 16), 0, 2), (4, 8));
        // No head: the hole starts at the first invocation.
        assert_eq!(hole_invocations((0, 16), 16, 1), (0, 4));
    }
}
