//! `ewise._ewise`: the native module under the `ewise` Python package.
//!
//! It holds the public `sign`, `is_infinity` and `isinf` (keyword-only signatures and
//! numpy-style docstrings; Dask arrays are handed to the package's `_dask` module). A
//! numpy array of any layout is described to ewise without copying (module `layout`),
//! and ewise-cpu's compiled operators run on its memory with the GIL released for large
//! work (module `ops`); `device="gpu"` goes through ewise-gpu (module `gpu`).

mod args;
mod dask;
mod dtypes;
mod gpu;
mod layout;
mod onnx;
mod onnx_stream;
mod ops;
mod tables;

use ewise_cpu::text::clip;
use ewise_cpu::{DataType, FeatureLevel, InfinityMode, NanPolicy};
use numpy::{PyArrayDescr, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use args::{Detect, DeviceArg, Level, Mode, Nan, Threads};
use ops::{Op, Target};

create_exception!(
    ewise,
    ValidationError,
    PyValueError,
    "A tensor the library's validation rejects (DirectML's rules under feature_level=)."
);
create_exception!(
    ewise,
    GpuError,
    pyo3::exceptions::PyRuntimeError,
    "device=\"gpu\" could not run: no GPU adapter (the message lists what was tried), or the GPU failed."
);
create_exception!(
    ewise,
    SoftwareRendererWarning,
    pyo3::exceptions::PyRuntimeWarning,
    "device=\"gpu\" opened a software renderer (lavapipe, llvmpipe, WARP, SwiftShader) because no GPU was found: results are exact but slower than the CPU device. Given once per process, when the GPU device is opened; set EWISE_GPU_ADAPTER to the adapter's name to choose it and silence this."
);
create_exception!(
    ewise,
    AdapterFallbackWarning,
    pyo3::exceptions::PyRuntimeWarning,
    "device=\"gpu\" passed over GPU adapters that could not open a device or compile ewise's kernels (a broken driver, a Direct3D 12 shader compiler that is missing or too old) and runs on the next one in ewise's order; the message names each adapter passed over, why, and the one used. Given once per process, when the GPU device is opened; set EWISE_GPU_ADAPTER to the adapter's name to choose it and silence this."
);
create_exception!(
    ewise,
    OnnxError,
    PyValueError,
    "An ONNX model or its inputs that the ONNX front end rejects."
);

/// The sign of each element: -1, 0 or +1, in ``x``'s dtype.
///
/// Parameters
/// ----------
/// x
///     A numpy array of any layout, an array-like, or a Dask array (the result is
///     then a lazy Dask array, computed block by block; every argument, and what
///     ``feature_level=`` says of the largest block, is checked when it is made).
/// nan
///     ``"zero"`` (DirectML's formula: NaN gives +0) or ``"propagate"`` (NaN gives
///     the input NaN unchanged, bit for bit, as numpy and ONNX do). -0 gives +0.
/// out
///     A writable array of ``x``'s dtype and of a shape ``x`` broadcasts to, strided
///     or not; ``out=x`` works in place. Only ``out``'s elements are written, and it
///     is returned. Input and output may share memory: the result is as if the
///     input were read first. An ``out`` that runs against ``x`` along some axis
///     (``x[::-1]`` into a forward ``out``) costs a temporary (at most 32 MiB: large
///     calls run in pieces). An ``out`` whose elements share memory (a zero stride)
///     is written as numpy writes it, through a temporary: each shared place ends
///     with the value of its last element in C order.
/// feature_level
///     ``None`` accepts every type and layout the library has (float64, bfloat16,
///     0-d, empty, up to 64 dimensions). A DirectML level (``"2_1"``, ``"6_4"``,
///     ...) validates exactly as DirectML would, raising ``ValidationError``.
/// threads
///     Threads for large arrays; ``None`` uses one per core, 1 the calling thread.
///     A count above what can help (4 per core, at most 256) uses that many, and no
///     thread is given less than 64 KiB of work (the rule that bounds the ``ewise``
///     command's ``--threads``). The GIL is released while large arrays are processed.
/// device
///     ``"cpu"`` or ``"gpu"``: the GPU backend (wgpu on Vulkan, Metal or DirectX 12;
///     the adapter is chosen as ``ewise.gpu_adapter()`` tells) gives the same bytes.
///     The arrays stay numpy arrays: each call uploads the input and downloads the
///     result, so the GPU pays off only for work that is large against the
///     transfers. Arrays of any size run in pieces of 32 MiB, holding about four
///     pieces' worth of host memory. A GPU used before ``os.fork()`` cannot be used
///     in the child (``GpuError``); the CPU path works in forked children. Where
///     no GPU exists and a software renderer (lavapipe, llvmpipe, WARP) is chosen
///     without being named by ``EWISE_GPU_ADAPTER``, opening the device gives an
///     ``ewise.SoftwareRendererWarning``, once per process. Adapters that cannot open
///     a device or compile the kernels are passed over for the next one in ewise's
///     order, with an ``ewise.AdapterFallbackWarning`` naming each and why.
///
/// Returns
/// -------
/// ``out`` when given; else a new array in ``x``'s memory order (and, along axes
/// ``x`` walks backwards, the same direction), or a numpy scalar for a 0-d result.
///
/// Raises
/// ------
/// TypeError
///     ``x``'s dtype is not one ``sign`` takes (the message lists them), or ``x`` or
///     ``out`` is a masked array or a ``numpy.matrix`` (ewise would drop the mask or
///     the matrix type; pass ``x.filled(value)`` or ``numpy.asarray(x)``), or a
///     keyword of the wrong type (``nan=None``, ``device=0``, ``threads="2"``: the
///     message names the keyword and what it accepts; ``None`` means "not given"
///     only for ``out``, ``feature_level`` and ``threads``).
/// ValueError
///     A bad keyword value or ``out=`` (type, dtype, shape, read-only).
/// ValidationError
///     ``feature_level=`` rejects the tensor.
/// GpuError
///     ``device="gpu"`` and no GPU adapter, the GPU failed, or it was opened before
///     this process forked.
/// MemoryError
///     A temporary or a GPU transfer buffer could not be allocated.
/// KeyboardInterrupt
///     Ctrl-C during a large call: signals are checked between pieces (64 MiB on the
///     CPU, 32 MiB on the GPU). ``out`` then holds results for the pieces done and
///     its old values elsewhere.
///
/// Examples
/// --------
/// >>> import numpy as np, ewise
/// >>> x = np.array([-3, 0, 5], dtype=np.int8)
/// >>> ewise.sign(x)
/// array([-1,  0,  1], dtype=int8)
/// >>> ewise.sign(np.array([np.nan, -0.0]), nan="propagate")
/// array([nan,  0.])
/// >>> ewise.sign(x, out=x)  # in place
/// array([-1,  0,  1], dtype=int8)
/// >>> ewise.sign(np.ones(3, np.float32), feature_level="2_1")
/// Traceback (most recent call last):
/// ...
/// ewise.ValidationError: ELEMENT_WISE_SIGN: InputTensor DimensionCount 1 is not supported at feature level 2_1 (supported: 4)
#[pyfunction]
#[pyo3(
    signature = (x, *, nan=Nan(NanPolicy::Zero), out=None, feature_level=None, threads=None, device=DeviceArg(Target::Cpu)),
    text_signature = "(x, *, nan=\"zero\", out=None, feature_level=None, threads=None, device=\"cpu\")"
)]
fn sign<'py>(
    x: &Bound<'py, PyAny>,
    nan: Nan,
    out: Option<&Bound<'py, PyAny>>,
    feature_level: Option<Level>,
    threads: Option<Threads>,
    device: DeviceArg,
) -> PyResult<Bound<'py, PyAny>> {
    let op = Op::Sign(nan.0);
    let options = ops::options(feature_level, threads, device)?;
    if let Some(result) = ops::small(x, out, op, None, options)? {
        return Ok(result);
    }
    let check = |dtype: &Bound<'py, PyAny>, block: &[usize]| {
        ops::check_block(dtype, block, op, None, options, "sign")
    };
    if let Some(lazy) = dask::dispatch(x, "sign", out, check, || {
        [("nan", nan.name().into_pyobject(x.py())?.into_any())]
            .into_iter()
            .chain(common(x.py(), feature_level, threads, device)?)
            .map(Ok)
            .collect()
    })? {
        return Ok(lazy);
    }
    ops::run(x, out, op, None, options, "sign")
}

