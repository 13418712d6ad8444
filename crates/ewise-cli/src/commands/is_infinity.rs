//! `ewise is-infinity`.

use anyhow::Result;

use crate::apply;
use crate::cli::IsInfinityArgs;
use crate::job::Job;

/// Runs `ewise is-infinity`.
pub fn run(args: &IsInfinityArgs) -> Result<()> {
    let job = Job::is_infinity(&args.exec, args.mode.into());
    apply::to_file(&job, &args.input, &args.output, args.exec.dtype)
}
