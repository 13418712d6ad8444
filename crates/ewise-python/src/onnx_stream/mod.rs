//! `ewise.onnx.run(..., out=...)`: a model run chunk by chunk through
//! [`ewise_onnx::Streaming`], each source read from the caller's array (or, for an
//! initializer in an external data file, from that file, left unread by the load) and
//! each output written into the caller's array (or a new one), in memory bounded by the
//! chunk size (module [`chunks`]).
//!
//! Memory shared between arrays is resolved before anything is written, so that the
//! result is the one of arrays sharing nothing: an output array exactly on its own
//! source's input (element for element) reads each chunk out first; an output array
//! overlapping an input any other way is computed from a copy of that input, unless
//! that input is read completely before the output is written; two output arrays
//! sharing memory are refused.

mod chunks;
mod resident;
mod strided;
mod walk;

use ewise_cpu::text::{clip, quoted};
use ewise_cpu::NanPolicy;
use ewise_onnx::{ExternalData, Model, Scratch, SourceKind, Streaming};
use numpy::{npyffi, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyBytes, PyTuple};

use crate::args::Nan;
use crate::dtypes::{self, numpy_name};
use crate::layout::{self, Memory, View};
use crate::onnx;
use chunks::{Feed, Region};

/// The effort `numpy.shares_memory` may spend on one pair of arrays; beyond it, the pair
/// is taken as sharing memory.
const SHARES_MEMORY_WORK: usize = 1 << 20;

/// Arrays by name, as Python passes them.
type Named<'py> = Vec<(String, Bound<'py, PyUntypedArray>)>;

/// `onnx_run_into(model, inputs, nan, out)`: see `ewise.onnx.run`. `out` names output
/// arrays; every other output gets a new array. Returns every output, in declaration
/// order.
#[pyfunction]
pub(crate) fn onnx_run_into<'py>(
    model: &Bound<'py, PyAny>,
    inputs: Named<'py>,
    nan: Nan,
    out: Named<'py>,
) -> PyResult<Named<'py>> {
    let py = model.py();
    let model = load(model, nan.0)?;
    let types = inputs
        .iter()
        .map(|(name, array)| onnx::input_type(name, array))
        .collect::<PyResult<Vec<_>>>()?;
    let given: Vec<_> = inputs
        .iter()
        .zip(&types)
        .map(|((name, array), t)| (name.as_str(), t.data_type, array.shape()))
        .collect();
    let plan = model.streaming(&given).map_err(onnx::error)?;
    let targets = targets(&plan, out)?;
    refuse_shared_targets(&plan, &targets)?;

    let mut sources: Vec<Option<Bound<'py, PyUntypedArray>>> = plan
        .sources()
        .iter()
        .map(|s| {
            let given = inputs.iter().find(|(name, _)| *name == s.name);
            (s.kind == SourceKind::Input).then(|| given.map(|(_, a)| a.clone()))
        })
        .map(Option::flatten)
        .collect();
    let reading = readings(&plan, &sources, &targets)?;
    for (array, reading) in sources.iter_mut().zip(&reading) {
        if let (Some(a), Reading::Copy) = (array.as_mut(), reading) {
            *a = native_copy(a)?;
        }
    }
    let outputs = plan
        .outputs()
        .iter()
        .zip(targets)
        .map(|(o, target)| match target {
            Some(array) => Ok(array),
            None => onnx::empty(py, o.data_type, &o.shape),
        })
        .collect::<PyResult<Vec<_>>>()?;

    let mut scratch = Scratch::new();
    for (s, array) in sources.iter().enumerate() {
        let feed = match array {
            Some(array) => Feed::Array {
                region: region(array)?,
                gather: reading[s] == Reading::Gather,
            },
            None => match plan.initializer_bytes(s) {
                Some(bytes) => Feed::Held(bytes),
                None => Feed::External,
            },
        };
        let sinks = plan
            .outputs_of(s)
            .iter()
            .map(|&o| region(&outputs[o]))
            .collect::<PyResult<Vec<_>>>()?;
        chunks::stream_source(py, &plan, s, feed, sinks, &mut scratch)?;
    }
    Ok(plan
        .outputs()
        .iter()
        .map(|o| o.name.clone())
        .zip(outputs)
        .collect())
}

/// The model `model` names (a path or the model's bytes) as [`onnx::load`] loads it,
/// except that external tensor data is left in its files ([`ExternalData::Deferred`]):
/// opened and checked by the load, read chunk by chunk by the run.
fn load(model: &Bound<'_, PyAny>, policy: NanPolicy) -> PyResult<Model> {
    if model.cast::<PyBytes>().is_ok() {
        return onnx::load(model, policy);
    }
    let path = model.extract::<std::path::PathBuf>()?;
    Ok(Model::load_with(path, ExternalData::Deferred)
        .map_err(onnx::error)?
        .with_nan_policy(policy))
}

