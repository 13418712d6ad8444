//! The DirectML-style path: device -> operator -> compiled operator -> execute.

use ewise_core::layout::{no_kernel, Layouts};
use ewise_core::{
    check_bindings, validate, BufferBinding, DeviceOptions, Error, Extensions, FeatureLevel,
    NanPolicy, OperatorDesc, OperatorSupport, OperatorType, Placement, Result, TensorDesc,
    TensorRole,
};

use std::sync::Mutex;

use crate::buffer::BufferRef;
use crate::kernels::{self, Kernel};
use crate::parallel::{
    self, Parallelism, MEDIUM_THRESHOLD_BYTES, MIN_PIECE_BYTES, PARALLEL_THRESHOLD_BYTES,
};
use crate::walk::{Part, Plan, Source};

/// A CPU device that behaves as a DirectML device of one feature level.
///
/// The DirectML-style path (`IDMLDevice::CreateOperator`, `CompileOperator`, a binding
/// table, `RecordDispatch`): describe the tensors, create the operator (validated against
/// the device's feature level), compile it once, bind buffers and execute, read back.
///
/// ```
/// use ewise_cpu::{
///     Buffer, BufferBinding, BufferRef, DataType, Device, FeatureLevel, OperatorDesc,
///     TensorDesc,
/// };
///
/// fn main() -> Result<(), ewise_cpu::Error> {
///     let device = Device::with_feature_level(FeatureLevel::L6_4);
///     let t = TensorDesc::new(DataType::Float32, &[2, 2]);
///     let sign = device.create_operator(&OperatorDesc::sign(t.clone(), t.clone()))?.compile()?;
///
///     let input = Buffer::from_values(&[-2.5f32, -0.0, f32::NAN, 1e-45]);
///     let mut output = Buffer::zeroed(input.len());
///     let bytes = t.total_tensor_size_in_bytes;
///     sign.execute(
///         &mut [BufferRef::from(&input), BufferRef::from(&mut output)],
///         &[BufferBinding::new(0, 0, bytes)], // input: buffer 0, offset 0
///         &[BufferBinding::new(1, 0, bytes)], // output: buffer 1
///     )?;
///
///     let signs: Vec<f32> = output
///         .chunks_exact(4)
///         .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
///         .collect();
///     // NaN gives +0 (DirectML's default NaN policy), -0 gives +0, never -0.
///     assert_eq!(signs.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), [
///         (-1.0f32).to_bits(), 0, 0, 1.0f32.to_bits()
///     ]);
///     Ok(())
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Device {
    options: DeviceOptions,
    parallelism: Parallelism,
}

/// Options for creating a [`Device`]: the [`DeviceOptions`] every backend takes, and the
/// CPU's thread count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeviceBuilder {
    options: DeviceOptions,
    parallelism: Parallelism,
}

impl DeviceBuilder {
    /// The feature level, minimum level, extensions and NaN policy together, replacing
    /// any set before.
    pub fn options(mut self, options: DeviceOptions) -> Self {
        self.options = options;
        self
    }

    /// The highest feature level the device supports ([`DeviceOptions::feature_level`]).
    pub fn feature_level(mut self, level: FeatureLevel) -> Self {
        self.options = self.options.feature_level(level);
        self
    }

    /// The minimum level the caller needs ([`DeviceOptions::min_feature_level`]);
    /// [`DeviceBuilder::build`] fails if the device's level is below it.
    pub fn min_feature_level(mut self, level: FeatureLevel) -> Self {
        self.options = self.options.min_feature_level(level);
        self
    }

    /// Whether operators may use the ewise extensions ([`DeviceOptions::extensions`]).
    pub fn extensions(mut self, extensions: Extensions) -> Self {
        self.options = self.options.extensions(extensions);
        self
    }

    /// The NaN policy new SIGN operators start with ([`DeviceOptions::nan_policy`]).
    pub fn nan_policy(mut self, policy: NanPolicy) -> Self {
        self.options = self.options.nan_policy(policy);
        self
    }

    /// How many threads new operators may use (default [`Parallelism::Auto`]).
    pub fn parallelism(mut self, parallelism: Parallelism) -> Self {
        self.parallelism = parallelism;
        self
    }

    /// Creates the device; fails as [`DeviceOptions::check`] does
    /// ([`Error::FeatureLevelUnavailable`] for a level below the minimum).
    pub fn build(self) -> Result<Device> {
        self.options.check()?;
        Ok(Device {
            options: self.options,
            parallelism: self.parallelism,
        })
    }
}

