//! The `.npy` header: magic, version, length, and the dict of `descr`, `fortran_order`
//! and `shape`.

use std::fmt::Write as _;
use std::io::Read;

use super::error::NpyError;
use super::literal::{self, Value};

/// The first six bytes of every `.npy` file.
pub const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Longest header text accepted when reading, in bytes. numpy's own reader stops at
/// 10 000 by default; real headers are a few hundred bytes.
pub const MAX_HEADER_LEN: u64 = 1 << 20;

/// Most dimensions numpy allows.
pub const MAX_DIMENSIONS: usize = 64;

/// numpy aligns the start of the data to this many bytes.
pub const DATA_ALIGNMENT: usize = 64;

/// A format version (`major.minor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Version {
    /// 1, 2 or 3.
    pub major: u8,
    /// Always 0.
    pub minor: u8,
}

impl Version {
    /// 2-byte header length, Latin-1 text.
    pub const V1_0: Version = Version { major: 1, minor: 0 };
    /// 4-byte header length, Latin-1 text.
    pub const V2_0: Version = Version { major: 2, minor: 0 };
    /// 4-byte header length, UTF-8 text.
    pub const V3_0: Version = Version { major: 3, minor: 0 };

    /// Bytes of the header length field.
    fn length_field(self) -> usize {
        if self.major == 1 {
            2
        } else {
            4
        }
    }
}

/// What a header says about the array.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Header {
    /// numpy's type string, as written (`'<f4'`).
    pub descr: String,
    /// True when the array is stored column-major (the first index varies fastest).
    pub fortran_order: bool,
    /// Size of each dimension; empty for a 0-d array.
    pub shape: Vec<u64>,
}

/// A header as read from a file, with where the data starts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ParsedHeader {
    /// The array's description.
    pub header: Header,
    /// The file's format version.
    pub version: Version,
    /// Bytes from the start of the file to the first element.
    pub data_offset: u64,
}

impl Header {
    /// Reads the magic, version, length and header text from the start of a file,
    /// leaving `reader` at the first data byte.
    ///
    /// Never allocates more than the bytes actually present (up to
    /// [`MAX_HEADER_LEN`]), whatever the length field claims.
    pub fn read<R: Read>(reader: &mut R) -> Result<ParsedHeader, NpyError> {
        let mut preamble = [0u8; 12];
        let got = read_up_to(reader, &mut preamble[..8])?;
        let compared = got.min(MAGIC.len());
        if preamble[..compared] != MAGIC[..compared] {
            return Err(NpyError::BadMagic);
        }
        if got < 8 {
            return Err(NpyError::TooShort { len: got as u64 });
        }
        let version = match (preamble[6], preamble[7]) {
            (1, 0) => Version::V1_0,
            (2, 0) => Version::V2_0,
            (3, 0) => Version::V3_0,
            (major, minor) => return Err(NpyError::UnsupportedVersion { major, minor }),
        };
        let field = version.length_field();
        let got_len = read_up_to(reader, &mut preamble[8..8 + field])?;
        if got_len < field {
            return Err(NpyError::TooShort {
                len: (8 + got_len) as u64,
            });
        }
        let declared = if field == 2 {
            u64::from(u16::from_le_bytes([preamble[8], preamble[9]]))
        } else {
            u64::from(u32::from_le_bytes([
                preamble[8],
                preamble[9],
                preamble[10],
                preamble[11],
            ]))
        };
        if declared > MAX_HEADER_LEN {
            return Err(NpyError::HeaderTooLong {
                declared,
                max: MAX_HEADER_LEN,
            });
        }
        let mut text = Vec::new();
        reader.take(declared).read_to_end(&mut text)?;
        if (text.len() as u64) < declared {
            return Err(NpyError::HeaderTruncated {
                declared,
                available: text.len() as u64,
            });
        }
        if version == Version::V3_0 && std::str::from_utf8(&text).is_err() {
            return Err(NpyError::HeaderEncoding);
        }
        let header = Header::parse_text(&text)?;
        Ok(ParsedHeader {
            header,
            version,
            data_offset: 8 + field as u64 + declared,
        })
    }

    /// Parses a header from the first bytes of a file (the data may follow).
    pub fn parse(bytes: &[u8]) -> Result<ParsedHeader, NpyError> {
        Header::read(&mut &bytes[..])
    }