/// DirectML's IS_INFINITY: 1 where an element is an infinity of the chosen sign.
///
/// Parameters
/// ----------
/// x
///     A floating-point array (float32, float16, float64, bfloat16, or one of the
///     four float8 formats) of any layout, an array-like, or a Dask array.
/// mode
///     ``"either"``, ``"positive"`` or ``"negative"``: which infinities count; or
///     ``"neither"`` (ONNX's IsInf with both flags false: all zeros), an extension
///     that ``feature_level=`` refuses as DirectML has no such mode. NaN and finite
///     values give 0; float8 formats without infinities (all but float8_e5m2) give
///     all zeros.
/// out
///     A writable uint8 or bool array of a shape ``x`` broadcasts to; returned.
/// dtype
///     The result's dtype: ``numpy.uint8`` (DirectML's UINT8, the default) or
///     ``bool``. Without it, a given ``out``'s dtype is used.
/// feature_level, threads, device
///     As for :func:`sign`.
///
/// Raises
/// ------
/// TypeError
///     ``x``'s dtype is not a floating-point type ewise has (integers included), or
///     a keyword of the wrong type (``mode=None``: the message names the keyword and
///     what it accepts).
/// ValueError
///     A bad keyword value or ``out=``.
/// ValidationError
///     ``feature_level=`` rejects the tensor.
///
/// Examples
/// --------
/// >>> import numpy as np, ewise
/// >>> x = np.array([np.inf, -np.inf, np.nan, 0.0], dtype=np.float16)
/// >>> ewise.is_infinity(x)
/// array([1, 1, 0, 0], dtype=uint8)
/// >>> ewise.is_infinity(x, mode="negative", dtype=bool)
/// array([False,  True, False, False])
#[pyfunction]
#[pyo3(
    signature = (x, *, mode=Mode(InfinityMode::Either), out=None, dtype=None, feature_level=None, threads=None, device=DeviceArg(Target::Cpu)),
    text_signature = "(x, *, mode=\"either\", out=None, dtype=None, feature_level=None, threads=None, device=\"cpu\")"
)]
fn is_infinity<'py>(
    x: &Bound<'py, PyAny>,
    mode: Mode,
    out: Option<&Bound<'py, PyAny>>,
    dtype: Option<&Bound<'py, PyAny>>,
    feature_level: Option<Level>,
    threads: Option<Threads>,
    device: DeviceArg,
) -> PyResult<Bound<'py, PyAny>> {
    let py = x.py();
    let op = Op::IsInfinity(mode.0);
    let options = ops::options(feature_level, threads, device)?;
    let out_type = match (dtype, out) {
        (Some(dtype), _) => Some(infinity_output_type(dtype)?),
        (None, Some(out)) => out_infinity_type(out)?,
        (None, None) => None,
    };
    if let Some(result) = ops::small(x, out, op, out_type, options)? {
        return Ok(result);
    }
    let check = |dtype: &Bound<'py, PyAny>, block: &[usize]| {
        ops::check_block(dtype, block, op, out_type, options, "is_infinity")
    };
    if let Some(lazy) = dask::dispatch(x, "is_infinity", out, check, || {
        let dtype = dtype.map_or_else(|| py.None().into_bound(py), |d| d.clone());
        [
            ("mode", mode.name().into_pyobject(py)?.into_any()),
            ("dtype", dtype),
        ]
        .into_iter()
        .chain(common(py, feature_level, threads, device)?)
        .map(Ok)
        .collect()
    })? {
        return Ok(lazy);
    }
    ops::run(x, out, op, out_type, options, "is_infinity")
}

