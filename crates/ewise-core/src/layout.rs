//! Layout simplification shared by every backend: the walk over a pair of same-shaped
//! strided tensors, reduced to as few dimensions as possible.
//!
//! Dimensions of size 1 are dropped, the rest are ordered so the output's smallest
//! stride is innermost (ties: the input's smallest stride innermost), and neighbours that
//! are contiguous in both tensors are merged. A packed pair becomes one run; a broadcast
//! input keeps a stride of 0.

use crate::error::{Error, Result};
use crate::operator::{OperatorDesc, OperatorType, TensorRole};
use crate::support::OperatorSupport;
use crate::tensor::TensorDesc;
use crate::FeatureLevel;

/// The layouts of a validated operator's two tensors, as every backend compiles them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layouts {
    /// The input's strides in elements (packed row-major ones when none are given).
    pub in_strides: Vec<u64>,
    /// The output's strides in elements.
    pub out_strides: Vec<u64>,
    /// Whether every element sits at the same bytes in both tensors (same data type and
    /// strides wherever a size exceeds 1): in-place execution needs no copy then.
    pub same_layout: bool,
    /// The simplified walk ([`simplify`]).
    pub walk: Vec<Dim>,
}

impl Layouts {
    /// The layouts of `desc`'s tensors; `TensorTooLarge` when strides cannot be formed.
    pub fn of(desc: &OperatorDesc) -> Result<Layouts> {
        let operator = desc.operator_type();
        let strides = |tensor: TensorRole| {
            let t = desc.tensor(tensor);
            t.effective_strides()
                .ok_or_else(|| too_large(operator, tensor, t))
        };
        let (in_strides, out_strides) = (strides(TensorRole::Input)?, strides(TensorRole::Output)?);
        let (input, output) = (desc.input(), desc.output());
        let same_layout = input.data_type == output.data_type
            && input
                .sizes
                .iter()
                .zip(in_strides.iter().zip(&out_strides))
                .all(|(&size, (a, b))| size <= 1 || a == b);
        let walk = simplify(&input.sizes, &in_strides, &out_strides);
        Ok(Layouts {
            in_strides,
            out_strides,
            same_layout,
            walk,
        })
    }
}

/// `TensorTooLarge` for `tensor` of `operator`.
pub fn too_large(operator: OperatorType, tensor: TensorRole, t: &TensorDesc) -> Error {
    Error::TensorTooLarge {
        operator,
        tensor,
        sizes: t.sizes.clone(),
        data_type: t.data_type,
    }
}

/// The error a backend gives when it has no kernel for an operator's input type (which
/// validation lets through only for types outside every support table).
pub fn no_kernel(operator: OperatorType, given: crate::DataType) -> Error {
    Error::UnsupportedDataType {
        operator,
        tensor: TensorRole::Input,
        given,
        level: FeatureLevel::LATEST,
        extensions: true,
        supported: OperatorSupport::of(operator).extended.input_types,
    }
}

/// One dimension of a walk: a size and a stride (in elements) in each tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dim {
    /// Number of indices along the dimension.
    pub size: u64,
    /// Input elements between neighbours (0 for a broadcast input).
    pub in_stride: u64,
    /// Output elements between neighbours.
    pub out_stride: u64,
}

impl Dim {
    /// A dimension of `size` indices with these strides.
    pub const fn new(size: u64, in_stride: u64, out_stride: u64) -> Dim {
        Dim {
            size,
            in_stride,
            out_stride,
        }
    }
}

/// The simplified walk over tensors of these sizes and strides (in elements), outermost
/// dimension first; never empty. A tensor with a size of 0 gives one dimension of size 0;
/// a scalar (or all sizes 1) gives one dimension of size 1.
pub fn simplify(sizes: &[u32], in_strides: &[u64], out_strides: &[u64]) -> Vec<Dim> {
    if sizes.contains(&0) {
        return vec![Dim::new(0, 1, 1)];
    }
    let mut dims: Vec<Dim> = sizes
        .iter()
        .zip(in_strides.iter().zip(out_strides))
        .filter(|(&size, _)| size != 1)
        .map(|(&size, (&in_stride, &out_stride))| Dim::new(size.into(), in_stride, out_stride))
        .collect();
    dims.sort_by(|a, b| {
        b.out_stride
            .cmp(&a.out_stride)
            .then(b.in_stride.cmp(&a.in_stride))
    });
    let mut merged: Vec<Dim> = Vec::with_capacity(dims.len().max(1));
    for d in dims {
        match merged.last_mut() {
            Some(outer)
                if outer.in_stride == d.in_stride * d.size
                    && outer.out_stride == d.out_stride * d.size =>
            {
                outer.size *= d.size;
                outer.in_stride = d.in_stride;
                outer.out_stride = d.out_stride;
            }
            _ => merged.push(d),
        }
    }
    if merged.is_empty() {
        merged.push(Dim::new(1, 1, 1));
    }
    merged
}

