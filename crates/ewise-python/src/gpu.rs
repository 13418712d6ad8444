//! `device="gpu"`: the same plans run by ewise-gpu on the process's GPU, one piece of a
//! call at a time (at most `GPU_PIECE_BYTES` of spans, module `ops`).
//!
//! A piece whose input and output are both dense and hold their elements in the same
//! order streams through the process's [`GpuStream`] in chunks, transfers overlapping
//! the kernel. Any other piece uploads the input's span as it is (strides and all), the
//! kernel writes a dense output span, and that span is downloaded into the output
//! array. Outputs with gaps between elements are computed into a dense temporary by the
//! caller, so bytes that are not `out`'s elements are never written. Host memory is a
//! small multiple of a piece: wgpu's staging of the upload, the GPU buffers (host
//! memory on a software renderer), the download's staging and copy.

use std::ffi::CString;
use std::sync::{Mutex, OnceLock, PoisonError};

use ewise_cpu::{DataType, Extensions, NanPolicy, OperatorDesc};
use ewise_gpu::stream::{ChunkEnds, GpuStream, StreamOp, StreamProgram, DEFAULT_CHUNK_BYTES};
use ewise_gpu::{GpuDevice, GpuError};
use pyo3::exceptions::PyMemoryError;
use pyo3::prelude::*;

use crate::layout::{Memory, Plan};
use crate::{AdapterFallbackWarning, GpuError as PyGpuError, SoftwareRendererWarning};

/// The GPU every call uses: the best adapter (as `EWISE_GPU_BACKEND` and
/// `EWISE_GPU_ADAPTER` choose), accepting everything the library accepts; validation at
/// a caller's feature level happens before, on the CPU side. Found once per process,
/// failure included. The call that opens it gives `ewise.AdapterFallbackWarning`
/// (`warnings.warn`) when adapters were passed over because they could not be used, and
/// `ewise.SoftwareRendererWarning` when a software renderer was chosen unasked
/// (docs/SEMANTICS.md section 8.1); a warning filter that turns one into an error makes
/// that call raise it.
fn device(py: Python<'_>) -> PyResult<&'static GpuDevice> {
    static DEVICE: OnceLock<Result<GpuDevice, String>> = OnceLock::new();
    let mut opened = false;
    let device = DEVICE
        .get_or_init(|| {
            opened = true;
            GpuDevice::builder()
                .extensions(Extensions::Enabled)
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| PyGpuError::new_err(e.clone()))?;
    if opened {
        if let Some(text) = device.fallback_warning() {
            let class = py.get_type::<AdapterFallbackWarning>();
            PyErr::warn(py, &class, &CString::new(text)?, 1)?;
        }
        if let Some(text) = device.software_warning() {
            let class = py.get_type::<SoftwareRendererWarning>();
            PyErr::warn(py, &class, &CString::new(text)?, 1)?;
        }
    }
    Ok(device)
}

/// The adapter `device="gpu"` runs on, as one line (name, backend, type, driver).
pub(crate) fn adapter(py: Python<'_>) -> PyResult<String> {
    Ok(device(py)?.adapter().to_string())
}

/// Whether the plan's output span holds nothing but its elements, so downloading the
/// span writes no byte outside them.
pub(crate) fn dense_output(plan: &Plan) -> bool {
    plan.output.len == plan.elements() * plan.items.1
}

/// Whether the input's span is much larger than its elements (a sparse slice), which
/// makes copying it on the CPU cheaper than uploading the span.
pub(crate) fn sparse_input(plan: &Plan) -> bool {
    plan.input.len > 4 * plan.elements() * plan.items.0 + 4096
}

/// Whether the plan's input and output are both dense and hold their elements in the
/// same order, so that the `k`-th element of one span pairs with the `k`-th of the
/// other and the plan can run as a stream of contiguous chunks.
pub(crate) fn streamable(plan: &Plan) -> bool {
    let elements = plan.elements();
    plan.in_strides == plan.out_strides
        && plan.input.len == elements * plan.items.0
        && plan.output.len == elements * plan.items.1
}

/// The stream the process's calls share, made for (or remade for) one operator and
/// pair of types; calls on several threads take turns.
fn stream() -> &'static Mutex<Option<GpuStream>> {
    static STREAM: Mutex<Option<GpuStream>> = Mutex::new(None);
    &STREAM
}

/// A dense plan's spans as the two ends of a stream.
enum Spans<'a> {
    Separate {
        input: &'a [u8],
        output: &'a mut [u8],
    },
    Same(&'a mut [u8]),
}

/// Bytes per input and per output element.
struct Ends<'a> {
    spans: Spans<'a>,
    items: (usize, usize),
}

