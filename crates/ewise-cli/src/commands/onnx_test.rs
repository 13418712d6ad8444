//! `ewise onnx-test`: ONNX backend test case directories, run and compared bit for bit.

use std::fs;
use std::path::Path;

use anyhow::{bail, Result};
use ewise_onnx::conformance::{self, CaseOutcome};
use ewise_onnx::NanPolicy;

use crate::cli::OnnxTestArgs;

/// Runs `ewise onnx-test`: prints `PASS <name>` or `FAIL <name>: <why>` per directory,
/// in the order given, then `N passed, M failed`. Fails (exit status 1) when any case
/// failed; a directory that is not a test case is a failed case, not an error.
pub fn run(args: &OnnxTestArgs) -> Result<()> {
    let policy = NanPolicy::from(args.nan);
    let mut outcomes = Vec::with_capacity(args.dirs.len());
    for dir in &args.dirs {
        let outcome = case(dir, policy);
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

/// Runs the case in `dir`, or explains why `dir` is not a test case directory.
fn case(dir: &Path, policy: NanPolicy) -> CaseOutcome {
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
        None => conformance::run_case(dir, policy),
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
