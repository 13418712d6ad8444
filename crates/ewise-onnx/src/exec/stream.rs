//! Running a checked graph chunk by chunk ([`Streaming`]): every node is unary and
//! element-wise, so each element of a graph output depends only on the element at the
//! same index of one graph input or initializer (its source), and any element range of
//! a source gives the same range of every output derived from it.

#[cfg(feature = "gpu")]
mod gpu;

use ewise_cpu::text::quoted;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use ewise_cpu::{CompiledOperator, DataType, Device, NanPolicy};

use super::{check_inputs, chunks, compile, element_size, step_types, Chunk, Context};
use crate::error::{Error, Result};
use crate::graph::{Graph, Initializer, PlannedStep, Source};
use crate::tensor::{byte_len, shape_text};

/// How many chunk descriptions (1-d sizes) a [`Scratch`] keeps compiled per node: a
/// whole number of equal chunks and a shorter last one use two.
const CACHED_LENGTHS: usize = 3;

/// Identifies each [`Streaming`], so that a [`Scratch`] knows whose operators it holds.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Where the elements of a [`StreamSource`] come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SourceKind {
    /// A graph input the caller gave: the caller supplies its bytes.
    Input,
    /// A graph input the caller left out, so its initializer default applies: its bytes
    /// are [`Streaming::initializer_bytes`], or read with
    /// [`Streaming::read_initializer`].
    InputDefault,
    /// An initializer that is not a graph input: its bytes are
    /// [`Streaming::initializer_bytes`], or read with [`Streaming::read_initializer`].
    Initializer,
}

/// A graph input or initializer that some graph output derives from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StreamSource {
    /// The value's name.
    pub name: String,
    /// Whether the caller or the model holds its bytes.
    pub kind: SourceKind,
    /// The element type.
    pub data_type: DataType,
    /// The shape (given by the caller for an input, the initializer's otherwise).
    pub shape: Vec<usize>,
    /// The number of elements: the product of `shape`.
    pub elements: usize,
}

/// A graph output, with the source its elements derive from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StreamOutput {
    /// The output's name.
    pub name: String,
    /// The element type.
    pub data_type: DataType,
    /// The shape: its source's.
    pub shape: Vec<usize>,
    /// The number of elements: its source's.
    pub elements: usize,
    /// The index of its source in [`Streaming::sources`].
    pub source: usize,
    /// Whether the output is the source itself (a graph output that is a graph input
    /// or initializer), whose bytes [`Streaming::run_chunk`] copies unchanged.
    pub unchanged: bool,
}

/// Where a chunk of a value lives during [`Streaming::run_chunk`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Loc {
    /// The caller's input chunk.
    Source,
    /// The caller's slice for the output at this position of the source's outputs.
    Output(usize),
    /// This scratch buffer.
    Scratch(usize),
}

/// One step of a source's program; in place when `input` and `output` are the same
/// scratch buffer.
#[derive(Debug, Clone)]
struct Op {
    /// Index into [`Streaming::steps`].
    step: usize,
    input: Loc,
    output: Loc,
    types: (DataType, DataType),
}

/// What [`Streaming::run_chunk`] does for one source.
#[derive(Debug, Clone, Default)]
struct Program {
    /// The graph outputs derived from the source, in declaration order.
    outputs: Vec<usize>,
    /// The positions in `outputs` of the outputs that are the source itself.
    copies: Vec<usize>,
    /// The steps on the paths from the source to its outputs, in plan order.
    ops: Vec<Op>,
    /// Bytes per element of each scratch buffer the steps use.
    widths: Vec<usize>,
}

