//! `ewise_sign` and `ewise_is_infinity`: one call over contiguous host memory, on the
//! CPU through the byte-level array API, on a GPU through a chunked stream kept in the
//! device's bounded pool (module `streams`).

use ewise::gpu::stream::{ChunkEnds, GpuStream, StreamOp, DEFAULT_CHUNK_BYTES};
use ewise::gpu::{GpuDevice, GpuError};
use ewise::{array, DataType, InfinityMode, OperatorType};

use crate::device::{Backend, DeviceCore};
use crate::status::{Failure, Outcome};
use crate::streams::StreamKey;

/// Host memory of one call: where the input and output are and how many elements.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span {
    pub(crate) input: *const u8,
    pub(crate) output: *mut u8,
    pub(crate) count: u64,
}

/// The operation of one call.
#[derive(Debug, Clone, Copy)]
pub(crate) enum HostOp {
    Sign,
    IsInfinity(InfinityMode),
}

impl HostOp {
    fn operator(self) -> OperatorType {
        match self {
            HostOp::Sign => OperatorType::ElementWiseSign,
            HostOp::IsInfinity(_) => OperatorType::ElementWiseIsInfinity,
        }
    }

    fn mode(self) -> InfinityMode {
        match self {
            HostOp::Sign => InfinityMode::Either,
            HostOp::IsInfinity(mode) => mode,
        }
    }
}

/// Runs `op` over `span` on `core`'s device.
///
/// # Safety
/// `span.input` points to `count` readable elements and `span.output` to `count`
/// writable output elements, neither used by others during the call.
pub(crate) unsafe fn run(
    core: &DeviceCore,
    op: HostOp,
    data_type: DataType,
    span: Span,
) -> Outcome<()> {
    if span.input.is_null() {
        return Err(Failure::invalid("input is NULL"));
    }
    if span.output.is_null() {
        return Err(Failure::invalid("output is NULL"));
    }
    let operator = op.operator();
    core.check_type((operator, op.mode()), data_type)?;
    let size = data_type.size_in_bytes().unwrap_or(1);
    let out_size = match op {
        HostOp::Sign => size,
        HostOp::IsInfinity(_) => 1,
    };
    let bytes = |per: u64| {
        span.count
            .checked_mul(per)
            .and_then(|n| usize::try_from(n).ok())
            .filter(|&n| n <= isize::MAX as usize)
            .ok_or_else(|| too_many(operator, span.count, per))
    };
    let (in_len, out_len) = (bytes(size)?, bytes(out_size)?);
    if span.count == 0 {
        return Ok(());
    }
    let (a, b) = (span.input as usize, span.output as usize);
    let in_place = a == b && in_len == out_len;
    let overlap = a < b.saturating_add(out_len) && b < a.saturating_add(in_len);
    if overlap && !(in_place && matches!(op, HostOp::Sign)) {
        return Err(overlapping(op, (a, in_len), (b, out_len)));
    }
    match &core.backend {
        Backend::Cpu(_) => {
            // SAFETY: the caller promises the ranges; they are identical or disjoint.
            unsafe { run_cpu(core, op, data_type, span, (in_len, out_len), in_place) }
        }
        // SAFETY: the caller promises the ranges; they are identical or disjoint.
        Backend::Gpu(device) => unsafe { run_gpu(core, device, op, data_type, span) },
    }
}

/// The GPU path: a kept stream for this operator and type (made on first use) moves
/// the caller's memory through the GPU in chunks.
///
/// # Safety
/// As for [`run`]; the ranges were checked identical (SIGN) or disjoint.
#[inline(never)]
unsafe fn run_gpu(
    core: &DeviceCore,
    device: &GpuDevice,
    op: HostOp,
    data_type: DataType,
    span: Span,
) -> Outcome<()> {
    let size = data_type.size_in_bytes().unwrap_or(1);
    let out_size = match op {
        HostOp::Sign => size,
        HostOp::IsInfinity(_) => 1,
    };
    let key = match op {
        HostOp::Sign => StreamKey::Sign(data_type),
        HostOp::IsInfinity(mode) => StreamKey::IsInfinity(data_type, mode),
    };
    core.check_process()?;
    let kept = core
        .streams
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take(key);
    let mut stream = match kept {
        Some(s) => s,
        None => {
            let (stream_op, output) = match op {
                HostOp::Sign => (StreamOp::Sign(core.nan_policy), data_type),
                HostOp::IsInfinity(m) => (StreamOp::IsInfinity(m), DataType::Uint8),
            };
            GpuStream::new(device, stream_op, data_type, output, DEFAULT_CHUNK_BYTES)?
        }
    };
    let mut ends = RawEnds {
        span,
        in_size: size as usize,
        out_size: out_size as usize,
    };
    stream.run(span.count, &mut ends)?;
    let released = core
        .streams
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .give_back(key, stream);
    drop(released);
    Ok(())
}

