//! Opening the GPU for `--device gpu`.

use std::io::IsTerminal;

use anyhow::{Context, Result};
use ewise_cpu::FeatureLevel;
use ewise_gpu::{GpuDevice, ADAPTER_ENV};

/// Opens the GPU that `--device gpu` runs on, with the options of
/// [`crate::job::device_options`] at `level` (the command has already validated what it
/// runs).
///
/// On a terminal it names the adapter on standard error. A software renderer that was
/// picked because no GPU exists (rather than named with `EWISE_GPU_ADAPTER`) is always
/// announced, so that it is never used silently.
pub fn open(level: FeatureLevel) -> Result<GpuDevice> {
    let device = GpuDevice::builder()
        .options(crate::job::device_options(level))
        .build()
        .context("--device gpu")?;
    let adapter = device.adapter();
    let named = std::env::var(ADAPTER_ENV).is_ok_and(|v| !v.is_empty());
    if adapter.is_software() && !named {
        eprintln!(
            "ewise: warning: --device gpu runs on {adapter}: no GPU was found, and this software renderer is slower than --device cpu; set {ADAPTER_ENV} to name it and silence this"
        );
    } else if std::io::stderr().is_terminal() {
        eprintln!("ewise: GPU: {adapter}");
    }
    Ok(device)
}
