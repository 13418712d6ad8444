//! A [`Streaming`] plan's sources run on a GPU: each source's program (the nodes between
//! it and its outputs) becomes an ewise-gpu [`StreamProgram`], run chunk by chunk by a
//! [`GpuStream`] with transfers overlapping the caller's reads and writes.

use ewise_gpu::stream::{GpuStream, Place, ProgramStep, StreamOp, StreamProgram};
use ewise_gpu::GpuDevice;

use super::{invalid, Loc, Streaming};
use crate::error::Result;
use crate::exec::gpu::{check_device, failure};
use crate::opset::OpType;

/// Where a value of a source's program lives on the GPU.
fn place(loc: Loc) -> Place {
    match loc {
        Loc::Source => Place::Input,
        Loc::Output(k) => Place::Output(k),
        Loc::Scratch(b) => Place::Scratch(b),
    }
}

impl Streaming {
    /// A [`GpuStream`] on `device` that computes source `source`'s outputs
    /// ([`Streaming::outputs_of`], in that order) from its elements, chunk by chunk,
    /// with chunks of `chunk_bytes` bytes of the source (see [`GpuStream::program`]).
    /// Its [`ewise_gpu::stream::ChunkEnds::read`] takes the source's bytes as
    /// [`Streaming::run_chunk`] does, and `write` gives one slice per output: the bits
    /// of [`Streaming::run_chunk`] and [`crate::Model::run`], with the plan's NaN policy
    /// and each IsInf node's detection mode. The nodes run in the plan's order and
    /// buffers, Sign in place where the CPU path runs it in place; outputs that are the
    /// source itself are copied.
    ///
    /// A device that cannot run every type an ONNX model may use is
    /// [`crate::Error::UnsuitableGpu`]; a node the device refuses is [`crate::Error::Kernel`] naming
    /// it, and other GPU failures [`crate::Error::Gpu`]. A source index out of range is
    /// [`crate::Error::InvalidChunk`].
    pub fn gpu_stream(
        &self,
        source: usize,
        device: &GpuDevice,
        chunk_bytes: usize,
    ) -> Result<GpuStream> {
        let (Some(src), Some(program)) = (self.sources.get(source), self.programs.get(source))
        else {
            return Err(invalid(format!(
                "source index {source} is out of range (the plan has {} sources)",
                self.sources.len()
            )));
        };
        check_device(device)?;
        let mut steps = Vec::with_capacity(program.ops.len());
        for op in &program.ops {
            let step = &self.steps[op.step];
            let stream_op = match (step.info.op, step.info.mode) {
                (OpType::IsInf, Some(mode)) => StreamOp::IsInfinity(mode),
                _ => StreamOp::Sign(self.policy),
            };
            let planned = ProgramStep {
                op: stream_op,
                input_type: op.types.0,
                output_type: op.types.1,
                from: place(op.input),
                to: place(op.output),
            };
            let desc = stream_op.chunk_desc(op.types.0, op.types.1, 1);
            device
                .create_operator(&desc)
                .map_err(failure(step.info.node.as_str()))?;
            steps.push(planned);
        }
        let outputs = program
            .outputs
            .iter()
            .map(|&o| self.outputs[o].data_type)
            .collect();
        let what = || format!("the GPU stream of {:?}", src.name);
        let planned = StreamProgram::new(src.data_type, outputs, steps).map_err(failure(what()))?;
        GpuStream::program(device, planned, chunk_bytes).map_err(failure(what()))
    }
}
