//! `ewise run`: every source streamed through the model's plan, chunk by chunk, on the
//! CPU ([`Streaming::run_chunk`]) or on the GPU ([`Streaming::gpu_stream`], transfers
//! overlapping the reads and writes), into its outputs' temporaries, then all
//! committed at once.

use std::path::Path;

use anyhow::{anyhow, bail, Result};
use ewise_cli::npy::Header;
use ewise_gpu::stream::ChunkEnds;
use ewise_gpu::GpuDevice;
use ewise_onnx::{DataType, Scratch, SourceKind, Streaming};

use super::feed::Feed;
use super::inputs::{drain, Source};
use super::outputs::{in_created_dirs, output_element};
use crate::cli::RunArgs;
use crate::interrupt;
use crate::output::{self, Staged, Staging, Target};
use crate::paths::at;
use crate::progress::Progress;

/// The default `--chunk-size` on the CPU: large enough to run at bandwidth, small
/// enough to stay in the caches' reach.
pub(super) const CPU_CHUNK_BYTES: usize = 4 << 20;

/// The default `--chunk-size` on a GPU: large enough that each chunk's submission costs
/// little beside its transfers.
pub(super) const GPU_CHUNK_BYTES: usize = 16 << 20;

/// Where the chunks are computed.
pub(super) enum Engine<'d> {
    Cpu,
    Gpu(&'d GpuDevice),
}

/// Bytes per element of `data_type` (1 for a type without a whole-byte size, which
/// the checks before streaming refuse).
fn element_size(data_type: DataType) -> usize {
    data_type
        .size_in_bytes()
        .and_then(|s| usize::try_from(s).ok())
        .unwrap_or(1)
}

/// The most outputs of one source whose temporaries stay open while it is streamed;
/// beyond, each chunk reopens them ([`Staging`]).
const OPEN_OUTPUTS: usize = 16;

/// Elements per chunk of source `s` of `plan` for a chunk budget of `budget` bytes
/// ([`Streaming::chunk_elements`]): the chunk's input, output and scratch buffers
/// together hold at most `budget` bytes. A budget given with `--chunk-size`
/// (`explicit`) that cannot hold one element of each is refused; the default budget
/// holds at least [`Streaming::MIN_CHUNK_ELEMENTS`] elements however many outputs share
/// it. Never more than the source holds (at least one).
fn chunk_elements(plan: &Streaming, s: usize, budget: usize, explicit: bool) -> Result<usize> {
    if !explicit {
        return Ok(plan.chunk_elements(s, budget, Streaming::MIN_CHUNK_ELEMENTS));
    }
    let per_element = plan.chunk_bytes_per_element(s);
    if budget < per_element {
        bail!(
            "--chunk-size {budget} cannot hold one element of {:?} with its outputs and intermediate values ({per_element} bytes); give at least {per_element}",
            plan.sources()[s].name
        );
    }
    Ok(plan.chunk_elements(s, budget, 1))
}

/// Streams every source of `plan` into temporaries for `targets` and commits them (see
/// the module docs). Creates OUTDIR and its missing parents first; removes those again,
/// where still empty, if the run fails.
pub(super) fn stream_outputs(
    args: &RunArgs,
    targets: &[Target],
    plan: &Streaming,
    inputs: Vec<Source>,
    engine: Engine<'_>,
) -> Result<()> {
    if targets.len() != plan.outputs().len() {
        bail!(
            "the model gave {} outputs but declares {}",
            plan.outputs().len(),
            targets.len()
        );
    }
    let budget = match (&engine, args.chunk_size) {
        (_, Some(bytes)) => bytes,
        (Engine::Cpu, None) => CPU_CHUNK_BYTES,
        (Engine::Gpu(_), None) => GPU_CHUNK_BYTES,
    };
    let chunks = (0..plan.sources().len())
        .map(|s| chunk_elements(plan, s, budget, args.chunk_size.is_some()))
        .collect::<Result<Vec<usize>>>()?;
    if let Engine::Gpu(device) = &engine {
        check_gpu_chunks(plan, &chunks, device)?;
    }
    let total = plan
        .sources()
        .iter()
        .map(|s| s.elements as u64 * element_size(s.data_type) as u64)
        .sum();
    let progress = Progress::new(total, "run", !args.progress.no_progress);
    let run = Run {
        model: &args.model,
        targets,
        plan,
        engine,
        progress: &progress,
    };
    let result = in_created_dirs(&args.output_dir, || run.stream_and_commit(&chunks, inputs));
    progress.finish();
    result
}

/// Refuses chunks that a GPU cannot bind: every buffer of a chunk must fit the
/// device's largest binding.
fn check_gpu_chunks(plan: &Streaming, chunks: &[usize], device: &GpuDevice) -> Result<()> {
    for (s, &chunk) in chunks.iter().enumerate() {
        let widest = plan
            .outputs_of(s)
            .iter()
            .map(|&o| element_size(plan.outputs()[o].data_type))
            .fold(element_size(plan.sources()[s].data_type), usize::max)
            .max(8);
        let bytes = (chunk as u64).saturating_mul(widest as u64);
        if bytes > device.max_binding_size() {
            bail!(
                "--chunk-size is too large for the GPU {}: a chunk of {chunk} elements of {:?} needs buffers of {bytes} bytes, and it binds at most {} bytes; give a smaller --chunk-size",
                device.adapter(),
                plan.sources()[s].name,
                device.max_binding_size()
            );
        }
    }
    Ok(())
}

/// What streaming every source of a plan shares.
struct Run<'a> {
    model: &'a Path,
    targets: &'a [Target],
    plan: &'a Streaming,
    engine: Engine<'a>,
    progress: &'a Progress,
}

