//! Opening the GPU for `--device gpu`.

use anyhow::{Context, Result};
use ewise_cpu::{Extensions, FeatureLevel};
use ewise_gpu::GpuDevice;

/// Opens the GPU that `--device gpu` runs on, at `level` with the ewise extensions (the
/// command has already validated what it runs), and says on standard error which adapter
/// it is, with a warning when that is a software renderer.
pub fn open(level: FeatureLevel) -> Result<GpuDevice> {
    let device = GpuDevice::builder()
        .feature_level(level)
        .extensions(Extensions::Enabled)
        .build()
        .context("--device gpu")?;
    let adapter = device.adapter();
    if adapter.is_software() {
        eprintln!("ewise: GPU: {adapter} (a software renderer: correct, but slower than the CPU)");
    } else {
        eprintln!("ewise: GPU: {adapter}");
    }
    Ok(device)
}
