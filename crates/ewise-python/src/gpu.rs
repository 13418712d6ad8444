//! `device="gpu"`: the same plans run by ewise-gpu on the process's GPU.
//!
//! The input's span is uploaded as it is (strides and all), the kernel writes a dense
//! output span, and that span is downloaded into the output array. Outputs with gaps
//! between elements are computed into a dense temporary by the caller, so bytes that
//! are not `out`'s elements are never written.

use std::sync::OnceLock;

use ewise_cpu::{BufferBinding, Extensions, NanPolicy, OperatorDesc};
use ewise_gpu::{GpuBuffer, GpuDevice, GpuError};
use pyo3::prelude::*;

use crate::layout::{Memory, Plan};
use crate::GpuError as PyGpuError;

/// The GPU every call uses: the best adapter (as `EWISE_GPU_BACKEND` and
/// `EWISE_GPU_ADAPTER` choose), accepting everything the library accepts; validation at
/// a caller's feature level happens before, on the CPU side. Found once per process,
/// failure included.
fn device() -> PyResult<&'static GpuDevice> {
    static DEVICE: OnceLock<Result<GpuDevice, String>> = OnceLock::new();
    DEVICE
        .get_or_init(|| {
            GpuDevice::builder()
                .extensions(Extensions::Enabled)
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| PyGpuError::new_err(e.clone()))
}

/// The adapter `device="gpu"` runs on, as one line (name, backend, type, driver).
pub(crate) fn adapter() -> PyResult<String> {
    Ok(device()?.adapter().to_string())
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
    let device = device()?;
    let (input, output, memory) = (plan.input, plan.output, plan.memory);
    let run = move || -> Result<(), GpuError> {
        let compiled = device
            .create_operator(desc)?
            .with_nan_policy(policy)
            .compile()?;
        let (in_total, out_total) = (
            desc.input().total_tensor_size_in_bytes,
            desc.output().total_tensor_size_in_bytes,
        );
        // SAFETY: by the caller's contract.
        let out_bytes = unsafe { crate::ops::bytes_mut(output) };
        let in_binding = BufferBinding::new(0, 0, in_total);
        let result = if memory == Memory::Same {
            let buffer = upload(device, out_bytes, out_total)?;
            compiled.execute(&[&buffer], &[in_binding], &[in_binding])?;
            buffer.read_range(device, 0, out_total)?
        } else {
            // SAFETY: by the caller's contract.
            let buffer = upload(device, unsafe { crate::ops::bytes(input) }, in_total)?;
            let out_buffer = GpuBuffer::zeroed(device, out_total)?;
            let out_binding = BufferBinding::new(1, 0, out_total);
            compiled.execute(&[&buffer, &out_buffer], &[in_binding], &[out_binding])?;
            out_buffer.read_range(device, 0, out_total)?
        };
        out_bytes.copy_from_slice(&result[..out_bytes.len()]);
        Ok(())
    };
    py.detach(run).map_err(|e| match e {
        GpuError::Op(e) => crate::ops::validation(e),
        e => PyGpuError::new_err(e.to_string()),
    })
}

/// A buffer of `total` bytes (DirectML's rounded tensor size) starting with `bytes`.
fn upload(device: &GpuDevice, bytes: &[u8], total: u64) -> Result<GpuBuffer, GpuError> {
    let buffer = GpuBuffer::zeroed(device, total)?;
    let whole = bytes.len() / 4 * 4;
    buffer.write(device, 0, &bytes[..whole])?;
    if whole < bytes.len() {
        let mut tail = [0u8; 4];
        tail[..bytes.len() - whole].copy_from_slice(&bytes[whole..]);
        buffer.write(device, whole as u64, &tail)?;
    }
    Ok(buffer)
}
