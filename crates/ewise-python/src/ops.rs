//! `sign` and `is_infinity` on numpy arrays: argument checks, the output array, and one
//! run of an ewise-cpu compiled operator over the arrays' own memory.

use std::cell::RefCell;
use std::rc::Rc;

use ewise_cpu::{
    CompiledOperator, DataType, Device, Extensions, FeatureLevel, InfinityMode, NanPolicy,
    OperatorDesc, OperatorSupport, OperatorType, Parallelism,
};
use numpy::npyffi::{self, NPY_ORDER, PY_ARRAY_API};
use numpy::{PyArrayDescr, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PySlice, PyTuple};

use crate::args::{DeviceArg, Level, Threads};
use crate::dtypes::{self, numpy_name, Recognised};
use crate::gpu;
use crate::layout::{self, Dims, Memory, Plan, Span, Unfit, View};
use crate::ValidationError;

/// Bytes moved below which the GIL stays held: there the work takes a few microseconds
/// (at most about 15 from memory), which another Python thread would not gain, and
/// releasing and taking the GIL back (about 60 ns without contention, a thread switch
/// with it) would cost up to 6% of the call.
const DETACH_BYTES: usize = 256 << 10;

/// The operator of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Sign(NanPolicy),
    IsInfinity(InfinityMode),
}

impl Op {
    fn operator(self) -> OperatorType {
        match self {
            Op::Sign(_) => OperatorType::ElementWiseSign,
            Op::IsInfinity(_) => OperatorType::ElementWiseIsInfinity,
        }
    }
}

/// Where a call runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    Cpu,
    Gpu,
}

/// Options common to both functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Options {
    /// `None`: every type and layout the library accepts; a level: DirectML's rules.
    pub level: Option<FeatureLevel>,
    pub parallelism: Parallelism,
    pub target: Target,
}

/// `feature_level=`, `threads=` and `device=`, as read by [`crate::args`].
pub(crate) fn options(
    feature_level: Option<Level>,
    threads: Option<Threads>,
    device: DeviceArg,
) -> PyResult<Options> {
    let parallelism = match threads.map(|t| t.0) {
        None => Parallelism::Auto,
        Some(n) if n >= 1 => {
            let cap = ewise_cpu::max_threads();
            Parallelism::threads(usize::try_from(n).map_or(cap, |n| n.min(cap)))
        }
        Some(n) => {
            return Err(PyValueError::new_err(format!(
                "threads={n}: give a count of at least 1, or None for one per core"
            )))
        }
    };
    Ok(Options {
        level: feature_level.map(|l| l.0),
        parallelism,
        target: device.0,
    })
}

/// Bytes (input span plus output span) of one piece of a CPU call: the most work done
/// between two checks for signals (Ctrl-C), milliseconds at memory speed, and twice the
/// most a temporary of the call holds. Large enough that the pieces' hand-over costs
/// under 1% of their time.
pub(crate) const CPU_PIECE_BYTES: usize = 64 << 20;

/// Bytes (input span plus output span) of one piece of a GPU call: host memory for a
/// call is a small multiple of it (module [`gpu`]), whatever the array's size.
pub(crate) const GPU_PIECE_BYTES: usize = 32 << 20;

/// Most elements a piece holds along one axis: one ewise tensor dimension's.
const AXIS_LIMIT: usize = u32::MAX as usize;

/// Bytes moved (input plus output) below which a call on C-contiguous arrays may take
/// [`small`] whatever `threads=` says: the compiled operator of [`run`] would run on the
/// calling thread alone there (threads start at [`ewise_cpu::MEDIUM_THRESHOLD_BYTES`]),
/// so calling the kernel straight away does the same work.
const SMALL_BYTES: usize = ewise_cpu::MEDIUM_THRESHOLD_BYTES as usize;

/// Bytes moved below which a call on C-contiguous arrays with the default `threads=`
/// may take [`small`]: up to there `ewise_cpu::array` runs as [`run`]'s compiled
/// operator would (on the helper threads that are awake, from [`SMALL_BYTES`]), in one
/// piece (a piece of [`run`] moves up to [`CPU_PIECE_BYTES`]).
const MEDIUM_BYTES: usize = ewise_cpu::PARALLEL_THRESHOLD_BYTES as usize;

