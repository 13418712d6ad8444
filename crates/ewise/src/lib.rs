//! # ewise
//!
//! Bit-exact, fast DirectML `ELEMENT_WISE_SIGN` and `ELEMENT_WISE_IS_INFINITY` (ONNX
//! `Sign` and `IsInf`) on every platform. This crate re-exports the public API of
//! [`ewise_core`] (what an operation is) and [`ewise_cpu`] (how it runs on a CPU), so
//! users add one dependency. With the `gpu` feature (on by default), `ewise::gpu` is
//! `ewise-gpu`: the same operators on any GPU through wgpu, bit for bit.
//!
//! ```
//! use ewise::{array, NanPolicy};
//! let mut data = [-7i8, 0, 5, i8::MIN];
//! array::sign_in_place(&mut data, NanPolicy::Zero);
//! assert_eq!(data, [-1, 0, 1, -1]);
//! ```
#![forbid(unsafe_code)]

pub use ewise_cpu::*;

/// The GPU backend (`ewise-gpu`): [`gpu::GpuDevice`], [`gpu::GpuBuffer`] and the
/// create / compile / record or execute path, with the CPU backend's rules and errors.
#[cfg(feature = "gpu")]
pub use ewise_gpu as gpu;

/// The README's examples, run as doc tests.
#[cfg(all(doctest, feature = "gpu"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
