//! # ewise-cpu
//!
//! How ewise runs on a CPU. Two ways in:
//!
//! - the DirectML-style path: a [`Device`] at a feature level validates an
//!   [`OperatorDesc`] into an [`Operator`], which compiles once into a
//!   [`CompiledOperator`] that executes with buffer bindings;
//! - the [`array`](mod@array) API: `sign(&input, &mut output, policy)` on typed slices or strided
//!   views.
//!
//! Both run the same kernels: branch-free bit operations on each type's integer
//! representation, over contiguous runs that the layout walker hands them.
//!
//! ```
//! use ewise_cpu::{BufferBinding, BufferRef, DataType, Device, OperatorDesc, TensorDesc};
//!
//! let device = Device::new(); // feature level 6_4, strict DirectML rules
//! let t = TensorDesc::new(DataType::Float32, &[1, 4]);
//! let op = device.create_operator(&OperatorDesc::sign(t.clone(), t))?;
//! let compiled = op.compile()?;
//!
//! let mut data: Vec<u8> = [-3.0f32, -0.0, 0.5, f32::INFINITY]
//!     .iter()
//!     .flat_map(|x| x.to_ne_bytes())
//!     .collect();
//! let whole = BufferBinding::new(0, 0, 16);
//! // In place: the output is bound to exactly the input's range.
//! compiled.execute(&mut [BufferRef::from(&mut data)], &[whole], &[whole])?;
//! let out: Vec<f32> = data
//!     .chunks(4)
//!     .map(|b| f32::from_ne_bytes(b.try_into().unwrap()))
//!     .collect();
//! assert_eq!(out, [-1.0, 0.0, 1.0, 1.0]);
//! # Ok::<(), ewise_cpu::Error>(())
//! ```
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod array;
pub mod baseline;
mod buffer;
pub mod cache;
mod device;
mod fork;
mod helper;
mod kernels;
mod parallel;
mod placement;
mod walk;

pub use buffer::{Buffer, BufferRef};
pub use cache::{stream_threshold, StreamThreshold, STREAM_THRESHOLD_ENV};
pub use device::{CompiledOperator, Device, DeviceBuilder, Operator};
pub use ewise_core::*;
pub use kernels::isa::{selected as instruction_set, InstructionSet, FORCE_PORTABLE_ENV, ISA_ENV};
pub use parallel::{
    available_cores, max_threads, thread_pieces, Parallelism, MAX_THREADS, MEDIUM_THRESHOLD_BYTES,
    MIN_PIECE_BYTES, PARALLEL_THRESHOLD_BYTES, THREADS_PER_CORE,
};