/// The call floor: [`run`]'s result for the common small call, without its general
/// machinery (layout walk, broadcasting, temporaries, compiled operators), or `None`
/// where [`run`] must decide (and report any error).
///
/// Taken when there is no `feature_level=` and the device is the CPU; `x` is a plain
/// `numpy.ndarray` (not a subclass), C-contiguous, of at least one dimension and one
/// element, of a numpy type the operator takes, in native byte order; and `out` is
/// absent, or a writable plain `numpy.ndarray` of `x`'s shape, C-contiguous, of the
/// output type in native byte order, in memory disjoint from `x` or (for `sign`)
/// exactly `x`'s. Input and output together move less than [`SMALL_BYTES`], or less
/// than [`MEDIUM_BYTES`] with the default `threads=`.
///
/// The result array is made with `PyArray_NewFromDescr` (C order, as `run`'s
/// `PyArray_NewLikeArray` gives for a C-contiguous `x`), and the kernel runs on the
/// calling thread (and from [`SMALL_BYTES`] on the helper threads that are awake), with
/// the GIL released only from [`DETACH_BYTES`]: nothing else is allocated.
pub(crate) fn small<'py>(
    x: &Bound<'py, PyAny>,
    out: Option<&Bound<'py, PyAny>>,
    op: Op,
    out_type: Option<DataType>,
    options: Options,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    if options.level.is_some() || options.target != Target::Cpu {
        return Ok(None);
    }
    let py = x.py();
    let Some(x) = Dense::of(x) else {
        return Ok(None);
    };
    let in_type = x.recognised.data_type;
    let accepted = OperatorSupport::of(op.operator()).extended.input_types;
    if !x.recognised.native || !accepted.contains(&in_type) {
        return Ok(None);
    }
    let out_type = match op {
        Op::Sign(_) => in_type,
        Op::IsInfinity(_) => out_type.unwrap_or(DataType::Uint8),
    };
    let Some(out_item) = out_type.size_in_bytes().map(|s| s as usize) else {
        return Ok(None);
    };
    let (in_bytes, out_bytes) = (x.elements * x.item, x.elements * out_item);
    let moved = in_bytes + out_bytes;
    if moved >= MEDIUM_BYTES || (moved >= SMALL_BYTES && options.parallelism != Parallelism::Auto) {
        return Ok(None);
    }
    let (result, same) = match out {
        Some(out) => {
            let Some(o) = Dense::of(out) else {
                return Ok(None);
            };
            if !o.writeable
                || o.recognised.data_type != out_type
                || !o.recognised.native
                || o.array.shape() != x.array.shape()
            {
                return Ok(None);
            }
            let same = o.data == x.data;
            let disjoint = o.data + out_bytes <= x.data || x.data + in_bytes <= o.data;
            let in_place = same && matches!(op, Op::Sign(_));
            if !(disjoint || in_place) {
                return Ok(None);
            }
            (o.array.clone(), same)
        }
        None => (
            new_c_order(x.array, &dtypes::descr_of(py, out_type)?)?,
            false,
        ),
    };
    // SAFETY: `result` is a live numpy array.
    let out_data = unsafe { (*npyffi::_PyArray_GET_ITEM_DATA(result.as_array_ptr())).data };
    let (input, output) = (
        Span {
            base: x.data,
            len: in_bytes,
        },
        Span {
            base: out_data as usize,
            len: out_bytes,
        },
    );
    let work = move || {
        // SAFETY: the spans are exactly the elements of two C-contiguous arrays that the
        // caller holds: disjoint (checked above, or a new array), or, for SIGN in
        // place, the same bytes, then passed as one slice. Another thread writing these
        // arrays meanwhile gives unspecified results, as in numpy.
        unsafe {
            match op {
                Op::Sign(policy) if same => {
                    ewise_cpu::array::sign_bytes_in_place(in_type, bytes_mut(output), policy)
                }
                Op::Sign(policy) => {
                    ewise_cpu::array::sign_bytes(in_type, bytes(input), bytes_mut(output), policy)
                }
                Op::IsInfinity(mode) => ewise_cpu::array::is_infinity_bytes(
                    in_type,
                    mode,
                    bytes(input),
                    bytes_mut(output),
                ),
            }
        }
    };
    let done = if in_bytes + out_bytes >= DETACH_BYTES {
        py.detach(work)
    } else {
        work()
    };
    done.map_err(validation)?;
    Ok(Some(result.into_any()))
}

