//! numpy dtypes and ewise data types, both ways.
//!
//! numpy's own types are recognised by kind and item size; ml_dtypes' (bfloat16 and the
//! float8 formats) by their scalar type's module and name, because numpy numbers
//! user-registered types at run time. ml_dtypes is never imported here: an array of one
//! of its types exists only once its module is loaded.

use std::ffi::c_int;
use std::sync::Mutex;

use ewise_cpu::DataType;
use numpy::npyffi::{NPY_TYPES, PY_ARRAY_API};
use numpy::{PyArrayDescr, PyArrayDescrMethods};
use pyo3::prelude::*;
use pyo3::types::PyTypeMethods;

/// numpy's first number for user-registered types (`NPY_USERDEF`).
const FIRST_USER_TYPE: c_int = 256;

/// The ml_dtypes types ewise knows, by their numpy name.
const ML_DTYPES: [DataType; 5] = [
    DataType::Bfloat16,
    DataType::Float8E4M3Fn,
    DataType::Float8E4M3Fnuz,
    DataType::Float8E5M2,
    DataType::Float8E5M2Fnuz,
];

/// A numpy dtype as ewise sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Recognised {
    /// The ewise data type.
    pub data_type: DataType,
    /// Whether the bytes are in the machine's order (false: a byte-swapped dtype).
    pub native: bool,
}

/// The numpy name of an ewise data type (`float32`, `bfloat16`, `float8_e4m3fn`).
pub(crate) fn numpy_name(t: DataType) -> &'static str {
    match t {
        DataType::Float32 => "float32",
        DataType::Float16 => "float16",
        DataType::Float64 => "float64",
        DataType::Uint8 => "uint8",
        DataType::Uint16 => "uint16",
        DataType::Uint32 => "uint32",
        DataType::Uint64 => "uint64",
        DataType::Int8 => "int8",
        DataType::Int16 => "int16",
        DataType::Int32 => "int32",
        DataType::Int64 => "int64",
        DataType::Bfloat16 => "bfloat16",
        DataType::Bool => "bool",
        DataType::Float8E4M3Fn => "float8_e4m3fn",
        DataType::Float8E4M3Fnuz => "float8_e4m3fnuz",
        DataType::Float8E5M2 => "float8_e5m2",
        DataType::Float8E5M2Fnuz => "float8_e5m2fnuz",
        DataType::Unknown | DataType::Uint4 | DataType::Int4 => "",
    }
}

/// The numpy names of these types, comma-separated (for messages).
pub(crate) fn numpy_names(types: &[DataType]) -> String {
    types
        .iter()
        .map(|&t| numpy_name(t))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The ewise data type of a numpy dtype, or `None` for every dtype ewise has no type
/// for (complex, long double, structured, strings, objects, other user types).
pub(crate) fn recognise(descr: &Bound<'_, PyArrayDescr>) -> PyResult<Option<Recognised>> {
    if descr.has_fields() || descr.has_subarray() {
        return Ok(None);
    }
    let num = descr.num();
    let data_type = if num < FIRST_USER_TYPE {
        builtin(descr.kind(), descr.itemsize())
    } else {
        user_type(descr, num)?
    };
    Ok(data_type.map(|data_type| Recognised {
        data_type,
        native: descr.is_native_byteorder() != Some(false),
    }))
}

/// [`recognise`] for numpy's own types only, without a Python call: `None` for a
/// user-registered type (ml_dtypes' included), which [`recognise`] then handles.
pub(crate) fn recognise_builtin(descr: &Bound<'_, PyArrayDescr>) -> Option<Recognised> {
    if descr.num() >= FIRST_USER_TYPE {
        return None;
    }
    // numpy's own types with fields or a subarray are of kind 'V', which has no type.
    builtin(descr.kind(), descr.itemsize()).map(|data_type| Recognised {
        data_type,
        native: descr.is_native_byteorder() != Some(false),
    })
}

fn builtin(kind: u8, itemsize: usize) -> Option<DataType> {
    use DataType::*;
    Some(match (kind, itemsize) {
        (b'b', 1) => Bool,
        (b'i', 1) => Int8,
        (b'i', 2) => Int16,
        (b'i', 4) => Int32,
        (b'i', 8) => Int64,
        (b'u', 1) => Uint8,
        (b'u', 2) => Uint16,
        (b'u', 4) => Uint32,
        (b'u', 8) => Uint64,
        (b'f', 2) => Float16,
        (b'f', 4) => Float32,
        (b'f', 8) => Float64,
        _ => return None,
    })
}

/// A user-registered type, looked up once per type number for the process.
fn user_type(descr: &Bound<'_, PyArrayDescr>, num: c_int) -> PyResult<Option<DataType>> {
    static SEEN: Mutex<Vec<(c_int, Option<DataType>)>> = Mutex::new(Vec::new());
    let seen = |seen: &Vec<(c_int, Option<DataType>)>| {
        seen.iter().find(|(n, _)| *n == num).map(|&(_, t)| t)
    };
    if let Some(t) = seen(&SEEN.lock().unwrap_or_else(|p| p.into_inner())) {
        return Ok(t);
    }
    let scalar = descr.typeobj();
    let module = scalar.module()?.to_string();
    let name = scalar.name()?.to_string();
    let found = if module == "ml_dtypes" || module.starts_with("ml_dtypes.") {
        ML_DTYPES
            .into_iter()
            .find(|&t| numpy_name(t) == name && t.size_in_bytes() == Some(descr.itemsize() as u64))
    } else {
        None
    };
    let mut seen_now = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    if seen(&seen_now).is_none() {
        seen_now.push((num, found));
    }
    Ok(found)
}

/// The numpy dtype of an ewise data type. ml_dtypes' types come from the `ml_dtypes`
/// module, imported here (only reached for results of such types).
pub(crate) fn descr_of(py: Python<'_>, t: DataType) -> PyResult<Bound<'_, PyArrayDescr>> {
    use numpy::dtype;
    Ok(match t {
        DataType::Float32 => dtype::<f32>(py),
        DataType::Float64 => dtype::<f64>(py),
        DataType::Uint8 => dtype::<u8>(py),
        DataType::Uint16 => dtype::<u16>(py),
        DataType::Uint32 => dtype::<u32>(py),
        DataType::Uint64 => dtype::<u64>(py),
        DataType::Int8 => dtype::<i8>(py),
        DataType::Int16 => dtype::<i16>(py),
        DataType::Int32 => dtype::<i32>(py),
        DataType::Int64 => dtype::<i64>(py),
        DataType::Bool => dtype::<bool>(py),
        // numpy.float16's dtype, without the Python calls of `numpy.dtype(numpy.float16)`.
        // SAFETY: DescrFromType returns a new reference to a built-in descriptor (a
        // built-in type number never fails).
        DataType::Float16 => unsafe {
            let descr = PY_ARRAY_API.PyArray_DescrFromType(py, NPY_TYPES::NPY_HALF as c_int);
            Bound::from_owned_ptr(py, descr.cast()).cast_into_unchecked()
        },
        _ => {
            let scalar = py.import("ml_dtypes")?.getattr(numpy_name(t))?;
            PyArrayDescr::new(py, scalar)?
        }
    })
}
