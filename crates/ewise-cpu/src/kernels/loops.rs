//! [`Kernel`]s built from slice loops: the [`Loop`] that an instruction set gives for one
//! operation (the compiler's loops through [`Compiled`], or a hand-written one), and the
//! builders every instruction set's kernels come from: [`kernel`], [`in_place`] and, on
//! the targets with hand-written IS_INFINITY loops, `is_infinity`: IS_INFINITY's table
//! of data types and modes over an instruction set's `InfinityLoops`.
//!
//! The builders add the byte-level entry points of [`super::slice`] (element-misaligned
//! data bounces through aligned chunks) and the streaming forms: a loop's own
//! ([`Loop::map_stream`], [`InPlace::map_in_place_stream`]) where it has one, otherwise
//! blocks streamed out by [`super::slice`] on targets with non-temporal stores, and the
//! plain loop elsewhere ([`super::stream::NON_TEMPORAL`]).

use std::marker::PhantomData;

use super::isa::Isa;
use super::ops::Map;
use super::{slice, Kernel};

/// One operation's slice loop on one instruction set.
pub(super) trait Loop: 'static {
    /// The operation, element by element: the loop gives the bits of [`Map::apply`].
    type Map: Map;
    /// The instruction set whose transposes go with the loop ([`Isa::transpose`]).
    type Isa: Isa;

    /// [`Loop::Map`] of each element of `src` into `dst`, for as many elements as the
    /// shorter one holds.
    fn map(src: &[In<Self>], dst: &mut [Out<Self>]);

    /// [`Loop::map`] with streaming stores issued from the loop itself; `false`
    /// (nothing done) where the loop has no such form, as for [`Isa::map_stream`].
    fn map_stream(_src: &[In<Self>], _dst: &mut [Out<Self>]) -> bool {
        false
    }
}

/// A [`Loop`] whose operation has one type in and out, run in place.
pub(super) trait InPlace: Loop {
    /// [`Loop::Map`] of each element of `data`, in place.
    fn map_in_place(data: &mut [In<Self>]);

    /// [`InPlace::map_in_place`] with streaming stores; `false` (nothing done) where the
    /// loop has no such form.
    fn map_in_place_stream(_data: &mut [In<Self>]) -> bool {
        false
    }
}

/// The input element of `L`'s operation.
type In<L> = <<L as Loop>::Map as Map>::In;

/// The output element of `L`'s operation.
type Out<L> = <<L as Loop>::Map as Map>::Out;

/// The kernel of `L`, without in-place entry points.
pub(super) fn kernel<L: Loop>() -> Kernel {
    Kernel {
        in_size: std::mem::size_of::<In<L>>(),
        out_size: std::mem::size_of::<Out<L>>(),
        map: map_bytes::<L>,
        map_stream: map_bytes_stream::<L>,
        map_in_place: None,
        map_in_place_stream: None,
        transpose: <L::Isa as Isa>::transpose,
    }
}

/// The kernel of `L`, in place too.
pub(super) fn in_place<L: InPlace>() -> Kernel
where
    L::Map: Map<Out = In<L>>,
{
    Kernel {
        map_in_place: Some(map_bytes_in_place::<L>),
        map_in_place_stream: Some(map_bytes_in_place_stream::<L>),
        ..kernel::<L>()
    }
}

fn map_bytes<L: Loop>(src: &[u8], dst: &mut [u8]) {
    slice::map_bytes_with::<L::Map>(src, dst, L::map);
}

fn map_bytes_stream<L: Loop>(src: &[u8], dst: &mut [u8]) {
    slice::map_bytes_stream_with::<L::Map>(src, dst, L::map, L::map_stream);
}

fn map_bytes_in_place<L: InPlace>(data: &mut [u8])
where
    L::Map: Map<Out = In<L>>,
{
    slice::map_bytes_in_place_with::<L::Map>(data, L::map_in_place);
}

fn map_bytes_in_place_stream<L: InPlace>(data: &mut [u8])
where
    L::Map: Map<Out = In<L>>,
{
    slice::map_bytes_in_place_stream_with::<L::Map>(
        data,
        L::map,
        L::map_in_place,
        L::map_in_place_stream,
    );
}

/// The compiler's loops of `M` for the instruction set `I` ([`Isa::map`] and its kin).
pub(super) struct Compiled<M, I>(PhantomData<(M, I)>);

impl<M: Map, I: Isa> Loop for Compiled<M, I> {
    type Map = M;
    type Isa = I;

    fn map(src: &[M::In], dst: &mut [M::Out]) {
        I::map::<M>(src, dst);
    }

    fn map_stream(src: &[M::In], dst: &mut [M::Out]) -> bool {
        I::map_stream::<M>(src, dst)
    }
}

impl<M: Map<Out = <M as Map>::In>, I: Isa> InPlace for Compiled<M, I> {
    fn map_in_place(data: &mut [M::In]) {
        I::map_in_place::<M>(data);
    }
}

#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
pub(super) use infinity::{is_infinity, InfinityLoops};

/// IS_INFINITY's kernels from the hand-written loops of the targets that have them.
#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
mod infinity {
    use ewise_core::{DataType, InfinityMode};

    use super::super::formats::{FloatFormat, BF16, F16, F32, F64};
    use super::super::ops::{self, IsInfinity};
    use super::super::Kernel;
    use super::{kernel, Loop};

    /// An instruction set's IS_INFINITY loops over the float format `F`, one per mode.
    pub(in crate::kernels) trait InfinityLoops<F: FloatFormat> {
        /// The loop of IS_INFINITY in `MODE` ([`ops::EITHER`], [`ops::POSITIVE`] or
        /// [`ops::NEGATIVE`]).
        type Loop<const MODE: u32>: Loop<Map = IsInfinity<F, MODE>>;
    }

    /// The IS_INFINITY kernel for an input data type and mode from `L`'s loops: float32,
    /// float64, float16 and bfloat16 in modes EITHER, POSITIVE and NEGATIVE; `None`
    /// elsewhere (mode NEITHER, which tests nothing, float8 and non-float types), where the
    /// compiler's loops serve.
    pub(in crate::kernels) fn is_infinity<L>(
        data_type: DataType,
        mode: InfinityMode,
    ) -> Option<Kernel>
    where
        L: InfinityLoops<F32> + InfinityLoops<F64> + InfinityLoops<F16> + InfinityLoops<BF16>,
    {
        match data_type {
            DataType::Float32 => is_infinity_in::<F32, L>(mode),
            DataType::Float64 => is_infinity_in::<F64, L>(mode),
            DataType::Float16 => is_infinity_in::<F16, L>(mode),
            DataType::Bfloat16 => is_infinity_in::<BF16, L>(mode),
            _ => None,
        }
    }

    /// [`is_infinity`] of the format `F`.
    fn is_infinity_in<F: FloatFormat, L: InfinityLoops<F>>(mode: InfinityMode) -> Option<Kernel> {
        Some(match mode {
            InfinityMode::Either => kernel::<L::Loop<{ ops::EITHER }>>(),
            InfinityMode::Positive => kernel::<L::Loop<{ ops::POSITIVE }>>(),
            InfinityMode::Negative => kernel::<L::Loop<{ ops::NEGATIVE }>>(),
            InfinityMode::Neither => return None,
        })
    }
}