/// A plain `numpy.ndarray` of a numpy type, C-contiguous, with at least one dimension
/// and one element, as [`small`] reads it.
struct Dense<'a, 'py> {
    array: &'a Bound<'py, PyUntypedArray>,
    data: usize,
    elements: usize,
    item: usize,
    recognised: Recognised,
    writeable: bool,
}

impl<'a, 'py> Dense<'a, 'py> {
    fn of(object: &'a Bound<'py, PyAny>) -> Option<Dense<'a, 'py>> {
        let py = object.py();
        // SAFETY: a pointer comparison of the object's type with numpy's ndarray type.
        if unsafe { npyffi::PyArray_CheckExact(py, object.as_ptr()) } == 0 {
            return None;
        }
        // SAFETY: the object's type is exactly numpy.ndarray.
        let array = unsafe { object.cast_unchecked::<PyUntypedArray>() };
        // SAFETY: `array` is a live numpy array: its fields and its descriptor's.
        let (fields, descr) = unsafe {
            let fields = &*npyffi::_PyArray_GET_ITEM_DATA(array.as_array_ptr());
            let descr = Bound::from_borrowed_ptr(py, fields.descr.cast())
                .cast_into_unchecked::<PyArrayDescr>();
            (fields, descr)
        };
        let flags = fields.flags;
        if fields.nd < 1 || flags & npyffi::NPY_ARRAY_C_CONTIGUOUS == 0 {
            return None;
        }
        let recognised = dtypes::recognise_builtin(&descr)?;
        let elements: usize = array.shape().iter().product();
        if elements == 0 {
            return None;
        }
        Some(Dense {
            array,
            data: fields.data as usize,
            elements,
            item: descr.itemsize(),
            recognised,
            writeable: flags & npyffi::NPY_ARRAY_WRITEABLE != 0,
        })
    }
}

/// A new C-ordered array of `x`'s shape with `descr`.
fn new_c_order<'py>(
    x: &Bound<'py, PyUntypedArray>,
    descr: &Bound<'py, PyArrayDescr>,
) -> PyResult<Bound<'py, PyUntypedArray>> {
    let py = x.py();
    // SAFETY: NewFromDescr steals the descriptor reference that `into_dtype_ptr` hands
    // over, reads `ndim` dimensions from `x`'s own (alive for the call), allocates the
    // data itself (no strides, data or base given), and returns a new reference or
    // NULL with an exception set.
    unsafe {
        let fields = &*npyffi::_PyArray_GET_ITEM_DATA(x.as_array_ptr());
        let ptr = PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            npyffi::get_type_object(py, npyffi::NpyTypes::PyArray_Type),
            descr.clone().into_dtype_ptr(),
            fields.nd,
            fields.dimensions,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
        );
        Ok(Bound::from_owned_ptr_or_err(py, ptr)?.cast_into_unchecked::<PyUntypedArray>())
    }
}

