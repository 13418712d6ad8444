//! The GPU device the tests share (the `gpu` feature).

use std::sync::OnceLock;

use ewise_cpu::Extensions;
use ewise_gpu::{GpuDevice, GpuDeviceBuilder, GpuError};

/// With this variable set to 1, a test that finds no adapter fails instead of skipping.
const REQUIRE_ENV: &str = "EWISE_REQUIRE_GPU";

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
