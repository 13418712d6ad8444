//! What can be wrong with a `.npy` file.

use std::io;

use ewise_cpu::DataType;

/// A `.npy` file that cannot be read or written as asked. Messages are one line and
/// do not name the file: callers prefix its path.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NpyError {
    /// The file ends before the magic string, version and header length.
    #[error("truncated: {len} bytes, too short for a .npy header")]
    TooShort {
        /// Bytes in the file.
        len: u64,
    },
    /// The file does not start with `\x93NUMPY`.
    #[error("not a .npy file (it does not start with the magic string \\x93NUMPY)")]
    BadMagic,
    /// A format version other than 1.0, 2.0 and 3.0.
    #[error("unsupported .npy format version {major}.{minor} (supported: 1.0, 2.0, 3.0)")]
    UnsupportedVersion {
        /// Major version byte.
        major: u8,
        /// Minor version byte.
        minor: u8,
    },
    /// The header length field is beyond what any real header needs.
    #[error("header length {declared} is implausible (at most {max} bytes accepted)")]
    HeaderTooLong {
        /// The length the file declares.
        declared: u64,
        /// The most accepted.
        max: u64,
    },
    /// The file ends inside the header.
    #[error(
        "truncated: the header declares {declared} bytes of text, but only {available} follow"
    )]
    HeaderTruncated {
        /// The length the file declares.
        declared: u64,
        /// Bytes actually there.
        available: u64,
    },
    /// A version 3.0 header that is not UTF-8.
    #[error("header text is not valid UTF-8 (required by format version 3.0)")]
    HeaderEncoding,
    /// The header text is not a Python literal.
    #[error("header is not a valid Python literal: at byte {offset} of the header text, expected {expected}")]
    Syntax {
        /// Byte offset in the header text.
        offset: usize,
        /// What was expected there.
        expected: &'static str,
    },
    /// The header is a literal, but not a dict.
    #[error("header is {found}, not a dict")]
    NotADict {
        /// What it is.
        found: &'static str,
    },
    /// One of `descr`, `fortran_order` and `shape` is missing.
    #[error("header has no '{key}' key (it needs 'descr', 'fortran_order' and 'shape')")]
    MissingKey {
        /// The missing key.
        key: &'static str,
    },
    /// A key other than the three the format defines.
    #[error("header has an unexpected key {key} (only 'descr', 'fortran_order' and 'shape' are allowed)")]
    UnexpectedKey {
        /// The key, as Python would print it.
        key: String,
    },
    /// A key given twice.
    #[error("header gives the key {key} twice")]
    DuplicateKey {
        /// The repeated key, as Python would print it (quoted).
        key: String,
    },
    /// A value of the wrong kind.
    #[error("header '{key}' is {found}, but must be {expected}")]
    BadValue {
        /// The key.
        key: &'static str,
        /// What it is.
        found: String,
        /// What it must be.
        expected: &'static str,
    },
    /// A structured (record) dtype.
    #[error("structured dtypes (a list of fields in 'descr') are not supported; save a plain numeric array")]
    StructuredDtype,
    /// More dimensions than numpy allows.
    #[error("shape has {count} dimensions (numpy allows at most {max})")]
    TooManyDimensions {
        /// Dimensions in the shape.
        count: usize,
        /// The most accepted.
        max: usize,
    },
    /// The shape's byte count does not fit in 64 bits.
    #[error("shape {shape} holds more bytes than a 64-bit size can count")]
    ShapeOverflow {
        /// The shape, as Python would print it.
        shape: String,
    },
    /// `descr` is not a numpy type string.
    #[error("'descr' {descr:?} is not a numpy type string such as '<f4'")]
    BadTypeString {
        /// The descriptor.
        descr: String,
    },
    /// A dtype the operators do not take.
    #[error("dtype '{descr}' ({reason}) is not supported (supported: <f2 <f4 <f8 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8 |b1, either byte order, and ml_dtypes' bfloat16 '<V2' and float8 '<f1' with --dtype)")]
    UnsupportedDtype {
        /// The descriptor.
        descr: String,
        /// What kind of data it holds.
        reason: &'static str,
    },
    /// Raw bytes (`V`) or one-byte floats (`f1`), with no type named for them.
    #[error("dtype '{descr}' does not say which {size}-byte type it holds (ml_dtypes saves types numpy lacks this way); {}", raw_hint(*.size))]
    RawNeedsType {
        /// The descriptor.
        descr: String,
        /// Bytes per element.
        size: u64,
    },
    /// The type named by the caller does not fit the file's type string.
    #[error("--dtype {} does not match the file's dtype '{descr}'", .requested.name().to_lowercase())]
    TypeMismatch {
        /// The descriptor.
        descr: String,
        /// The type the caller named.
        requested: DataType,
    },
    /// Reading failed.
    #[error("read failed: {0}")]
    Io(#[from] io::Error),
}

fn raw_hint(size: u64) -> &'static str {
    match size {
        2 => "pass --dtype bfloat16",
        1 => "pass --dtype float8e4m3fn, float8e4m3fnuz, float8e5m2 or float8e5m2fnuz",
        _ => "no ewise type has that size",
    }
}