/// Runs `op` on `x` into `out` (or a new array) and returns the result: `out` itself,
/// a new array, or for a 0-d result without `out`, its scalar (as numpy's ufuncs do).
/// `out_type` is IS_INFINITY's output type (UINT8 or BOOL) when no `out` is given;
/// `function` is the name the caller called, for messages.
///
/// Large calls run in pieces ([`CPU_PIECE_BYTES`], [`GPU_PIECE_BYTES`]), so that an
/// axis may hold any number of elements, temporaries and GPU transfers stay the size of
/// a piece, and signals are checked between pieces: a pending `KeyboardInterrupt` is
/// raised there, with the pieces already done written to `out` and the rest of it
/// untouched.
pub(crate) fn run<'py>(
    x: &Bound<'py, PyAny>,
    out: Option<&Bound<'py, PyAny>>,
    op: Op,
    out_type: Option<DataType>,
    options: Options,
    function: &'static str,
) -> PyResult<Bound<'py, PyAny>> {
    let py = x.py();
    let mut x = as_array(x, function)?;
    let in_type = input_type(&x, op, function)?;
    let out_type = match op {
        Op::Sign(_) => in_type.data_type,
        Op::IsInfinity(_) => out_type.unwrap_or(DataType::Uint8),
    };
    let given = out.is_some();
    let out = match out {
        Some(out) => checked_out(out, &x, out_type, function)?,
        None => new_like(&x, &dtypes::descr_of(py, out_type)?)?,
    };
    let out_view = View::of(&out, out.dtype().itemsize());
    let Some(in_view) = View::of(&x, x.dtype().itemsize()).broadcast_to(&out_view.shape) else {
        return Err(PyValueError::new_err(format!(
            "{function}: x of shape {} does not broadcast to out's shape {}",
            shape(x.shape()),
            shape(out.shape())
        )));
    };
    if out_view.shape.contains(&0) {
        validate_packed(
            op,
            (in_type.data_type, out_type),
            &out_view.shape,
            options.level,
        )?;
        return Ok(out.into_any());
    }
    if layout::overlap(&in_view, &out_view) == Memory::Overlapping {
        x = call(&x, "copy", ("K",))?;
    }
    let shared = layout::may_share_elements(&out_view);
    // numpy.broadcast_to costs microseconds: only an input of another shape needs it.
    let x = if x.shape() == out.shape() {
        x
    } else {
        py.import("numpy")?
            .call_method1("broadcast_to", (&x, PyTuple::new(py, out.shape())?))?
            .cast_into::<PyUntypedArray>()?
    };
    let call = Call {
        op,
        types: (in_type, out_type),
        options,
        function,
        shared,
    };
    let limit = match options.target {
        Target::Cpu => CPU_PIECE_BYTES,
        Target::Gpu => GPU_PIECE_BYTES,
    };
    let mut pieces = 0usize;
    each_piece(&x, &out, limit, &mut |x, out| {
        if pieces > 0 {
            py.check_signals()?;
        }
        pieces += 1;
        call.run(x.clone(), out)
    })?;
    if !given && out.ndim() == 0 {
        return out.get_item(());
    }
    Ok(out.into_any())
}

/// One call's fixed part, run on each piece.
struct Call {
    op: Op,
    /// The input's type as numpy gives it, and the output's type.
    types: (Recognised, DataType),
    options: Options,
    function: &'static str,
    /// Whether `out`'s elements may share bytes: results then go through a temporary.
    shared: bool,
}

impl Call {
    /// Runs on one piece: `x` broadcast to `out`'s shape, and no input byte that a
    /// write to `out` could change before it is read (unless at the same place).
    fn run<'py>(
        &self,
        mut x: Bound<'py, PyUntypedArray>,
        out: &Bound<'py, PyUntypedArray>,
    ) -> PyResult<()> {
        let py = x.py();
        let (op, (in_type, out_type), options) = (self.op, self.types, self.options);
        if !in_type.native {
            x = call(
                &x,
                "astype",
                (x.dtype().call_method1("newbyteorder", ("=",))?,),
            )?;
        }
        let out_native = dtypes::recognise(&out.dtype())?.is_some_and(|r| r.native);
        let mut target = (!out_native || self.shared)
            .then(|| mirrored(&x, out))
            .transpose()?;
        let in_type = in_type.data_type;
        // Each retry removes its cause: a copied input has whole, positive strides and
        // its own memory, and a mirrored temporary is dense and runs in the input's
        // directions.
        for _ in 0..6 {
            let into = target.as_ref().unwrap_or(out);
            let in_view = View::of(&x, x.dtype().itemsize());
            let plan = match Plan::new(&in_view, &View::of(into, into.dtype().itemsize())) {
                Ok(plan) => plan,
                Err(Unfit::Input) => {
                    x = call(&x, "copy", ("K",))?;
                    continue;
                }
                Err(Unfit::Output) => {
                    target = Some(mirrored(&x, out)?);
                    continue;
                }
            };
            let in_place = matches!(op, Op::Sign(_));
            if plan.memory == Memory::Overlapping || (plan.memory == Memory::Same && !in_place) {
                x = call(&x, "copy", ("K",))?;
                continue;
            }
            match options.target {
                Target::Cpu => {
                    let compiled = compiled(op, &plan, (in_type, out_type), options)?;
                    execute(py, &compiled, &plan)?;
                }
                Target::Gpu if target.is_none() && !gpu::dense_output(&plan) => {
                    target = Some(mirrored(&x, out)?);
                    continue;
                }
                Target::Gpu if gpu::sparse_input(&plan) => {
                    x = call(&x, "copy", ("K",))?;
                    continue;
                }
                Target::Gpu => {
                    let (desc, policy) = validated(op, &plan, (in_type, out_type), options.level)?;
                    // SAFETY: the plan's spans are the arrays' memory, disjoint or the
                    // same, and the output span is dense (checked above).
                    unsafe { gpu::execute(py, &desc, policy, &plan)? };
                }
            }
            if let Some(target) = target {
                py.import("numpy")?.call_method1("copyto", (out, target))?;
            }
            return Ok(());
        }
        Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
            "{}: no layout found for x of shape {} and strides {}, out of shape {} and strides {}",
            self.function,
            shape(x.shape()),
            shape(x.strides()),
            shape(out.shape()),
            shape(out.strides())
        )))
    }
}

