//! Buffer tensor descriptions (`DML_BUFFER_TENSOR_DESC`) and DirectML's buffer-size rule.

use std::fmt;

use crate::dtype::DataType;

/// `DML_TENSOR_FLAGS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TensorFlags(pub u32);

impl TensorFlags {
    /// `DML_TENSOR_FLAG_NONE`.
    pub const NONE: TensorFlags = TensorFlags(0);
    /// `DML_TENSOR_FLAG_OWNED_BY_DML`: the data is bound at initialization, not execution.
    pub const OWNED_BY_DML: TensorFlags = TensorFlags(1);

    /// True when every bit of `other` is set here.
    pub const fn contains(self, other: TensorFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl fmt::Display for TensorFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            0 => f.write_str("NONE"),
            1 => f.write_str("OWNED_BY_DML"),
            v => write!(f, "0x{v:x}"),
        }
    }
}

/// `DML_BUFFER_TENSOR_DESC`: how a tensor lies in a buffer.
///
/// Fields are public as in DirectML; nothing is checked until an operator is created
/// from the description. [`TensorDesc::new`] and [`TensorDesc::strided`] fill
/// `total_tensor_size_in_bytes` with the minimum that [`calc_buffer_tensor_size`] gives.
///
/// The first step of the DirectML-style path: describe each tensor, then the operator
/// ([`OperatorDesc`](crate::OperatorDesc)); a backend's device (`ewise::Device`, whose
/// page shows the whole path: create, compile, bind, execute, read back) validates
/// them against its feature level, as [`validate`](crate::validate()) does here.
///
/// ```
/// use ewise_core::{validate, DataType, Extensions, FeatureLevel, OperatorDesc, TensorDesc};
///
/// // 2 x 3 float16, packed: 12 bytes, rounded up to a multiple of 4 as DirectML does.
/// let packed = TensorDesc::new(DataType::Float16, &[2, 3]);
/// assert_eq!(packed.total_tensor_size_in_bytes, 12);
/// // Its transpose as a view of the same bytes: sizes 3 x 2, strides in elements.
/// let transposed = TensorDesc::strided(DataType::Float16, &[3, 2], &[1, 3]);
/// assert_eq!(transposed.total_tensor_size_in_bytes, 12);
///
/// let desc = OperatorDesc::sign(transposed, TensorDesc::new(DataType::Float16, &[3, 2]));
/// validate(&desc, FeatureLevel::L6_4, Extensions::Disabled).unwrap();
/// // DirectML 2_1 takes 4-D tensors only; the error says which field and what is accepted.
/// let err = validate(&desc, FeatureLevel::L2_1, Extensions::Disabled).unwrap_err();
/// assert!(err.to_string().contains("DimensionCount 2 is not supported"), "{err}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TensorDesc {
    /// Element type.
    pub data_type: DataType,
    /// `DML_TENSOR_FLAGS`.
    pub flags: TensorFlags,
    /// Size of each dimension; the dimension count is `sizes.len()`.
    pub sizes: Vec<u32>,
    /// Distance in elements (not bytes) between neighbours along each dimension;
    /// `None` means packed row-major (last dimension contiguous). A stride of 0
    /// broadcasts an input along that dimension.
    pub strides: Option<Vec<u32>>,
    /// Bytes the tensor spans in its buffer; at least [`TensorDesc::min_size_in_bytes`].
    pub total_tensor_size_in_bytes: u64,
    /// 0 (none), or a power of two no smaller than the element size that every binding
    /// offset of this tensor is promised to be a multiple of.
    pub guaranteed_base_offset_alignment: u32,
}

impl TensorDesc {
    /// A packed row-major tensor with the minimum total size.
    pub fn new(data_type: DataType, sizes: &[u32]) -> TensorDesc {
        let total = calc_buffer_tensor_size(data_type, sizes, None).unwrap_or(0);
        TensorDesc {
            data_type,
            flags: TensorFlags::NONE,
            sizes: sizes.to_vec(),
            strides: None,
            total_tensor_size_in_bytes: total,
            guaranteed_base_offset_alignment: 0,
        }
    }

    /// A strided tensor (strides in elements) with the minimum total size.
    pub fn strided(data_type: DataType, sizes: &[u32], strides: &[u32]) -> TensorDesc {
        let total = calc_buffer_tensor_size(data_type, sizes, Some(strides)).unwrap_or(0);
        TensorDesc {
            data_type,
            flags: TensorFlags::NONE,
            sizes: sizes.to_vec(),
            strides: Some(strides.to_vec()),
            total_tensor_size_in_bytes: total,
            guaranteed_base_offset_alignment: 0,
        }
    }

