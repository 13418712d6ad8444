//! # ewise-cli
//!
//! The library half of the `ewise` command: what its commands share and what later
//! commands (ONNX models, benchmarks) can reuse: the [`npy`] module, `.npy` headers and
//! data types with typed errors, and [`file_name`], what a safe output file name is.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod file_name;
pub mod npy;
