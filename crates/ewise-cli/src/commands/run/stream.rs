//! `ewise run --device cpu`: every source streamed through the model's plan, chunk by
//! chunk, into its outputs' temporaries, then all committed at once.

use std::path::Path;

use anyhow::{anyhow, bail, Result};
use ewise_cli::npy::Header;
use ewise_onnx::{DataType, Scratch, SourceKind, StreamOutput, Streaming};

use crate::cli::RunArgs;
use crate::interrupt;
use crate::output::{self, Staged, Staging, Target};

use super::feed::Feed;
use super::inputs::{drain, Source};
use super::outputs::{in_created_dirs, output_element};
use crate::paths::at;
use crate::stream::CHUNK_BYTES;

/// Bytes per element of `data_type` (1 for a type without a whole-byte size, which
/// the checks before streaming refuse).
fn element_size(data_type: DataType) -> usize {
    data_type
        .size_in_bytes()
        .and_then(|s| usize::try_from(s).ok())
        .unwrap_or(1)
}

/// The fewest elements a chunk holds, however many outputs share the buffer budget.
const MIN_CHUNK_ELEMENTS: usize = 4096;

/// The most outputs of one source whose temporaries stay open while it is streamed;
/// beyond, each chunk reopens them ([`Staging`]).
const OPEN_OUTPUTS: usize = 16;

/// Elements per chunk of source `s` of `plan`: its chunk's input and output buffers and
/// scratch total at most [`CHUNK_BYTES`], or [`MIN_CHUNK_ELEMENTS`] elements when a
/// source has so many outputs that fewer would fit; never more than the source holds.
fn chunk_elements(plan: &Streaming, s: usize) -> usize {
    let source = &plan.sources()[s];
    let per_element = plan
        .outputs_of(s)
        .iter()
        .map(|&o| element_size(plan.outputs()[o].data_type))
        .fold(element_size(source.data_type), usize::saturating_add)
        .saturating_add(plan.scratch_bytes(1));
    (CHUNK_BYTES / per_element.max(1))
        .max(MIN_CHUNK_ELEMENTS)
        .min(source.elements)
}

/// Streams every source of `plan` into temporaries for `targets` and commits them (see
/// the module docs). Creates OUTDIR and its missing parents first; removes those again,
/// where still empty, if the run fails.
pub(super) fn stream_outputs(
    args: &RunArgs,
    targets: &[Target],
    plan: &Streaming,
    inputs: Vec<Source>,
) -> Result<()> {
    if targets.len() != plan.outputs().len() {
        bail!(
            "the model gave {} outputs but declares {}",
            plan.outputs().len(),
            targets.len()
        );
    }
    in_created_dirs(&args.output_dir, || {
        stream_and_commit(&args.model, targets, plan, inputs)
    })
}

/// Removes stale temporaries, streams each source into its outputs' temporaries, and
/// commits them all in declaration order.
fn stream_and_commit(
    model: &Path,
    targets: &[Target],
    plan: &Streaming,
    mut inputs: Vec<Source>,
) -> Result<()> {
    output::remove_stale_temporaries(targets);
    let mut staged: Vec<Option<Staged>> = targets.iter().map(|_| None).collect();
    let mut scratch = Scratch::new();
    for (s, source) in plan.sources().iter().enumerate() {
        let chunk = chunk_elements(plan, s);
        let feed = match source.kind {
            SourceKind::Input => {
                let i = inputs
                    .iter()
                    .position(|f| f.name == source.name)
                    .ok_or_else(|| anyhow!("input {:?} was not opened", source.name))?;
                Feed::input(inputs.swap_remove(i), element_size(source.data_type), chunk)?
            }
            _ => Feed::memory(
                plan.initializer_bytes(s).unwrap_or_default(),
                element_size(source.data_type),
                model,
                &source.name,
            ),
        };
        let written = stream_source(model, targets, plan, s, chunk, feed, &mut scratch)?;
        for (&o, done) in plan.outputs_of(s).iter().zip(written) {
            staged[o] = Some(done);
        }
    }
    for unused in inputs {
        drain(unused)?;
    }
    interrupt::check()?;
    let staged = staged
        .into_iter()
        .collect::<Option<Vec<Staged>>>()
        .ok_or_else(|| anyhow!("the model's plan leaves an output without a source"))?;
    output::commit_all(staged)
}

/// Streams source `s` of `plan`, read from `feed` in chunks of `chunk` elements, into
/// new temporaries for its outputs ([`Streaming::outputs_of`]), each a `.npy` header
/// then the data; returns them complete, in that order.
fn stream_source(
    model: &Path,
    targets: &[Target],
    plan: &Streaming,
    s: usize,
    chunk: usize,
    mut feed: Feed<'_>,
    scratch: &mut Scratch,
) -> Result<Vec<Staged>> {
    let source = &plan.sources()[s];
    let outputs: Vec<&StreamOutput> = plan
        .outputs_of(s)
        .iter()
        .map(|&o| &plan.outputs()[o])
        .collect();
    let out_sizes: Vec<usize> = outputs.iter().map(|o| element_size(o.data_type)).collect();
    let keep_open = outputs.len() <= OPEN_OUTPUTS;
    let mut files = Vec::with_capacity(outputs.len());
    for (&o, out) in plan.outputs_of(s).iter().zip(&outputs) {
        interrupt::check()?;
        let header = Header {
            descr: output_element(out.data_type).descr(),
            fortran_order: false,
            shape: out.shape.iter().map(|&d| d as u64).collect(),
        };
        let mut file = Staging::create(&targets[o], keep_open)?;
        file.append(&header.to_bytes())?;
        files.push(file);
    }
    let mut buffers: Vec<Vec<u8>> = out_sizes
        .iter()
        .map(|&size| vec![0u8; chunk * size])
        .collect();
    let mut done = 0;
    while done < source.elements {
        let n = chunk.min(source.elements - done);
        let bytes = feed.chunk(done, n)?;
        interrupt::check()?;
        let mut slices: Vec<&mut [u8]> = buffers
            .iter_mut()
            .zip(&out_sizes)
            .map(|(buf, &size)| &mut buf[..n * size])
            .collect();
        plan.run_chunk(s, bytes, &mut slices, scratch)
            .map_err(|e| at(model, format!("run failed: {e}")))?;
        for (file, slice) in files.iter_mut().zip(&slices) {
            file.append(slice)?;
        }
        done += n;
    }
    files.into_iter().map(Staging::finish).collect()
}
