//! `ewise._ewise`: the native module under the `ewise` Python package.
//!
//! The package's Python layer (`python/ewise`) owns the public signatures, docstrings
//! and Dask dispatch; this module takes numpy arrays of any layout, maps them onto
//! ewise tensor descriptions without copying ([`layout`]), and runs ewise-cpu's
//! compiled operators on their memory with the GIL released for large work ([`ops`]).

mod dtypes;
mod layout;
mod onnx;
mod ops;
mod tables;

use ewise_cpu::{DataType, FeatureLevel, InfinityMode, NanPolicy};
use numpy::{PyArrayDescr, PyUntypedArray};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use ops::Op;

create_exception!(
    ewise,
    ValidationError,
    PyValueError,
    "A tensor the library's validation rejects (DirectML's rules under feature_level=)."
);
create_exception!(
    ewise,
    OnnxError,
    PyValueError,
    "An ONNX model or its inputs that the ONNX front end rejects."
);

/// `sign(x, out, nan, feature_level, threads)`: see `ewise.sign`.
#[pyfunction]
#[pyo3(signature = (x, out=None, nan="zero", feature_level=None, threads=None))]
fn sign<'py>(
    x: &Bound<'py, PyAny>,
    out: Option<&Bound<'py, PyAny>>,
    nan: &str,
    feature_level: Option<&str>,
    threads: Option<i64>,
) -> PyResult<Bound<'py, PyAny>> {
    let op = Op::Sign(ops::nan_policy(nan)?);
    ops::run(x, out, op, None, ops::options(feature_level, threads)?)
}

/// `is_infinity(x, out, mode, dtype, feature_level, threads)`: see `ewise.is_infinity`.
#[pyfunction]
#[pyo3(signature = (x, out=None, mode="either", dtype=None, feature_level=None, threads=None))]
fn is_infinity<'py>(
    x: &Bound<'py, PyAny>,
    out: Option<&Bound<'py, PyAny>>,
    mode: &str,
    dtype: Option<&Bound<'py, PyAny>>,
    feature_level: Option<&str>,
    threads: Option<i64>,
) -> PyResult<Bound<'py, PyAny>> {
    let op = Op::IsInfinity(ops::infinity_mode(mode)?);
    let out_type = dtype.map(infinity_output_type).transpose()?;
    ops::run(x, out, op, out_type, ops::options(feature_level, threads)?)
}

/// `isinf(x, out, detect_positive, detect_negative, threads)`: see `ewise.isinf`.
#[pyfunction]
#[pyo3(signature = (x, out=None, detect_positive=true, detect_negative=true, threads=None))]
fn isinf<'py>(
    x: &Bound<'py, PyAny>,
    out: Option<&Bound<'py, PyAny>>,
    detect_positive: bool,
    detect_negative: bool,
    threads: Option<i64>,
) -> PyResult<Bound<'py, PyAny>> {
    let op = Op::IsInfinity(InfinityMode::from_detect(detect_positive, detect_negative));
    ops::run(
        x,
        out,
        op,
        Some(DataType::Bool),
        ops::options(None, threads)?,
    )
}

/// IS_INFINITY's output type from `dtype=`: UINT8 or BOOL.
fn infinity_output_type(dtype: &Bound<'_, PyAny>) -> PyResult<DataType> {
    let bad = || {
        PyValueError::new_err(format!(
            "dtype={} is not an is_infinity output type (accepted: uint8, bool)",
            dtype.repr().map_or_else(|_| "?".into(), |r| r.to_string())
        ))
    };
    let descr = PyArrayDescr::new(dtype.py(), dtype).map_err(|_| bad())?;
    match dtypes::recognise(&descr)? {
        Some(t) if matches!(t.data_type, DataType::Uint8 | DataType::Bool) => Ok(t.data_type),
        _ => Err(bad()),
    }
}

/// `onnx_run(model, inputs, nan)`: see `ewise.onnx.run`.
#[pyfunction]
fn onnx_run<'py>(
    model: &Bound<'py, PyAny>,
    inputs: Vec<(String, Bound<'py, PyUntypedArray>)>,
    nan: &str,
) -> PyResult<Vec<(String, Bound<'py, PyUntypedArray>)>> {
    onnx::run(model, inputs, ops::nan_policy(nan)?)
}

/// `support(feature_level)`: see `ewise.support`.
#[pyfunction]
#[pyo3(signature = (feature_level=None))]
fn support<'py>(py: Python<'py>, feature_level: Option<&str>) -> PyResult<Bound<'py, PyDict>> {
    let level = ops::options(feature_level, None)?.level;
    tables::of(py, level)
}

/// Every DirectML feature level, lowest first (`"1_0"` ... `"6_4"`).
#[pyfunction]
fn feature_levels() -> Vec<String> {
    FeatureLevel::ALL.iter().map(|l| l.to_string()).collect()
}

/// The CPU kernels' instruction set in this process (`avx2`, `portable`, ...).
#[pyfunction]
fn instruction_set() -> String {
    ewise_cpu::instruction_set().name().to_string()
}

#[pymodule(gil_used = false)]
fn _ewise(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sign, m)?)?;
    m.add_function(wrap_pyfunction!(is_infinity, m)?)?;
    m.add_function(wrap_pyfunction!(isinf, m)?)?;
    m.add_function(wrap_pyfunction!(onnx_run, m)?)?;
    m.add_function(wrap_pyfunction!(support, m)?)?;
    m.add_function(wrap_pyfunction!(feature_levels, m)?)?;
    m.add_function(wrap_pyfunction!(instruction_set, m)?)?;
    m.add("ValidationError", m.py().get_type::<ValidationError>())?;
    m.add("OnnxError", m.py().get_type::<OnnxError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("DEFAULT_NAN_POLICY", NanPolicy::default().name())?;
    Ok(())
}
