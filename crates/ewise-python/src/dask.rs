//! Dask arrays: recognised without importing dask, and handed to `ewise._dask`, which
//! maps the public function over their blocks lazily.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTypeMethods};

/// For a Dask array `x`: the lazy result of the public function `function` over its
/// blocks, with the keywords `keywords()` gives. `None` for anything else, which is
/// told apart by its type's module without touching dask.
pub(crate) fn dispatch<'py>(
    x: &Bound<'py, PyAny>,
    function: &str,
    out: Option<&Bound<'py, PyAny>>,
    keywords: impl FnOnce() -> PyResult<Vec<(&'static str, Bound<'py, PyAny>)>>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    if x.cast::<numpy::PyUntypedArray>().is_ok() {
        return Ok(None);
    }
    let module = x.get_type().module()?;
    if !module.to_str()?.starts_with("dask.array") {
        return Ok(None);
    }
    let py = x.py();
    let function = py.import("ewise")?.getattr(function)?;
    let kwargs = PyDict::new(py);
    for (key, value) in keywords()? {
        kwargs.set_item(key, value)?;
    }
    let lazy = py
        .import("ewise._dask")?
        .getattr("map_blocks")?
        .call((function, x, out), Some(&kwargs))?;
    Ok(Some(lazy))
}
