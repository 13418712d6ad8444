//! # ewise-c
//!
//! The C ABI of ewise (`include/ewise.h`): a C or C++ program fills in DirectML's own
//! descriptor structs (`DML_BUFFER_TENSOR_DESC`, `DML_TENSOR_DESC`, `DML_OPERATOR_DESC`
//! and the two operator descs) and runs SIGN and IS_INFINITY on the CPU or any GPU with
//! ewise's bit-exact rules. A thin layer over the `ewise` facade with no logic of its
//! own: descriptions are validated by the devices, bindings by the backends.
//!
//! Every entry point runs inside a guard: a panic never crosses the boundary
//! (`EWISE_ERROR_INTERNAL`), every refusal is a status with a message in
//! [`ewise_last_error`], and raw C values are checked before they become Rust enums.
//! Handles are boxes; children hold their device in an `Arc`, so a device goes with its
//! last child. The functions' contracts (statuses, thread safety, lifetimes) are in
//! `ewise.h` and `docs/C-API.md`.
#![allow(non_camel_case_types)]

mod buffer;
mod convert;
mod device;
mod host;
mod operator;
mod status;
mod streams;
pub mod types;

use std::ffi::{c_char, c_void};
use std::sync::Arc;

pub use buffer::ewise_buffer;
pub use device::ewise_device;
pub use operator::{ewise_compiled_operator, ewise_operator};

use device::DeviceCore;
use host::{HostOp, Span};
use status::{deref, guard, out_ptr, quietly, Failure};
use types::*;

/// This thread's last message: "" after a call that returned `EWISE_OK`. Never NULL;
/// valid until this thread's next status-returning call.
#[no_mangle]
pub extern "C" fn ewise_last_error() -> *const c_char {
    status::last_error()
}

/// The HRESULT DirectML returns where ewise returns `status` (`E_INVALIDARG` for a value
/// that is no status).
#[no_mangle]
pub extern "C" fn ewise_status_hresult(status: EWISE_STATUS) -> i32 {
    status::hresult(status)
}

/// The library's version, `"MAJOR.MINOR.PATCH"`.
#[no_mangle]
pub extern "C" fn ewise_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// Creates a device as `desc` says.
///
/// # Safety
/// `desc` is NULL or points to a valid `EWISE_DEVICE_DESC`; `device` is NULL or points
/// to writable storage for a handle.
#[no_mangle]
pub unsafe extern "C" fn ewise_create_device(
    desc: *const EWISE_DEVICE_DESC,
    device: *mut *mut ewise_device,
) -> EWISE_STATUS {
    guard(|| {
        out_ptr(device, "device")?;
        // SAFETY: the caller's promise.
        let desc = unsafe { deref(desc, "desc")? };
        let core = Arc::new(DeviceCore::new(desc)?);
        // SAFETY: checked non-NULL; the caller promises it is writable.
        unsafe { device.write(Box::into_raw(Box::new(ewise_device { core }))) };
        Ok(())
    })
}

/// `IDMLDevice::CheckFeatureSupport`.
///
/// # Safety
/// `device` is NULL or live; `query` points to `query_size` readable bytes and
/// `support` to `support_size` writable bytes (or either is NULL).
#[no_mangle]
pub unsafe extern "C" fn ewise_check_feature_support(
    device: *mut ewise_device,
    feature: DML_FEATURE,
    query_size: u32,
    query: *const c_void,
    support_size: u32,
    support: *mut c_void,
) -> EWISE_STATUS {
    guard(|| {
        // SAFETY: the caller's promise.
        let device = unsafe { deref(device, "device")? };
        // SAFETY: the caller's promise.
        unsafe {
            device::check_feature_support(
                &device.core,
                feature,
                (query_size, query),
                (support_size, support),
            )
        }
    })
}

/// `IDMLDevice::CreateOperator`: validates `desc` at the device's level.
///
/// # Safety
/// `device` is NULL or live; `desc` is NULL or points to a valid `DML_OPERATOR_DESC`
/// whose pointers are NULL or valid (arrays holding `DimensionCount` entries); `op` is
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ewise_create_operator(
    device: *mut ewise_device,
    desc: *const DML_OPERATOR_DESC,
    op: *mut *mut ewise_operator,
) -> EWISE_STATUS {
    guard(|| {
        out_ptr(op, "op")?;
        // SAFETY: the caller's promise.
        let (device, desc) = unsafe { (deref(device, "device")?, deref(desc, "desc")?) };
        let core = &device.core;
        // SAFETY: the caller's promise.
        let desc = unsafe { convert::operator_desc(desc, core.rules)? };
        let created = ewise_operator::new(core, &desc)?;
        // SAFETY: checked non-NULL; the caller promises it is writable.
        unsafe { op.write(Box::into_raw(Box::new(created))) };
        Ok(())
    })
}

