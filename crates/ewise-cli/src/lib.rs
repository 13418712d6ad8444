//! # ewise-cli
//!
//! The library half of the `ewise` command: what its commands share and what later
//! commands (ONNX models, benchmarks) can reuse. Today that is the [`npy`] module,
//! `.npy` headers and data types with typed errors.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod npy;
