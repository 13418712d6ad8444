//! Typed errors. Every message names the operator, the tensor, the field, the value given
//! and what would be accepted.

use crate::dtype::{DataType, TypeList};
use crate::level::FeatureLevel;
use crate::operator::{InfinityMode, OperatorType, TensorRole};
use crate::tensor::TensorFlags;

/// Formats a list of sizes as `[1, 2, 3]`.
struct Dims<'a>(&'a [u32]);

impl std::fmt::Display for Dims<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

fn dims(d: &[u32]) -> Dims<'_> {
    Dims(d)
}

fn types(t: &[DataType]) -> TypeList<'_> {
    TypeList(t)
}

fn dimension_range(min: u32, max: u32) -> String {
    if min == max {
        min.to_string()
    } else {
        format!("{min} to {max}")
    }
}

/// Where a caller's binding was meant to go: the input or output binding list.
pub type BindingRole = TensorRole;

/// How two bound ranges conflict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HazardKind {
    /// An input and an output share some, but not exactly all, of their range.
    PartialOverlap,
    /// An input and an output share exactly the same range, but the operator does not
    /// support in-place execution.
    InPlaceNotSupported,
}

/// Every way a description, device request or execution can be refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The device's feature level is below the operator's introduction.
    #[error("{operator} is not supported at feature level {level} (introduced at feature level {introduced})")]
    OperatorNotAvailable {
        /// The operator.
        operator: OperatorType,
        /// The device's level.
        level: FeatureLevel,
        /// The level that introduced the operator.
        introduced: FeatureLevel,
    },
    /// A data type outside the support table.
    #[error("{operator}: {tensor} data type {given} is not supported at feature level {level}{} (supported: {})", ext_suffix(*.extensions), types(.supported))]
    UnsupportedDataType {
        /// The operator.
        operator: OperatorType,
        /// Which tensor.
        tensor: TensorRole,
        /// The type given.
        given: DataType,
        /// The device's level.
        level: FeatureLevel,
        /// Whether extensions were enabled.
        extensions: bool,
        /// The types accepted there.
        supported: &'static [DataType],
    },
    /// A dimension count outside the support table.
    #[error("{operator}: {tensor} DimensionCount {given} is not supported at feature level {level}{} (supported: {})", ext_suffix(*.extensions), dimension_range(*.min, *.max))]
    UnsupportedDimensionCount {
        /// The operator.
        operator: OperatorType,
        /// Which tensor.
        tensor: TensorRole,
        /// The count given.
        given: usize,
        /// The device's level.
        level: FeatureLevel,
        /// Whether extensions were enabled.
        extensions: bool,
        /// Lowest accepted count.
        min: u32,
        /// Highest accepted count.
        max: u32,
    },
    /// The output's data type differs from the input's where they must match.
    #[error("{operator}: OutputTensor data type {output} does not match InputTensor data type {input} (they must be equal)")]
    DataTypeMismatch {
        /// The operator.
        operator: OperatorType,
        /// The input's type.
        input: DataType,
        /// The output's type.
        output: DataType,
    },
    /// The output's dimension count or sizes differ from the input's.
    #[error("{operator}: OutputTensor Sizes {} do not match InputTensor Sizes {} (they must be equal, with the same DimensionCount)", dims(.output), dims(.input))]
    SizesMismatch {
        /// The operator.
        operator: OperatorType,
        /// The input's sizes.
        input: Vec<u32>,
        /// The output's sizes.
        output: Vec<u32>,
    },
    /// A size of 0 under the strict rules.
    #[error("{operator}: {tensor} Sizes[{dimension}] is 0 in Sizes {} (every size must be at least 1)", dims(.sizes))]
    ZeroSize {
        /// The operator.
        operator: OperatorType,
        /// Which tensor.
        tensor: TensorRole,
        /// The offending dimension.
        dimension: usize,
        /// All sizes.
        sizes: Vec<u32>,
    },
    /// More elements than allowed.
    #[error("{operator}: {tensor} Sizes {} hold {count} elements (at most {max} allowed)", dims(.sizes))]
    TooManyElements {
        /// The operator.
        operator: OperatorType,
        /// Which tensor.
        tensor: TensorRole,
        /// The sizes.
        sizes: Vec<u32>,
        /// Their product (saturated at `u128::MAX`).
        count: u128,
        /// The limit.
        max: u64,
    },
    /// Strides given, but not one per dimension.
    #[error("{operator}: {tensor} Strides has {given} entries (expected {expected}, one per dimension, or no strides for packed row-major)")]
    StrideCount {
        /// The operator.
        operator: OperatorType,
        /// Which tensor.
        tensor: TensorRole,
        /// Entries given.
        given: usize,
        /// The dimension count.
        expected: usize,
    },
    /// A zero stride on an output: two output elements would share one address.
    #[error("{operator}: OutputTensor Strides[{dimension}] is 0 in Strides {} (output strides must be non-zero where the size exceeds 1: two elements would share one address)", dims(.strides))]
    ZeroOutputStride {
        /// The operator.
        operator: OperatorType,
        /// The offending dimension.
        dimension: usize,
        /// All strides.
        strides: Vec<u32>,
    },
    /// Output strides that place two elements at one address (without a zero stride).
    #[error("{operator}: OutputTensor Strides {} place more than one element of Sizes {} at one address (each output element needs its own bytes; strides that nest, each at least the extent of the smaller ones, always do)", dims(.strides), dims(.sizes))]
    OverlappingOutput {
        /// The operator.
        operator: OperatorType,
        /// The sizes.
        sizes: Vec<u32>,
        /// The strides.
        strides: Vec<u32>,
    },
    /// TotalTensorSizeInBytes below the minimum the layout needs.
    #[error("{operator}: {tensor} TotalTensorSizeInBytes {given} is too small (at least {required} required by its sizes, strides and data type)")]
    TotalSizeTooSmall {
        /// The operator.
        operator: OperatorType,
        /// Which tensor.
        tensor: TensorRole,
        /// The size given.
        given: u64,
        /// The minimum (DMLCalcBufferTensorSize).
        required: u64,
    },
    /// The layout spans more bytes than a `u64` or this machine's address space can hold.
    #[error("{operator}: {tensor} layout spans more bytes than this machine can address (Sizes {}, data type {data_type})", dims(.sizes))]
    TensorTooLarge {
        /// The operator.
        operator: OperatorType,
        /// Which tensor.
        tensor: TensorRole,
        /// The sizes.
        sizes: Vec<u32>,
        /// The element type.
        data_type: DataType,
    },
    /// GuaranteedBaseOffsetAlignment neither 0 nor a power of two >= the element size.
    #[error("{operator}: {tensor} GuaranteedBaseOffsetAlignment {given} is invalid (accepted: 0, or a power of two no smaller than the element size {element_size})")]
    InvalidAlignment {
        /// The operator.
        operator: OperatorType,
        /// Which tensor.
        tensor: TensorRole,
        /// The value given.
        given: u32,
        /// The element size in bytes.
        element_size: u64,
    },
    /// Flags other than NONE.
    #[error("{operator}: {tensor} Flags {given} is not supported (accepted: NONE; ewise binds all data at execution, so OWNED_BY_DML is refused)")]
    UnsupportedFlags {
        /// The operator.
        operator: OperatorType,
        /// Which tensor.
        tensor: TensorRole,
        /// The flags given.
        given: TensorFlags,
    },
    /// An IS_INFINITY mode the strict API does not have.
    #[error("{operator}: InfinityMode {given} is not supported without extensions (supported: EITHER, POSITIVE, NEGATIVE)")]
    UnsupportedInfinityMode {
        /// The operator.
        operator: OperatorType,
        /// The mode given.
        given: InfinityMode,
    },
    /// A device was asked for a minimum level above what it supports.
    #[error("device creation failed: minimum feature level {requested} is above the highest this device supports ({supported})")]
    FeatureLevelUnavailable {
        /// The minimum asked for.
        requested: FeatureLevel,
        /// The device's level.
        supported: FeatureLevel,
    },
    /// Wrong number of bindings.
    #[error("{operator}: {given} {role} binding(s) given (exactly {expected} required)", role = binding_word(*.role))]
    BindingCount {
        /// The operator.
        operator: OperatorType,
        /// Input or output bindings.
        role: BindingRole,
        /// How many were given.
        given: usize,
        /// How many the operator has.
        expected: usize,
    },
    /// A binding names a buffer index that does not exist.
    #[error("{operator}: {tensor} binding refers to buffer {buffer}, but only {count} buffer(s) were given")]
    BindingBufferIndex {
        /// The operator.
        operator: OperatorType,
        /// Which tensor.
        tensor: TensorRole,
        /// The index given.
        buffer: usize,
        /// Buffers given.
        count: usize,
    },
    /// A binding offset that is not a multiple of the required alignment.
    #[error("{operator}: {tensor} binding Offset {offset} is not a multiple of {alignment} (16 bytes, or the tensor's GuaranteedBaseOffsetAlignment when given)")]
    BindingOffsetAlignment {
        /// The operator.
        operator: OperatorType,
        /// Which tensor.
        tensor: TensorRole,
        /// The offset given.
        offset: u64,
        /// The alignment required.
        alignment: u64,
    },
    /// A bound size below the tensor's total size.
    #[error("{operator}: {tensor} binding SizeInBytes {given} is smaller than the tensor's TotalTensorSizeInBytes {required}")]
    BindingTooSmall {
        /// The operator.
        operator: OperatorType,
        /// Which tensor.
        tensor: TensorRole,
        /// The size given.
        given: u64,
        /// The tensor's total size.
        required: u64,
    },
    /// A bound range that does not lie inside its buffer.
    #[error("{operator}: {tensor} binding range Offset {offset} + SizeInBytes {size} lies outside its buffer of {buffer_len} bytes")]
    BindingOutOfRange {
        /// The operator.
        operator: OperatorType,
        /// Which tensor.
        tensor: TensorRole,
        /// The offset given.
        offset: u64,
        /// The size given.
        size: u64,
        /// The buffer's length.
        buffer_len: u64,
    },
    /// An output bound to a buffer given read-only.
    #[error("{operator}: OutputTensor binding refers to buffer {buffer}, which was given read-only (outputs need a writable buffer)")]
    ReadOnlyOutput {
        /// The operator.
        operator: OperatorType,
        /// The buffer index.
        buffer: usize,
    },
    /// Two bound ranges that may not share memory do.
    #[error("{operator}: InputTensor range [{input_offset}, +{input_size}) and OutputTensor range [{output_offset}, +{output_size}) in buffer {buffer} {}", hazard_text(*.kind))]
    Hazard {
        /// The operator.
        operator: OperatorType,
        /// What is wrong.
        kind: HazardKind,
        /// The shared buffer's index.
        buffer: usize,
        /// The input binding's offset.
        input_offset: u64,
        /// The input binding's size.
        input_size: u64,
        /// The output binding's offset.
        output_offset: u64,
        /// The output binding's size.
        output_size: u64,
    },
    /// A byte slice shorter than its tensor's layout needs.
    #[error("{operator}: {tensor} data has {given} bytes, but its sizes, strides and data type need {required}")]
    BytesTooShort {
        /// The operator.
        operator: OperatorType,
        /// Which tensor.
        tensor: TensorRole,
        /// Bytes given.
        given: u64,
        /// Bytes required (the exact span, without rounding).
        required: u64,
    },
    /// In-place execution was asked of an operator or layout pair that does not allow it.
    #[error("{operator}: in-place execution is not possible here ({reason})")]
    InPlaceUnsupported {
        /// The operator.
        operator: OperatorType,
        /// Why not.
        reason: &'static str,
    },
    /// The array-level API was given a slice whose length does not match the shape.
    #[error("{operator}: {tensor} slice has {given} elements, but its shape and strides need {required}")]
    SliceLength {
        /// The operator.
        operator: OperatorType,
        /// Which tensor.
        tensor: TensorRole,
        /// Elements given.
        given: usize,
        /// Elements required.
        required: u64,
    },
    /// The byte-level array API was given bytes that are not a whole number of elements.
    #[error("{operator}: {tensor} holds {bytes} bytes, which is not a whole number of {element_size}-byte elements")]
    PartialElement {
        /// The operator.
        operator: OperatorType,
        /// Which tensor.
        tensor: TensorRole,
        /// Bytes given.
        bytes: usize,
        /// The element size in bytes.
        element_size: usize,
    },
    /// A copy an execution needs could not be allocated (the allocation is fallible,
    /// so memory exhaustion is this error, never an abort); nothing was written.
    #[error("{operator}: out of memory: {bytes} bytes for {what} could not be allocated")]
    OutOfMemory {
        /// The operator.
        operator: OperatorType,
        /// Bytes asked for.
        bytes: u64,
        /// What they were for.
        what: &'static str,
    },
}

fn ext_suffix(extensions: bool) -> &'static str {
    if extensions {
        " with extensions"
    } else {
        ""
    }
}

fn binding_word(role: BindingRole) -> &'static str {
    match role {
        TensorRole::Input => "input",
        TensorRole::Output => "output",
    }
}

fn hazard_text(kind: HazardKind) -> &'static str {
    match kind {
        HazardKind::PartialOverlap => {
            "partially overlap (an input and an output may share memory only when their ranges are identical and the operator supports in-place execution)"
        }
        HazardKind::InPlaceNotSupported => {
            "are identical, but this operator does not support in-place execution (bind the output to separate memory)"
        }
    }
}

/// `Result` with ewise's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
