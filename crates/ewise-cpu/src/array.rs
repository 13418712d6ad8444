//! The simple array API: typed slices and strided views, through the same kernels and
//! layout walker as the DirectML-style path, with the ewise extensions enabled (any
//! rank, FLOAT64, BFLOAT16, empty tensors).

use ewise_core::layout::no_kernel;
use ewise_core::{
    DataType, Element, Error, InfinityMode, NanPolicy, OperatorDesc, OperatorType, Result,
    TensorDesc, TensorRole,
};
use half::{bf16, f16};

use crate::device::CompiledOperator;
use crate::kernels;
use crate::parallel::{
    thread_pieces, Parallelism, MEDIUM_THRESHOLD_BYTES, PARALLEL_THRESHOLD_BYTES,
};

mod sealed {
    pub trait Sealed {}
}

/// Element types SIGN accepts: `f32`, `f64`, `f16`, `bf16` and the 8- to 64-bit integers.
pub trait SignElement: Element + sealed::Sealed {}

/// Element types IS_INFINITY accepts: `f32`, `f64`, `f16`, `bf16`.
pub trait FloatElement: Element + sealed::Sealed {}

macro_rules! impl_elements {
    (sign: $($s:ty),*; float: $($f:ty),*) => {
        $(impl sealed::Sealed for $s {} impl SignElement for $s {})*
        $(impl FloatElement for $f {})*
    };
}
impl_elements!(sign: f32, f64, f16, bf16, i8, i16, i32, i64, u8, u16, u32, u64;
               float: f32, f64, f16, bf16);

fn length_check(operator: OperatorType, given: usize, required: usize) -> Result<()> {
    if given == required {
        Ok(())
    } else {
        Err(Error::SliceLength {
            operator,
            tensor: TensorRole::Output,
            given,
            required: required as u64,
        })
    }
}

/// Writes SIGN of each element of `input` to `output` (same length).
///
/// ```
/// use ewise_cpu::{array, NanPolicy};
/// let input = [-2.5f32, -0.0, f32::NAN, 7.0];
/// let mut out = [0f32; 4];
/// array::sign(&input, &mut out, NanPolicy::Zero).unwrap();
/// assert_eq!(out.map(f32::to_bits), [(-1f32).to_bits(), 0, 0, 1f32.to_bits()]);
/// ```
pub fn sign<T: SignElement>(input: &[T], output: &mut [T], policy: NanPolicy) -> Result<()> {
    length_check(OperatorType::ElementWiseSign, output.len(), input.len())?;
    sign_bytes(
        T::DATA_TYPE,
        bytemuck::cast_slice(input),
        bytemuck::cast_slice_mut(output),
        policy,
    )
}

/// Replaces each element of `data` by its SIGN.
pub fn sign_in_place<T: SignElement>(data: &mut [T], policy: NanPolicy) {
    let done = sign_bytes_in_place(T::DATA_TYPE, bytemuck::cast_slice_mut(data), policy);
    debug_assert!(
        done.is_ok(),
        "a 1-D SIGN of a whole slice always runs: {done:?}"
    );
}

/// Writes 1 to `output` where `input` holds an infinity that `mode` detects, else 0.
pub fn is_infinity<T: FloatElement>(
    input: &[T],
    mode: InfinityMode,
    output: &mut [u8],
) -> Result<()> {
    length_check(
        OperatorType::ElementWiseIsInfinity,
        output.len(),
        input.len(),
    )?;
    is_infinity_bytes(T::DATA_TYPE, mode, bytemuck::cast_slice(input), output)
}