/// What [`each_piece`] calls on each piece: the input's, then the output's.
type PieceFn<'f, 'py> =
    dyn FnMut(&Bound<'py, PyUntypedArray>, &Bound<'py, PyUntypedArray>) -> PyResult<()> + 'f;

/// Calls `f` on pieces of `x` and `out` (of one shape) that together cover every
/// element once, in index order along each cut axis: each piece has at most
/// [`AXIS_LIMIT`] elements along every axis and spans at most `limit` bytes in both
/// arrays together, unless it is one element. The axis cut first is the one whose
/// steps are widest in memory, so that pieces are blocks of rows.
fn each_piece<'py>(
    x: &Bound<'py, PyUntypedArray>,
    out: &Bound<'py, PyUntypedArray>,
    limit: usize,
    f: &mut PieceFn<'_, 'py>,
) -> PyResult<()> {
    let (xv, ov) = (
        View::of(x, x.dtype().itemsize()),
        View::of(out, out.dtype().itemsize()),
    );
    let bytes = xv.span().saturating_add(ov.span());
    let step = |k: usize| xv.strides[k].unsigned_abs() + ov.strides[k].unsigned_abs();
    let axis = match ov.shape.iter().position(|&size| size > AXIS_LIMIT) {
        Some(axis) => axis,
        None if bytes <= limit => return f(x, out),
        None => match (0..ov.shape.len())
            .filter(|&k| ov.shape[k] > 1)
            .max_by_key(|&k| (step(k), ov.shape[k]))
        {
            Some(axis) => axis,
            None => return f(x, out),
        },
    };
    let size = ov.shape[axis];
    let rows = (limit / step(axis).max(1))
        .clamp(1, AXIS_LIMIT)
        .min(size.div_ceil(2));
    let py = x.py();
    let mut start = 0;
    while start < size {
        let end = (start + rows).min(size);
        let index = PyTuple::new(
            py,
            (0..ov.shape.len()).map(|k| match k == axis {
                true => PySlice::new(py, start as isize, end as isize, 1),
                false => PySlice::full(py),
            }),
        )?;
        let part = |a: &Bound<'py, PyUntypedArray>| -> PyResult<Bound<'py, PyUntypedArray>> {
            Ok(a.get_item(&index)?.cast_into::<PyUntypedArray>()?)
        };
        each_piece(&part(x)?, &part(out)?, limit, f)?;
        start = end;
    }
    Ok(())
}

fn call<'py, A: pyo3::call::PyCallArgs<'py>>(
    x: &Bound<'py, PyUntypedArray>,
    method: &str,
    args: A,
) -> PyResult<Bound<'py, PyUntypedArray>> {
    Ok(x.call_method1(method, args)?
        .cast_into::<PyUntypedArray>()?)
}

/// A shape or strides as Python prints a tuple: `(5,)`, `(2, 3)`.
fn shape<T: std::fmt::Display>(values: &[T]) -> String {
    match values {
        [one] => format!("({one},)"),
        _ => {
            let parts: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            format!("({})", parts.join(", "))
        }
    }
}

/// `x` as a numpy array: itself, or `numpy.asarray(x)`. Masked arrays and matrices are
/// refused ([`refused_subclass`]).
fn as_array<'py>(x: &Bound<'py, PyAny>, function: &str) -> PyResult<Bound<'py, PyUntypedArray>> {
    if let Ok(array) = x.cast::<PyUntypedArray>() {
        refused_subclass(array, "x", function)?;
        return Ok(array.clone());
    }
    let array = x.py().import("numpy")?.call_method1("asarray", (x,))?;
    Ok(array.cast_into::<PyUntypedArray>()?)
}

/// The input's type, if the operator takes it; `TypeError` naming the accepted ones.
fn input_type(x: &Bound<'_, PyUntypedArray>, op: Op, function: &str) -> PyResult<Recognised> {
    accepted_type(&x.dtype(), op, function)
}