/// Elements of an output layout that [`output_overlaps`] checks one by one, at most,
/// when its strides do not nest.
pub const OVERLAP_CHECK_ELEMENTS: u64 = 1 << 20;

/// Whether two elements of an output layout (sizes and strides in elements) may share
/// an address. Strides that nest (ordered by size, each stride at least the extent of
/// all smaller ones) never overlap; other layouts of at most
/// [`OVERLAP_CHECK_ELEMENTS`] elements are checked element by element, and larger ones
/// count as overlapping.
pub fn output_overlaps(sizes: &[u32], strides: &[u64]) -> bool {
    let mut dims: Vec<(u64, u64)> = sizes
        .iter()
        .zip(strides)
        .filter(|(&size, _)| size > 1)
        .map(|(&size, &stride)| (u64::from(size), stride))
        .collect();
    if sizes.contains(&0) || dims.is_empty() {
        return false;
    }
    dims.sort_by_key(|&(_, stride)| stride);
    let mut extent = 0u128;
    let nested = dims.iter().all(|&(size, stride)| {
        let ok = u128::from(stride) > extent;
        extent += u128::from(size - 1) * u128::from(stride);
        ok
    });
    if nested {
        return false;
    }
    let count = dims
        .iter()
        .fold(1u64, |acc, &(size, _)| acc.saturating_mul(size));
    if count > OVERLAP_CHECK_ELEMENTS {
        return true;
    }
    let mut offsets = vec![0u64];
    for &(size, stride) in &dims {
        offsets = offsets
            .iter()
            .flat_map(|&o| (0..size).map(move |i| o + i * stride))
            .collect();
    }
    offsets.sort_unstable();
    offsets.windows(2).any(|w| w[0] == w[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(size: u64, in_stride: u64, out_stride: u64) -> Dim {
        Dim::new(size, in_stride, out_stride)
    }

    #[test]
    fn packed_merges_to_one_run() {
        assert_eq!(
            simplify(&[2, 3, 4], &[12, 4, 1], &[12, 4, 1]),
            [d(24, 1, 1)]
        );
    }

    #[test]
    fn size_one_dims_vanish_and_scalars_are_one_run() {
        assert_eq!(simplify(&[1, 5, 1], &[99, 1, 7], &[5, 1, 1]), [d(5, 1, 1)]);
        assert_eq!(simplify(&[], &[], &[]), [d(1, 1, 1)]);
        assert_eq!(simplify(&[3, 0], &[1, 1], &[1, 1]), [d(0, 1, 1)]);
    }

    #[test]
    fn transposed_input_orders_by_output() {
        // Input is the transpose of a 3x4 array: sizes [4, 3], strides [1, 4].
        assert_eq!(
            simplify(&[4, 3], &[1, 4], &[3, 1]),
            [d(4, 1, 3), d(3, 4, 1)]
        );
        // Output written column-major: the output's unit stride goes innermost.
        assert_eq!(
            simplify(&[4, 3], &[3, 1], &[1, 4]),
            [d(3, 1, 4), d(4, 3, 1)]
        );
    }

    #[test]
    fn broadcast_and_padding_merge_where_possible() {
        assert_eq!(simplify(&[2, 3, 4], &[0, 0, 0], &[12, 4, 1]), [d(24, 0, 1)]);
        assert_eq!(
            simplify(&[2, 3], &[8, 1], &[3, 1]),
            [d(2, 8, 3), d(3, 1, 1)]
        );
    }

    #[test]
    fn overlapping_outputs_are_found() {
        assert!(!output_overlaps(&[2, 3], &[3, 1]));
        assert!(!output_overlaps(&[2, 3], &[1, 2]));
        assert!(!output_overlaps(&[5, 1], &[1, 0]));
        assert!(!output_overlaps(&[0, 4], &[1, 1]));
        // Not nested, yet disjoint: offsets 0 2 4 3 5 7.
        assert!(!output_overlaps(&[2, 3], &[3, 2]));
        assert!(output_overlaps(&[2, 2], &[1, 1]));
        assert!(output_overlaps(&[3, 2], &[1, 2]));
        assert!(output_overlaps(&[2, 4], &[0, 1]));
        assert!(output_overlaps(&[1 << 11, 1 << 11], &[3, 2]));
    }
}
