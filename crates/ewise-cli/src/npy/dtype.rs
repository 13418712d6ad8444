//! numpy type strings (`'<f4'`, `'|u1'`, `'<V2'`) and their ewise data types.

use std::fmt;

use ewise_cpu::DataType;

use super::error::NpyError;

/// The byte order a type string declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    /// `<`: least significant byte first.
    Little,
    /// `>`: most significant byte first.
    Big,
    /// `|`: not applicable (one-byte and raw types).
    NotApplicable,
}

impl ByteOrder {
    /// The order of this machine.
    pub const NATIVE: ByteOrder = if cfg!(target_endian = "big") {
        ByteOrder::Big
    } else {
        ByteOrder::Little
    };

    /// numpy's character for it.
    pub const fn symbol(self) -> char {
        match self {
            ByteOrder::Little => '<',
            ByteOrder::Big => '>',
            ByteOrder::NotApplicable => '|',
        }
    }
}

/// A numpy type string taken apart: byte order, kind character and item size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TypeStr {
    /// The byte order (`=` is resolved to this machine's order).
    pub order: ByteOrder,
    /// numpy's kind character: `f`, `i`, `u`, `b`, `V`, `c`, `U`, ...
    pub kind: char,
    /// Bytes per element.
    pub size: u64,
}

impl TypeStr {
    /// Parses a type string such as `<f4`, `|b1`, `>i8` or `<V2`.
    pub fn parse(descr: &str) -> Result<TypeStr, NpyError> {
        let bad = || NpyError::BadTypeString {
            descr: descr.to_string(),
        };
        let mut chars = descr.chars();
        let first = chars.next().ok_or_else(bad)?;
        let (order, kind) = match first {
            '<' => (ByteOrder::Little, chars.next().ok_or_else(bad)?),
            '>' => (ByteOrder::Big, chars.next().ok_or_else(bad)?),
            '|' => (ByteOrder::NotApplicable, chars.next().ok_or_else(bad)?),
            '=' => (ByteOrder::NATIVE, chars.next().ok_or_else(bad)?),
            c => (ByteOrder::NotApplicable, c),
        };
        if !kind.is_ascii_alphabetic() && kind != '?' {
            return Err(bad());
        }
        let digits = chars.as_str();
        if kind == 'O' && digits.is_empty() {
            return Ok(TypeStr {
                order,
                kind,
                size: 8,
            });
        }
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let size: u64 = digits.parse().map_err(|_| bad())?;
        Ok(TypeStr { order, kind, size })
    }
}

impl fmt::Display for TypeStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}{}", self.order.symbol(), self.kind, self.size)
    }
}

/// What the elements of a file are: an ewise data type and the byte order on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ElementType {
    /// The ewise data type.
    pub data_type: DataType,
    /// How multi-byte elements are ordered in the file.
    pub order: ByteOrder,
    /// numpy's kind character as the file spells it: `f`, `i`, `u` or `b`, or for the
    /// types numpy lacks, what ml_dtypes saves (`V` for bfloat16, `f` for float8).
    pub kind: char,
}

/// The types numpy lacks, which ml_dtypes saves as raw bytes (bfloat16 as `<V2`) or as
/// one-byte floats (the float8 types as `<f1`).
pub const RAW_TYPES: [DataType; 5] = [
    DataType::Bfloat16,
    DataType::Float8E4M3Fn,
    DataType::Float8E4M3Fnuz,
    DataType::Float8E5M2,
    DataType::Float8E5M2Fnuz,
];

