//! `ewise run --device gpu`: whole tensors in, whole outputs out.

use std::path::Path;

use anyhow::{bail, Result};
use ewise_cli::npy::Header;
use ewise_onnx::Tensor;

use crate::interrupt;
use crate::output::{self, Staged, Target};

use super::outputs::{in_created_dirs, output_element};

/// Writes every output to a temporary file beside its target, then commits them all
/// (see the module docs). Creates `dir` and its missing parents first; removes those
/// again, where still empty, if the run fails.
pub(super) fn write_outputs(
    dir: &Path,
    targets: &[Target],
    outputs: &[(String, Tensor)],
) -> Result<()> {
    if targets.len() != outputs.len() {
        bail!(
            "the model gave {} outputs but declares {}",
            outputs.len(),
            targets.len()
        );
    }
    in_created_dirs(dir, || stage_and_commit(targets, outputs))
}

/// Removes stale temporaries, writes each output to its temporary file, and commits.
fn stage_and_commit(targets: &[Target], outputs: &[(String, Tensor)]) -> Result<()> {
    output::remove_stale_temporaries(targets);
    let mut staged = Vec::with_capacity(outputs.len());
    for (target, (_, tensor)) in targets.iter().zip(outputs) {
        interrupt::check()?;
        let header = Header {
            descr: output_element(tensor.data_type).descr(),
            fortran_order: false,
            shape: tensor.shape.iter().map(|&d| d as u64).collect(),
        };
        staged.push(Staged::write(target, &[&header.to_bytes(), &tensor.data])?);
    }
    interrupt::check()?;
    output::commit_all(staged)
}