impl Default for Device {
    fn default() -> Self {
        Device::new()
    }
}

impl Device {
    /// A strict DirectML device at the latest feature level (6_4).
    pub fn new() -> Device {
        Device {
            options: DeviceOptions::default(),
            parallelism: Parallelism::Auto,
        }
    }

    /// A strict device at `level`.
    pub fn with_feature_level(level: FeatureLevel) -> Device {
        Device {
            options: DeviceOptions::default().feature_level(level),
            ..Device::new()
        }
    }

    /// Options for a device.
    pub fn builder() -> DeviceBuilder {
        DeviceBuilder::default()
    }

    /// The options the device was created with.
    pub fn options(&self) -> DeviceOptions {
        self.options
    }

    /// The device's feature level.
    pub fn feature_level(&self) -> FeatureLevel {
        self.options.level
    }

    /// Whether the device accepts the ewise extensions.
    pub fn extensions(&self) -> Extensions {
        self.options.extensions
    }

    /// `DML_FEATURE_FEATURE_LEVELS`: the highest of `requested` that this device supports,
    /// or `None` if it supports none of them.
    pub fn check_feature_levels(&self, requested: &[FeatureLevel]) -> Option<FeatureLevel> {
        requested
            .iter()
            .copied()
            .filter(|&l| l <= self.options.level)
            .max()
    }

    /// Validates `desc` at this device's level and creates the operator.
    pub fn create_operator(&self, desc: &OperatorDesc) -> Result<Operator> {
        validate(desc, self.options.level, self.options.extensions)?;
        Ok(Operator {
            desc: desc.clone(),
            nan_policy: self.options.nan_policy,
            parallelism: self.parallelism,
        })
    }
}

/// A validated operator, not yet compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operator {
    desc: OperatorDesc,
    nan_policy: NanPolicy,
    parallelism: Parallelism,
}

impl Operator {
    /// The description it was created from.
    pub fn desc(&self) -> &OperatorDesc {
        &self.desc
    }

    /// The NaN policy compilation will use (SIGN on float types only).
    pub fn nan_policy(&self) -> NanPolicy {
        self.nan_policy
    }

    /// This operator with another NaN policy.
    pub fn with_nan_policy(mut self, policy: NanPolicy) -> Operator {
        self.nan_policy = policy;
        self
    }

    /// This operator with another thread count.
    pub fn with_parallelism(mut self, parallelism: Parallelism) -> Operator {
        self.parallelism = parallelism;
        self
    }

    /// The thread count compilation will use.
    pub fn parallelism(&self) -> Parallelism {
        self.parallelism
    }

    /// Chooses the kernel, plans the layout walk and its split across threads, once.
    pub fn compile(&self) -> Result<CompiledOperator> {
        CompiledOperator::new(&self.desc, self.nan_policy, self.parallelism)
    }
}