impl Program {
    /// A free scratch buffer for elements of `width` bytes: the narrowest free one wide
    /// enough, else the widest free one widened, else a new one.
    fn take(&mut self, free: &mut Vec<usize>, width: usize) -> usize {
        let fits = free
            .iter()
            .enumerate()
            .filter(|(_, &b)| self.widths[b] >= width)
            .min_by_key(|(_, &b)| self.widths[b]);
        let best = fits.or_else(|| free.iter().enumerate().max_by_key(|(_, &b)| self.widths[b]));
        match best.map(|(i, _)| i) {
            Some(i) => {
                let b = free.swap_remove(i);
                self.widths[b] = self.widths[b].max(width);
                b
            }
            None => {
                self.widths.push(width);
                self.widths.len() - 1
            }
        }
    }
}

/// A model's graph planned for chunked execution with fixed input types and shapes,
/// made by [`crate::Model::streaming`].
///
/// The plan lists the [`sources`](Streaming::sources) (the graph inputs and
/// initializers some graph output derives from; a given input that no output uses is
/// checked but not listed) and the [`outputs`](Streaming::outputs), each derived from
/// one source. [`Streaming::run_chunk`] takes the bytes of any element range of one
/// source and writes the same range of every output derived from it, running only the
/// nodes between them, so a caller can read each source and write each output in pieces
/// of its choosing, holding neither whole. The bytes are bit for bit those of
/// [`crate::Model::run`] on the whole tensors: the same compiled ewise-cpu operators
/// (over 1-d chunks), the model's NaN policy and each IsInf node's detection mode.
///
/// Chunks run on the CPU with [`Streaming::run_chunk`], also for a model given a GPU;
/// with the `gpu` feature, `Streaming::gpu_stream` runs a source's chunks on a GPU
/// instead, with the same bits.
///
/// ```
/// # use ewise_onnx::proto::{self, Message};
/// # use ewise_onnx::{DataType, Model, Scratch, Tensor};
/// # let tensor_type = |elem_type| proto::TypeProto {
/// #     value: Some(proto::type_proto::Value::TensorType(proto::type_proto::Tensor {
/// #         elem_type,
/// #         shape: None,
/// #     })),
/// #     ..Default::default()
/// # };
/// # let value = |name: &str, elem_type| proto::ValueInfoProto {
/// #     name: name.into(),
/// #     r#type: Some(tensor_type(elem_type)),
/// #     ..Default::default()
/// # };
/// # let model = proto::ModelProto {
/// #     ir_version: 9,
/// #     opset_import: vec![proto::OperatorSetIdProto { domain: String::new(), version: 20 }],
/// #     graph: Some(proto::GraphProto {
/// #         node: vec![proto::NodeProto {
/// #             input: vec!["x".into()],
/// #             output: vec!["y".into()],
/// #             op_type: "Sign".into(),
/// #             ..Default::default()
/// #         }],
/// #         input: vec![value("x", 1)],
/// #         output: vec![value("y", 1)],
/// #         ..Default::default()
/// #     }),
/// #     ..Default::default()
/// # };
/// # let model = Model::from_bytes(&model.encode_to_vec(), None)?;
/// // `model` computes y = Sign(x) over float32.
/// let x: Vec<f32> = (0..10).map(|i| i as f32 - 4.5).collect();
/// let streaming = model.streaming(&[("x", DataType::Float32, &[10])])?;
/// assert_eq!(streaming.outputs_of(0), [0]);
/// let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_ne_bytes()).collect();
/// let mut y = vec![0u8; bytes.len()];
/// let mut scratch = Scratch::new();
/// for (input, output) in bytes.chunks(4 * 4).zip(y.chunks_mut(4 * 4)) {
///     streaming.run_chunk(0, input, &mut [output], &mut scratch)?;
/// }
/// let whole = model.run([("x", Tensor::from_values(vec![10], &x)?)])?;
/// assert_eq!(whole[0].1.data, y);
/// # Ok::<(), ewise_onnx::Error>(())
/// ```
#[derive(Clone)]
pub struct Streaming {
    id: u64,
    device: Device,
    policy: NanPolicy,
    sources: Vec<StreamSource>,
    outputs: Vec<StreamOutput>,
    /// Per source: the initializer, for the kinds the model holds.
    data: Vec<Option<Initializer>>,
    steps: Vec<PlannedStep>,
    programs: Vec<Program>,
}

