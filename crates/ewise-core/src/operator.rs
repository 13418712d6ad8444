//! Operator descriptions: what the caller asks for, before validation.

use std::fmt;

use crate::tensor::TensorDesc;

/// The operators ewise implements, with DirectML's `DML_OPERATOR_TYPE` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum OperatorType {
    /// `DML_OPERATOR_ELEMENT_WISE_SIGN` (79).
    ElementWiseSign = 79,
    /// `DML_OPERATOR_ELEMENT_WISE_IS_INFINITY` (100).
    ElementWiseIsInfinity = 100,
}

impl OperatorType {
    /// Both operators.
    pub const ALL: [OperatorType; 2] = [
        OperatorType::ElementWiseSign,
        OperatorType::ElementWiseIsInfinity,
    ];

    /// DirectML's numeric value.
    pub const fn raw(self) -> u32 {
        self as u32
    }

    /// DirectML's name without the prefix: `ELEMENT_WISE_SIGN`.
    pub const fn name(self) -> &'static str {
        match self {
            OperatorType::ElementWiseSign => "ELEMENT_WISE_SIGN",
            OperatorType::ElementWiseIsInfinity => "ELEMENT_WISE_IS_INFINITY",
        }
    }
}

impl fmt::Display for OperatorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which infinities `ELEMENT_WISE_IS_INFINITY` detects (`DML_IS_INFINITY_MODE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u32)]
pub enum InfinityMode {
    /// `DML_IS_INFINITY_MODE_EITHER` (0): true for +inf and -inf.
    #[default]
    Either = 0,
    /// `DML_IS_INFINITY_MODE_POSITIVE` (1): true for +inf only.
    Positive = 1,
    /// `DML_IS_INFINITY_MODE_NEGATIVE` (2): true for -inf only.
    Negative = 2,
    /// Extension (value 1000): always false. ONNX `IsInf` with
    /// `detect_positive = detect_negative = 0`; DirectML has no such mode, so the strict
    /// API rejects it.
    Neither = 1000,
}

impl InfinityMode {
    /// Every mode, DirectML's three first.
    pub const ALL: [InfinityMode; 4] = [
        InfinityMode::Either,
        InfinityMode::Positive,
        InfinityMode::Negative,
        InfinityMode::Neither,
    ];

    /// The numeric value (DirectML's, or 1000 for the `Neither` extension).
    pub const fn raw(self) -> u32 {
        self as u32
    }

    /// The mode for ONNX `IsInf`'s `detect_positive` and `detect_negative` attributes.
    pub const fn from_detect(positive: bool, negative: bool) -> InfinityMode {
        match (positive, negative) {
            (true, true) => InfinityMode::Either,
            (true, false) => InfinityMode::Positive,
            (false, true) => InfinityMode::Negative,
            (false, false) => InfinityMode::Neither,
        }
    }

    /// Whether +inf is detected.
    pub const fn detects_positive(self) -> bool {
        matches!(self, InfinityMode::Either | InfinityMode::Positive)
    }

    /// Whether -inf is detected.
    pub const fn detects_negative(self) -> bool {
        matches!(self, InfinityMode::Either | InfinityMode::Negative)
    }

    /// True for modes DirectML does not have.
    pub const fn is_extension(self) -> bool {
        matches!(self, InfinityMode::Neither)
    }

    /// DirectML's name without the prefix: `EITHER`.
    pub const fn name(self) -> &'static str {
        match self {
            InfinityMode::Either => "EITHER",
            InfinityMode::Positive => "POSITIVE",
            InfinityMode::Negative => "NEGATIVE",
            InfinityMode::Neither => "NEITHER",
        }
    }
}

impl fmt::Display for InfinityMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What `ELEMENT_WISE_SIGN` gives for a NaN input (floating-point types only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum NanPolicy {
    /// NaN gives +0: DirectML's formula ("0 otherwise"). The default of the
    /// DirectML-compatible API.
    #[default]
    Zero,
    /// NaN gives the input NaN unchanged, bit for bit (sign and payload kept), as ONNX's
    /// reference implementation and numpy do. The default of the ONNX front end.
    Propagate,
}

impl NanPolicy {
    /// Both policies.
    pub const ALL: [NanPolicy; 2] = [NanPolicy::Zero, NanPolicy::Propagate];

    /// Lower-case name: `zero` or `propagate`.
    pub const fn name(self) -> &'static str {
        match self {
            NanPolicy::Zero => "zero",
            NanPolicy::Propagate => "propagate",
        }
    }
}

impl fmt::Display for NanPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which tensor of an operator a message or binding refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TensorRole {
    /// The operator's `InputTensor`.
    Input,
    /// The operator's `OutputTensor`.
    Output,
}

impl TensorRole {
    /// DirectML's field name: `InputTensor` or `OutputTensor`.
    pub const fn name(self) -> &'static str {
        match self {
            TensorRole::Input => "InputTensor",
            TensorRole::Output => "OutputTensor",
        }
    }
}

impl fmt::Display for TensorRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `DML_ELEMENT_WISE_SIGN_OPERATOR_DESC`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SignDesc {
    /// The tensor to read.
    pub input: TensorDesc,
    /// The tensor to write: same data type, dimension count and sizes as the input.
    pub output: TensorDesc,
}

/// `DML_ELEMENT_WISE_IS_INFINITY_OPERATOR_DESC`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IsInfinityDesc {
    /// The floating-point tensor to read.
    pub input: TensorDesc,
    /// The UINT8 (or, as an extension, BOOL) tensor to write: 1 where the input is an
    /// infinity the mode detects, 0 elsewhere.
    pub output: TensorDesc,
    /// Which infinities to detect.
    pub mode: InfinityMode,
}

/// `DML_OPERATOR_DESC`: one of the operators ewise implements.
///
/// Built from its tensors' descriptions ([`TensorDesc`]); a device creates an operator
/// from it, validated against the device's feature level (`ewise::Device`'s page shows
/// the whole path: create, compile, bind, execute, read back).
///
/// ```
/// use ewise_core::{
///     validate, DataType, Extensions, FeatureLevel, InfinityMode, OperatorDesc, OperatorType,
///     TensorDesc,
/// };
///
/// let x = TensorDesc::new(DataType::Float32, &[1, 1, 2, 8]);
/// let flags = TensorDesc::new(DataType::Uint8, &[1, 1, 2, 8]);
/// let desc = OperatorDesc::is_infinity(x, flags, InfinityMode::Either);
/// assert_eq!(desc.operator_type(), OperatorType::ElementWiseIsInfinity);
/// validate(&desc, FeatureLevel::L4_1, Extensions::Disabled).unwrap();
///
/// // IS_INFINITY came with feature level 2_1: at 2_0 the description is refused.
/// let err = validate(&desc, FeatureLevel::L2_0, Extensions::Disabled).unwrap_err();
/// assert!(err.to_string().contains("2_1"), "{err}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum OperatorDesc {
    /// `ELEMENT_WISE_SIGN`.
    Sign(SignDesc),
    /// `ELEMENT_WISE_IS_INFINITY`.
    IsInfinity(IsInfinityDesc),
}