/// [`sign`] over bytes holding elements of a type known at run time (any alignment):
/// `output` holds as many bytes as `input`, a whole number of elements. A type without
/// a SIGN kernel is [`Error::UnsupportedDataType`]; a length that is not a whole number
/// of elements, or differs between the slices, is [`Error::SliceLength`].
pub fn sign_bytes(
    data_type: DataType,
    input: &[u8],
    output: &mut [u8],
    policy: NanPolicy,
) -> Result<()> {
    let operator = OperatorType::ElementWiseSign;
    let k = kernels::sign(data_type, policy).ok_or_else(|| no_kernel(operator, data_type))?;
    let len = elements(operator, TensorRole::Input, input.len(), k.in_size)?;
    let out_len = elements(operator, TensorRole::Output, output.len(), k.out_size)?;
    length_check(operator, out_len, len)?;
    let size = k.in_size;
    if is_small(len, k.in_size + k.out_size) {
        on_awake_helpers(len, 2 * size, size, output, |r, out| {
            (k.map)(&input[r.start * size..r.end * size], out)
        });
        return Ok(());
    }
    let desc = |n| {
        let t = TensorDesc::new(data_type, &[n]);
        OperatorDesc::sign(t.clone(), t)
    };
    in_pieces(len, desc, policy, |op, r| {
        op.execute_slices(
            &input[r.start * size..r.end * size],
            &mut output[r.start * size..r.end * size],
        )
    })
}

/// [`sign_in_place`] over bytes holding elements of a type known at run time (any
/// alignment), with the errors of [`sign_bytes`].
pub fn sign_bytes_in_place(data_type: DataType, data: &mut [u8], policy: NanPolicy) -> Result<()> {
    let operator = OperatorType::ElementWiseSign;
    let k = kernels::sign(data_type, policy).ok_or_else(|| no_kernel(operator, data_type))?;
    let len = elements(operator, TensorRole::Input, data.len(), k.in_size)?;
    let size = k.in_size;
    if let (true, Some(f)) = (is_small(len, 2 * size), k.map_in_place) {
        on_awake_helpers(len, 2 * size, size, data, |_, piece| f(piece));
        return Ok(());
    }
    let desc = |n| {
        let t = TensorDesc::new(data_type, &[n]);
        OperatorDesc::sign(t.clone(), t)
    };
    in_pieces(len, desc, policy, |op, r| {
        op.execute_in_place_slice(&mut data[r.start * size..r.end * size])
    })
}

/// [`is_infinity`] over bytes holding elements of a type known at run time (any
/// alignment), one output byte per element. A type without an IS_INFINITY kernel is
/// [`Error::UnsupportedDataType`]; lengths that do not match are [`Error::SliceLength`].
pub fn is_infinity_bytes(
    data_type: DataType,
    mode: InfinityMode,
    input: &[u8],
    output: &mut [u8],
) -> Result<()> {
    let operator = OperatorType::ElementWiseIsInfinity;
    let k = kernels::is_infinity(data_type, mode).ok_or_else(|| no_kernel(operator, data_type))?;
    let len = elements(operator, TensorRole::Input, input.len(), k.in_size)?;
    length_check(operator, output.len(), len)?;
    let size = k.in_size;
    if is_small(len, size + 1) {
        on_awake_helpers(len, size + 1, 1, output, |r, out| {
            (k.map)(&input[r.start * size..r.end * size], out)
        });
        return Ok(());
    }
    let desc = |n| {
        OperatorDesc::is_infinity(
            TensorDesc::new(data_type, &[n]),
            TensorDesc::new(DataType::Uint8, &[n]),
            mode,
        )
    };
    in_pieces(len, desc, NanPolicy::Zero, |op, r| {
        op.execute_slices(&input[r.start * size..r.end * size], &mut output[r])
    })
}

/// The number of `size`-byte elements in `bytes` bytes, refusing a partial element.
fn elements(
    operator: OperatorType,
    tensor: TensorRole,
    bytes: usize,
    size: usize,
) -> Result<usize> {
    if bytes.is_multiple_of(size) {
        Ok(bytes / size)
    } else {
        Err(Error::PartialElement {
            operator,
            tensor,
            bytes,
            element_size: size,
        })
    }
}

/// True when `len` elements moving `bytes_per_element` stay below the thread threshold
/// that wakes helpers: such slices go straight to the kernel, with no compilation
/// ([`on_awake_helpers`]).
fn is_small(len: usize, bytes_per_element: usize) -> bool {
    (len as u64).saturating_mul(bytes_per_element as u64) < PARALLEL_THRESHOLD_BYTES
}