    /// This description with another total size in bytes.
    pub fn with_total_size(mut self, bytes: u64) -> TensorDesc {
        self.total_tensor_size_in_bytes = bytes;
        self
    }

    /// This description with a guaranteed base offset alignment.
    pub fn with_alignment(mut self, alignment: u32) -> TensorDesc {
        self.guaranteed_base_offset_alignment = alignment;
        self
    }

    /// This description with other flags.
    pub fn with_flags(mut self, flags: TensorFlags) -> TensorDesc {
        self.flags = flags;
        self
    }

    /// Number of dimensions.
    pub fn dimension_count(&self) -> usize {
        self.sizes.len()
    }

    /// Number of elements (the product of the sizes; 1 for zero dimensions), or `None`
    /// if it does not fit in a `u64`.
    pub fn element_count(&self) -> Option<u64> {
        if self.sizes.contains(&0) {
            return Some(0);
        }
        self.sizes
            .iter()
            .try_fold(1u64, |acc, &s| acc.checked_mul(u64::from(s)))
    }

    /// The strides in elements, packed row-major ones when none are given. `None` when
    /// packed strides overflow a `u64` or the given strides have the wrong count.
    pub fn effective_strides(&self) -> Option<Vec<u64>> {
        match &self.strides {
            Some(s) if s.len() == self.sizes.len() => Some(s.iter().map(|&v| v.into()).collect()),
            Some(_) => None,
            None if self.sizes.contains(&0) => Some(saturating_packed_strides(&self.sizes)),
            None => packed_strides(&self.sizes),
        }
    }

    /// The bytes from the tensor's base to the end of its last element, without
    /// DirectML's rounding to 4: what a caller must really provide. 0 for empty tensors;
    /// `None` on overflow, for types without a byte size, or a wrong stride count.
    pub fn exact_span_in_bytes(&self) -> Option<u64> {
        let size = self.data_type.size_in_bytes()?;
        if self.element_count()? == 0 {
            return Some(0);
        }
        let strides = self.effective_strides()?;
        let last = self
            .sizes
            .iter()
            .zip(&strides)
            .try_fold(0u64, |acc, (&n, &s)| {
                acc.checked_add(u64::from(n - 1).checked_mul(s)?)
            })?;
        last.checked_add(1)?.checked_mul(size)
    }

    /// The minimum `total_tensor_size_in_bytes` (DirectML's `DMLCalcBufferTensorSize`).
    pub fn min_size_in_bytes(&self) -> Option<u64> {
        calc_buffer_tensor_size(self.data_type, &self.sizes, self.strides.as_deref())
    }
}

/// Packed row-major strides in elements for these sizes; `None` on overflow.
pub fn packed_strides(sizes: &[u32]) -> Option<Vec<u64>> {
    let mut strides = vec![0u64; sizes.len()];
    let mut acc = 1u64;
    for (stride, &size) in strides.iter_mut().zip(sizes).rev() {
        *stride = acc;
        acc = acc.checked_mul(u64::from(size))?;
    }
    Some(strides)
}

/// Packed row-major strides that saturate instead of overflowing: those of an empty
/// tensor, which address no element, so that any sizes beside its zero one have strides.
fn saturating_packed_strides(sizes: &[u32]) -> Vec<u64> {
    let mut strides = vec![0u64; sizes.len()];
    let mut acc = 1u64;
    for (stride, &size) in strides.iter_mut().zip(sizes).rev() {
        *stride = acc;
        acc = acc.saturating_mul(u64::from(size));
    }
    strides
}

