//! Buffer bindings and the rules every backend applies to them at execution
//! (docs/SEMANTICS.md section 5): counts, offset alignment, bound sizes, ranges inside their
//! buffers, and hazards between the input and output ranges.

use crate::error::{Error, HazardKind, Result};
use crate::operator::{OperatorType, TensorRole};
use crate::tensor::TensorDesc;

/// Binding offsets must be multiples of this unless a tensor guarantees another alignment.
pub const DEFAULT_BINDING_ALIGNMENT: u64 = 16;

/// `DML_BUFFER_BINDING`: a range of one of the buffers given to an execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BufferBinding {
    /// Index of the buffer in the execution's buffer list.
    pub buffer: usize,
    /// Byte offset of the tensor's base: a multiple of 16, or of the tensor's
    /// GuaranteedBaseOffsetAlignment when that is given.
    pub offset: u64,
    /// Bytes bound: at least the tensor's TotalTensorSizeInBytes.
    pub size_in_bytes: u64,
}

impl BufferBinding {
    /// A binding of `size_in_bytes` bytes at `offset` in buffer number `buffer`.
    pub const fn new(buffer: usize, offset: u64, size_in_bytes: u64) -> BufferBinding {
        BufferBinding {
            buffer,
            offset,
            size_in_bytes,
        }
    }

    /// One past the last bound byte, or `None` on overflow.
    pub const fn end(&self) -> Option<u64> {
        self.offset.checked_add(self.size_in_bytes)
    }
}

/// How the checked input and output bindings relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Different buffers.
    Separate,
    /// One buffer, disjoint ranges.
    Disjoint,
    /// One buffer, exactly the same non-empty range (in-place execution).
    InPlace,
}

/// The bindings of one execution, checked against an operator's tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bindings {
    /// The input's binding.
    pub input: BufferBinding,
    /// The output's binding.
    pub output: BufferBinding,
}

/// Checks one input and one output binding as DirectML's execution does, in this order:
/// binding counts (exactly one of each), then for the input and then the output: buffer
/// index (`buffer_len` gives a buffer's length, `None` past the last buffer), offset
/// alignment (16 bytes or the tensor's GuaranteedBaseOffsetAlignment), bound size (at
/// least TotalTensorSizeInBytes) and range inside the buffer.
pub fn check_bindings(
    operator: OperatorType,
    (input, output): (&TensorDesc, &TensorDesc),
    (inputs, outputs): (&[BufferBinding], &[BufferBinding]),
    buffer_len: impl Fn(usize) -> Option<u64>,
    buffer_count: usize,
) -> Result<Bindings> {
    let count = |role, given: usize| {
        if given == 1 {
            Ok(())
        } else {
            Err(Error::BindingCount {
                operator,
                role,
                given,
                expected: 1,
            })
        }
    };
    count(TensorRole::Input, inputs.len())?;
    count(TensorRole::Output, outputs.len())?;
    let check = |tensor, desc: &TensorDesc, b: BufferBinding| -> Result<()> {
        let buffer_len = buffer_len(b.buffer).ok_or(Error::BindingBufferIndex {
            operator,
            tensor,
            buffer: b.buffer,
            count: buffer_count,
        })?;
        let alignment = match desc.guaranteed_base_offset_alignment {
            0 => DEFAULT_BINDING_ALIGNMENT,
            a => u64::from(a),
        };
        if !b.offset.is_multiple_of(alignment) {
            return Err(Error::BindingOffsetAlignment {
                operator,
                tensor,
                offset: b.offset,
                alignment,
            });
        }
        if b.size_in_bytes < desc.total_tensor_size_in_bytes {
            return Err(Error::BindingTooSmall {
                operator,
                tensor,
                given: b.size_in_bytes,
                required: desc.total_tensor_size_in_bytes,
            });
        }
        if b.end().is_none_or(|end| end > buffer_len) {
            return Err(Error::BindingOutOfRange {
                operator,
                tensor,
                offset: b.offset,
                size: b.size_in_bytes,
                buffer_len,
            });
        }
        Ok(())
    };
    check(TensorRole::Input, input, inputs[0])?;
    check(TensorRole::Output, output, outputs[0])?;
    Ok(Bindings {
        input: inputs[0],
        output: outputs[0],
    })
}

impl Bindings {
    /// How the two ranges relate, refusing hazards: the input and output may share
    /// memory only when their ranges are identical and the operator supports in-place
    /// execution (`in_place`); any partial overlap is an error.
    pub fn placement(&self, operator: OperatorType, in_place: bool) -> Result<Placement> {
        let (inb, outb) = (self.input, self.output);
        if inb.buffer != outb.buffer {
            return Ok(Placement::Separate);
        }
        let hazard = |kind| Error::Hazard {
            operator,
            kind,
            buffer: inb.buffer,
            input_offset: inb.offset,
            input_size: inb.size_in_bytes,
            output_offset: outb.offset,
            output_size: outb.size_in_bytes,
        };
        // Both ranges lie inside one buffer (checked), so their ends do not overflow.
        let (in_end, out_end) = (
            inb.offset + inb.size_in_bytes,
            outb.offset + outb.size_in_bytes,
        );
        if inb.offset == outb.offset && in_end == out_end && inb.size_in_bytes > 0 {
            return if in_place {
                Ok(Placement::InPlace)
            } else {
                Err(hazard(HazardKind::InPlaceNotSupported))
            };
        }
        if inb.offset < out_end && outb.offset < in_end {
            return Err(hazard(HazardKind::PartialOverlap));
        }
        Ok(Placement::Disjoint)
    }
}
