//! `ewise is-infinity`.

use anyhow::Result;

use crate::apply;
use crate::cli::IsInfinityArgs;
use crate::job::Job;
use crate::output;

/// Runs `ewise is-infinity`. OUT is checked (see [`output::check`]) before INPUT is
/// opened.
pub fn run(args: &IsInfinityArgs) -> Result<()> {
    let job = Job::is_infinity(&args.exec, args.mode.into());
    output::check(&args.output, &args.input)?;
    apply::to_file(&job, &args.input, &args.output, args.exec.dtype)
}