impl ElementType {
    /// The element type of a file whose header says `descr`.
    ///
    /// `requested` names the type the caller expects: it is required for the spellings
    /// ml_dtypes gives the types numpy lacks (bfloat16 is saved as `<V2`, the float8
    /// types as `<f1`; `|V1` is accepted too), and must agree with a numeric type
    /// string when given.
    pub fn from_descr(descr: &str, requested: Option<DataType>) -> Result<ElementType, NpyError> {
        let ts = TypeStr::parse(descr)?;
        let unsupported = |reason: &'static str| NpyError::UnsupportedDtype {
            descr: descr.to_string(),
            reason,
        };
        let data_type = match (ts.kind, ts.size) {
            ('f', 2) => DataType::Float16,
            ('f', 4) => DataType::Float32,
            ('f', 8) => DataType::Float64,
            ('i', 1) => DataType::Int8,
            ('i', 2) => DataType::Int16,
            ('i', 4) => DataType::Int32,
            ('i', 8) => DataType::Int64,
            ('u', 1) => DataType::Uint8,
            ('u', 2) => DataType::Uint16,
            ('u', 4) => DataType::Uint32,
            ('u', 8) => DataType::Uint64,
            ('b', 1) => DataType::Bool,
            ('V', size) | ('f', size @ 1) => {
                let Some(t) = requested else {
                    return Err(NpyError::RawNeedsType {
                        descr: descr.to_string(),
                        size,
                    });
                };
                if !RAW_TYPES.contains(&t) || t.size_in_bytes() != Some(size) {
                    return Err(NpyError::TypeMismatch {
                        descr: descr.to_string(),
                        requested: t,
                    });
                }
                return Ok(ElementType {
                    data_type: t,
                    order: ts.order,
                    kind: ts.kind,
                });
            }
            ('f', _) => return Err(unsupported("float sizes other than 2, 4 and 8 bytes")),
            ('c', _) => return Err(unsupported("complex numbers")),
            ('U' | 'S' | 'a', _) => return Err(unsupported("strings")),
            ('O', _) => return Err(unsupported("Python objects (pickled data)")),
            ('M' | 'm', _) => return Err(unsupported("dates and time deltas")),
            _ => return Err(unsupported("not a numeric type the operators take")),
        };
        if let Some(t) = requested {
            if t != data_type {
                return Err(NpyError::TypeMismatch {
                    descr: descr.to_string(),
                    requested: t,
                });
            }
        }
        Ok(ElementType {
            data_type,
            order: ts.order,
            kind: ts.kind,
        })
    }

    /// A numeric element type in this machine's byte order (`|` for one-byte types);
    /// `None` for types numpy has no numeric code for (bfloat16, float8).
    pub fn native(data_type: DataType) -> Option<ElementType> {
        let kind = numeric_code(data_type)?;
        let order = if data_type.size_in_bytes() == Some(1) {
            ByteOrder::NotApplicable
        } else {
            ByteOrder::NATIVE
        };
        Some(ElementType {
            data_type,
            order,
            kind,
        })
    }

    /// This element type with another data type, in the same byte order (and spelled
    /// as before where numpy has no code for the new type).
    pub fn with_data_type(self, data_type: DataType) -> ElementType {
        ElementType {
            data_type,
            order: self.order,
            kind: numeric_code(data_type).unwrap_or(self.kind),
        }
    }

    /// Bytes per element.
    pub fn size(&self) -> usize {
        self.data_type.size_in_bytes().unwrap_or(1) as usize
    }

    /// Whether elements must be byte-swapped to reach this machine's order.
    pub fn needs_swap(&self) -> bool {
        self.size() > 1 && self.order != ByteOrder::NotApplicable && self.order != ByteOrder::NATIVE
    }

    /// The type string to write in a header: `<f4`, `|u1`, `|b1`, `<V2` ... Types numpy
    /// lacks keep the spelling they were read with.
    pub fn descr(&self) -> String {
        let size = self.size();
        let order = if size == 1 && numeric_code(self.data_type).is_some() {
            ByteOrder::NotApplicable
        } else if size > 1 && self.order == ByteOrder::NotApplicable {
            ByteOrder::NATIVE
        } else {
            self.order
        };
        format!("{}{}{}", order.symbol(), self.kind, size)
    }
}

fn numeric_code(data_type: DataType) -> Option<char> {
    match data_type {
        DataType::Float16 | DataType::Float32 | DataType::Float64 => Some('f'),
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => Some('i'),
        DataType::Uint8 | DataType::Uint16 | DataType::Uint32 | DataType::Uint64 => Some('u'),
        DataType::Bool => Some('b'),
        _ => None,
    }
}

