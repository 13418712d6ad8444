//! The C-visible types: DirectML's structs and enums as `ewise.h` declares them
//! (directml.h's names, values, field order; `UINT` as `u32`, `UINT64` as `u64`, `BOOL`
//! as `i32`), and ewise's own. Every C enum is a `u32` alias with its values as
//! constants: a value from C is read raw and converted with a check, never transmuted.
#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::c_void;

/// `DML_TENSOR_DATA_TYPE`, and the ewise extension numbers (1000 and up).
pub type DML_TENSOR_DATA_TYPE = u32;
/// `DML_TENSOR_DATA_TYPE_UNKNOWN`.
pub const DML_TENSOR_DATA_TYPE_UNKNOWN: DML_TENSOR_DATA_TYPE = 0;
/// `DML_TENSOR_DATA_TYPE_FLOAT32`.
pub const DML_TENSOR_DATA_TYPE_FLOAT32: DML_TENSOR_DATA_TYPE = 1;
/// `DML_TENSOR_DATA_TYPE_FLOAT16`.
pub const DML_TENSOR_DATA_TYPE_FLOAT16: DML_TENSOR_DATA_TYPE = 2;
/// `DML_TENSOR_DATA_TYPE_UINT32`.
pub const DML_TENSOR_DATA_TYPE_UINT32: DML_TENSOR_DATA_TYPE = 3;
/// `DML_TENSOR_DATA_TYPE_UINT16`.
pub const DML_TENSOR_DATA_TYPE_UINT16: DML_TENSOR_DATA_TYPE = 4;
/// `DML_TENSOR_DATA_TYPE_UINT8`.
pub const DML_TENSOR_DATA_TYPE_UINT8: DML_TENSOR_DATA_TYPE = 5;
/// `DML_TENSOR_DATA_TYPE_INT32`.
pub const DML_TENSOR_DATA_TYPE_INT32: DML_TENSOR_DATA_TYPE = 6;
/// `DML_TENSOR_DATA_TYPE_INT16`.
pub const DML_TENSOR_DATA_TYPE_INT16: DML_TENSOR_DATA_TYPE = 7;
/// `DML_TENSOR_DATA_TYPE_INT8`.
pub const DML_TENSOR_DATA_TYPE_INT8: DML_TENSOR_DATA_TYPE = 8;
/// `DML_TENSOR_DATA_TYPE_FLOAT64`.
pub const DML_TENSOR_DATA_TYPE_FLOAT64: DML_TENSOR_DATA_TYPE = 9;
/// `DML_TENSOR_DATA_TYPE_UINT64`.
pub const DML_TENSOR_DATA_TYPE_UINT64: DML_TENSOR_DATA_TYPE = 10;
/// `DML_TENSOR_DATA_TYPE_INT64`.
pub const DML_TENSOR_DATA_TYPE_INT64: DML_TENSOR_DATA_TYPE = 11;
/// `DML_TENSOR_DATA_TYPE_UINT4`.
pub const DML_TENSOR_DATA_TYPE_UINT4: DML_TENSOR_DATA_TYPE = 12;
/// `DML_TENSOR_DATA_TYPE_INT4`.
pub const DML_TENSOR_DATA_TYPE_INT4: DML_TENSOR_DATA_TYPE = 13;
/// Extension (`EWISE_TENSOR_DATA_TYPE_BFLOAT16`): needs `Extensions = 1`.
pub const EWISE_TENSOR_DATA_TYPE_BFLOAT16: DML_TENSOR_DATA_TYPE = 1000;
/// Extension (`EWISE_TENSOR_DATA_TYPE_BOOL`).
pub const EWISE_TENSOR_DATA_TYPE_BOOL: DML_TENSOR_DATA_TYPE = 1001;
/// Extension (`EWISE_TENSOR_DATA_TYPE_FLOAT8E4M3FN`).
pub const EWISE_TENSOR_DATA_TYPE_FLOAT8E4M3FN: DML_TENSOR_DATA_TYPE = 1002;
/// Extension (`EWISE_TENSOR_DATA_TYPE_FLOAT8E4M3FNUZ`).
pub const EWISE_TENSOR_DATA_TYPE_FLOAT8E4M3FNUZ: DML_TENSOR_DATA_TYPE = 1003;
/// Extension (`EWISE_TENSOR_DATA_TYPE_FLOAT8E5M2`).
pub const EWISE_TENSOR_DATA_TYPE_FLOAT8E5M2: DML_TENSOR_DATA_TYPE = 1004;
/// Extension (`EWISE_TENSOR_DATA_TYPE_FLOAT8E5M2FNUZ`).
pub const EWISE_TENSOR_DATA_TYPE_FLOAT8E5M2FNUZ: DML_TENSOR_DATA_TYPE = 1005;

