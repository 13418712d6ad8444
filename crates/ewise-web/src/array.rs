//! The array exports: SIGN and IS_INFINITY from one `Uint8Array` view of the input's
//! bytes into one of the output's, with the extensions enabled (any length, FLOAT64,
//! BFLOAT16), through `ewise_cpu::array`.
//!
//! Views over one `ArrayBuffer` may overlap, and views of two `SharedArrayBuffer`
//! objects may be of one memory: the result is as if the whole input were read before
//! any output is written (identical ranges are SIGN in place).

use std::cell::RefCell;

use ewise_core::{DataType, Error, InfinityMode, NanPolicy, OperatorType, TensorRole};
use js_sys::{ArrayBuffer, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::error::{self, argument, validation};

/// The most input bytes copied into WebAssembly memory at once.
pub const CHUNK_BYTES: usize = 1 << 20;

/// The data type numbered `raw` (`DataType::raw`), or an argument error.
pub fn data_type(raw: u32) -> Result<DataType, JsValue> {
    DataType::from_raw(raw).ok_or_else(|| {
        argument(
            "dataType",
            &format!("data type {raw} is not a DML_TENSOR_DATA_TYPE value or an ewise extension"),
        )
    })
}

/// 0 is [`NanPolicy::Zero`], 1 [`NanPolicy::Propagate`].
pub fn nan_policy(raw: u32) -> Result<NanPolicy, JsValue> {
    match raw {
        0 => Ok(NanPolicy::Zero),
        1 => Ok(NanPolicy::Propagate),
        _ => Err(argument(
            "nan",
            &format!("NaN policy {raw} is not 0 (zero) or 1 (propagate)"),
        )),
    }
}

/// The mode numbered `raw` (0, 1, 2, or 1000 for NEITHER).
pub fn infinity_mode(raw: u32) -> Result<InfinityMode, JsValue> {
    InfinityMode::ALL
        .into_iter()
        .find(|m| m.raw() == raw)
        .ok_or_else(|| {
            argument(
                "mode",
                &format!("infinity mode {raw} is not 0 (EITHER), 1 (POSITIVE), 2 (NEGATIVE) or 1000 (NEITHER)"),
            )
        })
}

/// `value` as a `Uint8Array` (an `instanceof` test, which cannot throw), else an
/// argument error naming it `what`.
pub fn view<'a>(value: &'a JsValue, what: &str) -> Result<&'a Uint8Array, JsValue> {
    value
        .dyn_ref::<Uint8Array>()
        .ok_or_else(|| argument(what, &format!("{what} must be a Uint8Array")))
}

/// The element count of `bytes` bytes of `size`-byte elements, refusing a partial one.
fn elements(
    operator: OperatorType,
    tensor: TensorRole,
    bytes: usize,
    size: usize,
) -> Result<usize, JsValue> {
    if size != 0 && bytes.is_multiple_of(size) {
        Ok(bytes / size)
    } else {
        Err(validation(&Error::PartialElement {
            operator,
            tensor,
            bytes,
            element_size: size,
        }))
    }
}

/// Copies `view[start..start + dst.len()]` into `dst`, refusing a view that no longer
/// holds those bytes (so that no JavaScript call made here can throw).
pub fn copy_in(view: &Uint8Array, start: usize, dst: &mut [u8]) -> Result<(), JsValue> {
    if dst.is_empty() {
        return Ok(());
    }
    let end = start.checked_add(dst.len());
    if end.is_none_or(|end| end > view.length() as usize) {
        return Err(detached());
    }
    view.subarray(start as u32, (start + dst.len()) as u32)
        .copy_to(dst);
    Ok(())
}

/// Copies `src` into `view[start..start + src.len()]`, refusing as [`copy_in`] does.
pub fn copy_out(view: &Uint8Array, start: usize, src: &[u8]) -> Result<(), JsValue> {
    if src.is_empty() {
        return Ok(());
    }
    let end = start.checked_add(src.len());
    if end.is_none_or(|end| end > view.length() as usize) {
        return Err(detached());
    }
    view.subarray(start as u32, (start + src.len()) as u32)
        .copy_from(src);
    Ok(())
}

