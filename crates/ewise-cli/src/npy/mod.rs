//! Reading and writing the `.npy` format (versions 1.0, 2.0 and 3.0).
//!
//! Only the header is handled here; callers move the data themselves, in chunks, so that
//! files larger than memory stream through. The header parser is written for hostile
//! input: it never panics, never allocates more than the bytes present, and bounds the
//! nesting of the Python literal it reads.
//!
//! ```
//! use ewise_cli::npy::{ElementType, Header};
//!
//! let header = Header { descr: "<f4".into(), fortran_order: false, shape: vec![2, 3] };
//! let bytes = header.to_bytes();
//! let parsed = Header::parse(&bytes)?;
//! assert_eq!(parsed.header, header);
//! assert_eq!(parsed.data_offset, 128);
//! let element = ElementType::from_descr(&parsed.header.descr, None)?;
//! assert_eq!(element.data_type, ewise_cpu::DataType::Float32);
//! # Ok::<(), ewise_cli::npy::NpyError>(())
//! ```

mod dtype;
mod error;
mod header;
mod literal;

pub use dtype::{swap_bytes, ByteOrder, ElementType, TypeStr, RAW_TYPES};
pub use error::NpyError;
pub use header::{
    Header, ParsedHeader, Version, DATA_ALIGNMENT, MAGIC, MAX_DIMENSIONS, MAX_HEADER_LEN,
};

#[cfg(test)]
mod proptests;