/// `DML_TENSOR_TYPE`.
pub type DML_TENSOR_TYPE = u32;
/// `DML_TENSOR_TYPE_INVALID`.
pub const DML_TENSOR_TYPE_INVALID: DML_TENSOR_TYPE = 0;
/// `DML_TENSOR_TYPE_BUFFER`.
pub const DML_TENSOR_TYPE_BUFFER: DML_TENSOR_TYPE = 1;

/// `DML_TENSOR_FLAGS` (bit flags).
pub type DML_TENSOR_FLAGS = u32;
/// `DML_TENSOR_FLAG_NONE`.
pub const DML_TENSOR_FLAG_NONE: DML_TENSOR_FLAGS = 0;
/// `DML_TENSOR_FLAG_OWNED_BY_DML`.
pub const DML_TENSOR_FLAG_OWNED_BY_DML: DML_TENSOR_FLAGS = 1;

/// `DML_OPERATOR_TYPE`: only the two below are implemented.
pub type DML_OPERATOR_TYPE = u32;
/// `DML_OPERATOR_INVALID`.
pub const DML_OPERATOR_INVALID: DML_OPERATOR_TYPE = 0;
/// `DML_OPERATOR_ELEMENT_WISE_SIGN`.
pub const DML_OPERATOR_ELEMENT_WISE_SIGN: DML_OPERATOR_TYPE = 79;
/// `DML_OPERATOR_ELEMENT_WISE_IS_INFINITY`.
pub const DML_OPERATOR_ELEMENT_WISE_IS_INFINITY: DML_OPERATOR_TYPE = 100;

/// `DML_IS_INFINITY_MODE`.
pub type DML_IS_INFINITY_MODE = u32;
/// `DML_IS_INFINITY_MODE_EITHER`.
pub const DML_IS_INFINITY_MODE_EITHER: DML_IS_INFINITY_MODE = 0;
/// `DML_IS_INFINITY_MODE_POSITIVE`.
pub const DML_IS_INFINITY_MODE_POSITIVE: DML_IS_INFINITY_MODE = 1;
/// `DML_IS_INFINITY_MODE_NEGATIVE`.
pub const DML_IS_INFINITY_MODE_NEGATIVE: DML_IS_INFINITY_MODE = 2;
/// Extension (`EWISE_IS_INFINITY_MODE_NEITHER`): always 0 (ONNX `IsInf` detecting
/// neither sign); needs `Extensions = 1`.
pub const EWISE_IS_INFINITY_MODE_NEITHER: DML_IS_INFINITY_MODE = 1000;

