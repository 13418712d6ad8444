//! Operators, compiled operators and `ewise_execute`: bindings checked by the backends
//! with DirectML's rules (docs/SEMANTICS.md section 5), buffers locked while they run.

use std::sync::Arc;

use ewise::gpu::{GpuCompiledOperator, GpuOperator};
use ewise::{
    check_bindings, BufferBinding, BufferRef, CompiledOperator, Operator, OperatorDesc, Placement,
};

use crate::buffer::{ewise_buffer, Storage};
use crate::device::{Backend, DeviceCore};
use crate::status::{Failure, Outcome};
use crate::types::*;

/// `ewise_operator`: a validated operator of one device.
#[derive(Debug)]
pub struct ewise_operator {
    pub(crate) device: Arc<DeviceCore>,
    pub(crate) op: OperatorKind,
}

/// A backend's operator.
#[derive(Debug)]
pub(crate) enum OperatorKind {
    Cpu(Operator),
    Gpu(GpuOperator),
}

/// `ewise_compiled_operator`: an operator ready to execute on its device.
#[derive(Debug)]
pub struct ewise_compiled_operator {
    pub(crate) device: Arc<DeviceCore>,
    pub(crate) compiled: CompiledKind,
}

/// A backend's compiled operator.
#[derive(Debug)]
pub(crate) enum CompiledKind {
    Cpu(CompiledOperator),
    Gpu(GpuCompiledOperator),
}

/// The execution flags ewise knows; all mean nothing here and are accepted.
const KNOWN_FLAGS: DML_EXECUTION_FLAGS = DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION
    | DML_EXECUTION_FLAG_DISABLE_META_COMMANDS
    | DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE;

impl ewise_operator {
    /// Validates `desc` on `device` and creates the operator.
    pub(crate) fn new(device: &Arc<DeviceCore>, desc: &OperatorDesc) -> Outcome<ewise_operator> {
        let op = match &device.backend {
            Backend::Cpu(d) => OperatorKind::Cpu(d.create_operator(desc)?),
            Backend::Gpu(d) => OperatorKind::Gpu(d.create_operator(desc)?),
        };
        Ok(ewise_operator {
            device: Arc::clone(device),
            op,
        })
    }

    /// Compiles the operator on `device`, which must be the one that created it.
    pub(crate) fn compile(
        &self,
        device: &Arc<DeviceCore>,
        flags: DML_EXECUTION_FLAGS,
    ) -> Outcome<ewise_compiled_operator> {
        if !Arc::ptr_eq(device, &self.device) {
            return Err(Failure::invalid(
                "ewise_compile_operator: the operator was created on another device",
            ));
        }
        if flags & !KNOWN_FLAGS != 0 {
            return Err(Failure::invalid(format!(
                "DML_EXECUTION_FLAGS {flags:#x} has unknown bits {:#x} (accepted: \
                 ALLOW_HALF_PRECISION_COMPUTATION 1, DISABLE_META_COMMANDS 2, \
                 DESCRIPTORS_VOLATILE 4)",
                flags & !KNOWN_FLAGS
            )));
        }
        let compiled = match &self.op {
            OperatorKind::Cpu(op) => CompiledKind::Cpu(op.compile()?),
            OperatorKind::Gpu(op) => CompiledKind::Gpu(op.compile()?),
        };
        Ok(ewise_compiled_operator {
            device: Arc::clone(device),
            compiled,
        })
    }
}

impl ewise_compiled_operator {
    /// Runs with one input and one output binding, synchronously.
    pub(crate) fn execute(
        &self,
        input: &EWISE_BUFFER_BINDING,
        output: &EWISE_BUFFER_BINDING,
    ) -> Outcome<()> {
        // SAFETY: the caller promises non-NULL buffer handles are live.
        let (inb, outb) = unsafe {
            (
                buffer_of(input, "input binding's Buffer")?,
                buffer_of(output, "output binding's Buffer")?,
            )
        };
        for (b, which) in [(inb, "input"), (outb, "output")] {
            if !Arc::ptr_eq(&b.device, &self.device) {
                return Err(Failure::invalid(format!(
                    "ewise_execute: the {which} binding's buffer belongs to another device \
                     than the compiled operator"
                )));
            }
        }
        self.device.check_process()?;
        let binding =
            |b: &EWISE_BUFFER_BINDING, index| BufferBinding::new(index, b.Offset, b.SizeInBytes);
        let same = std::ptr::eq(inb, outb);
        match &self.compiled {
            CompiledKind::Gpu(c) => {
                let gpu = |s: &Storage| match s {
                    Storage::Gpu(g) => Some(g.clone()),
                    _ => None,
                };
                if same {
                    let s = inb.lock();
                    let ib = gpu(&s).ok_or_else(internal_storage)?;
                    c.execute(&[&ib], &[binding(input, 0)], &[binding(output, 0)])?;
                } else {
                    let (si, so) = lock_two(inb, outb);
                    let ib = gpu(&si).ok_or_else(internal_storage)?;
                    let ob = gpu(&so).ok_or_else(internal_storage)?;
                    c.execute(&[&ib, &ob], &[binding(input, 0)], &[binding(output, 1)])?;
                }
                Ok(())
            }
            CompiledKind::Cpu(c) => {
                if same {
                    let mut s = inb.lock();
                    let bytes = s.host_bytes().ok_or_else(internal_storage)?;
                    c.execute(
                        &mut [BufferRef::ReadWrite(bytes)],
                        &[binding(input, 0)],
                        &[binding(output, 0)],
                    )?;
                    return Ok(());
                }
                let (mut si, mut so) = lock_two(inb, outb);
                let aliased = match (si.host_range(), so.host_range()) {
                    (Some(a), Some(b)) => a.start < b.end && b.start < a.end,
                    _ => false,
                };
                if aliased {
                    return execute_aliased(c, (inb, input), (outb, output), (&si, &so));
                }
                let ib = si.host_bytes().ok_or_else(internal_storage)?;
                let ob = so.host_bytes().ok_or_else(internal_storage)?;
                c.execute(
                    &mut [BufferRef::ReadOnly(ib), BufferRef::ReadWrite(ob)],
                    &[binding(input, 0)],
                    &[binding(output, 1)],
                )?;
                Ok(())
            }
        }
    }
}

