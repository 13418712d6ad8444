//! # ewise-web
//!
//! The WebAssembly half of the npm package `ewise`: wasm-bindgen exports that the
//! package's entry module (`js/ewise.js`, built into `pkg/` by `scripts/web-build.sh`)
//! wraps into its JavaScript API. Built for `wasm32` only; on every other target this
//! crate is empty.
//!
//! The exports trust nothing they are given: every argument is checked again here, and
//! every failure is returned as a thrown JavaScript `Error` whose `name` says its class
//! (`ValidationError` for `ewise_core::Error`, with its message unchanged and its
//! variant in `kind`; `GpuError`; `ArgumentError`; `OutOfMemoryError`), which the entry
//! module turns into instances of its exported classes. No input makes this module
//! panic: a panic in WebAssembly is a trap that would leave the module unusable.
//!
//! Memory: the copying array exports (`signBytes`, `isInfinityBytes`) copy the caller's
//! elements in chunks of at most `array::CHUNK_BYTES` (1 MiB) of input into one staging
//! area kept between calls (it grows once, to the largest chunk and its results: at most
//! 2 MiB), so the module's memory does not grow with the arrays (except where an output
//! starts inside its input, or both are views of `SharedArrayBuffer` objects, which may
//! be one memory: that input is copied whole first). WasmArrays (`blocks`) are blocks of
//! the module's memory that the caller allocates and frees: the exports on them run
//! where they lie, and one on a WasmArray and a view of JavaScript memory copies the
//! view's side in chunks. The DirectML-style `execute` holds the two bound ranges (in
//! place, one, or two where the layouts differ), and runs on WasmArrays where they lie;
//! the GPU device's array calls copy the whole input and output, and its DirectML-style
//! executions hold the exact spans of the two tensors. Executions write only the output
//! elements' bytes, a contiguous run at a time. Each allocation that cannot be had is an
//! `OutOfMemoryError`, never a trap.
#![cfg(target_arch = "wasm32")]
#![deny(unsafe_code)]
#![warn(missing_docs)]
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod array;
pub mod blocks;
pub mod dml;
pub mod error;
pub mod gpu;
