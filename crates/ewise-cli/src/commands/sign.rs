//! `ewise sign`.

use anyhow::Result;

use crate::apply;
use crate::cli::SignArgs;
use crate::job::Job;

/// Runs `ewise sign`.
pub fn run(args: &SignArgs) -> Result<()> {
    let job = Job::sign(&args.exec, args.nan.map(Into::into));
    match &args.output {
        Some(output) if !args.in_place => {
            apply::to_file(&job, &args.input, output, args.exec.dtype)
        }
        _ => apply::in_place(&job, &args.input, args.exec.dtype),
    }
}
