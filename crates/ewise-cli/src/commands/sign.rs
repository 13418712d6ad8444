//! `ewise sign`.

use anyhow::Result;

use crate::apply;
use crate::cli::SignArgs;
use crate::job::Job;
use crate::output;

/// Runs `ewise sign`. OUT is checked (see [`output::check`]) before INPUT is opened.
pub fn run(args: &SignArgs) -> Result<()> {
    let job = Job::sign(&args.exec, args.nan.map(Into::into));
    match &args.output {
        Some(out) if !args.in_place => {
            output::check(out, &args.input)?;
            apply::to_file(&job, &args.input, out, args.exec.dtype)
        }
        _ => apply::in_place(&job, &args.input, args.exec.dtype),
    }
}
