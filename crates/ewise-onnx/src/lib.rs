//! # ewise-onnx
//!
//! The ONNX front end of ewise: load `.onnx` models whose graphs use `Sign` (opsets 9
//! and 13) and `IsInf` (opsets 10 and 20), check them, and run them bit-exactly on
//! ewise-cpu's compiled operators, or with the `gpu` feature on ewise-gpu's (a model
//! given a GPU with `Model::with_gpu` keeps the values its nodes compute on the GPU
//! between nodes and gives the same bits). The contract is docs/SEMANTICS.md section 6 (and
//! section 1 with the `Propagate` NaN policy by default).
//!
//! - [`proto`] holds hand-written prost messages for the part of `onnx.proto` ewise reads;
//! - [`dtype`] maps ONNX element type numbers to ewise [`DataType`]s;
//! - [`Tensor`] is a value in or out, decoded from `TensorProto` in every form the
//!   format allows (raw data, typed fields, external files);
//! - [`opset`] lists the operator versions and their type lists, as data;
//! - [`Model`] loads (graph checks, type and shape inference, the execution plan) and
//!   runs, on whole tensors or, through [`Streaming`], chunk by chunk;
//! - [`conformance`] runs ONNX's backend test directories.
//!
//! No element is computed here: every Sign and IsInf goes through ewise-cpu's or
//! ewise-gpu's compiled operators ([`ewise_cpu::CompiledOperator`],
//! `ewise_gpu::GpuCompiledOperator`).
//!
//! ## Features
//!
//! - `gpu` (off by default): `Model::with_gpu` and `conformance::run_case_on` run
//!   graphs on a `ewise_gpu::GpuDevice` built with `Extensions::Enabled`.
//!
//! ```
//! use ewise_onnx::proto::{self, Message};
//! use ewise_onnx::{Model, Tensor};
//!
//! let tensor_type = |elem_type| proto::TypeProto {
//!     value: Some(proto::type_proto::Value::TensorType(proto::type_proto::Tensor {
//!         elem_type,
//!         shape: None,
//!     })),
//!     ..Default::default()
//! };
//! let model = proto::ModelProto {
//!     ir_version: 9,
//!     opset_import: vec![proto::OperatorSetIdProto { domain: String::new(), version: 20 }],
//!     graph: Some(proto::GraphProto {
//!         node: vec![proto::NodeProto {
//!             input: vec!["x".into()],
//!             output: vec!["y".into()],
//!             op_type: "IsInf".into(),
//!             ..Default::default()
//!         }],
//!         input: vec![proto::ValueInfoProto {
//!             name: "x".into(),
//!             r#type: Some(tensor_type(1)),
//!             ..Default::default()
//!         }],
//!         output: vec![proto::ValueInfoProto {
//!             name: "y".into(),
//!             r#type: Some(tensor_type(9)),
//!             ..Default::default()
//!         }],
//!         ..Default::default()
//!     }),
//!     ..Default::default()
//! };
//! let model = Model::from_bytes(&model.encode_to_vec(), None)?;
//! let x = Tensor::from_values(vec![3], &[1.0f32, f32::INFINITY, f32::NAN])?;
//! let outputs = model.run([("x", x)])?;
//! assert_eq!(outputs[0].0, "y");
//! assert_eq!(outputs[0].1.values::<bool>(), Some(vec![false, true, false]));
//! # Ok::<(), ewise_onnx::Error>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod conformance;
pub mod dtype;
mod error;
mod exec;
mod external;
mod files;
mod graph;
mod handles;
mod model;
pub mod opset;
pub mod proto;
mod tensor;

pub use error::{Error, FileKind, Refusal, Result};
pub use ewise_cpu::{DataType, InfinityMode, NanPolicy};
pub use exec::stream::{Scratch, SourceKind, StreamOutput, StreamSource, Streaming};
pub use exec::RunStats;
pub use graph::{Dim, Step, ValueInfo};
pub use model::{ExternalData, Model};
pub use opset::OpType;
pub use tensor::{Scalar, Tensor};