/// `DML_FEATURE_LEVEL`: `0xMm00` for level M.m.
pub type DML_FEATURE_LEVEL = u32;
/// `DML_FEATURE_LEVEL_1_0`.
pub const DML_FEATURE_LEVEL_1_0: DML_FEATURE_LEVEL = 0x1000;
/// `DML_FEATURE_LEVEL_2_0`.
pub const DML_FEATURE_LEVEL_2_0: DML_FEATURE_LEVEL = 0x2000;
/// `DML_FEATURE_LEVEL_2_1`.
pub const DML_FEATURE_LEVEL_2_1: DML_FEATURE_LEVEL = 0x2100;
/// `DML_FEATURE_LEVEL_3_0`.
pub const DML_FEATURE_LEVEL_3_0: DML_FEATURE_LEVEL = 0x3000;
/// `DML_FEATURE_LEVEL_3_1`.
pub const DML_FEATURE_LEVEL_3_1: DML_FEATURE_LEVEL = 0x3100;
/// `DML_FEATURE_LEVEL_4_0`.
pub const DML_FEATURE_LEVEL_4_0: DML_FEATURE_LEVEL = 0x4000;
/// `DML_FEATURE_LEVEL_4_1`.
pub const DML_FEATURE_LEVEL_4_1: DML_FEATURE_LEVEL = 0x4100;
/// `DML_FEATURE_LEVEL_5_0`.
pub const DML_FEATURE_LEVEL_5_0: DML_FEATURE_LEVEL = 0x5000;
/// `DML_FEATURE_LEVEL_5_1`.
pub const DML_FEATURE_LEVEL_5_1: DML_FEATURE_LEVEL = 0x5100;
/// `DML_FEATURE_LEVEL_5_2`.
pub const DML_FEATURE_LEVEL_5_2: DML_FEATURE_LEVEL = 0x5200;
/// `DML_FEATURE_LEVEL_6_0`.
pub const DML_FEATURE_LEVEL_6_0: DML_FEATURE_LEVEL = 0x6000;
/// `DML_FEATURE_LEVEL_6_1`.
pub const DML_FEATURE_LEVEL_6_1: DML_FEATURE_LEVEL = 0x6100;
/// `DML_FEATURE_LEVEL_6_2`.
pub const DML_FEATURE_LEVEL_6_2: DML_FEATURE_LEVEL = 0x6200;
/// `DML_FEATURE_LEVEL_6_3`.
pub const DML_FEATURE_LEVEL_6_3: DML_FEATURE_LEVEL = 0x6300;
/// `DML_FEATURE_LEVEL_6_4`.
pub const DML_FEATURE_LEVEL_6_4: DML_FEATURE_LEVEL = 0x6400;

/// `DML_FEATURE`.
pub type DML_FEATURE = u32;
/// `DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT`.
pub const DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT: DML_FEATURE = 0;
/// `DML_FEATURE_FEATURE_LEVELS`.
pub const DML_FEATURE_FEATURE_LEVELS: DML_FEATURE = 1;

/// `DML_EXECUTION_FLAGS` (bit flags).
pub type DML_EXECUTION_FLAGS = u32;
/// `DML_EXECUTION_FLAG_NONE`.
pub const DML_EXECUTION_FLAG_NONE: DML_EXECUTION_FLAGS = 0;
/// `DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION`.
pub const DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION: DML_EXECUTION_FLAGS = 1;
/// `DML_EXECUTION_FLAG_DISABLE_META_COMMANDS`.
pub const DML_EXECUTION_FLAG_DISABLE_META_COMMANDS: DML_EXECUTION_FLAGS = 2;
/// `DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE`.
pub const DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE: DML_EXECUTION_FLAGS = 4;

/// `DML_BUFFER_TENSOR_DESC`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DML_BUFFER_TENSOR_DESC {
    /// The element type.
    pub DataType: DML_TENSOR_DATA_TYPE,
    /// `DML_TENSOR_FLAGS`.
    pub Flags: DML_TENSOR_FLAGS,
    /// Number of entries of `Sizes` (and of `Strides` when given).
    pub DimensionCount: u32,
    /// The sizes, `DimensionCount` of them.
    pub Sizes: *const u32,
    /// Strides in elements, `DimensionCount` of them, or NULL for packed row-major.
    pub Strides: *const u32,
    /// Bytes the tensor spans in its buffer.
    pub TotalTensorSizeInBytes: u64,
    /// 0, or the alignment every binding offset of this tensor is promised to have.
    pub GuaranteedBaseOffsetAlignment: u32,
}

/// `DML_TENSOR_DESC`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DML_TENSOR_DESC {
    /// `DML_TENSOR_TYPE_BUFFER`.
    pub Type: DML_TENSOR_TYPE,
    /// A `DML_BUFFER_TENSOR_DESC`.
    pub Desc: *const c_void,
}

/// `DML_OPERATOR_DESC`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DML_OPERATOR_DESC {
    /// The operator.
    pub Type: DML_OPERATOR_TYPE,
    /// The operator's own description struct.
    pub Desc: *const c_void,
}

