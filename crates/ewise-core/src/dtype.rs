//! Tensor data types: DirectML's `DML_TENSOR_DATA_TYPE` plus the ewise extensions.

use std::fmt;

/// A tensor element type.
///
/// The DirectML types keep the numeric values of `DML_TENSOR_DATA_TYPE`
/// (`FLOAT32 = 1` ... `INT4 = 13`), available through [`DataType::raw`] and
/// [`DataType::from_raw`]. The types DirectML lacks but ONNX needs (bfloat16, bool and
/// the four float8 formats) are ewise extensions numbered from 1000; the strict
/// DirectML-compatible API rejects them (see [`crate::Extensions`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u32)]
pub enum DataType {
    /// `DML_TENSOR_DATA_TYPE_UNKNOWN` (0): never valid in a description.
    Unknown = 0,
    /// IEEE 754 binary32.
    Float32 = 1,
    /// IEEE 754 binary16.
    Float16 = 2,
    /// Unsigned 32-bit integer.
    Uint32 = 3,
    /// Unsigned 16-bit integer.
    Uint16 = 4,
    /// Unsigned 8-bit integer.
    Uint8 = 5,
    /// Signed 32-bit integer.
    Int32 = 6,
    /// Signed 16-bit integer.
    Int16 = 7,
    /// Signed 8-bit integer.
    Int8 = 8,
    /// IEEE 754 binary64.
    Float64 = 9,
    /// Unsigned 64-bit integer.
    Uint64 = 10,
    /// Signed 64-bit integer.
    Int64 = 11,
    /// Unsigned 4-bit integer (quantization operators only; no operator here takes it).
    Uint4 = 12,
    /// Signed 4-bit integer (quantization operators only; no operator here takes it).
    Int4 = 13,
    /// Extension: bfloat16 (the top 16 bits of a binary32).
    Bfloat16 = 1000,
    /// Extension: boolean, one byte holding 0 or 1.
    Bool = 1001,
    /// Extension: ONNX `float8e4m3fn` (no infinities, one NaN pattern per sign).
    Float8E4M3Fn = 1002,
    /// Extension: ONNX `float8e4m3fnuz` (no infinities, no negative zero).
    Float8E4M3Fnuz = 1003,
    /// Extension: ONNX `float8e5m2` (IEEE-like: infinities at 0x7C and 0xFC).
    Float8E5M2 = 1004,
    /// Extension: ONNX `float8e5m2fnuz` (no infinities, no negative zero).
    Float8E5M2Fnuz = 1005,
}

impl DataType {
    /// Every data type, DirectML's first (in enum order), then the extensions.
    pub const ALL: [DataType; 20] = [
        DataType::Unknown,
        DataType::Float32,
        DataType::Float16,
        DataType::Uint32,
        DataType::Uint16,
        DataType::Uint8,
        DataType::Int32,
        DataType::Int16,
        DataType::Int8,
        DataType::Float64,
        DataType::Uint64,
        DataType::Int64,
        DataType::Uint4,
        DataType::Int4,
        DataType::Bfloat16,
        DataType::Bool,
        DataType::Float8E4M3Fn,
        DataType::Float8E4M3Fnuz,
        DataType::Float8E5M2,
        DataType::Float8E5M2Fnuz,
    ];

    /// The numeric value: DirectML's enum value, or the ewise extension number.
    pub const fn raw(self) -> u32 {
        self as u32
    }

    /// The data type with this numeric value, if any.
    pub fn from_raw(value: u32) -> Option<DataType> {
        DataType::ALL.into_iter().find(|t| t.raw() == value)
    }

