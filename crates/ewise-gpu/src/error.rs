//! The GPU backend's errors: the same values as the CPU backend for the same mistakes in
//! descriptions and bindings, plus what only a GPU can get wrong.

/// Everything the GPU backend can refuse or fail at.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GpuError {
    /// A description, feature level or binding mistake: exactly the error the CPU
    /// backend gives for it.
    #[error(transparent)]
    Op(#[from] ewise_core::Error),
    /// No adapter matched the request.
    #[error("no GPU adapter found: tried {tried}; found {found}. {hint}")]
    NoAdapter {
        /// What was asked for (backends, name filter, software allowed or not).
        tried: String,
        /// The adapters that were seen and why each was passed over, or "none".
        found: String,
        /// How to get one.
        hint: &'static str,
    },
    /// Adapters were found, but none of those tried could open a device and compile
    /// ewise's kernels on it.
    #[error("no GPU adapter could be used: {}. {hint}", crate::choice::join(.failures))]
    NoUsableAdapter {
        /// Each adapter tried, in the order tried, and why it failed.
        failures: Vec<crate::AdapterFailure>,
        /// How to get one that works.
        hint: &'static str,
    },
    /// An environment variable holds a value that is not understood.
    #[error("{variable}={value} is not understood (accepted: {accepted})")]
    Environment {
        /// The variable.
        variable: &'static str,
        /// Its value.
        value: String,
        /// What it may hold.
        accepted: &'static str,
    },
    /// A caller's `wgpu::Buffer` cannot be used as an ewise buffer.
    #[error("this wgpu::Buffer cannot be used: {reason}")]
    ForeignBuffer {
        /// What is missing.
        reason: String,
    },
    /// A buffer upload or download outside the buffer or off its 4-byte words.
    #[error("buffer {what} of {len} bytes at offset {offset} does not fit a buffer of {buffer_len} bytes in whole 4-byte words (the offset must be a multiple of 4, and the length too unless it reaches the buffer's end)")]
    Transfer {
        /// "upload" or "download".
        what: &'static str,
        /// The offset asked for.
        offset: u64,
        /// The length asked for.
        len: u64,
        /// The buffer's length.
        buffer_len: u64,
    },
    /// A baseline copy or read ([`crate::BaselineKernel`], [`crate::record_buffer_copy`])
    /// outside its buffers, off its granularity, or between ranges of one buffer.
    #[error("{what} of {len} bytes from offset {src_offset} of a {src_len}-byte buffer to offset {dst_offset} of a {dst_len}-byte buffer is refused: {reason}")]
    Baseline {
        /// Which baseline.
        what: &'static str,
        /// The bytes asked for.
        len: u64,
        /// The source offset.
        src_offset: u64,
        /// The source buffer's length.
        src_len: u64,
        /// The destination offset.
        dst_offset: u64,
        /// The destination buffer's length.
        dst_len: u64,
        /// What is wrong.
        reason: &'static str,
    },
    /// The device was created in another process, which this one was forked from: its
    /// wgpu objects belong to the parent's driver state, so nothing is run on them.
    #[error("this GPU device was created in process {created}, and this is process {current}: GPU devices do not survive fork(); create the device in this process, or start worker processes with the spawn or forkserver start method")]
    Forked {
        /// The id of the process that created the device.
        created: u32,
        /// The id of this process.
        current: u32,
    },
    /// A tensor of a description needs more bytes than the device's largest buffer
    /// (`max_buffer_size`): its TotalTensorSizeInBytes, in whole 4-byte words, could
    /// never be bound. Given by [`crate::GpuDevice::create_operator`], and so by
    /// everything that builds operators from descriptions, before anything is planned
    /// or allocated.
    #[error("{operator}: {tensor} needs a buffer of {bytes} bytes, larger than this GPU's largest buffer ({limit} bytes)")]
    BufferTooLarge {
        /// The operator.
        operator: ewise_core::OperatorType,
        /// Which tensor.
        tensor: ewise_core::TensorRole,
        /// The bytes its buffer would need.
        bytes: u64,
        /// The device's largest buffer in bytes.
        limit: u64,
    },
    /// Host memory for a staging buffer could not be allocated.
    #[error("out of host memory: {bytes} bytes for {during} could not be allocated")]
    OutOfHostMemory {
        /// The bytes asked for.
        bytes: u64,
        /// What they were for.
        during: &'static str,
    },
    /// A [`crate::stream::StreamProgram`] whose steps do not fit together.
    #[error("invalid stream program: {reason}")]
    InvalidProgram {
        /// What is wrong.
        reason: String,
    },
    /// A [`crate::Tuning`] out of range (given by [`crate::GpuDevice::set_tuning`]).
    #[error("invalid GPU tuning: {reason}")]
    InvalidTuning {
        /// What is out of range.
        reason: String,
    },
    /// wgpu reported an error (validation, out of memory, a lost device, a failed map).
    #[error("wgpu error while {during}: {message}")]
    Wgpu {
        /// What ewise was doing.
        during: &'static str,
        /// wgpu's message.
        message: String,
    },
}

/// `Result` with [`GpuError`].
pub type Result<T, E = GpuError> = std::result::Result<T, E>;