/// `DML_ELEMENT_WISE_SIGN_OPERATOR_DESC`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DML_ELEMENT_WISE_SIGN_OPERATOR_DESC {
    /// The input tensor.
    pub InputTensor: *const DML_TENSOR_DESC,
    /// The output tensor.
    pub OutputTensor: *const DML_TENSOR_DESC,
}

/// `DML_ELEMENT_WISE_IS_INFINITY_OPERATOR_DESC`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DML_ELEMENT_WISE_IS_INFINITY_OPERATOR_DESC {
    /// The input tensor.
    pub InputTensor: *const DML_TENSOR_DESC,
    /// The output tensor (UINT8).
    pub OutputTensor: *const DML_TENSOR_DESC,
    /// Which infinities count.
    pub InfinityMode: DML_IS_INFINITY_MODE,
}

/// `DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT {
    /// The type asked about.
    pub DataType: DML_TENSOR_DATA_TYPE,
}

/// `DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT {
    /// `BOOL`: 1 when supported.
    pub IsSupported: i32,
}

/// `DML_FEATURE_QUERY_FEATURE_LEVELS`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DML_FEATURE_QUERY_FEATURE_LEVELS {
    /// Entries of `RequestedFeatureLevels`.
    pub RequestedFeatureLevelCount: u32,
    /// The levels asked about.
    pub RequestedFeatureLevels: *const DML_FEATURE_LEVEL,
}

/// `DML_FEATURE_DATA_FEATURE_LEVELS`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DML_FEATURE_DATA_FEATURE_LEVELS {
    /// The highest requested level the device supports.
    pub MaxSupportedFeatureLevel: DML_FEATURE_LEVEL,
}

/// `EWISE_STATUS`.
pub type EWISE_STATUS = u32;
/// Success.
pub const EWISE_OK: EWISE_STATUS = 0;
/// A bad argument (`E_INVALIDARG`).
pub const EWISE_ERROR_INVALID_ARGUMENT: EWISE_STATUS = 1;
/// A level, type or operator not supported (`DXGI_ERROR_UNSUPPORTED`).
pub const EWISE_ERROR_NOT_SUPPORTED: EWISE_STATUS = 2;
/// Memory could not be allocated (`E_OUTOFMEMORY`).
pub const EWISE_ERROR_OUT_OF_MEMORY: EWISE_STATUS = 3;
/// No adapter, or the device was lost (`DXGI_ERROR_DEVICE_REMOVED`).
pub const EWISE_ERROR_DEVICE_UNAVAILABLE: EWISE_STATUS = 4;
/// A bug: never expected (`E_FAIL`).
pub const EWISE_ERROR_INTERNAL: EWISE_STATUS = 5;

/// `EWISE_DEVICE_KIND`.
pub type EWISE_DEVICE_KIND = u32;
/// The CPU.
pub const EWISE_DEVICE_CPU: EWISE_DEVICE_KIND = 0;
/// A GPU through wgpu.
pub const EWISE_DEVICE_GPU: EWISE_DEVICE_KIND = 1;

/// `EWISE_NAN_POLICY`: what SIGN gives for NaN.
pub type EWISE_NAN_POLICY = u32;
/// DirectML's: NaN gives +0.
pub const EWISE_NAN_ZERO: EWISE_NAN_POLICY = 0;
/// ONNX's: NaN stays NaN.
pub const EWISE_NAN_PROPAGATE: EWISE_NAN_POLICY = 1;

/// `EWISE_DEVICE_DESC`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct EWISE_DEVICE_DESC {
    /// CPU or GPU.
    pub Kind: EWISE_DEVICE_KIND,
    /// The level the device validates at.
    pub FeatureLevel: DML_FEATURE_LEVEL,
    /// 0: strict DirectML rules; 1: ewise extensions.
    pub Extensions: u32,
    /// What SIGN gives for NaN.
    pub NanPolicy: EWISE_NAN_POLICY,
}

/// `EWISE_BUFFER_BINDING`: `DML_BUFFER_BINDING` with an `ewise_buffer`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct EWISE_BUFFER_BINDING {
    /// The buffer.
    pub Buffer: *mut crate::ewise_buffer,
    /// Byte offset of the tensor's base.
    pub Offset: u64,
    /// Bytes bound.
    pub SizeInBytes: u64,
}