/// Runs on two wrapped buffers whose host memories overlap: the bindings are checked
/// on each buffer, then their absolute ranges must be identical (in place) or disjoint.
fn execute_aliased(
    c: &CompiledOperator,
    (inb, input): (&ewise_buffer, &EWISE_BUFFER_BINDING),
    (outb, output): (&ewise_buffer, &EWISE_BUFFER_BINDING),
    storages: (&Storage, &Storage),
) -> Outcome<()> {
    let lens = [inb.len, outb.len];
    let bound = check_bindings(
        c.operator_type(),
        (c.input_desc(), c.output_desc()),
        (
            &[BufferBinding::new(0, input.Offset, input.SizeInBytes)],
            &[BufferBinding::new(1, output.Offset, output.SizeInBytes)],
        ),
        |i| lens.get(i).copied(),
        2,
    )?;
    let (Some(a), Some(b)) = (storages.0.host_range(), storages.1.host_range()) else {
        return Err(internal_storage());
    };
    let in_start = a.start as u64 + bound.input.offset;
    let out_start = b.start as u64 + bound.output.offset;
    let absolute = ewise::Bindings {
        input: BufferBinding::new(0, in_start, bound.input.size_in_bytes),
        output: BufferBinding::new(0, out_start, bound.output.size_in_bytes),
    };
    let placement = absolute.placement(c.operator_type(), true)?;
    let span = |start: u64, len: u64| {
        // SAFETY: both ranges were checked to lie inside their wrapped memories, which
        // the wrapping promise keeps valid; ewise's uses are serialised by the locks.
        unsafe { std::slice::from_raw_parts_mut(start as usize as *mut u8, len as usize) }
    };
    let only = |len| [BufferBinding::new(0, 0, len)];
    match placement {
        Placement::InPlace => {
            let data = span(in_start, bound.input.size_in_bytes);
            c.execute(
                &mut [BufferRef::ReadWrite(data)],
                &only(bound.input.size_in_bytes),
                &only(bound.output.size_in_bytes),
            )?;
        }
        _ => {
            let src = span(in_start, bound.input.size_in_bytes);
            let dst = span(out_start, bound.output.size_in_bytes);
            c.execute(
                &mut [BufferRef::ReadOnly(src), BufferRef::ReadWrite(dst)],
                &only(bound.input.size_in_bytes),
                &[BufferBinding::new(1, 0, bound.output.size_in_bytes)],
            )?;
        }
    }
    Ok(())
}

/// The buffer a binding names.
///
/// # Safety
/// A non-NULL `Buffer` is a live `ewise_buffer`.
unsafe fn buffer_of<'a>(b: &EWISE_BUFFER_BINDING, what: &str) -> Outcome<&'a ewise_buffer> {
    // SAFETY: the caller promises a non-NULL handle is live.
    unsafe { b.Buffer.as_ref() }.ok_or_else(|| Failure::invalid(format!("{what} is NULL")))
}

/// Locks two different buffers in address order, so that two threads locking the same
/// pair (in either argument order) never wait on each other; returns the guards in
/// argument order. The one rule for every path that holds two buffers at once.
fn lock_two<'a>(
    a: &'a ewise_buffer,
    b: &'a ewise_buffer,
) -> (
    std::sync::MutexGuard<'a, Storage>,
    std::sync::MutexGuard<'a, Storage>,
) {
    if (a as *const ewise_buffer) < (b as *const ewise_buffer) {
        let ga = a.lock();
        (ga, b.lock())
    } else {
        let gb = b.lock();
        (a.lock(), gb)
    }
}

fn internal_storage() -> Failure {
    Failure {
        status: EWISE_ERROR_INTERNAL,
        message: "internal error: a buffer's storage does not match its device".into(),
    }
}