/// `IDMLDevice::CompileOperator`.
///
/// # Safety
/// `device` and `op` are NULL or live; `compiled` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ewise_compile_operator(
    device: *mut ewise_device,
    op: *mut ewise_operator,
    flags: DML_EXECUTION_FLAGS,
    compiled: *mut *mut ewise_compiled_operator,
) -> EWISE_STATUS {
    guard(|| {
        out_ptr(compiled, "compiled")?;
        // SAFETY: the caller's promise.
        let (device, op) = unsafe { (deref(device, "device")?, deref(op, "op")?) };
        let made = op.compile(&device.core, flags)?;
        // SAFETY: checked non-NULL; the caller promises it is writable.
        unsafe { compiled.write(Box::into_raw(Box::new(made))) };
        Ok(())
    })
}

/// A zeroed buffer of `size_in_bytes` bytes on the device.
///
/// # Safety
/// `device` is NULL or live; `buffer` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ewise_create_buffer(
    device: *mut ewise_device,
    size_in_bytes: u64,
    buffer: *mut *mut ewise_buffer,
) -> EWISE_STATUS {
    guard(|| {
        out_ptr(buffer, "buffer")?;
        // SAFETY: the caller's promise.
        let device = unsafe { deref(device, "device")? };
        let made = ewise_buffer::zeroed(&device.core, size_in_bytes)?;
        // SAFETY: checked non-NULL; the caller promises it is writable.
        unsafe { buffer.write(Box::into_raw(Box::new(made))) };
        Ok(())
    })
}

/// A buffer over the caller's host memory, without copying (CPU devices only).
///
/// # Safety
/// `device` is NULL or live; `data` points to `size_in_bytes` bytes that stay valid
/// while the buffer lives; `buffer` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ewise_wrap_host_memory(
    device: *mut ewise_device,
    data: *mut c_void,
    size_in_bytes: u64,
    buffer: *mut *mut ewise_buffer,
) -> EWISE_STATUS {
    guard(|| {
        out_ptr(buffer, "buffer")?;
        // SAFETY: the caller's promise.
        let device = unsafe { deref(device, "device")? };
        let made = ewise_buffer::wrap(&device.core, data.cast(), size_in_bytes)?;
        // SAFETY: checked non-NULL; the caller promises it is writable.
        unsafe { buffer.write(Box::into_raw(Box::new(made))) };
        Ok(())
    })
}

/// Copies `bytes` bytes from `src` into the buffer at `offset`; `src` may lie inside
/// the buffer's own wrapped host memory (the copy is a `memmove`).
///
/// # Safety
/// `buffer` is NULL or live; `src` is NULL or points to `bytes` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ewise_buffer_write(
    buffer: *mut ewise_buffer,
    offset: u64,
    src: *const c_void,
    bytes: u64,
) -> EWISE_STATUS {
    guard(|| {
        // SAFETY: the caller's promise.
        let buffer = unsafe { deref(buffer, "buffer")? };
        if src.is_null() {
            return Err(Failure::invalid("src is NULL"));
        }
        // SAFETY: the caller's promise.
        unsafe { buffer.write(offset, src.cast(), bytes) }
    })
}

/// Copies `bytes` bytes of the buffer at `offset` into `dst`, after all work before;
/// `dst` may lie inside the buffer's own wrapped host memory (the copy is a `memmove`).
///
/// # Safety
/// `buffer` is NULL or live; `dst` is NULL or points to `bytes` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ewise_buffer_read(
    buffer: *mut ewise_buffer,
    offset: u64,
    dst: *mut c_void,
    bytes: u64,
) -> EWISE_STATUS {
    guard(|| {
        // SAFETY: the caller's promise.
        let buffer = unsafe { deref(buffer, "buffer")? };
        if dst.is_null() {
            return Err(Failure::invalid("dst is NULL"));
        }
        // SAFETY: the caller's promise.
        unsafe { buffer.read(offset, dst.cast(), bytes) }
    })
}