/// A compiled operator: executes with bindings, any number of times.
///
/// Bindings name a buffer of the execution's list, an offset and a size, as DirectML's
/// `DML_BUFFER_BINDING` does; an output bound to the input's own bytes runs in place.
/// Here IS_INFINITY writes UINT8 0/1 into one buffer, then SIGN rewrites another in place:
///
/// ```
/// use ewise_cpu::{
///     Buffer, BufferBinding, BufferRef, DataType, Device, FeatureLevel, InfinityMode,
///     OperatorDesc, TensorDesc,
/// };
///
/// fn main() -> Result<(), ewise_cpu::Error> {
///     let device = Device::with_feature_level(FeatureLevel::L6_4);
///     let x = TensorDesc::new(DataType::Float32, &[4]);
///     let flags = TensorDesc::new(DataType::Uint8, &[4]);
///     let desc = OperatorDesc::is_infinity(x.clone(), flags.clone(), InfinityMode::Negative);
///     let is_inf = device.create_operator(&desc)?.compile()?;
///     let sign = device.create_operator(&OperatorDesc::sign(x.clone(), x.clone()))?.compile()?;
///
///     let mut data = Buffer::from_values(&[f32::NEG_INFINITY, 3.0, f32::INFINITY, -0.5]);
///     let mut out = Buffer::zeroed(flags.total_tensor_size_in_bytes as usize);
///     let whole = BufferBinding::new(0, 0, x.total_tensor_size_in_bytes);
///     is_inf.execute(
///         &mut [BufferRef::from(&data), BufferRef::from(&mut out)],
///         &[whole],
///         &[BufferBinding::new(1, 0, flags.total_tensor_size_in_bytes)],
///     )?;
///     assert_eq!(out[..4], [1, 0, 0, 0]); // only -inf, as InfinityMode::Negative asks
///
///     sign.execute(&mut [BufferRef::from(&mut data)], &[whole], &[whole])?; // in place
///     assert_eq!(data[..4], (-1.0f32).to_ne_bytes());
///     Ok(())
/// }
/// ```
#[derive(Debug, Clone)]
pub struct CompiledOperator {
    operator: OperatorType,
    input: TensorDesc,
    output: TensorDesc,
    in_place: bool,
    same_layout: bool,
    kernel: Kernel,
    plan: Plan,
    /// Whether executions with separate input and output, and in place (same layout),
    /// write with streaming stores ([`crate::cache`]).
    stream: Streams,
    /// Exact byte spans of the input and output layouts.
    spans: (u64, u64),
    parts: Vec<Part>,
    /// Whether `parts` run on the pool ([`parallel::pool`], fetched at each execution)
    /// rather than on the helpers: when there are more parts than helper threads and a
    /// caller.
    pooled: bool,
    /// Whether executions on the helpers wake sleeping ones ([`PARALLEL_THRESHOLD_BYTES`]
    /// moved or more).
    wakes: bool,
}

impl CompiledOperator {
    pub(crate) fn new(
        desc: &OperatorDesc,
        policy: NanPolicy,
        parallelism: Parallelism,
    ) -> Result<CompiledOperator> {
        let operator = desc.operator_type();
        let (input, output) = (desc.input(), desc.output());
        let kernel =
            kernels::for_desc(desc, policy).ok_or_else(|| no_kernel(operator, input.data_type))?;
        let layouts = Layouts::of(desc)?;
        let same_layout = layouts.same_layout;
        let plan = Plan::new(&input.sizes, layouts.walk);
        let elements = input.element_count().unwrap_or(0);
        let moved = elements.saturating_mul((kernel.in_size + kernel.out_size) as u64);
        let threads = parallelism.resolve();
        let mut parts = if threads > 1 && moved >= MEDIUM_THRESHOLD_BYTES {
            plan.split(threads, kernel.in_size, kernel.out_size, MIN_PIECE_BYTES)
        } else {
            Vec::new()
        };
        let pooled = !parts.is_empty() && parts.len() > crate::helper::count() + 1;
        // The pool starts now rather than in the first execution, which only fetches it.
        if pooled && !parts.is_empty() && parallel::pool(parts.len() - 1).is_none() {
            parts.clear();
        }
        let spans = (
            input.exact_span_in_bytes().unwrap_or(u64::MAX),
            output.exact_span_in_bytes().unwrap_or(u64::MAX),
        );
        // The bytes that compete for the cache: input and output, or in place (same
        // layout) the output alone, as the threads that run the execution see them.
        let threshold = crate::cache::stream_threshold(parts.len().max(1));
        let stream = Streams {
            separate: threshold.streams(spans.0.saturating_add(spans.1)),
            in_place: threshold.streams(spans.1),
        };
        Ok(CompiledOperator {
            operator,
            input: input.clone(),
            output: output.clone(),
            in_place: OperatorSupport::of(operator).in_place && kernel.map_in_place.is_some(),
            same_layout,
            kernel,
            plan,
            stream,
            spans,
            parts,
            pooled,
            wakes: moved >= PARALLEL_THRESHOLD_BYTES,
        })
    }

    /// How many threads an execution uses: more than 1 only above the size threshold
    /// and when the layout splits into disjoint output pieces.
    pub fn threads(&self) -> usize {
        self.parts.len().max(1)
    }

    /// Whether executions with separate input and output buffers write with streaming
    /// (non-temporal) stores: when the input and output spans together exceed the
    /// host's threshold for this operator's thread count ([`crate::stream_threshold`]).
    pub fn streams(&self) -> bool {
        self.stream.separate
    }

