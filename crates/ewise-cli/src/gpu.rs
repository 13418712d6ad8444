//! Opening the GPU for `--device gpu`.

use std::io::IsTerminal;

use anyhow::{Context, Result};
use ewise_cpu::FeatureLevel;
use ewise_gpu::GpuDevice;

/// Opens the GPU that `--device gpu` runs on, with the options of
/// [`crate::job::device_options`] at `level` (the command has already validated what it
/// runs).
///
/// A software renderer picked because no GPU exists (rather than named with
/// `EWISE_GPU_ADAPTER`) is always announced on standard error, as
/// `ewise: warning: ` and [`GpuDevice::software_warning`]'s sentence, the one every
/// front end gives; otherwise, on a terminal, it names the adapter there.
pub fn open(level: FeatureLevel) -> Result<GpuDevice> {
    let device = GpuDevice::builder()
        .options(crate::job::device_options(level))
        .build()
        .context("--device gpu")?;
    if let Some(warning) = device.software_warning() {
        eprintln!("ewise: warning: {warning}");
    } else if std::io::stderr().is_terminal() {
        eprintln!("ewise: GPU: {}", device.adapter());
    }
    Ok(device)
}
