//! The keyword arguments of `sign`, `is_infinity`, `isinf` and `onnx_run`, each read
//! from its Python object: a value of the wrong type (`None` included, where `None` does
//! not mean "not given") raises `TypeError`, and a string that names nothing raises
//! `ValueError`; both messages name the keyword, the value and what is accepted.

use ewise_cpu::text::{clip, quoted};
use ewise_cpu::{FeatureLevel, InfinityMode, NanPolicy};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyString};

use crate::ops::Target;

const NAN_ACCEPTED: &str = "\"zero\", \"propagate\"";
const MODE_ACCEPTED: &str = "\"either\", \"positive\", \"negative\", \"neither\"";
const DEVICE_ACCEPTED: &str = "\"cpu\", \"gpu\"";

/// `TypeError`: `keyword=<repr of value> is not <what> (accepted: <accepted>)`.
fn wrong_type(value: &Bound<'_, PyAny>, keyword: &str, what: &str, accepted: &str) -> PyErr {
    let shown = value
        .repr()
        .map_or_else(|_| "?".into(), |r| clip(&r.to_string()).into_owned());
    PyTypeError::new_err(format!(
        "{keyword}={shown} is not {what} (accepted: {accepted})"
    ))
}

/// The value as a `str`, or `TypeError` naming the keyword.
fn text(value: &Bound<'_, PyAny>, keyword: &str, what: &str, accepted: &str) -> PyResult<String> {
    match value.cast::<PyString>() {
        Ok(s) => Ok(s.to_str()?.to_owned()),
        Err(_) => Err(wrong_type(value, keyword, what, accepted)),
    }
}

/// `nan=`: SIGN's NaN policy, `"zero"` or `"propagate"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Nan(pub NanPolicy);

impl Nan {
    pub(crate) fn parse(value: &str) -> PyResult<Nan> {
        NanPolicy::ALL
            .into_iter()
            .find(|p| p.name() == value)
            .map(Nan)
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "nan={} is not a NaN policy (accepted: {NAN_ACCEPTED})",
                    quoted(value)
                ))
            })
    }

    /// The name `nan=` takes.
    pub(crate) fn name(self) -> &'static str {
        self.0.name()
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for Nan {
    type Error = PyErr;

    fn extract(value: Borrowed<'a, 'py, PyAny>) -> PyResult<Nan> {
        Nan::parse(&text(&value, "nan", "a NaN policy", NAN_ACCEPTED)?)
    }
}

/// `mode=`: IS_INFINITY's mode; `"neither"` is the extension (ONNX IsInf with both
/// flags false), which `feature_level=` refuses as DirectML does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mode(pub InfinityMode);

impl Mode {
    /// The name `mode=` takes.
    pub(crate) fn name(self) -> &'static str {
        match self.0 {
            InfinityMode::Either => "either",
            InfinityMode::Positive => "positive",
            InfinityMode::Negative => "negative",
            InfinityMode::Neither => "neither",
        }
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for Mode {
    type Error = PyErr;

    fn extract(value: Borrowed<'a, 'py, PyAny>) -> PyResult<Mode> {
        let given = text(&value, "mode", "an infinity mode", MODE_ACCEPTED)?;
        InfinityMode::ALL
            .into_iter()
            .map(Mode)
            .find(|m| m.name() == given)
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "mode={} is not an infinity mode (accepted: {MODE_ACCEPTED})",
                    quoted(&given)
                ))
            })
    }
}

/// `device=`: `"cpu"` or `"gpu"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DeviceArg(pub Target);

impl DeviceArg {
    /// The name `device=` takes.
    pub(crate) fn name(self) -> &'static str {
        match self.0 {
            Target::Cpu => "cpu",
            Target::Gpu => "gpu",
        }
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for DeviceArg {
    type Error = PyErr;

    fn extract(value: Borrowed<'a, 'py, PyAny>) -> PyResult<DeviceArg> {
        match text(&value, "device", "a device", DEVICE_ACCEPTED)?.as_str() {
            "cpu" => Ok(DeviceArg(Target::Cpu)),
            "gpu" => Ok(DeviceArg(Target::Gpu)),
            other => Err(PyValueError::new_err(format!(
                "device={} is not a device (accepted: {DEVICE_ACCEPTED})",
                quoted(other)
            ))),
        }
    }
}

/// `feature_level=` when given (not `None`): a DirectML feature level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Level(pub FeatureLevel);

impl<'a, 'py> FromPyObject<'a, 'py> for Level {
    type Error = PyErr;

    fn extract(value: Borrowed<'a, 'py, PyAny>) -> PyResult<Level> {
        let accepted = "a level such as \"6_4\" or \"2_1\", or None for the extended rules";
        let given = text(&value, "feature_level", "a feature level", accepted)?;
        given
            .parse::<FeatureLevel>()
            .map(Level)
            .map_err(|e| PyValueError::new_err(format!("feature_level: {e}")))
    }
}

/// `threads=` when given (not `None`): a thread count, validated by the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Threads(pub i64);

impl<'a, 'py> FromPyObject<'a, 'py> for Threads {
    type Error = PyErr;

    fn extract(value: Borrowed<'a, 'py, PyAny>) -> PyResult<Threads> {
        let accepted = "an int of at least 1, or None for one per core";
        if value.cast::<PyBool>().is_ok() {
            return Err(wrong_type(&value, "threads", "a thread count", accepted));
        }
        let int = match value.cast::<PyInt>() {
            Ok(int) => int.to_owned().into_any(),
            Err(_) => value
                .call_method0("__index__")
                .map_err(|_| wrong_type(&value, "threads", "a thread count", accepted))?,
        };
        match int.extract::<i64>() {
            Ok(n) => Ok(Threads(n)),
            Err(_) if int.lt(0)? => Ok(Threads(i64::MIN)),
            Err(_) => Ok(Threads(i64::MAX)),
        }
    }
}

/// `detect_positive=` (`POSITIVE`) or `detect_negative=`: a `bool` (numpy's included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Detect<const POSITIVE: bool>(pub bool);

impl<'a, 'py, const POSITIVE: bool> FromPyObject<'a, 'py> for Detect<POSITIVE> {
    type Error = PyErr;

    fn extract(value: Borrowed<'a, 'py, PyAny>) -> PyResult<Detect<POSITIVE>> {
        let keyword = match POSITIVE {
            true => "detect_positive",
            false => "detect_negative",
        };
        if let Ok(b) = value.cast::<PyBool>() {
            return Ok(Detect(b.is_true()));
        }
        let numpy_bool = value.get_type().fully_qualified_name().is_ok_and(|n| {
            n.to_str()
                .is_ok_and(|n| n == "numpy.bool" || n == "numpy.bool_")
        });
        if numpy_bool {
            return Ok(Detect(value.is_truthy()?));
        }
        Err(wrong_type(&value, keyword, "a bool", "True, False"))
    }
}