    /// Parses the header text: the Python dict literal after the length field.
    pub fn parse_text(text: &[u8]) -> Result<Header, NpyError> {
        let value = literal::parse(text).map_err(|e| NpyError::Syntax {
            offset: e.offset,
            expected: e.message,
        })?;
        let Value::Dict(entries) = value else {
            return Err(NpyError::NotADict {
                found: value.kind(),
            });
        };
        let (mut descr, mut fortran_order, mut shape) = (None, None, None);
        for (key, value) in entries {
            let slot = match &key {
                Value::Str(k) if k == "descr" => &mut descr,
                Value::Str(k) if k == "fortran_order" => &mut fortran_order,
                Value::Str(k) if k == "shape" => &mut shape,
                other => {
                    return Err(NpyError::UnexpectedKey {
                        key: python_repr(other),
                    })
                }
            };
            if slot.replace(value).is_some() {
                return Err(NpyError::DuplicateKey {
                    key: python_repr(&key),
                });
            }
        }
        let descr = match descr.ok_or(NpyError::MissingKey { key: "descr" })? {
            Value::Str(s) => s,
            Value::Sequence(_) => return Err(NpyError::StructuredDtype),
            other => return Err(bad_value("descr", &other, "a type string such as '<f4'")),
        };
        let fortran_order = match fortran_order.ok_or(NpyError::MissingKey {
            key: "fortran_order",
        })? {
            Value::Bool(b) => b,
            other => return Err(bad_value("fortran_order", &other, "True or False")),
        };
        let shape_value = shape.ok_or(NpyError::MissingKey { key: "shape" })?;
        let shape = shape_of(&shape_value)?;
        let header = Header {
            descr,
            fortran_order,
            shape,
        };
        if header.element_count().is_none() {
            return Err(NpyError::ShapeOverflow {
                shape: header.shape_text(),
            });
        }
        Ok(header)
    }

    /// Number of elements: the product of the shape (1 for 0-d, 0 when a size is 0);
    /// `None` if it overflows a `u64`.
    pub fn element_count(&self) -> Option<u64> {
        if self.shape.contains(&0) {
            return Some(0);
        }
        self.shape
            .iter()
            .try_fold(1u64, |acc, &s| acc.checked_mul(s))
    }

    /// Bytes of data for elements of `element_size` bytes; `None` on overflow.
    pub fn data_len(&self, element_size: u64) -> Option<u64> {
        self.element_count()?.checked_mul(element_size)
    }

    /// The shape as Python prints a tuple: `()`, `(5,)`, `(2, 3)`.
    pub fn shape_text(&self) -> String {
        let mut s = String::from("(");
        for (i, d) in self.shape.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            let _ = write!(s, "{d}");
        }
        if self.shape.len() == 1 {
            s.push(',');
        }
        s.push(')');
        s
    }

    /// The magic, version, length and text of this header, padded as numpy pads it so
    /// that the data starts at a multiple of [`DATA_ALIGNMENT`] bytes. Version 1.0 unless
    /// the text needs a 4-byte length.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut descr = String::new();
        repr_into(&Value::Str(self.descr.clone()), &mut descr);
        let mut text = format!(
            "{{'descr': {descr}, 'fortran_order': {}, 'shape': {}, }}",
            if self.fortran_order { "True" } else { "False" },
            self.shape_text()
        );
        let version = if text.len() + 1 + DATA_ALIGNMENT <= usize::from(u16::MAX) {
            Version::V1_0
        } else {
            Version::V2_0
        };
        let prefix = 8 + version.length_field();
        let pad = DATA_ALIGNMENT - (prefix + text.len() + 1) % DATA_ALIGNMENT;
        text.extend(std::iter::repeat_n(' ', pad % DATA_ALIGNMENT));
        text.push('\n');
        let mut out = Vec::with_capacity(prefix + text.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&[version.major, version.minor]);
        if version == Version::V1_0 {
            out.extend_from_slice(&(text.len() as u16).to_le_bytes());
        } else {
            out.extend_from_slice(&(text.len() as u32).to_le_bytes());
        }
        out.extend_from_slice(text.as_bytes());
        out
    }
}

fn read_up_to<R: Read>(reader: &mut R, buf: &mut [u8]) -> Result<usize, NpyError> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(filled)
}