/// Elements per piece boundary of [`on_awake_helpers`]: a multiple of 64 elements starts
/// every piece's output on a cache line of its own (for outputs aligned to one).
const GRANULE: usize = 64;

/// Runs `piece(range, output bytes of range)` over `len` elements that move
/// `bytes_per_element` each: on the calling thread alone below
/// [`MEDIUM_THRESHOLD_BYTES`]; from there, in as many pieces as there are threads (at
/// least [`crate::MIN_PIECE_BYTES`] each, whole multiples of [`GRANULE`] elements but the
/// last), one on the calling thread and each other on a helper thread that is awake
/// ([`crate::helper`]), never a sleeping one: below [`PARALLEL_THRESHOLD_BYTES`], the
/// only sizes passed here, a wake-up costs more than it saves.
fn on_awake_helpers(
    len: usize,
    bytes_per_element: usize,
    out_size: usize,
    output: &mut [u8],
    piece: impl Fn(std::ops::Range<usize>, &mut [u8]) + Sync,
) {
    let moved = (len as u64).saturating_mul(bytes_per_element as u64);
    let threads = if moved < MEDIUM_THRESHOLD_BYTES {
        1
    } else {
        thread_pieces(Parallelism::Auto.resolve(), moved).min(crate::helper::count() + 1)
    };
    let units = len.div_ceil(GRANULE);
    if threads < 2 || units < 2 {
        piece(0..len, output);
        return;
    }
    let pieces = threads.min(units);
    let per = units.div_ceil(pieces) * GRANULE;
    let parts: Vec<_> = output
        .chunks_mut(per * out_size)
        .enumerate()
        .map(|(k, out)| {
            let start = k * per;
            std::sync::Mutex::new(Some((start..start + out.len() / out_size, out)))
        })
        .collect();
    let job = |k: usize| {
        let taken = parts[k].lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some((range, out)) = taken {
            piece(range, out);
        }
    };
    crate::helper::run(&job, parts.len(), false);
}

/// Runs a large slice through compiled 1-D operators (threads, streaming stores), in
/// pieces of at most `u32::MAX` elements, the most one description holds.
fn in_pieces(
    len: usize,
    desc: impl Fn(u32) -> OperatorDesc,
    policy: NanPolicy,
    mut run: impl FnMut(&CompiledOperator, std::ops::Range<usize>) -> Result<()>,
) -> Result<()> {
    let piece = u32::MAX as usize;
    let mut compiled: Option<(usize, CompiledOperator)> = None;
    for start in (0..len).step_by(piece) {
        let n = piece.min(len - start);
        if compiled.as_ref().is_none_or(|(m, _)| *m != n) {
            let op = CompiledOperator::new(&desc(n as u32), policy, Parallelism::Auto)?;
            compiled = Some((n, op));
        }
        if let Some((_, op)) = &compiled {
            run(op, start..start + n)?;
        }
    }
    Ok(())
}

/// A strided, read-only view of elements: sizes and strides in elements (stride 0
/// broadcasts). `data[0]` is the element at index zero.
#[derive(Debug, Clone)]
pub struct View<'a, T> {
    data: &'a [T],
    sizes: Vec<u32>,
    strides: Option<Vec<u32>>,
}

/// A strided, writable view of elements (no zero strides where the size exceeds 1).
#[derive(Debug)]
pub struct ViewMut<'a, T> {
    data: &'a mut [T],
    sizes: Vec<u32>,
    strides: Option<Vec<u32>>,
}

impl<'a, T: Element> View<'a, T> {
    /// A packed row-major view.
    pub fn new(data: &'a [T], sizes: &[u32]) -> Self {
        View {
            data,
            sizes: sizes.to_vec(),
            strides: None,
        }
    }