fn detached() -> JsValue {
    argument(
        "buffer",
        "an array's memory shrank or was detached (transferred) during the call",
    )
}

/// Whether writing `output` from its start, chunk after chunk, may overwrite bytes of
/// `input`'s first `in_bytes` not read yet. In one `ArrayBuffer` (one object), only an
/// output starting inside the input does. Two `SharedArrayBuffer` objects may be one
/// memory (`structuredClone`, `postMessage`, a shared `WebAssembly.Memory`'s buffer
/// before and after `grow()`), which JavaScript cannot tell, so they always may; an
/// `ArrayBuffer` never shares memory with another object.
fn may_overwrite_unread(input: &Uint8Array, output: &Uint8Array, in_bytes: usize) -> bool {
    let (ib, ob) = (input.buffer(), output.buffer());
    if ib == ob {
        let (a, b) = (input.byte_offset() as u64, output.byte_offset() as u64);
        return b > a && b < a + in_bytes as u64;
    }
    // A buffer that is no `ArrayBuffer` of this realm is taken to be shared.
    !ib.is_instance_of::<ArrayBuffer>() && !ob.is_instance_of::<ArrayBuffer>()
}

/// Where a chunk's results go in the staging memory: over its input (SIGN, in place),
/// or after it, `n` bytes per element (IS_INFINITY).
#[derive(Clone, Copy)]
enum Results {
    InPlace,
    After(usize),
}