impl fmt::Debug for Streaming {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Streaming")
            .field("sources", &self.sources)
            .field("outputs", &self.outputs)
            .field("nan_policy", &self.policy)
            .finish_non_exhaustive()
    }
}

/// The reusable state of [`Streaming::run_chunk`]: scratch buffers for the values
/// between a source and its outputs, and the operators compiled for the chunk lengths
/// seen.
///
/// One `Scratch` serves any number of chunks, of any sources, of any [`Streaming`] (a
/// different one than last time drops the compiled operators); threads running chunks
/// at once each need their own. Its buffers only grow, to
/// [`Streaming::scratch_bytes`] of the longest chunk run with it.
#[derive(Debug, Default)]
pub struct Scratch {
    /// The id of the [`Streaming`] whose operators `compiled` holds; 0 for none.
    owner: u64,
    buffers: Vec<Vec<u8>>,
    /// Per step of the owner: the operators compiled for 1-d chunk sizes, most
    /// recently used first, at most [`CACHED_LENGTHS`].
    compiled: Vec<Vec<(Vec<u32>, CompiledOperator)>>,
}

impl Scratch {
    /// Empty scratch: no buffers, no compiled operators.
    pub fn new() -> Scratch {
        Scratch::default()
    }

    /// The bytes the scratch buffers hold allocated (their capacities summed).
    pub fn capacity_bytes(&self) -> usize {
        self.buffers.iter().map(Vec::capacity).sum()
    }

    /// Prepares for a chunk of `streaming`: compiled operators of another one are
    /// dropped, and the buffers are grown (fallibly) to `elements` times `widths`.
    fn prepare(&mut self, streaming: &Streaming, widths: &[usize], elements: usize) -> Result<()> {
        if self.owner != streaming.id {
            self.owner = streaming.id;
            self.compiled.clear();
        }
        if self.compiled.len() < streaming.steps.len() {
            self.compiled.resize_with(streaming.steps.len(), Vec::new);
        }
        if self.buffers.len() < widths.len() {
            self.buffers.resize_with(widths.len(), Vec::new);
        }
        for (buffer, &width) in self.buffers.iter_mut().zip(widths) {
            let out_of_memory = |bytes: u64| Error::OutOfMemory {
                what: format!("a streaming scratch buffer for {elements} elements"),
                bytes,
            };
            let len = elements
                .checked_mul(width)
                .ok_or_else(|| out_of_memory(u64::MAX))?;
            if buffer.len() < len {
                buffer
                    .try_reserve_exact(len - buffer.len())
                    .map_err(|_| out_of_memory(len as u64))?;
                buffer.resize(len, 0);
            }
        }
        Ok(())
    }
}

/// The operator of `step` compiled for `sizes`, from `entries` or compiled now and
/// kept there (the least recently used dropped beyond [`CACHED_LENGTHS`]).
fn cached<'c>(
    entries: &'c mut Vec<(Vec<u32>, CompiledOperator)>,
    ctx: &Context<'_>,
    step: &PlannedStep,
    types: (DataType, DataType),
    sizes: Vec<u32>,
) -> Result<&'c CompiledOperator> {
    match entries.iter().position(|(s, _)| *s == sizes) {
        Some(i) => entries[..=i].rotate_right(1),
        None => {
            let op = compile(ctx, step, types, &sizes)?;
            entries.truncate(CACHED_LENGTHS - 1);
            entries.insert(0, (sizes, op));
        }
    }
    Ok(&entries[0].1)
}