/// ONNX's IsInf: True where an element is an infinity that the flags select.
///
/// Both flags false gives all False. The output is bool; ``out`` must be a writable
/// bool array of a shape ``x`` broadcasts to. Types, layouts, errors, ``threads`` and
/// ``device`` are as for :func:`is_infinity`.
///
/// Examples
/// --------
/// >>> import numpy as np, ewise
/// >>> x = np.array([np.inf, -np.inf, 1.0])
/// >>> ewise.isinf(x, detect_negative=False)
/// array([ True, False, False])
/// >>> ewise.isinf(x, detect_positive=False, detect_negative=False)
/// array([False, False, False])
#[pyfunction]
#[pyo3(
    signature = (x, *, detect_positive=Detect(true), detect_negative=Detect(true), out=None, threads=None, device=DeviceArg(Target::Cpu)),
    text_signature = "(x, *, detect_positive=True, detect_negative=True, out=None, threads=None, device=\"cpu\")"
)]
fn isinf<'py>(
    x: &Bound<'py, PyAny>,
    detect_positive: Detect<true>,
    detect_negative: Detect<false>,
    out: Option<&Bound<'py, PyAny>>,
    threads: Option<Threads>,
    device: DeviceArg,
) -> PyResult<Bound<'py, PyAny>> {
    let py = x.py();
    let (detect_positive, detect_negative) = (detect_positive.0, detect_negative.0);
    let op = Op::IsInfinity(InfinityMode::from_detect(detect_positive, detect_negative));
    let options = ops::options(None, threads, device)?;
    if let Some(result) = ops::small(x, out, op, Some(DataType::Bool), options)? {
        return Ok(result);
    }
    let check = |dtype: &Bound<'py, PyAny>, block: &[usize]| {
        ops::check_block(dtype, block, op, Some(DataType::Bool), options, "isinf")
    };
    if let Some(lazy) = dask::dispatch(x, "isinf", out, check, || {
        [
            (
                "detect_positive",
                detect_positive.into_pyobject(py)?.to_owned().into_any(),
            ),
            (
                "detect_negative",
                detect_negative.into_pyobject(py)?.to_owned().into_any(),
            ),
        ]
        .into_iter()
        .chain(common(py, None, threads, device)?)
        .map(Ok)
        .collect()
    })? {
        return Ok(lazy);
    }
    ops::run(x, out, op, Some(DataType::Bool), options, "isinf")
}