    /// A view with explicit strides in elements.
    pub fn strided(data: &'a [T], sizes: &[u32], strides: &[u32]) -> Self {
        View {
            data,
            sizes: sizes.to_vec(),
            strides: Some(strides.to_vec()),
        }
    }

    fn desc(&self, data_type: DataType) -> TensorDesc {
        desc_of(data_type, &self.sizes, self.strides.as_deref())
    }
}

impl<'a, T: Element> ViewMut<'a, T> {
    /// A packed row-major view.
    pub fn new(data: &'a mut [T], sizes: &[u32]) -> Self {
        ViewMut {
            data,
            sizes: sizes.to_vec(),
            strides: None,
        }
    }

    /// A view with explicit strides in elements.
    pub fn strided(data: &'a mut [T], sizes: &[u32], strides: &[u32]) -> Self {
        ViewMut {
            data,
            sizes: sizes.to_vec(),
            strides: Some(strides.to_vec()),
        }
    }

    fn desc(&self, data_type: DataType) -> TensorDesc {
        desc_of(data_type, &self.sizes, self.strides.as_deref())
    }
}

fn desc_of(data_type: DataType, sizes: &[u32], strides: Option<&[u32]>) -> TensorDesc {
    match strides {
        Some(s) => TensorDesc::strided(data_type, sizes, s),
        None => TensorDesc::new(data_type, sizes),
    }
}

fn run_views(
    desc: OperatorDesc,
    policy: NanPolicy,
    input: (&[u8], usize),
    output: (&mut [u8], usize),
) -> Result<()> {
    let operator = desc.operator_type();
    for (tensor, t, len) in [
        (TensorRole::Input, desc.input(), input.1),
        (TensorRole::Output, desc.output(), output.1),
    ] {
        let element = t.data_type.size_in_bytes().unwrap_or(1);
        let need = t.exact_span_in_bytes().unwrap_or(u64::MAX) / element;
        if (len as u64) < need {
            return Err(Error::SliceLength {
                operator,
                tensor,
                given: len,
                required: need,
            });
        }
    }
    ewise_core::validate(
        &desc,
        ewise_core::FeatureLevel::LATEST,
        ewise_core::Extensions::Enabled,
    )?;
    CompiledOperator::new(&desc, policy, Parallelism::Auto)?.execute_slices(input.0, output.0)
}

/// SIGN from a strided view into another of the same sizes.
///
/// ```
/// use ewise_cpu::array::{sign_view, View, ViewMut};
/// use ewise_cpu::NanPolicy;
/// // The transpose of a 2x3 matrix, written packed.
/// let m = [1i32, -2, 0, 4, -5, 6];
/// let mut t = [0i32; 6];
/// sign_view(&View::strided(&m, &[3, 2], &[1, 3]), &mut ViewMut::new(&mut t, &[3, 2]), NanPolicy::Zero).unwrap();
/// assert_eq!(t, [1, 1, -1, -1, 0, 1]);
/// ```
pub fn sign_view<T: SignElement>(
    input: &View<'_, T>,
    output: &mut ViewMut<'_, T>,
    policy: NanPolicy,
) -> Result<()> {
    let desc = OperatorDesc::sign(input.desc(T::DATA_TYPE), output.desc(T::DATA_TYPE));
    let (ilen, olen) = (input.data.len(), output.data.len());
    run_views(
        desc,
        policy,
        (bytemuck::cast_slice(input.data), ilen),
        (bytemuck::cast_slice_mut(output.data), olen),
    )
}

/// IS_INFINITY from a strided view into a `u8` view of the same sizes.
pub fn is_infinity_view<T: FloatElement>(
    input: &View<'_, T>,
    mode: InfinityMode,
    output: &mut ViewMut<'_, u8>,
) -> Result<()> {
    let desc =
        OperatorDesc::is_infinity(input.desc(T::DATA_TYPE), output.desc(DataType::Uint8), mode);
    let (ilen, olen) = (input.data.len(), output.data.len());
    run_views(
        desc,
        NanPolicy::Zero,
        (bytemuck::cast_slice(input.data), ilen),
        (output.data, olen),
    )
}
