//! numpy layouts as ewise tensor descriptions.
//!
//! numpy describes an array by a data pointer and byte strides of either sign; ewise by a
//! base address and element strides that are never negative. A [`Plan`] maps one onto
//! the other without copying: an axis whose input stride is negative is walked the
//! other way in both arrays (both bases move to that axis' last index, both strides
//! change sign), which visits the same pairs of elements. What cannot be mapped is an
//! [`Unfit`], which the caller resolves with one copy.

use ewise_cpu::{DataType, TensorDesc};
use numpy::{PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use smallvec::SmallVec;

/// Per-axis values, inline up to 8 axes: a call on a small array allocates nothing here.
pub(crate) type Dims<T> = SmallVec<[T; 8]>;

/// An array's memory as numpy describes it.
#[derive(Debug, Clone)]
pub(crate) struct View {
    /// Address of the element at index 0.
    pub data: usize,
    pub shape: Dims<usize>,
    /// Strides in bytes, of either sign.
    pub strides: Dims<isize>,
    /// Bytes per element.
    pub item: usize,
}

impl View {
    /// The view of a numpy array.
    pub fn of(array: &Bound<'_, PyUntypedArray>, item: usize) -> View {
        // SAFETY: `array` is a live numpy array, whose object holds its data pointer.
        let data = unsafe { (*numpy::npyffi::_PyArray_GET_ITEM_DATA(array.as_array_ptr())).data };
        View {
            data: data as usize,
            shape: Dims::from_slice(array.shape()),
            strides: Dims::from_slice(array.strides()),
            item,
        }
    }

    /// Bytes from its lowest to one past its highest element (0 when empty).
    pub fn span(&self) -> usize {
        if self.shape.contains(&0) {
            return 0;
        }
        self.shape
            .iter()
            .zip(&self.strides)
            .map(|(&size, &stride)| (size - 1) * stride.unsigned_abs())
            .sum::<usize>()
            + self.item
    }

    /// The address of its lowest byte.
    fn low(&self) -> usize {
        let back: usize = self
            .shape
            .iter()
            .zip(&self.strides)
            .filter(|(_, &stride)| stride < 0)
            .map(|(&size, &stride)| (size - 1) * stride.unsigned_abs())
            .sum();
        self.data - back
    }

    /// This view broadcast to `shape` by numpy's rules (leading axes added, axes of size
    /// 1 repeated with a stride of 0), or `None` if it does not broadcast to it.
    pub fn broadcast_to(&self, shape: &[usize]) -> Option<View> {
        let extra = shape.len().checked_sub(self.shape.len())?;
        let mut strides: Dims<isize> = smallvec::smallvec![0; shape.len()];
        for (k, (&size, &stride)) in self.shape.iter().zip(&self.strides).enumerate() {
            match shape[extra + k] {
                s if s == size => strides[extra + k] = stride,
                _ if size == 1 => {}
                _ => return None,
            }
        }
        Some(View {
            data: self.data,
            shape: Dims::from_slice(shape),
            strides,
            item: self.item,
        })
    }
}

/// How the input's and output's bytes relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Memory {
    /// No byte in common (or nothing to touch).
    Disjoint,
    /// Every element at the same bytes in both: in-place execution.
    Same,
    /// Some bytes in common, in different places.
    Overlapping,
}

/// How `input`'s and `output`'s bytes relate (views of one shape): `Same` when every
/// element has the same bytes in both.
pub(crate) fn overlap(input: &View, output: &View) -> Memory {
    let (a, b) = ((input.low(), input.span()), (output.low(), output.span()));
    if a.1 == 0 || b.1 == 0 || a.0 + a.1 <= b.0 || b.0 + b.1 <= a.0 {
        Memory::Disjoint
    } else if input.data == output.data
        && input.item == output.item
        && input
            .shape
            .iter()
            .zip(input.strides.iter().zip(&output.strides))
            .all(|(&size, (a, b))| size <= 1 || a == b)
    {
        Memory::Same
    } else {
        Memory::Overlapping
    }
}

/// Whether two elements of `view` may share a byte: `false` proves they do not (each
/// axis, by increasing step, steps past everything the smaller axes span).
pub(crate) fn may_share_elements(view: &View) -> bool {
    let mut axes: Dims<(usize, usize)> = view
        .shape
        .iter()
        .zip(&view.strides)
        .filter(|(&size, _)| size > 1)
        .map(|(&size, &stride)| (stride.unsigned_abs(), size))
        .collect();
    axes.sort_unstable();
    let mut extent = view.item;
    for (step, size) in axes {
        if step < extent {
            return true;
        }
        extent = extent.saturating_add((size - 1).saturating_mul(step));
    }
    false
}

/// One tensor of a plan: its base address and exact span in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub base: usize,
    pub len: usize,
}

impl Span {
    fn end(self) -> usize {
        self.base + self.len
    }
}

