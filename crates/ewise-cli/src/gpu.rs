//! Opening the GPU for `--device gpu`.

use std::io::IsTerminal;

use anyhow::{Context, Result};
use ewise_cpu::FeatureLevel;
use ewise_gpu::GpuDevice;

/// Opens the GPU that `--device gpu` runs on, with the options of
/// [`crate::job::device_options`] at `level` (the command has already validated what it
/// runs).
///
/// Adapters passed over because they could not be used are always announced on
/// standard error, as `ewise: warning: ` and [`GpuDevice::fallback_warning`]'s
/// sentence (which names the adapter used), and so is a software renderer picked because
/// no GPU exists or works (rather than named with `EWISE_GPU_ADAPTER`), with
/// [`GpuDevice::software_warning`]'s: the lines every front end gives. Otherwise, on a
/// terminal, it names the adapter there.
pub fn open(level: FeatureLevel) -> Result<GpuDevice> {
    let device = GpuDevice::builder()
        .options(crate::job::device_options(level))
        .build()
        .context("--device gpu")?;
    let warnings: Vec<String> = [device.fallback_warning(), device.software_warning()]
        .into_iter()
        .flatten()
        .collect();
    for warning in &warnings {
        eprintln!("ewise: warning: {warning}");
    }
    if warnings.is_empty() && std::io::stderr().is_terminal() {
        eprintln!("ewise: GPU: {}", device.adapter());
    }
    Ok(device)
}
