//! Buffers and bindings: the memory an operator reads and writes at execution.

use std::ops::{Deref, DerefMut};

use bytemuck::{Pod, Zeroable};

/// One cache line of a [`Buffer`]'s storage.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

// SAFETY: `Line` is a `repr(C)` wrapper of a byte array whose size (64) equals its
// alignment, so it has no padding, every bit pattern is valid and all-zero is valid.
#[allow(unsafe_code)]
unsafe impl Zeroable for Line {}
// SAFETY: as above; it also holds no pointers and is `Copy + 'static`.
#[allow(unsafe_code)]
unsafe impl Pod for Line {}

/// A zero-initialized byte buffer whose start is aligned to 64 bytes, so every element
/// type and vector width lines up. Any `&[u8]` works as a buffer too; unaligned ones
/// take a slower copying path.
#[derive(Clone)]
pub struct Buffer {
    lines: Vec<Line>,
    len: usize,
}

impl Buffer {
    /// A buffer of `len` zero bytes.
    pub fn zeroed(len: usize) -> Buffer {
        Buffer {
            lines: vec![Line([0; 64]); len.div_ceil(64)],
            len,
        }
    }

    /// A buffer holding a copy of `bytes`.
    pub fn from_bytes(bytes: &[u8]) -> Buffer {
        let mut b = Buffer::zeroed(bytes.len());
        b.copy_from_slice(bytes);
        b
    }

    /// A buffer holding a copy of `values`' bytes (native byte order).
    pub fn from_values<T: Pod>(values: &[T]) -> Buffer {
        Buffer::from_bytes(bytemuck::cast_slice(values))
    }
}

impl Deref for Buffer {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.lines)[..self.len]
    }
}

impl DerefMut for Buffer {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut(&mut self.lines)[..self.len]
    }
}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buffer").field("len", &self.len).finish()
    }
}

/// A buffer handed to an execution: read-only (inputs only) or writable.
#[derive(Debug)]
pub enum BufferRef<'a> {
    /// A buffer that may only be bound to inputs.
    ReadOnly(&'a [u8]),
    /// A buffer that may be bound to inputs and outputs.
    ReadWrite(&'a mut [u8]),
}

impl BufferRef<'_> {
    /// The buffer's length in bytes.
    pub fn len(&self) -> usize {
        match self {
            BufferRef::ReadOnly(b) => b.len(),
            BufferRef::ReadWrite(b) => b.len(),
        }
    }

    /// True when the buffer holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            BufferRef::ReadOnly(b) => b,
            BufferRef::ReadWrite(b) => b,
        }
    }
}

impl<'a> From<&'a [u8]> for BufferRef<'a> {
    fn from(b: &'a [u8]) -> Self {
        BufferRef::ReadOnly(b)
    }
}

impl<'a> From<&'a mut [u8]> for BufferRef<'a> {
    fn from(b: &'a mut [u8]) -> Self {
        BufferRef::ReadWrite(b)
    }
}

impl<'a> From<&'a Buffer> for BufferRef<'a> {
    fn from(b: &'a Buffer) -> Self {
        BufferRef::ReadOnly(b)
    }
}

impl<'a> From<&'a mut Buffer> for BufferRef<'a> {
    fn from(b: &'a mut Buffer) -> Self {
        BufferRef::ReadWrite(b)
    }
}

impl<'a> From<&'a mut Vec<u8>> for BufferRef<'a> {
    fn from(b: &'a mut Vec<u8>) -> Self {
        BufferRef::ReadWrite(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_and_sized() {
        for len in [0usize, 1, 63, 64, 65, 1000] {
            let b = Buffer::zeroed(len);
            assert_eq!(b.len(), len);
            assert_eq!(b.as_ptr() as usize % 64, 0);
            assert!(b.iter().all(|&x| x == 0));
        }
        let b = Buffer::from_values(&[1u16, 2]);
        assert_eq!(&b[..], &[1u16, 2].map(u16::to_ne_bytes).concat()[..]);
    }
}