#[cold]
fn too_many(operator: OperatorType, count: u64, per: u64) -> Failure {
    Failure::invalid(format!(
        "{operator}: element_count {count} of {per}-byte elements overflows the address space"
    ))
}

#[cold]
fn overlapping(op: HostOp, (a, in_len): (usize, usize), (b, out_len): (usize, usize)) -> Failure {
    let operator = op.operator();
    let why = match op {
        HostOp::Sign => " without being the same bytes (only output == input runs in place)",
        HostOp::IsInfinity(_) => " (IS_INFINITY does not run in place)",
    };
    Failure::invalid(format!(
        "{operator}: the output's {out_len} bytes at {b:#x} overlap the input's {in_len} \
         bytes at {a:#x}{why}"
    ))
}

/// The CPU path: the byte-level array API over the caller's memory.
///
/// # Safety
/// As for [`run`], with the lengths computed there; the ranges are identical
/// (`in_place`) or disjoint.
unsafe fn run_cpu(
    core: &DeviceCore,
    op: HostOp,
    data_type: DataType,
    span: Span,
    (in_len, out_len): (usize, usize),
    in_place: bool,
) -> Outcome<()> {
    match op {
        HostOp::Sign if in_place => {
            // SAFETY: the caller's promise.
            let data = unsafe { std::slice::from_raw_parts_mut(span.output, out_len) };
            array::sign_bytes_in_place(data_type, data, core.nan_policy)?;
        }
        HostOp::Sign => {
            // SAFETY: the caller's promise; the ranges are disjoint.
            let (src, dst) = unsafe {
                (
                    std::slice::from_raw_parts(span.input, in_len),
                    std::slice::from_raw_parts_mut(span.output, out_len),
                )
            };
            array::sign_bytes(data_type, src, dst, core.nan_policy)?;
        }
        HostOp::IsInfinity(mode) => {
            // SAFETY: the caller's promise; the ranges are disjoint.
            let (src, dst) = unsafe {
                (
                    std::slice::from_raw_parts(span.input, in_len),
                    std::slice::from_raw_parts_mut(span.output, out_len),
                )
            };
            array::is_infinity_bytes(data_type, mode, src, dst)?;
        }
    }
    Ok(())
}

/// A GPU stream's ends over the caller's memory: chunk `k` is read before it is
/// written, and only its own bytes are touched, so output == input is safe.
struct RawEnds {
    span: Span,
    in_size: usize,
    out_size: usize,
}

impl ChunkEnds for RawEnds {
    type Error = GpuError;

    fn read(&mut self, start: u64, bytes: &mut [u8]) -> Result<(), GpuError> {
        let at = start as usize * self.in_size;
        // SAFETY: `start` and `bytes.len()` stay inside the `count` elements the caller
        // of `run` promised; this chunk is not written while it is read.
        let src = unsafe { std::slice::from_raw_parts(self.span.input.add(at), bytes.len()) };
        bytes.copy_from_slice(src);
        Ok(())
    }

    fn write(&mut self, start: u64, outputs: &[&[u8]]) -> Result<(), GpuError> {
        let at = start as usize * self.out_size;
        let out = outputs[0];
        // SAFETY: as for `read`; the chunk's input was read before this write.
        let dst = unsafe { std::slice::from_raw_parts_mut(self.span.output.add(at), out.len()) };
        dst.copy_from_slice(out);
        Ok(())
    }

    fn stop_before(&mut self, _start: u64) -> Result<bool, GpuError> {
        Ok(false)
    }
}