thread_local! {
    /// The staging memory of the copying calls, kept for the instance's life: it grows
    /// to the largest chunk a call needs (at most [`CHUNK_BYTES`] and its results) and is
    /// never zero-filled again, so a call allocates nothing in the common case.
    static STAGING: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` on `len` bytes of staging memory of unspecified contents ([`STAGING`],
/// grown when shorter; an [`error::OUT_OF_MEMORY`] error when it cannot grow).
pub(crate) fn with_staging<R>(
    len: usize,
    f: impl FnOnce(&mut [u8]) -> Result<R, JsValue>,
) -> Result<R, JsValue> {
    // Taken out for the call, so that a call made meanwhile (none is: no JavaScript runs
    // here) would stage in memory of its own rather than share this.
    let mut staging = STAGING.with(|cell| cell.take());
    if staging.len() < len {
        let mut grown = error::zeroed(len, "the staging memory of the copying calls")?;
        std::mem::swap(&mut staging, &mut grown);
    }
    let result = f(&mut staging[..len]);
    STAGING.with(|cell| cell.replace(staging));
    result
}

/// Runs `step(input chunk, results)` over `count` elements of `in_size` bytes each, in
/// chunks of at most [`CHUNK_BYTES`] input bytes staged in WebAssembly memory, as if
/// the whole input were read first: one copy of each chunk in, the kernel over the
/// staged chunk (in place, `results` empty, for [`Results::InPlace`]), one copy out.
fn chunked(
    input: &Uint8Array,
    output: &Uint8Array,
    count: usize,
    in_size: usize,
    results: Results,
    mut step: impl FnMut(&mut [u8], &mut [u8]) -> Result<(), JsValue>,
) -> Result<(), JsValue> {
    if count == 0 {
        return Ok(());
    }
    let in_bytes = count * in_size;
    let snapshot = if may_overwrite_unread(input, output, in_bytes) {
        let mut all = error::zeroed(in_bytes, "a copy of an input that its output overlaps")?;
        copy_in(input, 0, &mut all)?;
        Some(all)
    } else {
        None
    };
    let (out_size, after) = match results {
        Results::InPlace => (in_size, 0),
        Results::After(size) => (size, size),
    };
    let per_chunk = (CHUNK_BYTES / in_size).clamp(1, count);
    with_staging(per_chunk * (in_size + after), |staging| {
        let (sources, results) = staging.split_at_mut(per_chunk * in_size);
        let mut first = 0;
        while first < count {
            let n = per_chunk.min(count - first);
            let (src, dst) = (&mut sources[..n * in_size], &mut results[..n * after]);
            match &snapshot {
                Some(all) => src.copy_from_slice(&all[first * in_size..(first + n) * in_size]),
                None => copy_in(input, first * in_size, src)?,
            }
            step(src, dst)?;
            let written: &[u8] = if after == 0 { src } else { dst };
            copy_out(output, first * out_size, written)?;
            first += n;
        }
        Ok(())
    })
}

/// Writes SIGN of the elements of type `data_type` (a `DataType::raw` value) in `input`
/// to `output` under NaN policy `nan` (0 zero, 1 propagate). Both views hold whole
/// elements and the same number of bytes (else `PartialElement` or `SliceLength`); a
/// type SIGN does not take is `UnsupportedDataType`, even for empty views.
#[wasm_bindgen(js_name = signBytes)]
pub fn sign_bytes(
    data_type: u32,
    nan: u32,
    input: &JsValue,
    output: &JsValue,
) -> Result<(), JsValue> {
    let operator = OperatorType::ElementWiseSign;
    let (input, output) = (view(input, "input")?, view(output, "output")?);
    let (data_type, policy) = (self::data_type(data_type)?, nan_policy(nan)?);
    ewise_cpu::array::sign_bytes(data_type, &[], &mut [], policy).map_err(|e| validation(&e))?;
    let size = element_size(data_type);
    let count = elements(operator, TensorRole::Input, input.length() as usize, size)?;
    let given = elements(operator, TensorRole::Output, output.length() as usize, size)?;
    same_count(operator, given, count)?;
    chunked(input, output, count, size, Results::InPlace, |data, _| {
        ewise_cpu::array::sign_bytes_in_place(data_type, data, policy).map_err(|e| validation(&e))
    })
}

/// Writes 1 to `output` where the element of type `data_type` in `input` is an
/// infinity that mode `mode` (0 EITHER, 1 POSITIVE, 2 NEGATIVE, 1000 NEITHER) detects,
/// else 0: one output byte per input element (else `SliceLength`). A type IS_INFINITY
/// does not take is `UnsupportedDataType`, even for empty views.
#[wasm_bindgen(js_name = isInfinityBytes)]
pub fn is_infinity_bytes(
    data_type: u32,
    mode: u32,
    input: &JsValue,
    output: &JsValue,
) -> Result<(), JsValue> {
    let operator = OperatorType::ElementWiseIsInfinity;
    let (input, output) = (view(input, "input")?, view(output, "output")?);
    let (data_type, mode) = (self::data_type(data_type)?, infinity_mode(mode)?);
    ewise_cpu::array::is_infinity_bytes(data_type, mode, &[], &mut [])
        .map_err(|e| validation(&e))?;
    let size = element_size(data_type);
    let count = elements(operator, TensorRole::Input, input.length() as usize, size)?;
    same_count(operator, output.length() as usize, count)?;
    chunked(input, output, count, size, Results::After(1), |src, dst| {
        ewise_cpu::array::is_infinity_bytes(data_type, mode, src, dst).map_err(|e| validation(&e))
    })
}

/// The byte size of a type that has a kernel (1 for any other, never used).
pub(crate) fn element_size(data_type: DataType) -> usize {
    data_type.size_in_bytes().unwrap_or(1) as usize
}

/// The output's element count `given` where `required` are needed: `SliceLength`, as
/// the CPU's array calls say it.
pub(crate) fn same_count(
    operator: OperatorType,
    given: usize,
    required: usize,
) -> Result<(), JsValue> {
    if given == required {
        Ok(())
    } else {
        Err(validation(&Error::SliceLength {
            operator,
            tensor: TensorRole::Output,
            given,
            required: required as u64,
        }))
    }
}