/// DirectML's `DMLCalcBufferTensorSize`: the minimum bytes a tensor spans.
///
/// Without strides: element count times element size. With strides: (the sum over
/// dimensions of `(size - 1) * stride`, plus 1) times the element size. Both are rounded
/// up to a multiple of 4. A tensor with a zero size spans 0 bytes. Computed without
/// overflow; `None` when the data type has no byte size (`UNKNOWN`, 4-bit types), when
/// `strides` has a different length from `sizes`, or when the result exceeds `u64`.
pub fn calc_buffer_tensor_size(
    data_type: DataType,
    sizes: &[u32],
    strides: Option<&[u32]>,
) -> Option<u64> {
    let element_size = u128::from(data_type.size_in_bytes()?);
    if sizes.contains(&0) {
        return strides.is_none_or(|s| s.len() == sizes.len()).then_some(0);
    }
    let elements: u128 = match strides {
        None => sizes
            .iter()
            .try_fold(1u128, |acc, &s| acc.checked_mul(u128::from(s)))?,
        Some(strides) => {
            if strides.len() != sizes.len() {
                return None;
            }
            // Each term is below 2^64 and there are at most a few dozen: no overflow.
            let last: u128 = sizes
                .iter()
                .zip(strides)
                .map(|(&size, &stride)| u128::from(size - 1) * u128::from(stride))
                .fold(0u128, u128::saturating_add);
            last.saturating_add(1)
        }
    };
    let bytes = elements.checked_mul(element_size)?;
    let rounded = bytes.checked_add(3)? & !3u128;
    u64::try_from(rounded).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_size_rounds_to_four() {
        assert_eq!(
            calc_buffer_tensor_size(DataType::Float32, &[1, 2, 3, 4], None),
            Some(96)
        );
        assert_eq!(
            calc_buffer_tensor_size(DataType::Uint8, &[1, 1, 1, 5], None),
            Some(8)
        );
        assert_eq!(
            calc_buffer_tensor_size(DataType::Float16, &[3], None),
            Some(8)
        );
        assert_eq!(calc_buffer_tensor_size(DataType::Int8, &[], None), Some(4));
    }

    #[test]
    fn strided_size_uses_last_element() {
        // last index = 1*8 + 2*1 = 10 -> 11 elements * 4 bytes = 44
        assert_eq!(
            calc_buffer_tensor_size(DataType::Float32, &[2, 3], Some(&[8, 1])),
            Some(44)
        );
        // broadcast: every stride 0 -> one element, rounded to 4
        assert_eq!(
            calc_buffer_tensor_size(DataType::Uint16, &[5, 7], Some(&[0, 0])),
            Some(4)
        );
        // transposed 3x2 view of a 2x3 array
        assert_eq!(
            calc_buffer_tensor_size(DataType::Float64, &[3, 2], Some(&[1, 3])),
            Some(48)
        );
    }

    #[test]
    fn odd_cases() {
        assert_eq!(calc_buffer_tensor_size(DataType::Uint4, &[4], None), None);
        assert_eq!(
            calc_buffer_tensor_size(DataType::Float32, &[4], Some(&[1, 1])),
            None
        );
        assert_eq!(
            calc_buffer_tensor_size(DataType::Float32, &[4, 0], None),
            Some(0)
        );
        let huge = [u32::MAX; 8];
        assert_eq!(calc_buffer_tensor_size(DataType::Int64, &huge, None), None);
        assert_eq!(
            calc_buffer_tensor_size(DataType::Int64, &[u32::MAX, u32::MAX], Some(&[u32::MAX, 1])),
            None
        );
        let m = u64::from(u32::MAX);
        assert_eq!(
            calc_buffer_tensor_size(DataType::Int8, &[u32::MAX, u32::MAX], Some(&[u32::MAX, 1])),
            Some(((m - 1) * m + m + 3) & !3)
        );
    }

    #[test]
    fn exact_span_skips_rounding() {
        assert_eq!(
            TensorDesc::new(DataType::Uint8, &[3]).exact_span_in_bytes(),
            Some(3)
        );
        assert_eq!(
            TensorDesc::new(DataType::Uint8, &[3]).min_size_in_bytes(),
            Some(4)
        );
        let t = TensorDesc::strided(DataType::Int16, &[2, 3], &[8, 1]);
        assert_eq!(t.exact_span_in_bytes(), Some(22));
        assert_eq!(
            TensorDesc::new(DataType::Int16, &[2, 0]).exact_span_in_bytes(),
            Some(0)
        );
        assert_eq!(
            TensorDesc::new(DataType::Int16, &[]).exact_span_in_bytes(),
            Some(2)
        );
    }

    #[test]
    fn packed_strides_are_row_major() {
        assert_eq!(packed_strides(&[2, 3, 4]), Some(vec![12, 4, 1]));
        assert_eq!(packed_strides(&[]), Some(vec![]));
    }

    #[test]
    fn empty_tensors_have_strides_whatever_their_other_sizes() {
        let t = TensorDesc::new(DataType::Float32, &[0, u32::MAX, u32::MAX, u32::MAX]);
        assert_eq!(packed_strides(&t.sizes), None);
        let strides = t.effective_strides().expect("an empty tensor has strides");
        assert_eq!(strides[3], 1);
        assert_eq!(strides[0], u64::MAX);
    }
}