/// `descr` as the operator's input type, if it takes it; `TypeError` naming the
/// accepted ones.
fn accepted_type(descr: &Bound<'_, PyArrayDescr>, op: Op, function: &str) -> PyResult<Recognised> {
    let accepted = OperatorSupport::of(op.operator()).extended.input_types;
    match dtypes::recognise(descr)? {
        Some(t) if accepted.contains(&t.data_type) => Ok(t),
        _ => Err(PyTypeError::new_err(format!(
            "{}: unsupported dtype {} (accepted: {})",
            function,
            descr.str()?,
            dtypes::numpy_names(accepted)
        ))),
    }
}

/// The checks a call on one block of `dtype` and shape `block` would make before
/// computing: the input type, and under a feature level DirectML's validation of the
/// block as a packed tensor (`TypeError`, `ValidationError`).
pub(crate) fn check_block(
    dtype: &Bound<'_, PyAny>,
    block: &[usize],
    op: Op,
    out_type: Option<DataType>,
    options: Options,
    function: &str,
) -> PyResult<()> {
    let descr = PyArrayDescr::new(dtype.py(), dtype)?;
    let in_type = accepted_type(&descr, op, function)?.data_type;
    let out_type = match op {
        Op::Sign(_) => in_type,
        Op::IsInfinity(_) => out_type.unwrap_or(DataType::Uint8),
    };
    validate_packed(op, (in_type, out_type), block, options.level)
}

/// Under a feature level, DirectML's validation of packed tensors of `shape` (axes over
/// `u32::MAX` counted as `u32::MAX`, as the pieces of a call are no larger).
fn validate_packed(
    op: Op,
    (in_type, out_type): (DataType, DataType),
    shape: &[usize],
    level: Option<FeatureLevel>,
) -> PyResult<()> {
    let Some(level) = level else {
        return Ok(());
    };
    let sizes: Dims<u32> = shape
        .iter()
        .map(|&s| u32::try_from(s).unwrap_or(u32::MAX))
        .collect();
    let input = ewise_cpu::TensorDesc::new(in_type, &sizes);
    let output = ewise_cpu::TensorDesc::new(out_type, &sizes);
    let desc = match op {
        Op::Sign(_) => OperatorDesc::sign(input, output),
        Op::IsInfinity(mode) => OperatorDesc::is_infinity(input, output, mode),
    };
    ewise_cpu::validate(&desc, level, Extensions::Disabled).map_err(validation)
}

/// Checks a caller's `out=`: a writable ndarray of `out_type` whose shape `x` broadcasts
/// to, and not a masked array or a matrix.
fn checked_out<'py>(
    out: &Bound<'py, PyAny>,
    x: &Bound<'py, PyUntypedArray>,
    out_type: DataType,
    function: &str,
) -> PyResult<Bound<'py, PyUntypedArray>> {
    let Ok(array) = out.cast::<PyUntypedArray>() else {
        return Err(PyValueError::new_err(format!(
            "{function}: out must be a numpy.ndarray, not {}",
            out.get_type().name()?
        )));
    };
    // SAFETY: `array` is a live numpy array.
    let writeable = unsafe {
        (*npyffi::_PyArray_GET_ITEM_DATA(array.as_array_ptr())).flags & npyffi::NPY_ARRAY_WRITEABLE
            != 0
    };
    if !writeable {
        return Err(PyValueError::new_err(format!(
            "{function}: out is read-only"
        )));
    }
    let recognised = dtypes::recognise(&array.dtype())?;
    if recognised.is_none_or(|r| r.data_type != out_type) {
        return Err(PyValueError::new_err(format!(
            "{function}: out has dtype {}, expected {}",
            array.dtype().str()?,
            numpy_name(out_type)
        )));
    };
    refused_subclass(array, "out", function)?;
    if View::of(x, 1).broadcast_to(array.shape()).is_none() {
        return Err(PyValueError::new_err(format!(
            "{function}: x of shape {} does not broadcast to out's shape {}",
            shape(x.shape()),
            shape(array.shape())
        )));
    }
    Ok(array.clone())
}

