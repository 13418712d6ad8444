//! Running a checked graph: input checks, per-run shape checks with `dim_param`
//! bindings, and execution of every step through ewise-cpu's compiled operators, reusing
//! freed buffers and running Sign in place where the plan allows. [`gpu`] runs the same
//! plan on a GPU; [`stream`] runs it chunk by chunk.

use ewise_cpu::text::{clip, quoted};
use std::collections::HashMap;
use std::sync::Arc;

use ewise_cpu::support::MAX_EXTENDED_DIMENSIONS;
use ewise_cpu::{CompiledOperator, DataType, Device, NanPolicy, OperatorDesc, TensorDesc};

use crate::dtype;
use crate::error::{Error, Result};
use crate::graph::{dims_text, Dim, Graph, InMemory, PlannedStep, Source, ValueInfo};
use crate::opset::OpType;
use crate::tensor::{byte_len, shape_text, Tensor};

#[cfg(feature = "gpu")]
pub(crate) mod gpu;
pub(crate) mod stream;

/// What a run did with memory, for callers that want to see the plan at work. A run on a
/// GPU counts GPU buffers, and makes the same choices, so it gives the same counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RunStats {
    /// Steps executed.
    pub steps: usize,
    /// Steps whose output overwrote their input's buffer.
    pub in_place: usize,
    /// Output buffers newly allocated.
    pub allocated: usize,
    /// Output buffers taken from values freed earlier in the run.
    pub reused: usize,
}

/// The largest number of elements one kernel call is given when a tensor's shape cannot
/// be described to the kernel library as it is (a dimension above `u32::MAX` or more
/// than 64 dimensions): such tensors run as consecutive 1-d chunks, which is equivalent
/// for element-wise operators on packed data.
const CHUNK_ELEMENTS: usize = 1 << 30;

enum Slot {
    Empty,
    Owned(Vec<u8>),
    /// An initializer's bytes, never written.
    Constant(Arc<Vec<u8>>),
}

impl Slot {
    fn bytes(&self) -> &[u8] {
        match self {
            Slot::Empty => &[],
            Slot::Owned(v) => v,
            Slot::Constant(b) => b,
        }
    }
}

/// Freed buffers, handed out best-fit by capacity.
#[derive(Default)]
struct Pool {
    free: Vec<Vec<u8>>,
}

impl Pool {
    fn take(&mut self, len: usize, stats: &mut RunStats) -> Vec<u8> {
        let best = self
            .free
            .iter()
            .enumerate()
            .filter(|(_, b)| b.capacity() >= len)
            .min_by_key(|(_, b)| b.capacity())
            .map(|(i, _)| i);
        let mut buffer = match best {
            Some(i) => {
                stats.reused += 1;
                self.free.swap_remove(i)
            }
            None => {
                stats.allocated += 1;
                Vec::with_capacity(len)
            }
        };
        buffer.clear();
        buffer.resize(len, 0);
        buffer
    }

    fn give(&mut self, buffer: Vec<u8>) {
        if buffer.capacity() > 0 {
            self.free.push(buffer);
        }
    }
}

/// `dim_param` bindings of one run: each symbol's size and where it was bound.
#[derive(Default)]
struct Bindings {
    symbols: HashMap<String, (usize, String)>,
}

impl Bindings {
    /// Checks `shape` (of `what`) against a declaration, binding new symbols.
    fn check(&mut self, what: &str, shape: &[usize], by: &str, dims: &[Dim]) -> Result<()> {
        let mismatch = |reason: String| Error::ShapeMismatch {
            what: what.to_string(),
            actual: shape_text(shape),
            declared: format!("{by} declares {}", dims_text(dims)),
            reason,
        };
        if shape.len() != dims.len() {
            return Err(mismatch(format!(
                "rank {} differs from the declared {}",
                shape.len(),
                dims.len()
            )));
        }
        for (i, (&n, d)) in shape.iter().zip(dims).enumerate() {
            match d {
                Dim::Fixed(m) if *m != n => {
                    return Err(mismatch(format!("dimension {i} is {n}, declared {m}")))
                }
                Dim::Param(p) => match self.symbols.get(p) {
                    Some((m, at)) if *m != n => {
                        return Err(mismatch(format!(
                            "dimension {i} ({p}) is {n}, but {p} is {m} in {at}"
                        )))
                    }
                    Some(_) => {}
                    None => {
                        self.symbols
                            .insert(p.clone(), (n, format!("{what} dimension {i}")));
                    }
                },
                _ => {}
            }
        }
        Ok(())
    }
}

/// The sizes to describe a tensor of `shape` to the kernel library with, when it can be
/// described as it is.
fn kernel_sizes(shape: &[usize]) -> Option<Vec<u32>> {
    if shape.len() > MAX_EXTENDED_DIMENSIONS as usize {
        return None;
    }
    shape.iter().map(|&d| u32::try_from(d).ok()).collect()
}

/// One kernel call over part of a tensor: the sizes to describe it with, its first
/// element and its element count.
pub(crate) struct Chunk {
    pub sizes: Vec<u32>,
    pub start: usize,
    pub count: usize,
}