impl OperatorDesc {
    /// A SIGN description.
    pub fn sign(input: TensorDesc, output: TensorDesc) -> OperatorDesc {
        OperatorDesc::Sign(SignDesc { input, output })
    }

    /// An IS_INFINITY description.
    pub fn is_infinity(input: TensorDesc, output: TensorDesc, mode: InfinityMode) -> OperatorDesc {
        OperatorDesc::IsInfinity(IsInfinityDesc {
            input,
            output,
            mode,
        })
    }

    /// Which operator this describes.
    pub fn operator_type(&self) -> OperatorType {
        match self {
            OperatorDesc::Sign(_) => OperatorType::ElementWiseSign,
            OperatorDesc::IsInfinity(_) => OperatorType::ElementWiseIsInfinity,
        }
    }

    /// The input tensor's description.
    pub fn input(&self) -> &TensorDesc {
        match self {
            OperatorDesc::Sign(d) => &d.input,
            OperatorDesc::IsInfinity(d) => &d.input,
        }
    }

    /// The output tensor's description.
    pub fn output(&self) -> &TensorDesc {
        match self {
            OperatorDesc::Sign(d) => &d.output,
            OperatorDesc::IsInfinity(d) => &d.output,
        }
    }

    /// The description of the tensor in this role.
    pub fn tensor(&self, role: TensorRole) -> &TensorDesc {
        match role {
            TensorRole::Input => self.input(),
            TensorRole::Output => self.output(),
        }
    }
}
