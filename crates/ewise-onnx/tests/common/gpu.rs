//! The GPU device the tests share (the `gpu` feature).

use std::sync::OnceLock;

use ewise_cpu::Extensions;
use ewise_gpu::{GpuDevice, GpuDeviceBuilder, GpuError};

/// A device from `builder` (software adapters allowed: CI runs on lavapipe), or `None`
/// after one line saying why, when there is no adapter and none is required.
pub fn try_device(builder: GpuDeviceBuilder) -> Option<GpuDevice> {
    let built = builder.allow_software(true).build();
    ewise_testkit::device_or_skip(built, |e| matches!(e, GpuError::NoAdapter { .. }))
}

/// The device every test shares, built as `Model::with_gpu` requires.
pub fn gpu() -> Option<&'static GpuDevice> {
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