/// The bytes a step reads and the bytes it writes, for separate `from` and `to`.
fn operands<'a>(
    input: &'a [u8],
    outputs: &'a mut [&mut [u8]],
    buffers: &'a mut [Vec<u8>],
    from: Loc,
    to: Loc,
) -> Option<(&'a [u8], &'a mut [u8])> {
    Some(match (from, to) {
        (Loc::Source, Loc::Output(j)) => (input, &mut **outputs.get_mut(j)?),
        (Loc::Source, Loc::Scratch(y)) => (input, buffers.get_mut(y)?.as_mut_slice()),
        (Loc::Output(i), Loc::Scratch(y)) => (&**outputs.get(i)?, buffers.get_mut(y)?),
        (Loc::Scratch(x), Loc::Output(j)) => (buffers.get(x)?, &mut **outputs.get_mut(j)?),
        (Loc::Output(i), Loc::Output(j)) => {
            let [a, b] = outputs.get_disjoint_mut([i, j]).ok()?;
            (&**a, &mut **b)
        }
        (Loc::Scratch(x), Loc::Scratch(y)) => {
            let [a, b] = buffers.get_disjoint_mut([x, y]).ok()?;
            (a.as_slice(), b.as_mut_slice())
        }
        (_, Loc::Source) => return None,
    })
}

/// A chunk that does not fit the plan.
fn invalid(reason: String) -> Error {
    Error::InvalidChunk { reason }
}

impl Streaming {
    /// Checks `given` as [`crate::Model::check_inputs`] does and plans each source's
    /// chunks.
    pub(crate) fn new(
        graph: &Graph,
        device: &Device,
        policy: NanPolicy,
        given: &[(&str, DataType, &[usize])],
    ) -> Result<Streaming> {
        let shapes = check_inputs(graph, given)?;
        let mut roots: Vec<usize> = (0..graph.values.len()).collect();
        for step in &graph.steps {
            roots[step.output] = roots[step.input];
        }
        let mut used = vec![false; graph.values.len()];
        for &v in &graph.output_values {
            used[roots[v]] = true;
        }

        let mut source_of: Vec<Option<usize>> = vec![None; graph.values.len()];
        let mut sources = Vec::new();
        let mut data = Vec::new();
        for (v, value) in graph.values.iter().enumerate() {
            let (kind, initializer) = match value.source {
                _ if !used[v] => continue,
                Source::Input { index, default } => {
                    let name = graph.inputs[index].name.as_str();
                    match default {
                        Some(d) if !given.iter().any(|&(n, ..)| n == name) => {
                            (SourceKind::InputDefault, Some(d))
                        }
                        _ => (SourceKind::Input, None),
                    }
                }
                Source::Initializer(i) => (SourceKind::Initializer, Some(i)),
                Source::Node(_) => continue,
            };
            let shape = shapes[v].clone().unwrap_or_default();
            let too_large = || Error::TooLarge {
                what: value.describe(),
                shape: shape_text(&shape),
                limit: "its byte size does not fit in this machine's address space",
            };
            byte_len(value.data_type, &shape).ok_or_else(too_large)?;
            let elements = shape
                .iter()
                .try_fold(1usize, |acc, &d| acc.checked_mul(d))
                .ok_or_else(too_large)?;
            source_of[v] = Some(sources.len());
            sources.push(StreamSource {
                name: value.name.clone(),
                kind,
                data_type: value.data_type,
                shape,
                elements,
            });
            data.push(initializer.map(|i| graph.initializers[i].clone()));
        }

        let mut outputs = Vec::with_capacity(graph.outputs.len());
        let mut programs = vec![Program::default(); sources.len()];
        let mut loc: Vec<Option<Loc>> = vec![None; graph.values.len()];
        for (o, (info, &v)) in graph.outputs.iter().zip(&graph.output_values).enumerate() {
            let Some(s) = source_of[roots[v]] else {
                return Err(Error::UndefinedOutput {
                    name: info.name.clone(),
                });
            };
            let program = &mut programs[s];
            let position = program.outputs.len();
            program.outputs.push(o);
            let unchanged = v == roots[v];
            if unchanged {
                program.copies.push(position);
            } else {
                loc[v] = Some(Loc::Output(position));
            }
            outputs.push(StreamOutput {
                name: info.name.clone(),
                data_type: info.data_type,
                shape: sources[s].shape.clone(),
                elements: sources[s].elements,
                source: s,
                unchanged,
            });
        }

        let mut free: Vec<Vec<usize>> = vec![Vec::new(); sources.len()];
        for (v, s) in source_of.iter().enumerate() {
            if s.is_some() {
                loc[v] = Some(Loc::Source);
            }
        }
        for (k, step) in graph.steps.iter().enumerate() {
            let Some(s) = source_of[roots[step.input]] else {
                continue;
            };
            let (program, free) = (&mut programs[s], &mut free[s]);
            let Some(input) = loc[step.input] else {
                return Err(Error::UndefinedInput {
                    node: step.info.node.clone(),
                    name: step.info.input.clone(),
                });
            };
            let types = step_types(graph, step);
            let output = match (loc[step.output], input) {
                (Some(Loc::Output(position)), _) => Loc::Output(position),
                (_, Loc::Scratch(b)) if step.info.in_place => Loc::Scratch(b),
                _ => Loc::Scratch(program.take(free, element_size(types.1))),
            };
            loc[step.output] = Some(output);
            for &v in &step.release {
                if let Some(Loc::Scratch(b)) = loc[v] {
                    if output != Loc::Scratch(b) {
                        free.push(b);
                    }
                }
            }
            program.ops.push(Op {
                step: k,
                input,
                output,
                types,
            });
        }

        Ok(Streaming {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            device: *device,
            policy,
            sources,
            outputs,
            data,
            steps: graph.steps.clone(),
            programs,
        })
    }