/// Runs a compiled operator with one input and one output binding, synchronously.
///
/// # Safety
/// `compiled` is NULL or live; `input` and `output` are NULL or point to valid bindings
/// whose buffers are NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ewise_execute(
    compiled: *mut ewise_compiled_operator,
    input: *const EWISE_BUFFER_BINDING,
    output: *const EWISE_BUFFER_BINDING,
) -> EWISE_STATUS {
    guard(|| {
        // SAFETY: the caller's promise.
        let (compiled, input, output) = unsafe {
            (
                deref(compiled, "compiled")?,
                deref(input, "input")?,
                deref(output, "output")?,
            )
        };
        compiled.execute(input, output)
    })
}

/// SIGN over `element_count` contiguous elements of host memory; `output` may equal
/// `input` (in place).
///
/// # Safety
/// `device` is NULL or live; `input` and `output` are NULL or point to
/// `element_count` elements of `type`.
#[no_mangle]
pub unsafe extern "C" fn ewise_sign(
    device: *mut ewise_device,
    r#type: DML_TENSOR_DATA_TYPE,
    input: *const c_void,
    output: *mut c_void,
    element_count: u64,
) -> EWISE_STATUS {
    guard(|| {
        // SAFETY: the caller's promise.
        let device = unsafe { deref(device, "device")? };
        let data_type = convert::data_type(r#type)?;
        let span = Span {
            input: input.cast(),
            output: output.cast(),
            count: element_count,
        };
        // SAFETY: the caller's promise.
        unsafe { host::run(&device.core, HostOp::Sign, data_type, span) }
    })
}

/// IS_INFINITY over `element_count` contiguous elements of host memory, one byte (0 or
/// 1) per element to `output`.
///
/// # Safety
/// `device` is NULL or live; `input` is NULL or points to `element_count` elements of
/// `type`; `output` is NULL or points to `element_count` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ewise_is_infinity(
    device: *mut ewise_device,
    r#type: DML_TENSOR_DATA_TYPE,
    mode: DML_IS_INFINITY_MODE,
    input: *const c_void,
    output: *mut u8,
    element_count: u64,
) -> EWISE_STATUS {
    guard(|| {
        // SAFETY: the caller's promise.
        let device = unsafe { deref(device, "device")? };
        let data_type = convert::data_type(r#type)?;
        let mode = convert::infinity_mode(mode)?;
        let span = Span {
            input: input.cast(),
            output,
            count: element_count,
        };
        // SAFETY: the caller's promise.
        unsafe { host::run(&device.core, HostOp::IsInfinity(mode), data_type, span) }
    })
}

/// Releases a device handle (NULL is accepted); the device itself goes with its last
/// child.
///
/// # Safety
/// `device` is NULL or a live handle, not used again.
#[no_mangle]
pub unsafe extern "C" fn ewise_release_device(device: *mut ewise_device) {
    // SAFETY: the caller's promise.
    quietly(|| drop(unsafe { boxed(device) }));
}

/// Releases an operator (NULL is accepted).
///
/// # Safety
/// `op` is NULL or a live handle, not used again.
#[no_mangle]
pub unsafe extern "C" fn ewise_release_operator(op: *mut ewise_operator) {
    // SAFETY: the caller's promise.
    quietly(|| drop(unsafe { boxed(op) }));
}

/// Releases a compiled operator (NULL is accepted).
///
/// # Safety
/// `compiled` is NULL or a live handle, not used again.
#[no_mangle]
pub unsafe extern "C" fn ewise_release_compiled_operator(compiled: *mut ewise_compiled_operator) {
    // SAFETY: the caller's promise.
    quietly(|| drop(unsafe { boxed(compiled) }));
}

/// Releases a buffer (NULL is accepted); wrapped host memory stays the caller's.
///
/// # Safety
/// `buffer` is NULL or a live handle, not used again.
#[no_mangle]
pub unsafe extern "C" fn ewise_release_buffer(buffer: *mut ewise_buffer) {
    // SAFETY: the caller's promise.
    quietly(|| drop(unsafe { boxed(buffer) }));
}

/// The box a handle came from, or `None` for NULL.
///
/// # Safety
/// `ptr` is NULL or came from `Box::into_raw` and is not used again.
unsafe fn boxed<T>(ptr: *mut T) -> Option<Box<T>> {
    // SAFETY: the caller's promise.
    (!ptr.is_null()).then(|| unsafe { Box::from_raw(ptr) })
}
