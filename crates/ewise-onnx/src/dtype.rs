//! ONNX element types (`TensorProto.DataType`) and their ewise [`DataType`]s.

use ewise_cpu::DataType;

/// `TensorProto.DataType` values, with ONNX's lower-case names (as operator schemas
/// spell them in `tensor(float)`), and the ewise type each maps to, if any.
const ONNX_TYPES: &[(i32, &str, Option<DataType>)] = &[
    (0, "undefined", None),
    (1, "float", Some(DataType::Float32)),
    (2, "uint8", Some(DataType::Uint8)),
    (3, "int8", Some(DataType::Int8)),
    (4, "uint16", Some(DataType::Uint16)),
    (5, "int16", Some(DataType::Int16)),
    (6, "int32", Some(DataType::Int32)),
    (7, "int64", Some(DataType::Int64)),
    (8, "string", None),
    (9, "bool", Some(DataType::Bool)),
    (10, "float16", Some(DataType::Float16)),
    (11, "double", Some(DataType::Float64)),
    (12, "uint32", Some(DataType::Uint32)),
    (13, "uint64", Some(DataType::Uint64)),
    (14, "complex64", None),
    (15, "complex128", None),
    (16, "bfloat16", Some(DataType::Bfloat16)),
    (17, "float8e4m3fn", Some(DataType::Float8E4M3Fn)),
    (18, "float8e4m3fnuz", Some(DataType::Float8E4M3Fnuz)),
    (19, "float8e5m2", Some(DataType::Float8E5M2)),
    (20, "float8e5m2fnuz", Some(DataType::Float8E5M2Fnuz)),
    (21, "uint4", None),
    (22, "int4", None),
    (23, "float4e2m1", None),
    (24, "float8e8m0", None),
    (25, "uint2", None),
    (26, "int2", None),
];

/// The ewise data type for an ONNX element type number, or `None` for types ewise cannot
/// hold (strings, complex, sub-byte types, unknown numbers).
pub fn from_onnx(elem_type: i32) -> Option<DataType> {
    ONNX_TYPES
        .iter()
        .find(|(code, _, _)| *code == elem_type)
        .and_then(|(_, _, t)| *t)
}

/// The ONNX element type number for an ewise data type; `None` for types ONNX lacks
/// (`UNKNOWN`) or ewise cannot hold as ONNX tensors (the 4-bit types).
pub fn to_onnx(data_type: DataType) -> Option<i32> {
    ONNX_TYPES
        .iter()
        .find(|(_, _, t)| *t == Some(data_type))
        .map(|(code, _, _)| *code)
}

/// ONNX's name for an element type number (`float`, `bfloat16`), or `type N` for numbers
/// ONNX does not define.
pub fn onnx_name(elem_type: i32) -> String {
    ONNX_TYPES
        .iter()
        .find(|(code, _, _)| *code == elem_type)
        .map_or_else(
            || format!("type {elem_type}"),
            |(_, name, _)| name.to_string(),
        )
}

/// ONNX's name for an ewise data type (`float` for FLOAT32); DirectML's name when ONNX
/// has none.
pub fn name(data_type: DataType) -> String {
    to_onnx(data_type).map_or_else(|| data_type.name().to_string(), onnx_name)
}

/// Formats types as ONNX names separated by commas: `float, double`.
pub(crate) fn names(types: &[DataType]) -> String {
    types
        .iter()
        .map(|&t| name(t))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mapped_type_round_trips() {
        for &(code, _, t) in ONNX_TYPES {
            if let Some(t) = t {
                assert_eq!(to_onnx(t), Some(code));
                assert_eq!(from_onnx(code), Some(t));
            } else {
                assert_eq!(from_onnx(code), None);
            }
        }
        assert_eq!(to_onnx(DataType::Uint4), None);
        assert_eq!(to_onnx(DataType::Unknown), None);
    }

    #[test]
    fn names_follow_onnx() {
        assert_eq!(name(DataType::Float32), "float");
        assert_eq!(name(DataType::Float64), "double");
        assert_eq!(name(DataType::Bfloat16), "bfloat16");
        assert_eq!(onnx_name(8), "string");
        assert_eq!(onnx_name(99), "type 99");
        assert_eq!(names(&[DataType::Float32, DataType::Bool]), "float, bool");
    }
}