    /// The graph inputs and initializers some graph output derives from, inputs first in
    /// declaration order, then initializers in the model's order.
    pub fn sources(&self) -> &[StreamSource] {
        &self.sources
    }

    /// Every graph output, in declaration order.
    pub fn outputs(&self) -> &[StreamOutput] {
        &self.outputs
    }

    /// The indices into [`Streaming::outputs`] of the outputs derived from source
    /// `source`, in declaration order: the order of the slices
    /// [`Streaming::run_chunk`] writes. Empty for an index out of range.
    pub fn outputs_of(&self, source: usize) -> &[usize] {
        self.programs.get(source).map_or(&[], |p| &p.outputs)
    }

    /// The bytes of source `source` when the model holds them in memory
    /// ([`SourceKind::Initializer`] and [`SourceKind::InputDefault`]): all its elements,
    /// packed, in native byte order, to be given to [`Streaming::run_chunk`] in pieces
    /// like a caller's input. `None` for a [`SourceKind::Input`], an index out of range,
    /// or external data that a [`crate::ExternalData::Deferred`] load left in its file:
    /// read that with [`Streaming::read_initializer`], chunk by chunk.
    pub fn initializer_bytes(&self, source: usize) -> Option<&[u8]> {
        self.data.get(source)?.as_ref()?.held()
    }

    /// Fills `out` with elements `[start, start + n)` of source `source`, a source the
    /// model holds ([`SourceKind::Initializer`] or [`SourceKind::InputDefault`]), for
    /// some `n`: `out` holds `n` whole elements, which it receives packed, in native
    /// byte order, ready for [`Streaming::run_chunk`]. Bytes in memory are copied;
    /// external data a [`crate::ExternalData::Deferred`] load left in its file is read
    /// with one positioned read through a handle to the file the load opened (that
    /// handle, or, where it was closed, one opened again and checked to be the same
    /// file: see [`crate::ExternalData::Deferred`]), so a source of any size streams in
    /// memory bounded by the chunks asked for, and chunks may be read in any order,
    /// from several threads.
    ///
    /// Errors: a source index out of range, a [`SourceKind::Input`], bytes that are
    /// not whole elements or elements beyond the source are [`Error::InvalidChunk`],
    /// with nothing read; a file that was shrunk after the load so that it no longer
    /// holds the elements is [`Error::ExternalDataTruncated`] (naming the tensor, its
    /// range and the file's size now); a file opened again that is not the one the
    /// load checked is [`Error::ExternalDataRefused`]; other read failures are
    /// [`Error::Io`] naming the file.
    pub fn read_initializer(&self, source: usize, start: usize, out: &mut [u8]) -> Result<()> {
        let Some(src) = self.sources.get(source) else {
            return Err(invalid(format!(
                "source index {source} is out of range (the plan has {} sources)",
                self.sources.len()
            )));
        };
        let Some(Some(init)) = self.data.get(source) else {
            return Err(invalid(format!(
                "source {} is a graph input the caller gives, not data the model holds",
                quoted(&src.name)
            )));
        };
        let size = element_size(src.data_type);
        let n = out.len() / size;
        if !out.len().is_multiple_of(size)
            || start.checked_add(n).is_none_or(|end| end > src.elements)
        {
            return Err(invalid(format!(
                "{} bytes from element {start} of source {} are not whole {} elements of {size} bytes within its {} elements", out.len(), quoted(&src.name), crate::dtype::name(src.data_type), src.elements)));
        }
        init.read_at(start * size, out)
    }