/// `TypeError` for the ndarray subclasses whose meaning ewise would lose: masked arrays
/// (the mask would be dropped and masked elements computed) and matrices (the result
/// would be a plain array). Other subclasses (`numpy.memmap`, ...) are read and written
/// as the ndarrays they are.
fn refused_subclass(array: &Bound<'_, PyUntypedArray>, role: &str, function: &str) -> PyResult<()> {
    // SAFETY: `array` is a live numpy array.
    let exact = unsafe { npyffi::PyArray_CheckExact(array.py(), array.as_ptr()) } != 0;
    if exact {
        return Ok(());
    }
    for class in array.get_type().mro().iter() {
        let module: String = class.getattr("__module__")?.extract().unwrap_or_default();
        let name: String = class.getattr("__name__")?.extract().unwrap_or_default();
        let why = match (module.as_str(), name.as_str()) {
            (m, "MaskedArray") if m.starts_with("numpy.ma") => {
                "a masked array: ewise has no masks, so the mask would be dropped; pass x.filled(value) or numpy.ma.getdata(x) and apply the mask to the result"
            }
            (m, "matrix") if m.starts_with("numpy") => {
                "a numpy.matrix: ewise returns plain arrays; pass numpy.asarray(x)"
            }
            _ => continue,
        };
        return Err(PyTypeError::new_err(format!("{function}: {role} is {why}")));
    }
    Ok(())
}

/// A new array shaped like `x`, with `descr`, in `x`'s memory order and direction: axes
/// that `x` walks backwards are walked backwards in the result too, so the pair maps
/// to ewise strides without a copy.
fn new_like<'py>(
    x: &Bound<'py, PyUntypedArray>,
    descr: &Bound<'py, PyArrayDescr>,
) -> PyResult<Bound<'py, PyUntypedArray>> {
    let py = x.py();
    // SAFETY: NewLikeArray takes a live array and steals the descriptor reference that
    // `into_dtype_ptr` hands over; it returns a new reference or NULL with an exception.
    let array = unsafe {
        let ptr = PY_ARRAY_API.PyArray_NewLikeArray(
            py,
            x.as_array_ptr(),
            NPY_ORDER::NPY_KEEPORDER,
            descr.clone().into_dtype_ptr(),
            0,
        );
        Bound::from_owned_ptr_or_err(py, ptr)?
    };
    let array = array.cast_into::<PyUntypedArray>()?;
    let reversed = |(&size, &stride): (&usize, &isize)| size > 1 && stride < 0;
    if !x.shape().iter().zip(x.strides()).any(reversed) {
        return Ok(array);
    }
    let index: Vec<Bound<'py, PySlice>> = x
        .shape()
        .iter()
        .zip(x.strides())
        .map(|axis| match reversed(axis) {
            true => PySlice::new(py, isize::MAX, isize::MIN, -1),
            false => PySlice::full(py),
        })
        .collect();
    Ok(array
        .get_item(PyTuple::new(py, index)?)?
        .cast_into::<PyUntypedArray>()?)
}

/// A temporary for results that cannot be written straight into `out`: `out`'s shape
/// and type in native byte order, laid out in `x`'s directions.
fn mirrored<'py>(
    x: &Bound<'py, PyUntypedArray>,
    out: &Bound<'py, PyUntypedArray>,
) -> PyResult<Bound<'py, PyUntypedArray>> {
    let py = x.py();
    let numpy = py.import("numpy")?;
    let descr = out.dtype().call_method1("newbyteorder", ("=",))?;
    let shaped = numpy.call_method1("broadcast_to", (x, PyTuple::new(py, out.shape())?))?;
    let shaped = shaped.cast_into::<PyUntypedArray>()?;
    new_like(&shaped, descr.cast::<PyArrayDescr>()?)
}

/// What a compiled operator depends on: equal keys validate and compile alike.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Key {
    op: Op,
    types: (DataType, DataType),
    options: Options,
    sizes: Dims<usize>,
    in_strides: Dims<u32>,
    out_strides: Dims<u32>,
}

thread_local! {
    /// The last operator this thread compiled: calls in a loop over arrays of one shape
    /// and layout validate and compile once.
    static LAST: RefCell<Option<(Key, Rc<CompiledOperator>)>> = const { RefCell::new(None) };
}

/// The compiled operator for a plan, from the thread's last one when it matches.
fn compiled(
    op: Op,
    plan: &Plan,
    types: (DataType, DataType),
    options: Options,
) -> PyResult<Rc<CompiledOperator>> {
    let key = Key {
        op,
        types,
        options,
        sizes: plan.sizes.clone(),
        in_strides: plan.in_strides.clone(),
        out_strides: plan.out_strides.clone(),
    };
    let hit = LAST.with_borrow(|last| match last {
        Some((k, c)) if *k == key => Some(c.clone()),
        _ => None,
    });
    if let Some(c) = hit {
        return Ok(c);
    }
    let c = Rc::new(compile(op, plan, types, options)?);
    LAST.with_borrow_mut(|last| *last = Some((key, c.clone())));
    Ok(c)
}

