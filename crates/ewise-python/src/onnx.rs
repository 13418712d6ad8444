//! ONNX models from Python: numpy arrays in, numpy arrays out, through `ewise_onnx`, on
//! whole arrays (with `out=`, module [`crate::onnx_stream`] runs them in chunks).

use ewise_cpu::text::quoted;
use ewise_cpu::{DataType, NanPolicy};
use ewise_onnx::{Model, Tensor};
use numpy::{PyArrayDescr, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyMemoryError, PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::dtypes::{self, Recognised};
use crate::layout::View;
use crate::OnnxError;

/// Runs `model` (a path or the model's bytes) on `inputs`, C-contiguous arrays in the
/// machine's byte order, and returns every graph output by name, in declaration order.
pub(crate) fn run<'py>(
    model: &Bound<'py, PyAny>,
    inputs: Vec<(String, Bound<'py, PyUntypedArray>)>,
    policy: NanPolicy,
) -> PyResult<Vec<(String, Bound<'py, PyUntypedArray>)>> {
    let py = model.py();
    let model = load(model, policy)?;
    let tensors = inputs
        .iter()
        .map(|(name, array)| Ok((name.clone(), tensor(name, array)?)))
        .collect::<PyResult<Vec<_>>>()?;
    let outputs = py.detach(|| model.run(tensors)).map_err(error)?;
    outputs
        .into_iter()
        .map(|(name, t)| Ok((name, array(py, &t)?)))
        .collect()
}

/// The model `model` names: a path (external data read beside it) or the model's bytes,
/// with Sign's NaN policy `policy`.
pub(crate) fn load(model: &Bound<'_, PyAny>, policy: NanPolicy) -> PyResult<Model> {
    Ok(if let Ok(bytes) = model.cast::<PyBytes>() {
        Model::from_bytes(bytes.as_bytes(), None)
    } else {
        Model::load(model.extract::<std::path::PathBuf>()?)
    }
    .map_err(error)?
    .with_nan_policy(policy))
}

/// A front-end error as the Python exception of its kind: `OSError` for files,
/// `MemoryError` for allocations, `ewise.OnnxError` otherwise.
pub(crate) fn error(e: ewise_onnx::Error) -> PyErr {
    match e {
        ewise_onnx::Error::Io { .. } => PyOSError::new_err(e.to_string()),
        ewise_onnx::Error::OutOfMemory { .. } => PyMemoryError::new_err(e.to_string()),
        _ => OnnxError::new_err(e.to_string()),
    }
}

/// The ONNX type of input `name`'s dtype (either byte order); `TypeError` for a dtype
/// that has none.
pub(crate) fn input_type(name: &str, array: &Bound<'_, PyUntypedArray>) -> PyResult<Recognised> {
    let descr = array.dtype();
    dtypes::recognise(&descr)?.ok_or_else(|| no_type(name, &descr))
}

fn no_type(name: &str, descr: &Bound<'_, PyArrayDescr>) -> PyErr {
    let dtype = descr.str().map_or_else(|_| "?".into(), |s| s.to_string());
    PyTypeError::new_err(format!(
        "input {}: dtype {dtype} has no ONNX tensor type in ewise",
        quoted(name)
    ))
}

/// The tensor holding a copy of `array`'s elements.
fn tensor(name: &str, array: &Bound<'_, PyUntypedArray>) -> PyResult<Tensor> {
    let descr = array.dtype();
    let Some(t) = dtypes::recognise(&descr)?.filter(|t| t.native) else {
        return Err(no_type(name, &descr));
    };
    if !array.is_c_contiguous() {
        return Err(PyValueError::new_err(format!(
            "input {}: the array must be C-contiguous",
            quoted(name)
        )));
    }
    let len = array.len() * descr.itemsize();
    let mut data = Vec::new();
    data.try_reserve_exact(len).map_err(|_| {
        PyMemoryError::new_err(format!(
            "input {}: cannot allocate {len} bytes for its copy",
            quoted(name)
        ))
    })?;
    if len > 0 {
        // SAFETY: a C-contiguous array's elements are the `len` bytes at its data pointer.
        data.extend_from_slice(unsafe {
            std::slice::from_raw_parts(View::of(array, 1).data as *const u8, len)
        });
    }
    Tensor::new(t.data_type, array.shape().to_vec(), data).map_err(error)
}

/// A new C-contiguous numpy array of `data_type` and `shape`, in native byte order, its
/// elements not set.
pub(crate) fn empty<'py>(
    py: Python<'py>,
    data_type: DataType,
    shape: &[usize],
) -> PyResult<Bound<'py, PyUntypedArray>> {
    let descr = dtypes::descr_of(py, data_type)?;
    let shape = pyo3::types::PyTuple::new(py, shape)?;
    Ok(py
        .import("numpy")?
        .call_method1("empty", (shape, descr))?
        .cast_into::<PyUntypedArray>()?)
}

/// A new numpy array holding `t`'s elements.
fn array<'py>(py: Python<'py>, t: &Tensor) -> PyResult<Bound<'py, PyUntypedArray>> {
    let array = empty(py, t.data_type, &t.shape)?;
    if !t.data.is_empty() {
        // SAFETY: a new C-contiguous array of `t`'s shape and type holds exactly
        // `t.data.len()` bytes at its data pointer, referenced by nothing else yet.
        unsafe {
            std::slice::from_raw_parts_mut(View::of(&array, 1).data as *mut u8, t.data.len())
                .copy_from_slice(&t.data);
        }
    }
    Ok(array)
}