fn shape_of(value: &Value) -> Result<Vec<u64>, NpyError> {
    const EXPECTED: &str = "a tuple of non-negative integers";
    let Value::Sequence(items) = value else {
        return Err(bad_value("shape", value, EXPECTED));
    };
    if items.len() > MAX_DIMENSIONS {
        return Err(NpyError::TooManyDimensions {
            count: items.len(),
            max: MAX_DIMENSIONS,
        });
    }
    items
        .iter()
        .map(|item| match item {
            Value::Int(n) => u64::try_from(*n).map_err(|_| bad_value("shape", value, EXPECTED)),
            _ => Err(bad_value("shape", value, EXPECTED)),
        })
        .collect()
}

fn bad_value(key: &'static str, found: &Value, expected: &'static str) -> NpyError {
    NpyError::BadValue {
        key,
        found: python_repr(found),
        expected,
    }
}

/// A value as Python's `repr` would print it, shortened to stay on one line.
fn python_repr(value: &Value) -> String {
    let mut s = String::new();
    repr_into(value, &mut s);
    if s.chars().count() > 80 {
        s = s.chars().take(77).collect::<String>() + "...";
    }
    s
}

fn repr_into(value: &Value, out: &mut String) {
    match value {
        Value::Str(text) => {
            out.push('\'');
            for c in text.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\'' => out.push_str("\\'"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c if c.is_control() => {
                        let _ = write!(out, "\\x{:02x}", u32::from(c));
                    }
                    c => out.push(c),
                }
            }
            out.push('\'');
        }
        Value::Int(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
        Value::None => out.push_str("None"),
        Value::Sequence(items) => {
            out.push('(');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                repr_into(item, out);
                if out.len() > 200 {
                    out.push_str(", ...");
                    break;
                }
            }
            if items.len() == 1 {
                out.push(',');
            }
            out.push(')');
        }
        Value::Dict(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                repr_into(k, out);
                out.push_str(": ");
                repr_into(v, out);
                if out.len() > 200 {
                    out.push_str(", ...");
                    break;
                }
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(version: (u8, u8), text: &str) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&[version.0, version.1]);
        if version.0 == 1 {
            out.extend_from_slice(&(text.len() as u16).to_le_bytes());
        } else {
            out.extend_from_slice(&(text.len() as u32).to_le_bytes());
        }
        out.extend_from_slice(text.as_bytes());
        out
    }

    const NUMPY_TEXT: &str =
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }          \n";

    #[test]
    fn reads_every_version() {
        for (v, offset) in [((1, 0), 10), ((2, 0), 12), ((3, 0), 12)] {
            let bytes = file(v, NUMPY_TEXT);
            let parsed = Header::parse(&bytes).unwrap();
            assert_eq!(parsed.version.major, v.0);
            assert_eq!(parsed.data_offset, (offset + NUMPY_TEXT.len()) as u64);
            assert_eq!(parsed.header.descr, "<f4");
            assert!(!parsed.header.fortran_order);
            assert_eq!(parsed.header.shape, [2, 3]);
            assert_eq!(parsed.header.element_count(), Some(6));
            assert_eq!(parsed.header.data_len(4), Some(24));
        }
    }

    #[test]
    fn writes_what_numpy_writes() {
        let h = Header {
            descr: "<f4".into(),
            fortran_order: false,
            shape: vec![3],
        };
        let bytes = h.to_bytes();
        assert_eq!(bytes.len() % DATA_ALIGNMENT, 0);
        assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
        let text = std::str::from_utf8(&bytes[10..]).unwrap();
        assert!(text.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"));
        assert!(text.ends_with(" \n"));
        let back = Header::parse(&bytes).unwrap();
        assert_eq!(back.header, h);
        assert_eq!(back.data_offset, bytes.len() as u64);
    }

    #[test]
    fn round_trips_shapes_and_orders() {
        for shape in [
            vec![],
            vec![0],
            vec![1, 0, 5],
            vec![u64::MAX],
            vec![1; 64],
            vec![7; 20],
        ] {
            for fortran_order in [false, true] {
                let h = Header {
                    descr: ">i8".into(),
                    fortran_order,
                    shape: shape.clone(),
                };
                let bytes = h.to_bytes();
                assert_eq!(bytes.len() % DATA_ALIGNMENT, 0);
                assert_eq!(Header::parse(&bytes).unwrap().header, h);
            }
        }
        assert_eq!(
            Header {
                descr: "|u1".into(),
                fortran_order: false,
                shape: vec![]
            }
            .shape_text(),
            "()"
        );
    }

    #[test]
    fn accepts_old_and_odd_spellings() {
        let texts = [
            "{'descr': '<f8', 'fortran_order': False, 'shape': (4L,), }\n",
            "{\"shape\": [4], \"fortran_order\": True, \"descr\": \"<f8\"}",
            "  {'descr':'<f8','fortran_order':False,'shape':(4,)}  ",
        ];
        for text in texts {
            let h = Header::parse_text(text.as_bytes()).unwrap();
            assert_eq!(h.shape, [4], "{text}");
            assert_eq!(h.descr, "<f8");
        }
    }

    #[test]
    fn rejects_bad_preambles() {
        assert!(matches!(
            Header::parse(b""),
            Err(NpyError::TooShort { len: 0 })
        ));
        assert!(matches!(
            Header::parse(b"\x93NUM"),
            Err(NpyError::TooShort { len: 4 })
        ));
        assert!(matches!(
            Header::parse(b"PK\x03\x04 zip"),
            Err(NpyError::BadMagic)
        ));
        assert!(matches!(
            Header::parse(b"\x93NUMPX\x01\x00"),
            Err(NpyError::BadMagic)
        ));
        assert!(matches!(
            Header::parse(b"\x93NUMPY\x04\x00\x10\x00"),
            Err(NpyError::UnsupportedVersion { major: 4, minor: 0 })
        ));
        assert!(matches!(
            Header::parse(b"\x93NUMPY\x01\x00\x10"),
            Err(NpyError::TooShort { len: 9 })
        ));
        assert!(matches!(
            Header::parse(b"\x93NUMPY\x02\x00\xff\xff\xff\xff{}"),
            Err(NpyError::HeaderTooLong { .. })
        ));
        let mut cut = file((1, 0), NUMPY_TEXT);
        cut.truncate(30);
        assert!(matches!(
            Header::parse(&cut),
            Err(NpyError::HeaderTruncated { available: 20, .. })
        ));
        let mut latin = file((3, 0), NUMPY_TEXT);
        latin[20] = 0xff;
        assert!(matches!(
            Header::parse(&latin),
            Err(NpyError::HeaderEncoding)
        ));
    }

    #[test]
    fn rejects_bad_dicts() {
        type Check = fn(&NpyError) -> bool;
        let cases: [(&str, Check); 11] = [
            ("[1, 2]", |e| matches!(e, NpyError::NotADict { .. })),
            ("{'descr': '<f4', 'shape': ()}", |e| {
                matches!(
                    e,
                    NpyError::MissingKey {
                        key: "fortran_order"
                    }
                )
            }),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}",
                |e| matches!(e, NpyError::UnexpectedKey { .. }),
            ),
            (
                "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}",
                |e| matches!(e, NpyError::DuplicateKey { .. }),
            ),
            (
                "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}",
                |e| matches!(e, NpyError::StructuredDtype),
            ),
            ("{'descr': 4, 'fortran_order': False, 'shape': ()}", |e| {
                matches!(e, NpyError::BadValue { key: "descr", .. })
            }),
            ("{'descr': '<f4', 'fortran_order': 0, 'shape': ()}", |e| {
                matches!(
                    e,
                    NpyError::BadValue {
                        key: "fortran_order",
                        ..
                    }
                )
            }),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
                |e| matches!(e, NpyError::BadValue { key: "shape", .. }),
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': 5}",
                |e| matches!(e, NpyError::BadValue { key: "shape", .. }),
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}",
                |e| matches!(e, NpyError::ShapeOverflow { .. }),
            ),
            (
                "{'descr': '<f4', 'fortran_order': False 'shape': ()}",
                |e| matches!(e, NpyError::Syntax { offset: 40, .. }),
            ),
        ];
        for (text, check) in cases {
            let err = Header::parse_text(text.as_bytes()).unwrap_err();
            assert!(check(&err), "{text}: {err}");
            assert!(!err.to_string().contains('\n'));
        }
        let many = format!(
            "{{'descr': '<f4', 'fortran_order': False, 'shape': ({})}}",
            "1, ".repeat(65)
        );
        assert!(matches!(
            Header::parse_text(many.as_bytes()),
            Err(NpyError::TooManyDimensions { count: 65, .. })
        ));
    }

    #[test]
    fn keys_in_messages_are_quoted_once() {
        let twice = "{'descr': '<f4', 'fortran_order': False, 'shape': (), 'shape': ()}";
        let err = Header::parse_text(twice.as_bytes()).unwrap_err();
        assert_eq!(err.to_string(), "header gives the key 'shape' twice");
        let other = "{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}";
        let err = Header::parse_text(other.as_bytes()).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("header has an unexpected key 'x' ("),
            "{err}"
        );
    }
}