/// The `feature_level`, `threads` and `device` keywords, for a Dask call.
fn common<'py>(
    py: Python<'py>,
    feature_level: Option<Level>,
    threads: Option<Threads>,
    device: DeviceArg,
) -> PyResult<Vec<(&'static str, Bound<'py, PyAny>)>> {
    let mut keywords = vec![
        (
            "threads",
            threads.map(|t| t.0).into_pyobject(py)?.into_any(),
        ),
        ("device", device.name().into_pyobject(py)?.into_any()),
    ];
    if let Some(level) = feature_level {
        keywords.push((
            "feature_level",
            level.0.to_string().into_pyobject(py)?.into_any(),
        ));
    }
    Ok(keywords)
}

/// IS_INFINITY's output type from `dtype=`: UINT8 or BOOL.
fn infinity_output_type(dtype: &Bound<'_, PyAny>) -> PyResult<DataType> {
    let bad = || {
        PyValueError::new_err(format!(
            "dtype={} is not an is_infinity output type (accepted: uint8, bool)",
            dtype
                .repr()
                .map_or_else(|_| "?".into(), |r| clip(&r.to_string()).into_owned())
        ))
    };
    let descr = PyArrayDescr::new(dtype.py(), dtype).map_err(|_| bad())?;
    match dtypes::recognise(&descr)? {
        Some(t) if matches!(t.data_type, DataType::Uint8 | DataType::Bool) => Ok(t.data_type),
        _ => Err(bad()),
    }
}

/// The output type a given `out` asks for when `dtype=` is not given: its own, if it is
/// UINT8 or BOOL; `None` (the default, UINT8) otherwise, which the `out=` check then
/// reports.
fn out_infinity_type(out: &Bound<'_, PyAny>) -> PyResult<Option<DataType>> {
    let Ok(array) = out.cast::<PyUntypedArray>() else {
        return Ok(None);
    };
    Ok(dtypes::recognise(&array.dtype())?
        .map(|t| t.data_type)
        .filter(|t| matches!(t, DataType::Uint8 | DataType::Bool)))
}

/// `onnx_run(model, inputs, nan)`: see `ewise.onnx.run`.
#[pyfunction]
fn onnx_run<'py>(
    model: &Bound<'py, PyAny>,
    inputs: Vec<(String, Bound<'py, PyUntypedArray>)>,
    nan: Nan,
) -> PyResult<Vec<(String, Bound<'py, PyUntypedArray>)>> {
    onnx::run(model, inputs, nan.0)
}

/// `support(feature_level)`: see `ewise.support`.
#[pyfunction]
#[pyo3(signature = (feature_level=None))]
fn support<'py>(py: Python<'py>, feature_level: Option<Level>) -> PyResult<Bound<'py, PyDict>> {
    tables::of(py, feature_level.map(|l| l.0))
}

/// Every DirectML feature level, lowest first (`"1_0"` ... `"6_4"`).
#[pyfunction]
fn feature_levels() -> Vec<String> {
    FeatureLevel::ALL.iter().map(|l| l.to_string()).collect()
}

/// The GPU adapter that ``device="gpu"`` runs on, as one line; raises ``GpuError``
/// when there is none.
#[pyfunction]
fn gpu_adapter(py: Python<'_>) -> PyResult<String> {
    gpu::adapter(py)
}

/// The CPU kernels' instruction set in this process: ``"avx512"`` or ``"avx2"`` on x86-64
/// (AVX-512 F, BW, DQ and VL; AVX2), ``"neon"`` on aarch64, ``"portable"`` elsewhere or
/// where ``EWISE_FORCE_PORTABLE`` or ``EWISE_ISA`` ask for it.
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
    m.add_function(wrap_pyfunction!(onnx_stream::onnx_run_into, m)?)?;
    m.add_function(wrap_pyfunction!(support, m)?)?;
    m.add_function(wrap_pyfunction!(feature_levels, m)?)?;
    m.add_function(wrap_pyfunction!(instruction_set, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_adapter, m)?)?;
    m.add("GpuError", m.py().get_type::<GpuError>())?;
    m.add("ValidationError", m.py().get_type::<ValidationError>())?;
    m.add("OnnxError", m.py().get_type::<OnnxError>())?;
    m.add(
        "SoftwareRendererWarning",
        m.py().get_type::<SoftwareRendererWarning>(),
    )?;
    m.add(
        "AdapterFallbackWarning",
        m.py().get_type::<AdapterFallbackWarning>(),
    )?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("DEFAULT_NAN_POLICY", NanPolicy::default().name())?;
    Ok(())
}