/// Per output of `plan`, the caller's array for it, checked: an output of the model,
/// named once, writable, of the output's type (either byte order) and exactly its shape.
fn targets<'py>(
    plan: &Streaming,
    out: Named<'py>,
) -> PyResult<Vec<Option<Bound<'py, PyUntypedArray>>>> {
    let mut targets = vec![None; plan.outputs().len()];
    for (name, array) in out {
        let py = array.py();
        let Some(o) = plan.outputs().iter().position(|o| o.name == name) else {
            let names: Vec<&str> = plan.outputs().iter().map(|o| o.name.as_str()).collect();
            return Err(PyValueError::new_err(format!(
                "out: {} is not an output of the model (outputs: {})",
                quoted(&name),
                clip(&names.join(", "))
            )));
        };
        let output = &plan.outputs()[o];
        if targets[o].is_some() {
            return Err(PyValueError::new_err(format!(
                "out[{}] is given twice",
                quoted(&name)
            )));
        }
        // SAFETY: `array` is a live numpy array.
        let writeable = unsafe {
            (*npyffi::_PyArray_GET_ITEM_DATA(array.as_array_ptr())).flags
                & npyffi::NPY_ARRAY_WRITEABLE
                != 0
        };
        if !writeable {
            return Err(PyValueError::new_err(format!(
                "out[{}] is read-only (open a numpy.memmap with mode \"r+\" or \"w+\")",
                quoted(&name)
            )));
        }
        let data_type = dtypes::recognise(&array.dtype())?.map(|t| t.data_type);
        if data_type != Some(output.data_type) {
            return Err(PyValueError::new_err(format!(
                "out[{}] has dtype {}, expected {} (the output's type, in either byte order)",
                quoted(&name),
                array.dtype().str()?,
                numpy_name(output.data_type)
            )));
        }
        if array.shape() != output.shape.as_slice() {
            return Err(PyValueError::new_err(format!(
                "out[{}] has shape {}, expected {} (the output's shape)",
                quoted(&name),
                PyTuple::new(py, array.shape())?.repr()?,
                PyTuple::new(py, &output.shape)?.repr()?
            )));
        }
        targets[o] = Some(array);
    }
    Ok(targets)
}

/// `ValueError` for two output arrays that share memory: both cannot hold their output.
fn refuse_shared_targets(
    plan: &Streaming,
    targets: &[Option<Bound<'_, PyUntypedArray>>],
) -> PyResult<()> {
    let given: Vec<(&str, &Bound<'_, PyUntypedArray>)> = plan
        .outputs()
        .iter()
        .zip(targets)
        .filter_map(|(o, t)| Some((o.name.as_str(), t.as_ref()?)))
        .collect();
    for (i, &(a, x)) in given.iter().enumerate() {
        for &(b, y) in &given[i + 1..] {
            if shares_memory(x, y)? {
                return Err(PyValueError::new_err(format!(
                    "out[{}] and out[{}] share memory: each output needs an array of its own",
                    quoted(a),
                    quoted(b)
                )));
            }
        }
    }
    Ok(())
}

/// How a source's input array is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// In place where its layout allows, else through a chunk buffer.
    Direct,
    /// Each chunk copied out before the outputs are written: an output array is this
    /// memory, element for element.
    Gather,
    /// From a copy made before anything is written: an output array written before the
    /// input is read completely shares memory with it otherwise.
    Copy,
}

/// How each source's array (`None` for sources the model holds) must be read so that no
/// output array written changes an input element before it is read. Reading each chunk
/// out first is enough only where an output array is the input element for element and
/// no two input elements share memory: a chunk then writes only the bytes it read.
fn readings(
    plan: &Streaming,
    sources: &[Option<Bound<'_, PyUntypedArray>>],
    targets: &[Option<Bound<'_, PyUntypedArray>>],
) -> PyResult<Vec<Reading>> {
    let mut readings = vec![Reading::Direct; sources.len()];
    for (s, input) in sources.iter().enumerate() {
        let Some(input) = input else { continue };
        let input_view = View::of(input, input.dtype().itemsize());
        let repeated = layout::may_share_elements(&input_view);
        for (output, target) in plan.outputs().iter().zip(targets) {
            let Some(target) = target else { continue };
            let memory = layout::overlap(&input_view, &View::of(target, target.dtype().itemsize()));
            let reading = match memory {
                Memory::Disjoint => Reading::Direct,
                Memory::Same if output.source == s && !repeated => Reading::Gather,
                _ if output.source > s => Reading::Direct,
                _ if shares_memory(input, target)? => Reading::Copy,
                _ => Reading::Direct,
            };
            readings[s] = match (readings[s], reading) {
                (Reading::Copy, _) | (_, Reading::Copy) => Reading::Copy,
                (Reading::Gather, _) | (_, Reading::Gather) => Reading::Gather,
                _ => Reading::Direct,
            };
        }
    }
    Ok(readings)
}

/// Whether `a` and `b` share a byte: no when their extents are apart, else numpy's exact
/// answer (`numpy.shares_memory`), yes when numpy gives up.
fn shares_memory(a: &Bound<'_, PyUntypedArray>, b: &Bound<'_, PyUntypedArray>) -> PyResult<bool> {
    let (va, vb) = (
        View::of(a, a.dtype().itemsize()),
        View::of(b, b.dtype().itemsize()),
    );
    if layout::overlap(&va, &vb) == Memory::Disjoint {
        return Ok(false);
    }
    let py = a.py();
    let work = [("max_work", SHARES_MEMORY_WORK)].into_py_dict(py)?;
    match py
        .import("numpy")?
        .call_method("shares_memory", (a, b), Some(&work))
    {
        Ok(answer) => answer.is_truthy(),
        Err(_) => Ok(true),
    }
}

/// A C-contiguous copy of `array` in the machine's byte order.
fn native_copy<'py>(array: &Bound<'py, PyUntypedArray>) -> PyResult<Bound<'py, PyUntypedArray>> {
    let py = array.py();
    let descr = array.dtype().call_method1("newbyteorder", ("=",))?;
    let order = [("order", "C")].into_py_dict(py)?;
    Ok(array
        .call_method("astype", (descr,), Some(&order))?
        .cast_into::<PyUntypedArray>()?)
}

/// How the chunk loop sees `array`.
fn region(array: &Bound<'_, PyUntypedArray>) -> PyResult<Region> {
    let native = dtypes::recognise(&array.dtype())?.is_none_or(|t| t.native);
    Ok(Region {
        view: View::of(array, array.dtype().itemsize()),
        swapped: !native,
        file_backed: resident::shared_file_mapping(array.as_any())?,
    })
}