/// How a tensor of `shape` is run: one call with its own shape when the kernel library
/// can describe it, else consecutive 1-d chunks of at most [`CHUNK_ELEMENTS`] elements.
pub(crate) fn chunks(shape: &[usize]) -> Vec<Chunk> {
    let count: usize = shape.iter().product();
    match kernel_sizes(shape) {
        Some(sizes) => vec![Chunk {
            sizes,
            start: 0,
            count,
        }],
        None => (0..count)
            .step_by(CHUNK_ELEMENTS)
            .map(|start| {
                let n = CHUNK_ELEMENTS.min(count - start);
                Chunk {
                    sizes: vec![n as u32],
                    start,
                    count: n,
                }
            })
            .collect(),
    }
}

/// The description of `step` over packed tensors of `sizes`.
pub(crate) fn operator_desc(
    step: &PlannedStep,
    (input_type, output_type): (DataType, DataType),
    sizes: &[u32],
) -> OperatorDesc {
    let input = TensorDesc::new(input_type, sizes);
    let output = TensorDesc::new(output_type, sizes);
    match (step.info.op, step.info.mode) {
        (OpType::IsInf, Some(mode)) => OperatorDesc::is_infinity(input, output, mode),
        _ => OperatorDesc::sign(input, output),
    }
}

fn compile(
    ctx: &Context<'_>,
    step: &PlannedStep,
    types: (DataType, DataType),
    sizes: &[u32],
) -> Result<CompiledOperator> {
    let kernel = |source| Error::Kernel {
        node: step.info.node.clone(),
        source,
    };
    let desc = operator_desc(step, types, sizes);
    ctx.device
        .create_operator(&desc)
        .map_err(kernel)?
        .with_nan_policy(ctx.policy)
        .compile()
        .map_err(kernel)
}

/// Where a step reads and writes.
enum Data<'a> {
    /// The output replaces the input in the same bytes.
    InPlace(&'a mut [u8]),
    /// Separate input and output bytes.
    Separate(&'a [u8], &'a mut [u8]),
}

/// What every step of a run shares.
struct Context<'a> {
    device: &'a Device,
    policy: NanPolicy,
}

/// Runs one step over a tensor of `shape`.
fn execute(
    ctx: &Context<'_>,
    step: &PlannedStep,
    types: (DataType, DataType),
    shape: &[usize],
    data: Data<'_>,
) -> Result<()> {
    let kernel = |source| Error::Kernel {
        node: step.info.node.clone(),
        source,
    };
    let (in_size, out_size) = (element_size(types.0), element_size(types.1));
    let mut compiled: HashMap<Vec<u32>, CompiledOperator> = HashMap::new();
    let mut data = data;
    for Chunk {
        sizes,
        start,
        count: n,
    } in chunks(shape)
    {
        if !compiled.contains_key(&sizes) {
            let op = compile(ctx, step, types, &sizes)?;
            compiled.insert(sizes.clone(), op);
        }
        let op = &compiled[&sizes];
        let (a, b) = (start * in_size, (start + n) * in_size);
        match &mut data {
            Data::InPlace(bytes) => op.execute_in_place_slice(&mut bytes[a..b]),
            Data::Separate(input, output) => op.execute_slices(
                &input[a..b],
                &mut output[start * out_size..(start + n) * out_size],
            ),
        }
        .map_err(kernel)?;
    }
    Ok(())
}

/// Bytes per element of `data_type`.
pub(crate) fn element_size(data_type: DataType) -> usize {
    usize::try_from(data_type.size_in_bytes().unwrap_or(1)).unwrap_or(1)
}