/// The level and extensions a call validates with.
fn rules(level: Option<FeatureLevel>) -> (FeatureLevel, Extensions) {
    match level {
        Some(level) => (level, Extensions::Disabled),
        None => (FeatureLevel::LATEST, Extensions::Enabled),
    }
}

/// The operator's description for a plan, and its NaN policy.
fn desc(
    op: Op,
    plan: &Plan,
    (in_type, out_type): (DataType, DataType),
) -> (OperatorDesc, NanPolicy) {
    let (input, output) = (plan.input_desc(in_type), plan.output_desc(out_type));
    match op {
        Op::Sign(policy) => (OperatorDesc::sign(input, output), policy),
        Op::IsInfinity(mode) => (
            OperatorDesc::is_infinity(input, output, mode),
            NanPolicy::Zero,
        ),
    }
}

/// The description for a plan, validated with the caller's rules.
fn validated(
    op: Op,
    plan: &Plan,
    types: (DataType, DataType),
    level: Option<FeatureLevel>,
) -> PyResult<(OperatorDesc, NanPolicy)> {
    let (level, extensions) = rules(level);
    let (desc, policy) = desc(op, plan, types);
    ewise_cpu::validate(&desc, level, extensions).map_err(validation)?;
    Ok((desc, policy))
}

/// The compiled operator for a plan: validation with the caller's rules.
fn compile(
    op: Op,
    plan: &Plan,
    types: (DataType, DataType),
    options: Options,
) -> PyResult<CompiledOperator> {
    let (level, extensions) = rules(options.level);
    let (desc, policy) = desc(op, plan, types);
    let device = Device::builder()
        .feature_level(level)
        .extensions(extensions)
        .nan_policy(policy)
        .parallelism(options.parallelism)
        .build()
        .map_err(validation)?;
    device
        .create_operator(&desc)
        .and_then(|operator| operator.compile())
        .map_err(validation)
}

/// A library error as `ewise.ValidationError`, or `MemoryError` for a copy that could
/// not be allocated.
pub(crate) fn validation(e: ewise_cpu::Error) -> PyErr {
    match e {
        ewise_cpu::Error::OutOfMemory { .. } => {
            pyo3::exceptions::PyMemoryError::new_err(e.to_string())
        }
        _ => ValidationError::new_err(e.to_string()),
    }
}

/// Runs `compiled` over the plan's memory, without the GIL when the work is large.
fn execute(py: Python<'_>, compiled: &CompiledOperator, plan: &Plan) -> PyResult<()> {
    let (input, output, memory) = (plan.input, plan.output, plan.memory);
    let work = move || {
        // SAFETY: the plan's spans cover exactly the bytes of the arrays' elements, which
        // the arrays (alive in the caller) own. `Disjoint` spans share no byte, so the
        // two slices do not alias; `Same` uses one slice. Another thread writing these
        // arrays meanwhile gives unspecified results, as in numpy.
        unsafe {
            match memory {
                Memory::Same => compiled.execute_in_place_slice(bytes_mut(output)),
                _ => compiled.execute_slices(bytes(input), bytes_mut(output)),
            }
        }
    };
    let result = if plan.bytes() >= DETACH_BYTES {
        py.detach(work)
    } else {
        work()
    };
    result.map_err(validation)
}

/// # Safety
/// `span` must be readable memory, or empty.
pub(crate) unsafe fn bytes<'a>(span: crate::layout::Span) -> &'a [u8] {
    match span.len {
        0 => &[],
        // SAFETY: by the caller.
        len => unsafe { std::slice::from_raw_parts(span.base as *const u8, len) },
    }
}

/// # Safety
/// `span` must be writable memory that nothing else references, or empty.
pub(crate) unsafe fn bytes_mut<'a>(span: crate::layout::Span) -> &'a mut [u8] {
    match span.len {
        0 => &mut [],
        // SAFETY: by the caller.
        len => unsafe { std::slice::from_raw_parts_mut(span.base as *mut u8, len) },
    }
}
