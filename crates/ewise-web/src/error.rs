//! Failures as thrown JavaScript values: `Error` objects whose `name` is the class the
//! entry module gives them and whose `kind` is the Rust variant (or another fixed word).

use js_sys::Reflect;
use wasm_bindgen::JsValue;

/// `name` of an error from [`ewise_core::Error`]: a description, binding or slice
/// that the rules refuse.
pub const VALIDATION: &str = "ValidationError";
/// `name` of a GPU failure other than a refused description ([`ewise_gpu::GpuError`]).
pub const GPU: &str = "GpuError";
/// `name` of an argument that is not of the form the export takes.
pub const ARGUMENT: &str = "ArgumentError";
/// `name` of a refused allocation.
pub const OUT_OF_MEMORY: &str = "OutOfMemoryError";

/// A JavaScript `Error` with `message`, `name` = `class` and a `kind` property.
pub fn js_error(class: &str, kind: &str, message: &str) -> JsValue {
    let error = js_sys::Error::new(message);
    error.set_name(class);
    // Setting a data property on a fresh ordinary object cannot fail.
    let _ = Reflect::set(&error, &JsValue::from_str("kind"), &JsValue::from_str(kind));
    error.into()
}

/// The variant name of an enum value from its derived `Debug` text (`SliceLength`).
fn variant<T: std::fmt::Debug>(value: &T) -> String {
    format!("{value:?}")
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// A [`VALIDATION`] error with the Rust error's message, unchanged ([`OUT_OF_MEMORY`]
/// for [`ewise_core::Error::OutOfMemory`]).
pub fn validation(error: &ewise_core::Error) -> JsValue {
    let class = match error {
        ewise_core::Error::OutOfMemory { .. } => OUT_OF_MEMORY,
        _ => VALIDATION,
    };
    js_error(class, &variant(error), &error.to_string())
}

/// A GPU error: [`VALIDATION`] for a refused description or binding
/// ([`ewise_gpu::GpuError::Op`]), [`OUT_OF_MEMORY`] for host memory that could not be
/// allocated ([`ewise_gpu::GpuError::OutOfHostMemory`]), else [`GPU`], with the variant
/// in `kind`.
pub fn gpu(error: &ewise_gpu::GpuError) -> JsValue {
    match error {
        ewise_gpu::GpuError::Op(e) => validation(e),
        e @ ewise_gpu::GpuError::OutOfHostMemory { .. } => {
            js_error(OUT_OF_MEMORY, &variant(e), &e.to_string())
        }
        other => js_error(GPU, &variant(other), &other.to_string()),
    }
}

/// An [`ARGUMENT`] error; `kind` names the argument.
pub fn argument(argument: &str, message: &str) -> JsValue {
    js_error(ARGUMENT, argument, message)
}

/// `len` zeroed bytes, or an [`OUT_OF_MEMORY`] error naming what they were `for_what`.
pub fn zeroed(len: usize, for_what: &str) -> Result<Vec<u8>, JsValue> {
    let mut bytes = Vec::new();
    if bytes.try_reserve_exact(len).is_err() {
        return Err(js_error(
            OUT_OF_MEMORY,
            "OutOfMemory",
            &format!(
                "out of WebAssembly memory: {len} bytes for {for_what} could not be allocated"
            ),
        ));
    }
    bytes.resize(len, 0);
    Ok(bytes)
}