/// Checks inputs given as (name, element type, shape) against the graph: every name is
/// a graph input and given once, every input without a default is given, types match,
/// and every declared shape (of inputs, value_info and outputs) holds with consistent
/// `dim_param` sizes. Returns the shape of every value the run computes.
pub(crate) fn check_inputs(
    graph: &Graph,
    given: &[(&str, DataType, &[usize])],
) -> Result<Vec<Option<Vec<usize>>>> {
    let mut shapes: Vec<Option<Vec<usize>>> = vec![None; graph.values.len()];
    let names = |filter: fn(&ValueInfo) -> bool| {
        graph
            .inputs
            .iter()
            .filter(|i| filter(i))
            .map(|i| clip(&i.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for &(name, data_type, shape) in given {
        let Some(i) = graph.inputs.iter().position(|info| info.name == name) else {
            return Err(Error::UnknownInput {
                name: name.to_string(),
                accepted: names(|_| true),
            });
        };
        let v = graph.input_values[i];
        if shapes[v].is_some() {
            return Err(Error::DuplicateInput {
                name: name.to_string(),
            });
        }
        let declared = graph.inputs[i].data_type;
        if data_type != declared {
            return Err(Error::TypeMismatch {
                what: format!("input {}", quoted(name)),
                declared: dtype::name(declared),
                actual: dtype::name(data_type),
            });
        }
        shapes[v] = Some(shape.to_vec());
    }
    for (v, value) in graph.values.iter().enumerate() {
        match value.source {
            Source::Input { index, default } if shapes[v].is_none() => match default {
                Some(d) => shapes[v] = Some(graph.initializers[d].shape.clone()),
                None => {
                    return Err(Error::MissingInput {
                        name: graph.inputs[index].name.clone(),
                        required: names(|i| !i.has_default),
                    })
                }
            },
            Source::Initializer(i) => shapes[v] = Some(graph.initializers[i].shape.clone()),
            _ => {}
        }
    }
    for step in &graph.steps {
        shapes[step.output] = shapes[step.input].clone();
    }
    let mut bindings = Bindings::default();
    for (v, value) in graph.values.iter().enumerate() {
        let Some(shape) = &shapes[v] else {
            continue;
        };
        for d in &value.declarations {
            bindings.check(&value.describe(), shape, &d.by, &d.dims)?;
        }
    }
    Ok(shapes)
}

/// Checks the tensors given to a run (each consistent with its own type and shape, then
/// [`check_inputs`]); returns the shape of every value the run computes.
pub(crate) fn check_run_inputs(
    graph: &Graph,
    inputs: &[(String, Tensor)],
) -> Result<Vec<Option<Vec<usize>>>> {
    for (name, tensor) in inputs {
        tensor.check(name)?;
    }
    let given: Vec<(&str, DataType, &[usize])> = inputs
        .iter()
        .map(|(n, t)| (n.as_str(), t.data_type, t.shape.as_slice()))
        .collect();
    check_inputs(graph, &given)
}

/// The element types `step` reads and writes.
pub(crate) fn step_types(graph: &Graph, step: &PlannedStep) -> (DataType, DataType) {
    (
        graph.values[step.input].data_type,
        graph.values[step.output].data_type,
    )
}

/// The byte length of `step`'s output over a tensor of `shape`, or why it cannot exist.
pub(crate) fn output_len(
    step: &PlannedStep,
    output_type: DataType,
    shape: &[usize],
) -> Result<usize> {
    byte_len(output_type, shape).ok_or_else(|| Error::TooLarge {
        what: format!("value {}", quoted(&step.info.output)),
        shape: shape_text(shape),
        limit: "its byte size does not fit in this machine's address space",
    })
}

/// Runs `graph` on `inputs` (by name); returns the graph outputs in declaration order.
pub(crate) fn run(
    graph: &Graph,
    device: &Device,
    policy: NanPolicy,
    inputs: Vec<(String, Tensor)>,
) -> Result<(Vec<(String, Tensor)>, RunStats)> {
    let shapes = check_run_inputs(graph, &inputs)?;
    let mut slots: Vec<Slot> = graph.values.iter().map(|_| Slot::Empty).collect();
    for (name, tensor) in inputs {
        if let Some(i) = graph.inputs.iter().position(|info| info.name == name) {
            slots[graph.input_values[i]] = Slot::Owned(tensor.data);
        }
    }
    let mut in_memory = InMemory::default();
    for (v, value) in graph.values.iter().enumerate() {
        match value.source {
            Source::Input {
                default: Some(d), ..
            } if matches!(slots[v], Slot::Empty) => {
                slots[v] = Slot::Constant(in_memory.get(&graph.initializers[d])?);
            }
            Source::Initializer(i) => {
                slots[v] = Slot::Constant(in_memory.get(&graph.initializers[i])?)
            }
            _ => {}
        }
    }
    drop(in_memory);

    let ctx = Context { device, policy };
    let mut stats = RunStats::default();
    let mut pool = Pool::default();
    for step in &graph.steps {
        let shape = shapes[step.input].clone().unwrap_or_default();
        let types = step_types(graph, step);
        let out_len = output_len(step, types.1, &shape)?;
        stats.steps += 1;
        if step.info.in_place && matches!(slots[step.input], Slot::Owned(_)) {
            if let Slot::Owned(mut data) = std::mem::replace(&mut slots[step.input], Slot::Empty) {
                execute(&ctx, step, types, &shape, Data::InPlace(&mut data))?;
                stats.in_place += 1;
                slots[step.output] = Slot::Owned(data);
            }
        } else {
            let mut out = pool.take(out_len, &mut stats);
            let input = slots[step.input].bytes();
            execute(&ctx, step, types, &shape, Data::Separate(input, &mut out))?;
            slots[step.output] = Slot::Owned(out);
        }
        for &v in &step.release {
            if let Slot::Owned(buffer) = std::mem::replace(&mut slots[v], Slot::Empty) {
                pool.give(buffer);
            }
        }
    }

    let mut outputs = Vec::with_capacity(graph.outputs.len());
    for (info, &v) in graph.outputs.iter().zip(&graph.output_values) {
        let data = match std::mem::replace(&mut slots[v], Slot::Empty) {
            Slot::Owned(data) => data,
            Slot::Constant(b) => Arc::unwrap_or_clone(b),
            Slot::Empty => Vec::new(),
        };
        outputs.push((
            info.name.clone(),
            Tensor {
                data_type: info.data_type,
                shape: shapes[v].clone().unwrap_or_default(),
                data,
            },
        ));
    }
    Ok((outputs, stats))
}