    /// The most bytes a [`Scratch`] holds in buffers after chunks of at most `elements`
    /// elements of any sources of this plan: `elements` times the summed element sizes
    /// of the scratch buffers, which is at most (the values alive at once between a
    /// source and its outputs) x `elements` x 8 bytes. A source whose outputs are all
    /// computed directly from it, or are it, needs none. Saturates at `usize::MAX`.
    pub fn scratch_bytes(&self, elements: usize) -> usize {
        let slots = self.programs.iter().map(|p| p.widths.len()).max();
        let widest = (0..slots.unwrap_or(0)).map(|b| {
            self.programs
                .iter()
                .filter_map(|p| p.widths.get(b))
                .max()
                .copied()
                .unwrap_or(0)
        });
        widest.sum::<usize>().saturating_mul(elements)
    }

    /// The fewest elements a chunk holds under a default budget, however many outputs
    /// and intermediate values share it: the `min_elements` that
    /// [`Streaming::chunk_elements`] is given for a budget the caller chose itself.
    pub const MIN_CHUNK_ELEMENTS: usize = 4096;

    /// Bytes the buffers of one chunk hold per element of source `source`: the
    /// source's element size, plus each of its outputs' ([`Streaming::outputs_of`]),
    /// plus [`Streaming::scratch_bytes`]`(1)` for the intermediate values alive at once.
    /// At least 1; saturates at `usize::MAX`.
    ///
    /// # Panics
    /// If `source` is out of range of [`Streaming::sources`].
    pub fn chunk_bytes_per_element(&self, source: usize) -> usize {
        self.outputs_of(source)
            .iter()
            .map(|&o| element_size(self.outputs[o].data_type))
            .fold(
                element_size(self.sources[source].data_type),
                usize::saturating_add,
            )
            .saturating_add(self.scratch_bytes(1))
            .max(1)
    }

    /// How many elements of source `source` one chunk holds so that its buffers (the
    /// source's chunk, one per output and the scratch buffers of
    /// [`Streaming::run_chunk`]) take at most `budget_bytes` together: `budget_bytes`
    /// divided by [`Streaming::chunk_bytes_per_element`]`(source)`, rounded down; then
    /// raised to `min_elements` (the budget is then exceeded: pass
    /// [`Streaming::MIN_CHUNK_ELEMENTS`] for a default budget, 1 for a budget a user
    /// gave, after refusing one smaller than a single element's bytes); then capped at
    /// the source's [`StreamSource::elements`]; never less than 1, even for an empty
    /// source or a budget smaller than one element.
    ///
    /// # Panics
    /// If `source` is out of range of [`Streaming::sources`].
    pub fn chunk_elements(&self, source: usize, budget_bytes: usize, min_elements: usize) -> usize {
        (budget_bytes / self.chunk_bytes_per_element(source))
            .max(min_elements)
            .min(self.sources[source].elements)
            .max(1)
    }