impl ChunkEnds for Ends<'_> {
    type Error = GpuError;

    fn read(&mut self, start: u64, bytes: &mut [u8]) -> Result<(), GpuError> {
        let at = start as usize * self.items.0;
        let from = match &self.spans {
            Spans::Separate { input, .. } => &input[at..at + bytes.len()],
            Spans::Same(data) => &data[at..at + bytes.len()],
        };
        bytes.copy_from_slice(from);
        Ok(())
    }

    fn write(&mut self, start: u64, outputs: &[&[u8]]) -> Result<(), GpuError> {
        let [bytes] = outputs else {
            return Err(GpuError::InvalidProgram {
                reason: format!("{} outputs written for one array", outputs.len()),
            });
        };
        let at = start as usize * self.items.1;
        let to = match &mut self.spans {
            Spans::Separate { output, .. } => &mut output[at..at + bytes.len()],
            Spans::Same(data) => &mut data[at..at + bytes.len()],
        };
        to.copy_from_slice(bytes);
        Ok(())
    }

    fn stop_before(&mut self, _start: u64) -> Result<bool, GpuError> {
        Ok(false)
    }
}

/// Runs `desc` (validated by the caller) over the plan's memory on the GPU.
///
/// # Safety
/// As for the CPU path: the plan's spans are the arrays' live memory, disjoint unless
/// `Same`, and the output span is dense.
pub(crate) unsafe fn execute(
    py: Python<'_>,
    desc: &OperatorDesc,
    policy: NanPolicy,
    plan: &Plan,
) -> PyResult<()> {
    let device = device(py)?;
    device.check_process().map_err(gpu_error)?;
    let (input, output, memory) = (plan.input, plan.output, plan.memory);
    if streamable(plan) {
        let op = match desc {
            OperatorDesc::IsInfinity(d) => StreamOp::IsInfinity(d.mode),
            OperatorDesc::Sign(_) => StreamOp::Sign(policy),
        };
        let types = (desc.input().data_type, desc.output().data_type);
        let (elements, items) = (plan.elements() as u64, plan.items);
        let run = move || -> Result<(), GpuError> {
            // SAFETY: by the caller's contract; `Same` spans are one slice.
            let spans = unsafe {
                match memory {
                    Memory::Same => Spans::Same(crate::ops::bytes_mut(output)),
                    _ => Spans::Separate {
                        input: crate::ops::bytes(input),
                        output: crate::ops::bytes_mut(output),
                    },
                }
            };
            run_stream(device, op, types, elements, Ends { spans, items })
        };
        return py.detach(run).map_err(gpu_error);
    }
    let run = move || -> Result<(), GpuError> {
        let compiled = device
            .create_operator(desc)?
            .with_nan_policy(policy)
            .compile()?;
        // SAFETY: by the caller's contract.
        let out_bytes = unsafe { crate::ops::bytes_mut(output) };
        if memory == Memory::Same {
            compiled.execute_in_place_slice(out_bytes)
        } else {
            // SAFETY: by the caller's contract.
            compiled.execute_slices(unsafe { crate::ops::bytes(input) }, out_bytes)
        }
    };
    py.detach(run).map_err(gpu_error)
}

/// Streams `count` elements through the shared stream, remade when it runs another
/// operator or types. In a forked child this is [`GpuError::Forked`] before the
/// stream's lock, which a thread of the parent may have held at the fork.
fn run_stream(
    device: &GpuDevice,
    op: StreamOp,
    (input, output): (DataType, DataType),
    count: u64,
    mut ends: Ends<'_>,
) -> Result<(), GpuError> {
    device.check_process()?;
    let mut shared = stream().lock().unwrap_or_else(PoisonError::into_inner);
    let program = StreamProgram::single(op, input, output);
    let fits = |s: &GpuStream| *s.stream_program() == program;
    let stream = match shared.take() {
        Some(s) if fits(&s) => shared.insert(s),
        _ => shared.insert(GpuStream::new(
            device,
            op,
            input,
            output,
            DEFAULT_CHUNK_BYTES,
        )?),
    };
    stream.run(count, &mut ends)?;
    Ok(())
}

/// A GPU failure as a Python exception: `MemoryError` for host memory, the library's
/// validation as `ValidationError`, anything else as `GpuError`.
fn gpu_error(e: GpuError) -> PyErr {
    match e {
        GpuError::Op(e) => crate::ops::validation(e),
        e @ GpuError::OutOfHostMemory { .. } => PyMemoryError::new_err(e.to_string()),
        e => PyGpuError::new_err(e.to_string()),
    }
}
