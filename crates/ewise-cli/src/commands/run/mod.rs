//! `ewise run`: an ONNX model over `.npy` inputs, one `.npy` file per graph output.
//!
//! Before any input data is read, and so before anything is computed or written:
//! - the output names are checked (each must be a plain file name, each once);
//! - every output path `OUTDIR/NAME.npy` is resolved as [`crate::output`] describes
//!   (symbolic links followed to their final target) and refused, naming the file, if
//!   OUTDIR is not a directory, the target exists and is not a regular file, this
//!   process may not write it or create files beside it, it is a file this run reads
//!   (the `.onnx` file, an input, or one of the model's external data files, by any
//!   spelling, link or hard link), or two outputs resolve to one file (the same final
//!   path, or the same existing file);
//! - the inputs' names, element types and shapes are checked against the model's
//!   declarations.
//!
//! The inputs are then streamed through the model ([`Model::streaming`]): each graph
//! input or initializer that outputs derive from is read in chunks (its chunk's input,
//! output and intermediate buffers together hold at most `--chunk-size` bytes: by
//! default [`stream::CPU_CHUNK_BYTES`] on the CPU, [`stream::GPU_CHUNK_BYTES`] on a
//! GPU, or 4096 elements when a source has very many outputs), each chunk computed and
//! appended to the temporary file of every output derived from it. An initializer
//! stored in an external data file is not read by the load ([`ExternalData::Deferred`]):
//! the load opens the file (confined to the model's directory, no link followed) and
//! checks its range, and the run reads the chunks with positioned reads through that
//! handle, as it reads an input. With `--device gpu` the chunks run on the GPU (opened
//! once, after the checks above and before any data is read) through one
//! [`ewise_gpu::stream::GpuStream`] per source, the nodes' values staying on the GPU,
//! uploads and downloads overlapping the file reads and writes; the files written are
//! byte for byte those of `--device cpu`. Memory is therefore bounded by the chunk size
//! (twice it with `--device gpu`: the chunk read and its upload buffer), plus the
//! `.onnx` file's own size (the initializers stored inside it), not by the size of the
//! inputs or of external data. A column-major (`fortran_order`) input in a regular file
//! is reordered as it is read: panels of rows are read with positioned reads and
//! transposed into the chunks, adding one panel of about the chunk's input size (at
//! least 4 MiB). The exception is a column-major input with more than one axis longer
//! than 1 that is a pipe: it is read and reordered whole, then streamed from memory. A
//! given input that no output uses is not computed on (a pipe is read to its end).
//!
//! Outputs are written to temporary files beside their targets (each synced and
//! closed when complete) and committed by [`crate::output::commit_all`]: all of them
//! replace their targets, or on failure every target (in OUTDIR, or where a link in
//! OUTDIR leads) is as it was; if restoring a file fails, the error says where its
//! previous contents are. OUTDIR and its missing parents are created just before the
//! first temporary, and removed again if the run then fails and they are still empty.
//! A stop request (Ctrl-C) is honoured between chunks, before each output file is begun
//! and before the commit; what was written is then removed.
//!
//! Element types on disk: numeric types use numpy's type strings; bool is `|b1`; the
//! types numpy lacks are raw items, as ml_dtypes saves them. An input the model declares
//! as bfloat16 is read from a file of 2-byte items (`<V2`, `>V2`, `|V2`), one declared
//! as a float8 type from 1-byte items (`|V1`, `<f1`); outputs of those types are
//! written as `<V2` (bfloat16) and `|V1` (float8). Inputs in the other byte order are
//! swapped and column-major (`fortran_order`) inputs reordered; outputs are always
//! row-major in this machine's byte order.

mod feed;
mod fortran;
mod inputs;
mod outputs;
mod stream;

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};
use ewise_onnx::{dtype, DataType, ExternalData, Model};

use crate::cli::{DeviceKind, RunArgs};
use crate::paths::at;

use inputs::{open_inputs, Source};
use outputs::{output_paths, plan_outputs};
use stream::{stream_outputs, Engine};

/// Runs `ewise run`.
pub fn run(args: &RunArgs) -> Result<()> {
    let model = load(&args.model)?.with_nan_policy(args.nan.into());
    let dests = output_paths(&model, &args.output_dir)?;
    let targets = plan_outputs(&args.output_dir, &model, &dests, &files_read(args, &model))?;
    let sources = open_inputs(&model, &args.inputs)?;
    let described: Vec<(&str, DataType, &[usize])> = sources
        .iter()
        .map(|s| (s.name.as_str(), s.data_type, s.shape.as_slice()))
        .collect();
    model.check_inputs(&described).map_err(|e| anyhow!("{e}"))?;
    let plan = model
        .streaming(&described)
        .map_err(|e| plan_error(&args.model, &sources, e))?;
    match args.device {
        DeviceKind::Cpu => stream_outputs(args, &targets, &plan, sources, Engine::Cpu),
        DeviceKind::Gpu => {
            let device = crate::gpu::open(ewise_cpu::FeatureLevel::LATEST)?;
            stream_outputs(args, &targets, &plan, sources, Engine::Gpu(&device))
        }
    }
}

/// The error for a plan [`Model::streaming`] refused: an input too large for this
/// machine is named with its file, as when it is read whole.
fn plan_error(model: &Path, sources: &[Source], e: ewise_onnx::Error) -> anyhow::Error {
    match e {
        ewise_onnx::Error::TooLarge { what, shape, limit } => {
            match sources
                .iter()
                .find(|s| what == format!("input {:?}", s.name))
            {
                Some(s) => at(
                    &s.file.path,
                    format!(
                        "input {:?} of {} with shape {shape} is too large ({limit})",
                        s.name,
                        dtype::name(s.data_type)
                    ),
                ),
                None => at(
                    model,
                    format!("{what} with shape {shape} is too large ({limit})"),
                ),
            }
        }
        e => at(model, format!("run failed: {e}")),
    }
}

/// Every file this run reads: the model, its external data files and the inputs.
fn files_read(args: &RunArgs, model: &Model) -> Vec<(PathBuf, &'static str)> {
    let mut files = vec![(args.model.clone(), "the model")];
    files.extend(
        model
            .data_files()
            .iter()
            .map(|p| (p.clone(), "external data of the model")),
    );
    files.extend(args.inputs.iter().map(|(_, p)| (p.clone(), "an input")));
    files
}

/// Loads the model with its external data left in its files ([`ExternalData::Deferred`]):
/// checked and kept open by the load, read chunk by chunk like an input.
fn load(path: &Path) -> Result<Model> {
    Model::load_with(path, ExternalData::Deferred).map_err(|e| match e {
        ewise_onnx::Error::Io { .. } | ewise_onnx::Error::Decode { .. } => anyhow!("{e}"),
        e => at(path, e),
    })
}