    /// Runs one chunk of source `source`: `input` holds elements `[start, start + n)`
    /// of the source for some `start` (packed, native byte order: `n` times its element
    /// size in bytes), and `outputs` one slice per output of
    /// [`Streaming::outputs_of`]`(source)`, in that order, each exactly `n` elements of
    /// that output's type; each receives elements `[start, start + n)` of its output.
    /// Outputs that are the source itself get a copy of `input`.
    ///
    /// Only the nodes between the source and those outputs run. A node whose output is
    /// a graph output writes straight into the caller's slice; the other values live
    /// in `scratch`'s buffers, `n` elements each, reused from chunk to chunk and, within
    /// a chunk, once the value in one is no longer needed; Sign overwrites its input's
    /// buffer where the model's plan runs it in place ([`crate::Step::in_place`]) and
    /// that input is in scratch. The buffers therefore never exceed
    /// [`Streaming::scratch_bytes`]`(n)` for the longest chunk `n` run with `scratch`,
    /// and are grown fallibly ([`Error::OutOfMemory`]). Operators are compiled once per
    /// chunk length and kept in `scratch`.
    ///
    /// A source index out of range, an input that is not whole elements, or outputs of
    /// the wrong number or lengths are [`Error::InvalidChunk`], before any output is
    /// written. An empty chunk writes nothing.
    pub fn run_chunk(
        &self,
        source: usize,
        input: &[u8],
        outputs: &mut [&mut [u8]],
        scratch: &mut Scratch,
    ) -> Result<()> {
        let (Some(src), Some(program)) = (self.sources.get(source), self.programs.get(source))
        else {
            return Err(invalid(format!(
                "source index {source} is out of range (the plan has {} sources)",
                self.sources.len()
            )));
        };
        let size = element_size(src.data_type);
        if !input.len().is_multiple_of(size) {
            return Err(invalid(format!(
                "{} bytes of source {} are not whole {} elements of {size} bytes",
                input.len(),
                quoted(&src.name),
                crate::dtype::name(src.data_type)
            )));
        }
        let n = input.len() / size;
        if outputs.len() != program.outputs.len() {
            return Err(invalid(format!(
                "{} output slices given for source {}, which has {} outputs",
                outputs.len(),
                quoted(&src.name),
                program.outputs.len()
            )));
        }
        for (slice, &o) in outputs.iter().zip(&program.outputs) {
            let out = &self.outputs[o];
            let expected = n.checked_mul(element_size(out.data_type));
            if expected != Some(slice.len()) {
                return Err(invalid(format!(
                    "the slice for output {} holds {} bytes, but {n} elements of {} need {}",
                    quoted(&out.name),
                    slice.len(),
                    crate::dtype::name(out.data_type),
                    expected.map_or_else(|| "more than usize::MAX".into(), |e| e.to_string())
                )));
            }
        }
        scratch.prepare(self, &program.widths, n)?;
        for &position in &program.copies {
            outputs[position].copy_from_slice(input);
        }
        if n == 0 {
            return Ok(());
        }
        let ctx = Context {
            device: &self.device,
            policy: self.policy,
        };
        let Scratch {
            buffers, compiled, ..
        } = scratch;
        for op in &program.ops {
            let step = &self.steps[op.step];
            let kernel = |source| Error::Kernel {
                node: step.info.node.clone(),
                source,
            };
            let (in_size, out_size) = (element_size(op.types.0), element_size(op.types.1));
            for Chunk {
                sizes,
                start,
                count,
            } in chunks(&[n])
            {
                let compiled = cached(&mut compiled[op.step], &ctx, step, op.types, sizes)?;
                let (a, b) = (start * in_size, (start + count) * in_size);
                let (c, d) = (start * out_size, (start + count) * out_size);
                match (op.input, op.output) {
                    (Loc::Scratch(x), Loc::Scratch(y)) if x == y => {
                        compiled.execute_in_place_slice(&mut buffers[x][a..b])
                    }
                    (from, to) => {
                        let Some((input, output)) = operands(input, outputs, buffers, from, to)
                        else {
                            return Err(Error::UndefinedInput {
                                node: step.info.node.clone(),
                                name: step.info.input.clone(),
                            });
                        };
                        compiled.execute_slices(&input[a..b], &mut output[c..d])
                    }
                }
                .map_err(kernel)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{
        type_proto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TypeProto,
        ValueInfoProto,
    };
    use crate::Model;

    fn value(name: &str, elem_type: i32) -> ValueInfoProto {
        ValueInfoProto {
            name: name.into(),
            r#type: Some(TypeProto {
                value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                    elem_type,
                    shape: None,
                })),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn node(op_type: &str, input: &str, output: &str) -> NodeProto {
        NodeProto {
            input: vec![input.into()],
            output: vec![output.into()],
            op_type: op_type.into(),
            ..Default::default()
        }
    }

    /// float32 `x` of `n` elements; `y = IsInf(Sign(Sign(x)))` (bool) through one
    /// float32 scratch buffer, and `z = Sign(x)` (float32): 4 + 1 + 4 bytes of source
    /// and outputs and 4 of scratch per element.
    fn plan(n: usize) -> Streaming {
        let model = ModelProto {
            ir_version: 9,
            opset_import: vec![OperatorSetIdProto {
                domain: String::new(),
                version: 20,
            }],
            graph: Some(GraphProto {
                name: "g".into(),
                node: vec![
                    node("Sign", "x", "a"),
                    node("Sign", "a", "b"),
                    node("IsInf", "b", "y"),
                    node("Sign", "x", "z"),
                ],
                input: vec![value("x", 1)],
                output: vec![value("y", 9), value("z", 1)],
                ..Default::default()
            }),
            ..Default::default()
        };
        let model = Model::from_proto(&model, None).unwrap();
        model.streaming(&[("x", DataType::Float32, &[n])]).unwrap()
    }

    #[test]
    fn chunk_elements_divides_the_budget_by_every_buffer_of_an_element() {
        let min = Streaming::MIN_CHUNK_ELEMENTS;
        let plan = plan(1 << 20);
        assert_eq!(plan.scratch_bytes(1), 4);
        assert_eq!(plan.chunk_bytes_per_element(0), 13);

        // A budget smaller than one element of every value alive: the minimum.
        for budget in [0, 1, 12] {
            assert_eq!(plan.chunk_elements(0, budget, 1), 1);
            assert_eq!(plan.chunk_elements(0, budget, min), min);
        }
        assert_eq!(plan.chunk_elements(0, 13, 1), 1);
        assert_eq!(plan.chunk_elements(0, 13, 0), 1);

        // Rounded down; raised to the minimum, even past the budget.
        assert_eq!(plan.chunk_elements(0, 13 * 5000 + 12, min), 5000);
        assert_eq!(plan.chunk_elements(0, 13 * min - 1, 1), min - 1);
        assert_eq!(plan.chunk_elements(0, 13 * min - 1, min), min);
        assert_eq!(plan.chunk_elements(0, 13 * min, min), min);

        // A large budget: what fits, then no more than the source holds.
        assert_eq!(plan.chunk_elements(0, 4 << 20, min), (4 << 20) / 13);
        assert_eq!(plan.chunk_elements(0, 16 << 20, min), 1 << 20);
        assert_eq!(plan.chunk_elements(0, usize::MAX, 1), 1 << 20);
    }

    #[test]
    fn chunk_elements_never_exceeds_the_source_nor_falls_below_one() {
        let min = Streaming::MIN_CHUNK_ELEMENTS;
        let small = plan(10);
        assert_eq!(small.chunk_elements(0, 4 << 20, min), 10);
        assert_eq!(small.chunk_elements(0, 0, min), 10);
        let empty = plan(0);
        assert_eq!(empty.chunk_elements(0, 4 << 20, min), 1);
        assert_eq!(empty.chunk_elements(0, 0, 1), 1);
    }
}
