//! Dask arrays: recognised without importing dask, and handed to `ewise._dask`, which
//! maps the public function over their blocks lazily.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTypeMethods};

/// For a Dask array `x`: the lazy result of the public function `function` over its
/// blocks, with the keywords `keywords()` gives. `None` for anything else, which is
/// told apart by its type's module without touching dask.
///
/// Before anything is deferred, `check(dtype, block)` runs on `x`'s dtype and the
/// shape of its largest block (the largest chunk along each axis), so that a call a
/// block would refuse fails here, not in a worker at `.compute()`.
pub(crate) fn dispatch<'py>(
    x: &Bound<'py, PyAny>,
    function: &str,
    out: Option<&Bound<'py, PyAny>>,
    check: impl FnOnce(&Bound<'py, PyAny>, &[usize]) -> PyResult<()>,
    keywords: impl FnOnce() -> PyResult<Vec<(&'static str, Bound<'py, PyAny>)>>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    if x.cast::<numpy::PyUntypedArray>().is_ok() {
        return Ok(None);
    }
    let module = x.get_type().module()?;
    if !module.to_str()?.starts_with("dask.array") {
        return Ok(None);
    }
    let chunks: Vec<Vec<usize>> = x.getattr("chunks")?.extract()?;
    let block: Vec<usize> = chunks
        .iter()
        .map(|sizes| sizes.iter().copied().max().unwrap_or(0))
        .collect();
    check(&x.getattr("dtype")?, &block)?;
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