    /// Whether in-place executions on one buffer (same layout) write with streaming
    /// stores: when the output span alone exceeds the host's threshold.
    pub fn streams_in_place(&self) -> bool {
        self.stream.in_place
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

    /// Runs the operator with one binding per input and per output into `buffers`.
    ///
    /// Checks, in order: binding counts (exactly one input and one output), buffer
    /// indices, offset alignment (16 bytes or the tensor's GuaranteedBaseOffsetAlignment),
    /// bound size (at least TotalTensorSizeInBytes), range inside the buffer, a writable
    /// output buffer, and hazards: the input and output may share memory only when their
    /// ranges are identical and the operator supports in-place execution (SIGN). Bytes of
    /// the output range that no element covers are left as they were. In place with
    /// layouts that differ, the input is copied first: a copy that cannot be allocated
    /// is [`Error::OutOfMemory`], and nothing is written.
    pub fn execute(
        &self,
        buffers: &mut [BufferRef<'_>],
        inputs: &[BufferBinding],
        outputs: &[BufferBinding],
    ) -> Result<()> {
        let operator = self.operator;
        let lens = |i: usize| buffers.get(i).map(|b| b.len() as u64);
        let bound = check_bindings(
            operator,
            (&self.input, &self.output),
            (inputs, outputs),
            lens,
            buffers.len(),
        )?;
        let (inb, outb) = (bound.input, bound.output);
        // Ranges are inside their buffers, so offsets and ends fit in usize.
        let in_range = inb.offset as usize..(inb.offset + inb.size_in_bytes) as usize;
        let out_range = outb.offset as usize..(outb.offset + outb.size_in_bytes) as usize;
        if inb.buffer == outb.buffer {
            let buffer = writable(buffers, outb.buffer, operator)?;
            if bound.placement(operator, self.in_place)? == Placement::InPlace {
                let data = &mut buffer[out_range];
                if self.same_layout {
                    self.run(None, data);
                } else {
                    let mut copy = Vec::new();
                    copy.try_reserve_exact(data.len())
                        .map_err(|_| Error::OutOfMemory {
                            operator,
                            bytes: data.len() as u64,
                            what: "a copy of the input, which an in-place execution with layouts that differ reads",
                        })?;
                    copy.extend_from_slice(data);
                    self.run(Some(&copy), data);
                }
                return Ok(());
            }
            let (src, dst) = split_disjoint(buffer, in_range, out_range);
            self.run(Some(src), dst);
            return Ok(());
        }
        let (src, dst) = two_buffers(buffers, inb.buffer, outb.buffer, operator)?;
        self.run(Some(&src[in_range]), &mut dst[out_range]);
        Ok(())
    }

    /// Runs the plan, split across the helpers or the current pool's threads when
    /// compilation planned that (in a forked child, its own pool and helpers). `src` is
    /// `None` for in-place execution on `dst` (same layout).
    fn run(&self, src: Option<&[u8]>, dst: &mut [u8]) {
        let (kernel, stream) = (&self.kernel, self.stream.of(src));
        if !self.parts.is_empty() && !self.pooled {
            self.run_on_helpers(src, dst);
            return;
        }
        let pool = (!self.parts.is_empty())
            .then(|| parallel::pool(self.parts.len() - 1))
            .flatten();
        let Some(pool) = pool else {
            let source = src.map_or(Source::InPlace, Source::Separate);
            self.plan.run(kernel, source, dst, stream);
            return;
        };
        pool.in_place_scope(|scope| {
            let mut pieces = self.pieces(src, dst).into_iter();
            let first = pieces.next();
            for (part, source, mine) in pieces {
                scope.spawn(move |_| part.plan.run(kernel, source, mine, stream));
            }
            if let Some((part, source, mine)) = first {
                part.plan.run(kernel, source, mine, stream);
            }
        });
    }

    /// The planned parts with their input and their own piece of `dst`.
    fn pieces<'a>(
        &'a self,
        src: Option<&'a [u8]>,
        dst: &'a mut [u8],
    ) -> Vec<(&'a Part, Source<'a>, &'a mut [u8])> {
        let mut rest = dst;
        let mut consumed = 0;
        let mut pieces = Vec::with_capacity(self.parts.len());
        for part in &self.parts {
            let tail = std::mem::take(&mut rest);
            let (_, tail) = tail.split_at_mut(part.out_start - consumed);
            let (mine, tail) = tail.split_at_mut(part.out_len);
            rest = tail;
            consumed = part.out_start + part.out_len;
            let source = src.map_or(Source::InPlace, |s| Source::Separate(&s[part.in_start..]));
            pieces.push((part, source, mine));
        }
        pieces
    }

    /// Runs the planned parts on the calling thread and the helper threads
    /// ([`crate::helper`]): the awake ones, and the sleeping ones too where
    /// [`CompiledOperator::wakes`].
    fn run_on_helpers(&self, src: Option<&[u8]>, dst: &mut [u8]) {
        let (kernel, stream) = (&self.kernel, self.stream.of(src));
        let pieces: Vec<_> = self
            .pieces(src, dst)
            .into_iter()
            .map(|piece| Mutex::new(Some(piece)))
            .collect();
        let job = |k: usize| {
            let taken = pieces[k].lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some((part, source, mine)) = taken {
                part.plan.run(kernel, source, mine, stream);
            }
        };
        crate::helper::run(&job, pieces.len(), self.wakes);
    }

    /// Runs on byte slices that start at the tensors' bases, without DirectML's binding
    /// rules: for callers with their own memory (files, graph buffers). Each slice must
    /// hold its tensor's exact span ([`TensorDesc::exact_span_in_bytes`]: no rounding to
    /// 4 bytes, no offset alignment); the slices cannot overlap, by Rust's borrow rules.
    pub fn execute_slices(&self, input: &[u8], output: &mut [u8]) -> Result<()> {
        self.check_span(TensorRole::Input, self.spans.0, input.len())?;
        self.check_span(TensorRole::Output, self.spans.1, output.len())?;
        self.run(Some(input), output);
        Ok(())
    }

    /// Runs in place on one byte slice holding the input, which the output replaces.
    /// Needs an operator that supports in-place execution (SIGN) and input and output
    /// descriptions that place every element at the same bytes.
    pub fn execute_in_place_slice(&self, data: &mut [u8]) -> Result<()> {
        let reason = if !self.in_place {
            "the operator does not support in-place execution"
        } else if !self.same_layout {
            "the input and output layouts place elements at different bytes"
        } else {
            ""
        };
        if !reason.is_empty() {
            return Err(Error::InPlaceUnsupported {
                operator: self.operator,
                reason,
            });
        }
        self.check_span(TensorRole::Input, self.spans.0, data.len())?;
        self.run(None, data);
        Ok(())
    }

    fn check_span(&self, tensor: TensorRole, required: u64, len: usize) -> Result<()> {
        if (len as u64) < required {
            return Err(Error::BytesTooShort {
                operator: self.operator,
                tensor,
                given: len as u64,
                required,
            });
        }
        Ok(())
    }
}

/// The streaming-store choice of a compiled operator, for its two kinds of execution.
#[derive(Debug, Clone, Copy)]
struct Streams {
    separate: bool,
    in_place: bool,
}

impl Streams {
    /// The choice for an execution reading `src`, or in place (`None`).
    fn of(self, src: Option<&[u8]>) -> bool {
        if src.is_some() {
            self.separate
        } else {
            self.in_place
        }
    }
}

fn writable<'b>(
    buffers: &'b mut [BufferRef<'_>],
    index: usize,
    operator: OperatorType,
) -> Result<&'b mut [u8]> {
    match &mut buffers[index] {
        BufferRef::ReadWrite(b) => Ok(b),
        BufferRef::ReadOnly(_) => Err(Error::ReadOnlyOutput {
            operator,
            buffer: index,
        }),
    }
}

fn two_buffers<'b>(
    buffers: &'b mut [BufferRef<'_>],
    input: usize,
    output: usize,
    operator: OperatorType,
) -> Result<(&'b [u8], &'b mut [u8])> {
    let (low, high) = buffers.split_at_mut(input.max(output));
    let (in_ref, out_ref) = if input < output {
        (&low[input], &mut high[0])
    } else {
        (&high[0], &mut low[output])
    };
    match out_ref {
        BufferRef::ReadWrite(out) => Ok((in_ref.bytes(), out)),
        BufferRef::ReadOnly(_) => Err(Error::ReadOnlyOutput {
            operator,
            buffer: output,
        }),
    }
}

fn split_disjoint(
    buffer: &mut [u8],
    input: std::ops::Range<usize>,
    output: std::ops::Range<usize>,
) -> (&[u8], &mut [u8]) {
    if input.end <= output.start {
        let (low, high) = buffer.split_at_mut(output.start);
        (&low[input], &mut high[..output.len()])
    } else {
        let (low, high) = buffer.split_at_mut(input.start);
        (&high[..input.len()], &mut low[output])
    }
}