/// Reverses the bytes of every `size`-byte element of `data`.
pub fn swap_bytes(data: &mut [u8], size: usize) {
    if size > 1 {
        for element in data.chunks_exact_mut(size) {
            element.reverse();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_type_strings() {
        let cases = [
            ("<f2", DataType::Float16),
            ("<f4", DataType::Float32),
            ("<f8", DataType::Float64),
            ("|i1", DataType::Int8),
            ("<i2", DataType::Int16),
            ("<i4", DataType::Int32),
            ("<i8", DataType::Int64),
            ("|u1", DataType::Uint8),
            ("<u2", DataType::Uint16),
            ("<u4", DataType::Uint32),
            ("<u8", DataType::Uint64),
            ("|b1", DataType::Bool),
        ];
        for (descr, t) in cases {
            let e = ElementType::from_descr(descr, None).unwrap();
            assert_eq!(e.data_type, t, "{descr}");
            assert_eq!(e.descr(), descr);
            assert!(!e.needs_swap());
            assert_eq!(ElementType::native(t), Some(e));
        }
    }

    #[test]
    fn big_endian_is_kept_and_swapped() {
        let e = ElementType::from_descr(">i4", None).unwrap();
        assert_eq!(e.order, ByteOrder::Big);
        assert!(e.needs_swap());
        assert_eq!(e.descr(), ">i4");
        assert_eq!(e.with_data_type(DataType::Uint8).descr(), "|u1");
        let mut data = [1, 2, 3, 4, 5, 6, 7, 8];
        swap_bytes(&mut data, 4);
        assert_eq!(data, [4, 3, 2, 1, 8, 7, 6, 5]);
        assert!(!ElementType::from_descr(">u1", None).unwrap().needs_swap());
    }

    #[test]
    fn raw_types_need_a_name() {
        assert!(matches!(
            ElementType::from_descr("<V2", None),
            Err(NpyError::RawNeedsType { size: 2, .. })
        ));
        let bf = ElementType::from_descr("<V2", Some(DataType::Bfloat16)).unwrap();
        assert_eq!(bf.data_type, DataType::Bfloat16);
        assert_eq!(bf.descr(), "<V2");
        assert_eq!(bf.with_data_type(DataType::Bool).descr(), "|b1");
        let f8 = ElementType::from_descr("<f1", Some(DataType::Float8E5M2)).unwrap();
        assert_eq!(f8.descr(), "<f1");
        assert_eq!(f8.with_data_type(DataType::Bool).descr(), "|b1");
        assert!(matches!(
            ElementType::from_descr("<f1", None),
            Err(NpyError::RawNeedsType { size: 1, .. })
        ));
        let v1 = ElementType::from_descr("|V1", Some(DataType::Float8E4M3Fn)).unwrap();
        assert_eq!(v1.descr(), "|V1");
        assert!(ElementType::from_descr("<V4", Some(DataType::Bfloat16)).is_err());
        assert!(ElementType::from_descr("<V2", Some(DataType::Float16)).is_err());
        assert!(ElementType::from_descr("<f4", Some(DataType::Bfloat16)).is_err());
        assert!(ElementType::from_descr("<f4", Some(DataType::Float32)).is_ok());
    }

    #[test]
    fn unsupported_and_malformed() {
        for descr in ["<c8", "<U3", "|O", "|O8", "<M8", "<f16", "|S5", "<f3"] {
            assert!(
                matches!(
                    ElementType::from_descr(descr, None),
                    Err(NpyError::UnsupportedDtype { .. } | NpyError::BadTypeString { .. })
                ),
                "{descr}"
            );
        }
        for descr in [
            "",
            "<",
            "f",
            "<f",
            "<f4x",
            "<4",
            "<f-4",
            "<f99999999999999999999999",
        ] {
            assert!(
                matches!(TypeStr::parse(descr), Err(NpyError::BadTypeString { .. })),
                "{descr}"
            );
        }
        assert_eq!(TypeStr::parse("=u2").unwrap().order, ByteOrder::NATIVE);
    }
}
