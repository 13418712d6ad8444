//! Running a checked graph on a GPU (the `gpu` feature): the CPU path's plan, with every
//! value a node computes held in a GPU buffer until the run ends.
//!
//! A run checks its inputs exactly as on the CPU before anything touches the GPU. Then
//! each graph input, initializer and default that some step reads is uploaded once;
//! every step is recorded into one command encoder (Sign in place where the plan allows,
//! other outputs in buffers freed earlier in the run, chosen best-fit as the CPU path
//! chooses them); the encoder is submitted once, and only the graph outputs that nodes
//! compute are downloaded. Graph outputs that are inputs or initializers are returned
//! from host memory, without a GPU round trip.

use ewise_cpu::text::quoted;
use std::collections::hash_map::{Entry, HashMap};
use std::sync::Arc;

use ewise_cpu::{BufferBinding, DataType, Extensions, FeatureLevel, NanPolicy};
use ewise_gpu::{wgpu, GpuBuffer, GpuCompiledOperator, GpuDevice, GpuError};

use super::{
    check_run_inputs, chunks, element_size, operator_desc, output_len, step_types, Chunk, RunStats,
};
use crate::error::{Error, Result};
use crate::graph::{Graph, InMemory, PlannedStep, Source};
use crate::tensor::{byte_len, Tensor};

/// A value held in a GPU buffer.
struct Resident {
    /// Its buffer: [`padded`] `capacity` bytes, which bindings are checked against.
    buffer: GpuBuffer,
    /// What the CPU path's buffer for the value would hold at most (the caller's vector
    /// capacity for an input, the length asked for when allocated), so that buffer reuse
    /// makes the CPU path's choices and [`RunStats`] counts the same.
    capacity: usize,
    /// Initializer data (a constant, or an input's default): never overwritten, and not
    /// handed out again once freed, as on the CPU where it is borrowed from the model.
    constant: bool,
}

/// GPU buffers freed during a run, handed out best-fit by capacity.
#[derive(Default)]
struct Pool {
    free: Vec<Resident>,
}

impl Pool {
    fn take(
        &mut self,
        device: &GpuDevice,
        len: usize,
        stats: &mut RunStats,
    ) -> Result<Resident, GpuError> {
        let best = self
            .free
            .iter()
            .enumerate()
            .filter(|(_, r)| r.capacity >= len)
            .min_by_key(|(_, r)| r.capacity)
            .map(|(i, _)| i);
        match best {
            Some(i) => {
                stats.reused += 1;
                Ok(self.free.swap_remove(i))
            }
            None => {
                stats.allocated += 1;
                Ok(Resident {
                    buffer: GpuBuffer::zeroed(device, padded(len))?,
                    capacity: len,
                    constant: false,
                })
            }
        }
    }

    fn give(&mut self, resident: Resident) {
        if resident.capacity > 0 && !resident.constant {
            self.free.push(resident);
        }
    }
}

/// `len` bytes rounded up to whole 4-byte words: what a GPU buffer for them holds, and
/// the TotalTensorSizeInBytes of a packed tensor of `len` bytes.
fn padded(len: usize) -> u64 {
    (len as u64).div_ceil(4) * 4
}

/// Runs `f` inside wgpu error scopes; the first validation or out-of-memory error it
/// caused is returned instead of reaching the device's uncaptured-error handler.
fn catch<T>(
    device: &GpuDevice,
    during: &'static str,
    f: impl FnOnce() -> T,
) -> Result<T, GpuError> {
    let wgpu_device = device.wgpu_device();
    let memory = wgpu_device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let validation = wgpu_device.push_error_scope(wgpu::ErrorFilter::Validation);
    let value = f();
    let first = pollster::block_on(validation.pop());
    let second = pollster::block_on(memory.pop());
    match first.or(second) {
        Some(e) => Err(GpuError::Wgpu {
            during,
            message: e.to_string(),
        }),
        None => Ok(value),
    }
}

/// A buffer of [`padded`] `capacity` bytes starting with `bytes` (uploaded when the
/// queue next runs).
fn upload(device: &GpuDevice, bytes: &[u8], capacity: usize) -> Result<GpuBuffer, GpuError> {
    let buffer = GpuBuffer::zeroed(device, padded(capacity.max(bytes.len())))?;
    let whole = bytes.len() / 4 * 4;
    let mut tail = [0u8; 4];
    tail[..bytes.len() - whole].copy_from_slice(&bytes[whole..]);
    catch(device, "uploading a value", || {
        let queue = device.wgpu_queue();
        if whole > 0 {
            queue.write_buffer(buffer.wgpu_buffer(), 0, &bytes[..whole]);
        }
        if whole < bytes.len() {
            queue.write_buffer(buffer.wgpu_buffer(), whole as u64, &tail);
        }
    })?;
    Ok(buffer)
}

