//! `ewise onnx-test`: ONNX backend test case directories, run and compared bit for bit,
//! on the CPU or (`--device gpu`) on the GPU, opened once for all the cases.

use std::fs;
use std::path::Path;

use anyhow::{bail, Result};
use ewise_gpu::GpuDevice;
use ewise_onnx::conformance::{self, CaseOutcome};
use ewise_onnx::NanPolicy;

use crate::cli::{DeviceKind, OnnxTestArgs};
use crate::interrupt;

/// Runs `ewise onnx-test`: prints `PASS <name>` or `FAIL <name>: <why>` per directory,
/// in the order given, then `N passed, M failed`. Fails (exit status 1) when any case
/// failed; a directory that is not a test case is a failed case, not an error. A stop
/// request (Ctrl-C) is honoured between cases: the run ends with an "interrupted"
/// error, without the summary.
pub fn run(args: &OnnxTestArgs) -> Result<()> {
    let policy = NanPolicy::from(args.nan);
    let gpu = match args.device {
        DeviceKind::Cpu => None,
        DeviceKind::Gpu => Some(crate::gpu::open(ewise_cpu::FeatureLevel::LATEST)?),
    };
    let mut outcomes = Vec::with_capacity(args.dirs.len());
    for (done, dir) in args.dirs.iter().enumerate() {
        if interrupt::requested() {
            bail!(
                "interrupted: stopped after {done} of {} test cases",
                args.dirs.len()
            );
        }
        let outcome = case(dir, policy, gpu.as_ref());
        crate::print(&format!("{}\n", outcome.to_string().replace('\n', " ")))?;
        outcomes.push(outcome);
    }
    crate::print(&format!("{}\n", conformance::summary(&outcomes)))?;
    let failed = outcomes.iter().filter(|o| !o.passed()).count();
    if failed > 0 {
        bail!("{failed} of {} test cases failed", outcomes.len());
    }
    Ok(())
}

/// Runs the case in `dir` (on `gpu` when given), or explains why `dir` is not a test
/// case directory.
fn case(dir: &Path, policy: NanPolicy, gpu: Option<&GpuDevice>) -> CaseOutcome {
    let not_a_case = match fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some("does not exist".to_string()),
        Err(e) => Some(format!("cannot read it: {e}")),
        Ok(meta) if !meta.is_dir() => Some("is not a directory".to_string()),
        Ok(_) if !dir.join("model.onnx").is_file() => {
            Some("not an ONNX backend test case directory (it has no model.onnx)".to_string())
        }
        Ok(_) => None,
    };
    match not_a_case {
        None => conformance::run_case_on(dir, policy, gpu),
        Some(why) => {
            let shown = dir.display().to_string();
            let name = dir
                .file_name()
                .map_or_else(|| shown.clone(), |n| n.to_string_lossy().into_owned());
            let failure = if name == shown {
                why
            } else {
                format!("{shown}: {why}")
            };
            CaseOutcome {
                name,
                dir: dir.to_path_buf(),
                passed_data_sets: 0,
                failure: Some(failure),
            }
        }
    }
}
