//! Rust element types and the data types they stand for.

use half::{bf16, f16};

use crate::dtype::DataType;

/// A Rust type whose values are tensor elements of one [`DataType`].
///
/// Implemented for `f32`, `f64`, [`half::f16`], [`half::bf16`] and the 8- to 64-bit
/// integers. The types are plain old data, so tensors of them can be viewed as bytes.
pub trait Element: bytemuck::Pod + Send + Sync + 'static {
    /// The data type this Rust type stands for.
    const DATA_TYPE: DataType;
}

macro_rules! element {
    ($($t:ty => $d:ident),* $(,)?) => {
        $(impl Element for $t {
            const DATA_TYPE: DataType = DataType::$d;
        })*
    };
}

element! {
    f32 => Float32,
    f64 => Float64,
    f16 => Float16,
    bf16 => Bfloat16,
    i8 => Int8,
    i16 => Int16,
    i32 => Int32,
    i64 => Int64,
    u8 => Uint8,
    u16 => Uint16,
    u32 => Uint32,
    u64 => Uint64,
}