impl Run<'_> {
    /// Removes stale temporaries, streams each source (in chunks of `chunks[s]`
    /// elements) into its outputs' temporaries, and commits them all in declaration
    /// order.
    fn stream_and_commit(&self, chunks: &[usize], mut inputs: Vec<Source>) -> Result<()> {
        let plan = self.plan;
        output::remove_stale_temporaries(self.targets);
        let mut staged: Vec<Option<Staged>> = self.targets.iter().map(|_| None).collect();
        let mut scratch = Scratch::new();
        for (s, source) in plan.sources().iter().enumerate() {
            let size = element_size(source.data_type);
            let feed = match source.kind {
                SourceKind::Input => {
                    let i = inputs
                        .iter()
                        .position(|f| f.name == source.name)
                        .ok_or_else(|| anyhow!("input {:?} was not opened", source.name))?;
                    Feed::input(inputs.swap_remove(i), size, chunks[s])?
                }
                _ => match plan.initializer_bytes(s) {
                    Some(bytes) => Feed::memory(bytes, size, self.model, &source.name),
                    None => Feed::external(plan, s, size, self.model, &source.name),
                },
            };
            let mut files = self.create_outputs(s)?;
            match self.engine {
                Engine::Cpu => self.on_cpu(s, chunks[s], feed, &mut files, &mut scratch)?,
                Engine::Gpu(device) => self.on_gpu(s, chunks[s], feed, &mut files, device)?,
            }
            let written = files
                .into_iter()
                .map(Staging::finish)
                .collect::<Result<Vec<Staged>>>()?;
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

    /// New temporaries for the outputs of source `s` ([`Streaming::outputs_of`]), in
    /// that order, each holding its `.npy` header.
    fn create_outputs(&self, s: usize) -> Result<Vec<Staging>> {
        let plan = self.plan;
        let mine = plan.outputs_of(s);
        let keep_open = mine.len() <= OPEN_OUTPUTS;
        let mut files = Vec::with_capacity(mine.len());
        for &o in mine {
            interrupt::check()?;
            let out = &plan.outputs()[o];
            let header = Header {
                descr: output_element(out.data_type).descr(),
                fortran_order: false,
                shape: out.shape.iter().map(|&d| d as u64).collect(),
            };
            let mut file = Staging::create(&self.targets[o], keep_open)?;
            file.append(&header.to_bytes())?;
            files.push(file);
        }
        Ok(files)
    }

    /// Streams source `s`, read from `feed` in chunks of `chunk` elements, through the
    /// CPU into `files`.
    fn on_cpu(
        &self,
        s: usize,
        chunk: usize,
        mut feed: Feed<'_>,
        files: &mut [Staging],
        scratch: &mut Scratch,
    ) -> Result<()> {
        let plan = self.plan;
        let source = &plan.sources()[s];
        let in_size = element_size(source.data_type);
        let out_sizes: Vec<usize> = plan
            .outputs_of(s)
            .iter()
            .map(|&o| element_size(plan.outputs()[o].data_type))
            .collect();
        let mut buffers = Vec::with_capacity(out_sizes.len());
        for &size in &out_sizes {
            buffers.push(allocate(chunk * size, &source.name)?);
        }
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
                .map_err(|e| at(self.model, format!("run failed: {e}")))?;
            for (file, slice) in files.iter_mut().zip(&slices) {
                file.append(slice)?;
            }
            done += n;
            self.progress.advance((n * in_size) as u64);
        }
        Ok(())
    }

    /// Streams source `s`, read from `feed` in chunks of `chunk` elements, through
    /// `device` into `files`.
    fn on_gpu(
        &self,
        s: usize,
        chunk: usize,
        feed: Feed<'_>,
        files: &mut [Staging],
        device: &GpuDevice,
    ) -> Result<()> {
        let plan = self.plan;
        let source = &plan.sources()[s];
        let in_size = element_size(source.data_type);
        let mut stream = plan
            .gpu_stream(s, device, chunk * in_size)
            .map_err(|e| at(self.model, format!("run failed: {e}")))?;
        let mut ends = GpuEnds {
            feed,
            files,
            progress: self.progress,
        };
        stream.run(source.elements as u64, &mut ends)?;
        Ok(())
    }
}

/// A zeroed buffer of `len` bytes for a chunk of `name`'s outputs, allocated fallibly.
fn allocate(len: usize, name: &str) -> Result<Vec<u8>> {
    let mut buffer = Vec::new();
    buffer
        .try_reserve_exact(len)
        .map_err(|_| anyhow!("cannot allocate {len} bytes for a chunk of the outputs of {name:?}; give a smaller --chunk-size"))?;
    buffer.resize(len, 0);
    Ok(buffer)
}

/// A source's feed and its outputs' temporaries, as the ends of a GPU stream.
struct GpuEnds<'f, 'a> {
    feed: Feed<'a>,
    files: &'f mut [Staging],
    progress: &'f Progress,
}

impl ChunkEnds for GpuEnds<'_, '_> {
    type Error = anyhow::Error;

    fn read(&mut self, start: u64, bytes: &mut [u8]) -> Result<()> {
        self.feed.read_into(usize::try_from(start)?, bytes)?;
        self.progress.advance(bytes.len() as u64);
        Ok(())
    }

    fn write(&mut self, _start: u64, outputs: &[&[u8]]) -> Result<()> {
        if outputs.len() != self.files.len() {
            bail!(
                "the GPU stream gave {} outputs for a chunk, the plan {}",
                outputs.len(),
                self.files.len()
            );
        }
        for (file, bytes) in self.files.iter_mut().zip(outputs) {
            file.append(bytes)?;
        }
        Ok(())
    }

    fn stop_before(&mut self, _start: u64) -> Result<bool> {
        interrupt::check()?;
        Ok(false)
    }
}
