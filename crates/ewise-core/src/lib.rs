//! # ewise-core
//!
//! What an ewise operation *is*, independent of where it runs: DirectML's data types,
//! feature levels and support tables (kept as data), buffer tensor descriptions with
//! DirectML's buffer-size rule, operator descriptions, validation with typed errors, and
//! the scalar reference semantics that every fast kernel is tested against.
//!
//! The contract is the repository's `docs/SEMANTICS.md`; this crate is its executable
//! form.
//!
//! ```
//! use ewise_core::{validate, DataType, Extensions, FeatureLevel, OperatorDesc, TensorDesc};
//!
//! let t = TensorDesc::new(DataType::Float32, &[1, 2, 3]);
//! let desc = OperatorDesc::sign(t.clone(), t);
//! assert!(validate(&desc, FeatureLevel::L3_0, Extensions::Disabled).is_ok());
//! // Three dimensions are not allowed before 3_0:
//! let err = validate(&desc, FeatureLevel::L2_1, Extensions::Disabled).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "ELEMENT_WISE_SIGN: InputTensor DimensionCount 3 is not supported at feature level 2_1 (supported: 4)"
//! );
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod binding;
pub mod dtype;
pub mod element;
pub mod error;
pub mod layout;
pub mod level;
pub mod operator;
pub mod options;
pub mod reference;
pub mod support;
pub mod tensor;
pub mod text;
pub mod validate;

pub use binding::{check_bindings, Bindings, BufferBinding, Placement, DEFAULT_BINDING_ALIGNMENT};
pub use dtype::DataType;
pub use element::Element;
pub use error::{Error, HazardKind, Result};
pub use level::{FeatureLevel, ParseFeatureLevelError};
pub use operator::{
    InfinityMode, IsInfinityDesc, NanPolicy, OperatorDesc, OperatorType, SignDesc, TensorRole,
};
pub use options::DeviceOptions;
pub use support::{OperatorSupport, SupportRow};
pub use tensor::{calc_buffer_tensor_size, TensorDesc, TensorFlags};
pub use validate::{validate, Extensions};

pub use half;
