//! # ewise-gpu
//!
//! DirectML's `ELEMENT_WISE_SIGN` and `ELEMENT_WISE_IS_INFINITY` on any GPU through
//! [`wgpu`] (Vulkan, Metal, D3D12), giving exactly the bits of the CPU backend and of
//! `ewise-core`'s reference for every description the CPU backend accepts.
//!
//! The path is DirectML's: a [`GpuDevice`] at a feature level validates an
//! [`OperatorDesc`](ewise_core::OperatorDesc) into a [`GpuOperator`], which compiles
//! once into a [`GpuCompiledOperator`]; that records into a caller's
//! `wgpu::CommandEncoder` (DirectML's `RecordDispatch`) or executes (submit and wait)
//! with the same [`BufferBinding`](ewise_core::BufferBinding)s, rules and errors as the
//! CPU backend.
//!
//! ```no_run
//! use ewise_core::{BufferBinding, DataType, OperatorDesc, TensorDesc};
//! use ewise_gpu::{GpuBuffer, GpuDevice};
//!
//! let device = GpuDevice::new()?; // the best hardware GPU
//! println!("running on {}", device.adapter());
//! let t = TensorDesc::new(DataType::Float32, &[1, 4]);
//! let sign = device.create_operator(&OperatorDesc::sign(t.clone(), t))?.compile()?;
//! let values = [-3.0f32, -0.0, 0.5, f32::NAN];
//! let input = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&values))?;
//! let output = GpuBuffer::zeroed(&device, 16)?;
//! let whole = BufferBinding::new(0, 0, 16);
//! let out = BufferBinding { buffer: 1, ..whole };
//! sign.execute(&[&input, &output], &[whole], &[out])?;
//! let result: Vec<f32> = bytemuck::cast_slice(&output.read(&device)?).to_vec();
//! assert_eq!(result, [-1.0, 0.0, 1.0, 0.0]); // NaN gives +0 under DirectML's policy
//! # Ok::<(), ewise_gpu::GpuError>(())
//! ```
//!
//! For elements that come from and go to the caller chunk by chunk (a file, any count
//! beyond one buffer), [`stream::GpuStream`] moves contiguous elements through a ring of
//! GPU buffers with bounded memory, reading and writing while the GPU computes.
//!
//! For measurements, [`GpuTimer`] times recorded work with timestamp queries (or wall
//! time where the adapter has none), and [`BaselineKernel`] and [`record_buffer_copy`]
//! give the memory copies and reads that operators are compared with.
//!
//! Everything that waits (opening a device, executing, reading a buffer, synchronizing)
//! has an `_async` twin, and the blocking call is that future driven on the calling
//! thread: [`GpuDeviceBuilder::build_async`], [`GpuCompiledOperator::execute_async`],
//! [`GpuBuffer::read_range_async`], [`GpuDevice::synchronize_async`], and, for bytes in
//! and bytes out, [`GpuCompiledOperator::execute_slices_async`] and
//! [`GpuCompiledOperator::execute_in_place_slice_async`]. Natively such a future waits
//! inside wgpu's `Device::poll` when polled. Built for `wasm32` (wgpu's `webgpu`
//! backend, the browser's one adapter) only the `_async` entry points exist, and
//! nothing blocks: they yield to the browser's event loop, and errors of synchronous
//! calls (buffer creation, compilation, recording) come with the next awaited call on
//! the device. Streams ([`stream`]) and [`GpuTimer`] are native only.
//!
//! Kernels are WGSL over 32-bit words with bit operations only, so every adapter runs
//! every data type without optional features. Tensors larger than one binding window or
//! one dispatch grid are split into several dispatches, with the same bits.
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod baseline;
mod buffer;
mod choice;
mod chunk;
mod device;
mod error;
mod instance;
mod operator;
mod shader;
mod signal;
mod staging;
#[cfg(not(target_arch = "wasm32"))]
pub mod stream;
#[cfg(not(target_arch = "wasm32"))]
mod timing;
mod tuning;

pub use baseline::{
    record_buffer_copy, BaselineKernel, BaselineKind, BoundBaseline, BASELINE_VECTOR, READ_SENTINEL,
};
pub use buffer::{GpuBuffer, BUFFER_USAGES};
pub use choice::AdapterFailure;
#[cfg(not(target_arch = "wasm32"))]
pub use device::adapters;
pub use device::{
    adapters_async, backend_names, AdapterList, AdapterSummary, GpuDevice, GpuDeviceBuilder,
    ADAPTER_ENV, BACKEND_ENV,
};
pub use error::{GpuError, Result};
pub use instance::instance as compute_instance;
pub use operator::{GpuCompiledOperator, GpuOperator};
#[cfg(not(target_arch = "wasm32"))]
pub use timing::{GpuTimer, TimerKind};
#[doc(hidden)]
pub use tuning::{Tuning, MAX_LOADS_IN_FLIGHT};
pub use wgpu;

/// The WGSL source of every kernel an operator can compile, each with a label naming its
/// key (the first key of each distinct source), and of the baseline kernels: for checking them with other shader compilers than
/// the one at hand (a browser's, through WebGPU).
#[doc(hidden)]
pub fn kernel_sources() -> Vec<(String, String)> {
    let mut seen = std::collections::HashSet::new();
    let keys = shader::every_key().into_iter();
    keys.map(|k| (format!("{k:?}"), shader::source(&k)))
        .chain(baseline::sources())
        .filter(|(_, wgsl)| seen.insert(wgsl.clone()))
        .collect()
}