/// An input and output pair mapped to ewise descriptions.
///
/// Axes may hold more elements than one ewise tensor dimension (`u32::MAX`): such a plan
/// runs as [`Plan::pieces`], each of which fits.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub sizes: Dims<usize>,
    pub in_strides: Dims<u32>,
    pub out_strides: Dims<u32>,
    pub input: Span,
    pub output: Span,
    pub memory: Memory,
    /// Bytes per input and per output element.
    pub items: (usize, usize),
}

/// Why a pair of views has no plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unfit {
    /// The input's strides are not whole elements, or too far apart: copy the input.
    Input,
    /// The output's strides are not whole elements or too far apart, or run against the
    /// input's along some axis: compute into a temporary and copy it over.
    Output,
}

impl Plan {
    /// The plan for `input` (already broadcast to the output's shape) and `output`.
    pub fn new(input: &View, output: &View) -> Result<Plan, Unfit> {
        let n = output.shape.len();
        let sizes = output.shape.clone();
        if output.shape.contains(&0) {
            return Ok(Plan {
                in_strides: smallvec::smallvec![0; n],
                out_strides: smallvec::smallvec![0; n],
                sizes,
                input: Span { base: 0, len: 0 },
                output: Span { base: 0, len: 0 },
                memory: Memory::Disjoint,
                items: (input.item, output.item),
            });
        }
        let (mut in_base, mut out_base) = (input.data as isize, output.data as isize);
        let (mut in_strides, mut out_strides): (Dims<u32>, Dims<u32>) =
            (smallvec::smallvec![0; n], smallvec::smallvec![0; n]);
        let (mut in_last, mut out_last) = (0usize, 0usize);
        for k in 0..n {
            let size = output.shape[k];
            if size == 1 {
                continue;
            }
            let (mut is, mut os) = (input.strides[k], output.strides[k]);
            if is < 0 || (is == 0 && os < 0) {
                let steps = (size - 1) as isize;
                in_base += steps * is;
                out_base += steps * os;
                (is, os) = (-is, -os);
            }
            if os < 0 {
                return Err(Unfit::Output);
            }
            in_strides[k] = elements(is.unsigned_abs(), input.item).ok_or(Unfit::Input)?;
            out_strides[k] = elements(os.unsigned_abs(), output.item).ok_or(Unfit::Output)?;
            in_last += (size - 1) * is.unsigned_abs();
            out_last += (size - 1) * os.unsigned_abs();
        }
        let input_span = Span {
            base: in_base as usize,
            len: in_last + input.item,
        };
        let output_span = Span {
            base: out_base as usize,
            len: out_last + output.item,
        };
        let memory = if input_span.end() <= output_span.base || output_span.end() <= input_span.base
        {
            Memory::Disjoint
        } else if input_span.base == output_span.base
            && input.item == output.item
            && in_strides == out_strides
        {
            Memory::Same
        } else {
            Memory::Overlapping
        };
        Ok(Plan {
            sizes,
            in_strides,
            out_strides,
            input: input_span,
            output: output_span,
            memory,
            items: (input.item, output.item),
        })
    }

    /// The input's description; the plan's axes must fit one (at most `u32::MAX` each,
    /// as every piece of a call has).
    pub fn input_desc(&self, data_type: DataType) -> TensorDesc {
        desc(data_type, &self.sizes, &self.in_strides)
    }

    /// The output's description; the plan's axes must fit one, as for
    /// [`Plan::input_desc`].
    pub fn output_desc(&self, data_type: DataType) -> TensorDesc {
        desc(data_type, &self.sizes, &self.out_strides)
    }

    /// Number of elements.
    pub fn elements(&self) -> usize {
        self.sizes.iter().product()
    }

    /// Bytes the kernel reads and writes.
    pub fn bytes(&self) -> usize {
        self.input.len + self.output.len
    }
}

/// A stride of `bytes` in elements of `item` bytes, if whole and small enough.
fn elements(bytes: usize, item: usize) -> Option<u32> {
    if !bytes.is_multiple_of(item) {
        return None;
    }
    u32::try_from(bytes / item).ok()
}

/// A description without strides when these are packed row-major ones (what DirectML
/// callers write for packed tensors), with them otherwise.
fn desc(data_type: DataType, sizes: &[usize], strides: &[u32]) -> TensorDesc {
    debug_assert!(sizes.iter().all(|&s| u32::try_from(s).is_ok()));
    let sizes: Dims<u32> = sizes
        .iter()
        .map(|&s| u32::try_from(s).unwrap_or(u32::MAX))
        .collect();
    let sizes = &sizes[..];
    let mut packed = true;
    let mut expected = 1u64;
    for (&size, &stride) in sizes.iter().zip(strides).rev() {
        if size > 1 && u64::from(stride) != expected {
            packed = false;
            break;
        }
        expected *= u64::from(size);
    }
    if packed || sizes.contains(&0) {
        TensorDesc::new(data_type, sizes)
    } else {
        TensorDesc::strided(data_type, sizes, strides)
    }
}