    /// DirectML's spelling without the prefix (`FLOAT32`), or the extension's (`BFLOAT16`).
    pub const fn name(self) -> &'static str {
        match self {
            DataType::Unknown => "UNKNOWN",
            DataType::Float32 => "FLOAT32",
            DataType::Float16 => "FLOAT16",
            DataType::Uint32 => "UINT32",
            DataType::Uint16 => "UINT16",
            DataType::Uint8 => "UINT8",
            DataType::Int32 => "INT32",
            DataType::Int16 => "INT16",
            DataType::Int8 => "INT8",
            DataType::Float64 => "FLOAT64",
            DataType::Uint64 => "UINT64",
            DataType::Int64 => "INT64",
            DataType::Uint4 => "UINT4",
            DataType::Int4 => "INT4",
            DataType::Bfloat16 => "BFLOAT16",
            DataType::Bool => "BOOL",
            DataType::Float8E4M3Fn => "FLOAT8E4M3FN",
            DataType::Float8E4M3Fnuz => "FLOAT8E4M3FNUZ",
            DataType::Float8E5M2 => "FLOAT8E5M2",
            DataType::Float8E5M2Fnuz => "FLOAT8E5M2FNUZ",
        }
    }

    /// The data type with this name (as [`DataType::name`] spells it, any case).
    pub fn from_name(name: &str) -> Option<DataType> {
        DataType::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(name))
    }

    /// Size of one element in bytes; `None` for `UNKNOWN` and the 4-bit types, which
    /// have no whole-byte size.
    pub const fn size_in_bytes(self) -> Option<u64> {
        match self {
            DataType::Float64 | DataType::Uint64 | DataType::Int64 => Some(8),
            DataType::Float32 | DataType::Uint32 | DataType::Int32 => Some(4),
            DataType::Float16 | DataType::Uint16 | DataType::Int16 | DataType::Bfloat16 => Some(2),
            DataType::Uint8
            | DataType::Int8
            | DataType::Bool
            | DataType::Float8E4M3Fn
            | DataType::Float8E4M3Fnuz
            | DataType::Float8E5M2
            | DataType::Float8E5M2Fnuz => Some(1),
            DataType::Unknown | DataType::Uint4 | DataType::Int4 => None,
        }
    }

    /// True for the types DirectML does not have (bfloat16, bool, float8).
    pub const fn is_extension(self) -> bool {
        self.raw() >= 1000
    }

    /// True for floating-point types (including bfloat16 and float8).
    pub const fn is_float(self) -> bool {
        matches!(
            self,
            DataType::Float32
                | DataType::Float16
                | DataType::Float64
                | DataType::Bfloat16
                | DataType::Float8E4M3Fn
                | DataType::Float8E4M3Fnuz
                | DataType::Float8E5M2
                | DataType::Float8E5M2Fnuz
        )
    }

    /// True for signed integer types.
    pub const fn is_signed_integer(self) -> bool {
        matches!(
            self,
            DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 | DataType::Int4
        )
    }

    /// True for unsigned integer types.
    pub const fn is_unsigned_integer(self) -> bool {
        matches!(
            self,
            DataType::Uint8
                | DataType::Uint16
                | DataType::Uint32
                | DataType::Uint64
                | DataType::Uint4
        )
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Formats a list of data types as `FLOAT32, FLOAT16` (or `none`).
pub(crate) struct TypeList<'a>(pub &'a [DataType]);

impl fmt::Display for TypeList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("none");
        }
        for (i, t) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(t.name())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_values_are_directml_values() {
        let expected = [
            (DataType::Unknown, 0),
            (DataType::Float32, 1),
            (DataType::Float16, 2),
            (DataType::Uint32, 3),
            (DataType::Uint16, 4),
            (DataType::Uint8, 5),
            (DataType::Int32, 6),
            (DataType::Int16, 7),
            (DataType::Int8, 8),
            (DataType::Float64, 9),
            (DataType::Uint64, 10),
            (DataType::Int64, 11),
            (DataType::Uint4, 12),
            (DataType::Int4, 13),
        ];
        for (t, v) in expected {
            assert_eq!(t.raw(), v, "{t}");
            assert_eq!(DataType::from_raw(v), Some(t));
            assert!(!t.is_extension());
        }
        assert_eq!(DataType::from_raw(14), None);
    }

    #[test]
    fn names_round_trip() {
        for t in DataType::ALL {
            assert_eq!(DataType::from_name(t.name()), Some(t));
            assert_eq!(DataType::from_name(&t.name().to_lowercase()), Some(t));
        }
    }

    #[test]
    fn element_sizes() {
        assert_eq!(DataType::Float64.size_in_bytes(), Some(8));
        assert_eq!(DataType::Int32.size_in_bytes(), Some(4));
        assert_eq!(DataType::Bfloat16.size_in_bytes(), Some(2));
        assert_eq!(DataType::Float8E5M2.size_in_bytes(), Some(1));
        assert_eq!(DataType::Uint4.size_in_bytes(), None);
        assert_eq!(DataType::Unknown.size_in_bytes(), None);
    }
}