/// The first `len` bytes of `buffer`, after the work submitted so far.
fn download(device: &GpuDevice, buffer: &GpuBuffer, len: usize) -> Result<Vec<u8>, GpuError> {
    let mut bytes = buffer.read_range(device, 0, padded(len))?;
    bytes.truncate(len);
    Ok(bytes)
}

/// `node`'s failure as this crate's error: description and binding mistakes as on the
/// CPU ([`Error::Kernel`]), the rest as [`Error::Gpu`].
pub(crate) fn failure(node: impl Into<String>) -> impl FnOnce(GpuError) -> Error {
    move |e| match e {
        GpuError::Op(source) => Error::Kernel {
            node: node.into(),
            source,
        },
        source => Error::Gpu {
            node: node.into(),
            source,
        },
    }
}

/// Refuses a device that cannot run every type and shape an ONNX model may use.
pub(crate) fn check_device(device: &GpuDevice) -> Result<()> {
    let reason = if device.extensions() != Extensions::Enabled {
        Some(
            "it was built without the ewise extensions, which 0-d tensors, empty tensors, \
             more than 8 dimensions, bfloat16 and float8 need"
                .to_string(),
        )
    } else if device.feature_level() != FeatureLevel::LATEST {
        Some(format!(
            "its feature level {} is not the latest, {}",
            device.feature_level(),
            FeatureLevel::LATEST
        ))
    } else {
        None
    };
    match reason {
        Some(reason) => Err(Error::UnsuitableGpu {
            adapter: device.adapter().to_string(),
            reason,
        }),
        None => Ok(()),
    }
}

/// What every step of a run shares.
struct Context<'a> {
    device: &'a GpuDevice,
    policy: NanPolicy,
}

fn compile(
    ctx: &Context<'_>,
    step: &PlannedStep,
    types: (DataType, DataType),
    sizes: &[u32],
) -> Result<GpuCompiledOperator> {
    ctx.device
        .create_operator(&operator_desc(step, types, sizes))
        .and_then(|op| op.with_nan_policy(ctx.policy).compile())
        .map_err(failure(step.info.node.as_str()))
}

/// Records one step over a tensor of `shape` into `encoder`: in place in `input` when
/// `output` is `None`. Tensors the kernel library cannot describe as they are run as
/// consecutive 1-d chunks, bound at their offsets.
fn record(
    ctx: &Context<'_>,
    encoder: &mut wgpu::CommandEncoder,
    step: &PlannedStep,
    (types, shape): ((DataType, DataType), &[usize]),
    input: &GpuBuffer,
    output: Option<&GpuBuffer>,
) -> Result<()> {
    let (in_size, out_size) = (element_size(types.0) as u64, element_size(types.1) as u64);
    let mut compiled: HashMap<Vec<u32>, GpuCompiledOperator> = HashMap::new();
    for Chunk { sizes, start, .. } in chunks(shape) {
        let op = match compiled.entry(sizes) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                let op = compile(ctx, step, types, e.key())?;
                e.insert(op)
            }
        };
        let start = start as u64;
        let in_binding = BufferBinding::new(
            0,
            start * in_size,
            op.input_desc().total_tensor_size_in_bytes,
        );
        let out_total = op.output_desc().total_tensor_size_in_bytes;
        let (buffers, out_binding) = match output {
            None => (
                vec![input],
                BufferBinding::new(0, start * out_size, out_total),
            ),
            Some(out) => (
                vec![input, out],
                BufferBinding::new(1, start * out_size, out_total),
            ),
        };
        op.record(encoder, &buffers, &[in_binding], &[out_binding])
            .map_err(failure(step.info.node.as_str()))?;
    }
    Ok(())
}

