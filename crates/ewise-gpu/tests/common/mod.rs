//! Shared by the GPU tests: one device per test binary, and runs of one description on
//! the GPU and on the CPU backend from the same starting bytes.
#![allow(dead_code)]

use std::sync::OnceLock;

use ewise_core::{BufferBinding, Extensions, NanPolicy, OperatorDesc};
use ewise_cpu::{BufferRef, Device};
use ewise_gpu::{GpuBuffer, GpuDevice, GpuDeviceBuilder, GpuError};

/// With this variable set to 1, a test that finds no adapter fails instead of skipping.
pub const REQUIRE_ENV: &str = "EWISE_REQUIRE_GPU";

/// A device from `builder` (software adapters allowed: CI runs on lavapipe), or `None`
/// after one line saying why, when there is no adapter and none is required.
pub fn try_device(builder: GpuDeviceBuilder) -> Option<GpuDevice> {
    match builder.allow_software(true).build() {
        Ok(d) => Some(d),
        Err(e @ GpuError::NoAdapter { .. }) => {
            if std::env::var(REQUIRE_ENV).is_ok_and(|v| v == "1") {
                panic!("{REQUIRE_ENV}=1 but no GPU adapter: {e}");
            }
            eprintln!("skipping GPU test: {e}");
            None
        }
        Err(e) => panic!("GPU device creation failed: {e}"),
    }
}

/// An extended device whose binding windows span at most a few hundred bytes, so that
/// small tensors split into many dispatches (one per test binary).
pub fn tiny_device() -> Option<&'static GpuDevice> {
    static DEVICE: OnceLock<Option<GpuDevice>> = OnceLock::new();
    DEVICE
        .get_or_init(|| {
            try_device(
                GpuDevice::builder()
                    .extensions(Extensions::Enabled)
                    .max_binding_size(0),
            )
        })
        .as_ref()
}

/// The extended device every test in a binary shares (pipelines are cached on it).
pub fn device() -> Option<&'static GpuDevice> {
    static DEVICE: OnceLock<Option<GpuDevice>> = OnceLock::new();
    DEVICE
        .get_or_init(|| {
            let d = try_device(GpuDevice::builder().extensions(Extensions::Enabled));
            if let Some(d) = &d {
                eprintln!("GPU tests run on {}", d.adapter());
            }
            d
        })
        .as_ref()
}

/// A deterministic byte pattern.
pub fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 24) as u8
        })
        .collect()
}

/// Where an execution's tensors live: one buffer (in place or disjoint ranges) or two.
#[derive(Debug, Clone, Copy)]
pub struct Run {
    pub in_offset: u64,
    pub out_offset: u64,
    /// Both tensors in buffer 0.
    pub one_buffer: bool,
}

/// The final buffers of one run on each backend.
pub type Outcome = (
    Result<Vec<Vec<u8>>, GpuError>,
    Result<Vec<Vec<u8>>, ewise_core::Error>,
);

/// Runs `desc` on the GPU `device` and on the CPU backend from the same starting buffers
/// (`buffers[k]` starts as `start[k]`) and returns both final buffers.
pub fn both(
    device: &GpuDevice,
    desc: &OperatorDesc,
    policy: NanPolicy,
    start: &[Vec<u8>],
    run: Run,
) -> Outcome {
    let inb = BufferBinding::new(0, run.in_offset, desc.input().total_tensor_size_in_bytes);
    let outb = BufferBinding::new(
        usize::from(!run.one_buffer),
        run.out_offset,
        desc.output().total_tensor_size_in_bytes,
    );
    let gpu = (|| {
        let op = device
            .create_operator(desc)?
            .with_nan_policy(policy)
            .compile()?;
        let bufs: Vec<GpuBuffer> = start
            .iter()
            .map(|b| GpuBuffer::from_bytes(device, b))
            .collect::<Result<_, _>>()?;
        let refs: Vec<&GpuBuffer> = bufs.iter().collect();
        op.execute(&refs, &[inb], &[outb])?;
        bufs.iter().map(|b| b.read(device)).collect()
    })();
    let cpu = (|| {
        let op = Device::builder()
            .extensions(Extensions::Enabled)
            .build()?
            .create_operator(desc)?
            .with_nan_policy(policy)
            .compile()?;
        let mut bufs: Vec<Vec<u8>> = start.to_vec();
        let mut refs: Vec<BufferRef<'_>> = bufs.iter_mut().map(BufferRef::from).collect();
        op.execute(&mut refs, &[inb], &[outb])?;
        Ok(bufs)
    })();
    (gpu, cpu)
}

/// Every input type SIGN takes (with the ewise extensions), from the support tables.
pub fn sign_types() -> &'static [ewise_core::DataType] {
    ewise_core::OperatorSupport::of(ewise_core::OperatorType::ElementWiseSign)
        .extended
        .input_types
}

/// Every input type IS_INFINITY takes (with the ewise extensions), from the support
/// tables.
pub fn infinity_types() -> &'static [ewise_core::DataType] {
    ewise_core::OperatorSupport::of(ewise_core::OperatorType::ElementWiseIsInfinity)
        .extended
        .input_types
}
