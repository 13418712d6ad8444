//! Element-wise kernels over plain slices, and the choice of one per operator.
//!
//! Kernels know nothing of strides or bindings: [`crate::layout`] hands them contiguous
//! runs of bytes. Each kernel is one monomorphized loop per (operator, data type, NaN
//! policy or mode), so the hot loop holds no run-time choices.

mod formats;
mod ops;
mod slice;

use ewise_core::{DataType, InfinityMode, NanPolicy, OperatorDesc};

use formats::{FloatFormat, BF16, F16, F32, F64, F8E5M2};
use ops::{AllFalse, IsInfinity, Map, SignFloat, SignSigned, SignUnsigned};

/// A type-erased kernel: byte slices in, byte slices out.
#[derive(Clone, Copy)]
pub(crate) struct Kernel {
    /// Bytes per input element.
    pub in_size: usize,
    /// Bytes per output element.
    pub out_size: usize,
    /// Maps `n` input elements to `n` output elements (`src.len() / in_size` of them).
    pub map: fn(&[u8], &mut [u8]),
    /// Maps elements in place, where input and output have one type.
    pub map_in_place: Option<fn(&mut [u8])>,
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel")
            .field("in_size", &self.in_size)
            .field("out_size", &self.out_size)
            .field("in_place", &self.map_in_place.is_some())
            .finish()
    }
}

fn plain<M: Map>() -> Kernel {
    Kernel {
        in_size: std::mem::size_of::<M::In>(),
        out_size: std::mem::size_of::<M::Out>(),
        map: slice::map_bytes::<M>,
        map_in_place: None,
    }
}

fn in_place<M: Map<Out = <M as Map>::In>>() -> Kernel {
    Kernel {
        map_in_place: Some(slice::map_bytes_in_place::<M>),
        ..plain::<M>()
    }
}

fn sign_float<F: FloatFormat>(policy: NanPolicy) -> Kernel {
    match policy {
        NanPolicy::Zero => in_place::<SignFloat<F, false>>(),
        NanPolicy::Propagate => in_place::<SignFloat<F, true>>(),
    }
}

fn is_infinity_float<F: FloatFormat>(mode: InfinityMode) -> Kernel {
    match mode {
        InfinityMode::Either => plain::<IsInfinity<F, { ops::EITHER }>>(),
        InfinityMode::Positive => plain::<IsInfinity<F, { ops::POSITIVE }>>(),
        InfinityMode::Negative => plain::<IsInfinity<F, { ops::NEGATIVE }>>(),
        InfinityMode::Neither => plain::<AllFalse<F::Bits>>(),
    }
}

/// The SIGN kernel for a data type; `None` where SIGN has no meaning.
pub(crate) fn sign(data_type: DataType, policy: NanPolicy) -> Option<Kernel> {
    Some(match data_type {
        DataType::Float32 => sign_float::<F32>(policy),
        DataType::Float64 => sign_float::<F64>(policy),
        DataType::Float16 => sign_float::<F16>(policy),
        DataType::Bfloat16 => sign_float::<BF16>(policy),
        DataType::Int8 => in_place::<SignSigned<i8>>(),
        DataType::Int16 => in_place::<SignSigned<i16>>(),
        DataType::Int32 => in_place::<SignSigned<i32>>(),
        DataType::Int64 => in_place::<SignSigned<i64>>(),
        DataType::Uint8 => in_place::<SignUnsigned<u8>>(),
        DataType::Uint16 => in_place::<SignUnsigned<u16>>(),
        DataType::Uint32 => in_place::<SignUnsigned<u32>>(),
        DataType::Uint64 => in_place::<SignUnsigned<u64>>(),
        _ => return None,
    })
}

/// The IS_INFINITY kernel for an input data type (output: one byte, 0 or 1); `None` for
/// non-float types.
pub(crate) fn is_infinity(data_type: DataType, mode: InfinityMode) -> Option<Kernel> {
    Some(match data_type {
        DataType::Float32 => is_infinity_float::<F32>(mode),
        DataType::Float64 => is_infinity_float::<F64>(mode),
        DataType::Float16 => is_infinity_float::<F16>(mode),
        DataType::Bfloat16 => is_infinity_float::<BF16>(mode),
        DataType::Float8E5M2 => is_infinity_float::<F8E5M2>(mode),
        DataType::Float8E4M3Fn | DataType::Float8E4M3Fnuz | DataType::Float8E5M2Fnuz => {
            plain::<AllFalse<u8>>()
        }
        _ => return None,
    })
}

/// The kernel for a validated description.
pub(crate) fn for_desc(desc: &OperatorDesc, policy: NanPolicy) -> Option<Kernel> {
    match desc {
        OperatorDesc::Sign(d) => sign(d.input.data_type, policy),
        OperatorDesc::IsInfinity(d) => is_infinity(d.input.data_type, d.mode),
    }
}