/// Runs `graph` on `device` with `inputs` (by name); returns the graph outputs in
/// declaration order, with the bits and [`RunStats`] of [`super::run`].
pub(crate) fn run(
    graph: &Graph,
    device: &GpuDevice,
    policy: NanPolicy,
    inputs: Vec<(String, Tensor)>,
) -> Result<(Vec<(String, Tensor)>, RunStats)> {
    let shapes = check_run_inputs(graph, &inputs)?;
    check_device(device)?;
    let mut read = vec![false; graph.values.len()];
    for step in &graph.steps {
        read[step.input] = true;
    }

    let mut slots: Vec<Option<Resident>> = graph.values.iter().map(|_| None).collect();
    // The caller's data of inputs that are also graph outputs, returned as they came.
    let mut host: Vec<Option<Vec<u8>>> = graph.values.iter().map(|_| None).collect();
    for (name, tensor) in inputs {
        let Some(i) = graph.inputs.iter().position(|info| info.name == name) else {
            continue;
        };
        let v = graph.input_values[i];
        if read[v] {
            let capacity = tensor.data.capacity();
            let buffer = upload(device, &tensor.data, capacity)
                .map_err(failure(format!("upload of input {}", quoted(&name))))?;
            slots[v] = Some(Resident {
                buffer,
                capacity,
                constant: false,
            });
        }
        if graph.values[v].is_output {
            host[v] = Some(tensor.data);
        }
    }
    let mut in_memory = InMemory::default();
    for (v, value) in graph.values.iter().enumerate() {
        let index = match value.source {
            Source::Input {
                default: Some(d), ..
            } => d,
            Source::Initializer(i) => i,
            _ => continue,
        };
        if !read[v] || slots[v].is_some() {
            continue;
        }
        let data = in_memory.get(&graph.initializers[index])?;
        let buffer = upload(device, &data, data.len()).map_err(failure(format!(
            "upload of initializer {}",
            quoted(&value.name)
        )))?;
        slots[v] = Some(Resident {
            buffer,
            capacity: data.len(),
            constant: true,
        });
    }

    let ctx = Context { device, policy };
    let mut stats = RunStats::default();
    let mut pool = Pool::default();
    let mut encoder = catch(device, "creating a command encoder", || {
        device
            .wgpu_device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("ewise onnx graph"),
            })
    })
    .map_err(failure("the graph's steps"))?;
    for step in &graph.steps {
        let shape = shapes[step.input].clone().unwrap_or_default();
        let types = step_types(graph, step);
        let out_len = output_len(step, types.1, &shape)?;
        stats.steps += 1;
        let output = match slots[step.input].take() {
            Some(resident) if step.info.in_place && !resident.constant => {
                record(
                    &ctx,
                    &mut encoder,
                    step,
                    (types, &shape),
                    &resident.buffer,
                    None,
                )?;
                stats.in_place += 1;
                resident
            }
            other => {
                slots[step.input] = other;
                let Some(input) = &slots[step.input] else {
                    return Err(Error::UndefinedInput {
                        node: step.info.node.clone(),
                        name: step.info.input.clone(),
                    });
                };
                let out = pool
                    .take(device, out_len, &mut stats)
                    .map_err(failure(step.info.node.as_str()))?;
                record(
                    &ctx,
                    &mut encoder,
                    step,
                    (types, &shape),
                    &input.buffer,
                    Some(&out.buffer),
                )?;
                out
            }
        };
        slots[step.output] = Some(output);
        for &v in &step.release {
            if let Some(resident) = slots[v].take() {
                pool.give(resident);
            }
        }
    }
    if !graph.steps.is_empty() {
        catch(device, "submitting the graph's steps", || {
            device.wgpu_queue().submit([encoder.finish()]);
        })
        .map_err(failure("the graph's steps"))?;
    }

    let mut outputs = Vec::with_capacity(graph.outputs.len());
    for (info, &v) in graph.outputs.iter().zip(&graph.output_values) {
        let shape = shapes[v].clone().unwrap_or_default();
        let data = match (host[v].take(), graph.values[v].source) {
            (Some(data), _) => data,
            (
                None,
                Source::Input {
                    default: Some(i), ..
                }
                | Source::Initializer(i),
            ) => Arc::unwrap_or_clone(in_memory.get(&graph.initializers[i])?),
            (None, Source::Node(_)) => match &slots[v] {
                Some(resident) => {
                    let len = byte_len(info.data_type, &shape).unwrap_or(0);
                    download(device, &resident.buffer, len).map_err(failure(format!(
                        "download of graph output {}",
                        quoted(&info.name)
                    )))?
                }
                None => Vec::new(),
            },
            (None, Source::Input { default: None, .. }) => Vec::new(),
        };
        outputs.push((
            info.name.clone(),
            Tensor {
                data_type: info.data_type,
                shape,
                data,
            },
        ));
    }
    Ok((outputs, stats))
}
