//! What a [`super::GpuStream`] does to each chunk: a [`StreamProgram`] of element-wise
//! steps from one input to any number of outputs, through scratch buffers.

use ewise_core::DataType;

use super::StreamOp;
use crate::error::{GpuError, Result};

/// Where a step of a [`StreamProgram`] reads or writes a chunk's elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Place {
    /// The chunk read from the caller.
    Input,
    /// The program's output at this index, handed to the caller.
    Output(usize),
    /// A scratch buffer, at this index, for a value between steps.
    Scratch(usize),
}

/// One step of a [`StreamProgram`]: `op` from `input_type` elements at `from` to
/// `output_type` elements at `to`, in place when `from` and `to` are one scratch buffer
/// (SIGN only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProgramStep {
    /// The operator.
    pub op: StreamOp,
    /// The element type it reads.
    pub input_type: DataType,
    /// The element type it writes.
    pub output_type: DataType,
    /// Where it reads.
    pub from: Place,
    /// Where it writes.
    pub to: Place,
}

/// Element-wise steps applied, in order, to every chunk of a stream: from one input to
/// any number of outputs, each output written by exactly one step or, when no step
/// writes it, a copy of the input. Values between steps live in scratch buffers, one
/// chunk long each.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StreamProgram {
    input: DataType,
    outputs: Vec<DataType>,
    steps: Vec<ProgramStep>,
    /// Per scratch index: bytes per element of the widest type written there.
    scratch: Vec<usize>,
    /// Per output: whether it is a copy of the input.
    copies: Vec<bool>,
}

/// Bytes per element of `t`, or why it cannot be streamed.
pub(super) fn element_size(t: DataType) -> Result<usize> {
    t.size_in_bytes()
        .and_then(|s| usize::try_from(s).ok())
        .filter(|&s| s > 0)
        .ok_or_else(|| invalid(format!("{t:?} elements are not a whole number of bytes")))
}

fn invalid(reason: String) -> GpuError {
    GpuError::InvalidProgram { reason }
}

impl StreamProgram {
    /// One step, `op` from the input straight to the only output.
    pub fn single(op: StreamOp, input: DataType, output: DataType) -> StreamProgram {
        StreamProgram {
            input,
            outputs: vec![output],
            steps: vec![ProgramStep {
                op,
                input_type: input,
                output_type: output,
                from: Place::Input,
                to: Place::Output(0),
            }],
            scratch: Vec::new(),
            copies: vec![false],
        }
    }

    /// Checks that `steps` take `input` elements to `outputs`: every step reads a place
    /// written before (or the input) holding its `input_type`, writes a scratch buffer or
    /// an output of its `output_type` (never the input), each output is written at most
    /// once and never before a step reads it, an output no step writes has the input's
    /// type (it is a copy of the input), a step in place is SIGN on a scratch buffer, and
    /// every type is a whole number of bytes. A mistake is [`GpuError::InvalidProgram`];
    /// whether the device runs each step is checked by [`super::GpuStream::program`].
    pub fn new(
        input: DataType,
        outputs: Vec<DataType>,
        steps: Vec<ProgramStep>,
    ) -> Result<StreamProgram> {
        element_size(input)?;
        let mut written: Vec<bool> = vec![false; outputs.len()];
        let mut scratch: Vec<Option<DataType>> = Vec::new();
        let mut widths: Vec<usize> = Vec::new();
        for (i, step) in steps.iter().enumerate() {
            let held = match step.from {
                Place::Input => Some(input),
                Place::Output(k) => match written.get(k) {
                    Some(true) => outputs.get(k).copied(),
                    Some(false) => {
                        return Err(invalid(format!(
                            "step {i} reads output {k} before any step writes it"
                        )))
                    }
                    None => None,
                },
                Place::Scratch(x) => scratch.get(x).copied().flatten(),
            };
            if held != Some(step.input_type) {
                return Err(invalid(format!(
                    "step {i} reads {:?} elements from {:?}, which holds {}",
                    step.input_type,
                    step.from,
                    held.map_or("nothing yet".to_string(), |t| format!("{t:?} elements"))
                )));
            }
            if step.from == step.to
                && !(matches!(step.to, Place::Scratch(_))
                    && matches!(step.op, StreamOp::Sign(_))
                    && step.input_type == step.output_type)
            {
                return Err(invalid(format!(
                    "step {i} runs in place on {:?}: only SIGN runs in place, on a scratch buffer",
                    step.to
                )));
            }
            element_size(step.output_type)?;
            match step.to {
                Place::Input => {
                    return Err(invalid(format!("step {i} writes the input")));
                }
                Place::Output(k) => {
                    let Some(&declared) = outputs.get(k) else {
                        return Err(invalid(format!(
                            "step {i} writes output {k}, but the program has {} outputs",
                            outputs.len()
                        )));
                    };
                    if written[k] {
                        return Err(invalid(format!(
                            "step {i} writes output {k}, which an earlier step wrote"
                        )));
                    }
                    if declared != step.output_type {
                        return Err(invalid(format!(
                            "step {i} writes {:?} elements to output {k}, which holds {declared:?}",
                            step.output_type
                        )));
                    }
                    written[k] = true;
                }
                Place::Scratch(x) => {
                    if scratch.len() <= x {
                        scratch.resize(x + 1, None);
                        widths.resize(x + 1, 0);
                    }
                    scratch[x] = Some(step.output_type);
                    widths[x] = widths[x].max(element_size(step.output_type)?);
                }
            }
        }
        for (k, &t) in outputs.iter().enumerate() {
            if !written[k] && t != input {
                return Err(invalid(format!(
                    "no step writes output {k}, so it is a copy of the input, but it holds {t:?} and the input {input:?}"
                )));
            }
        }
        Ok(StreamProgram {
            input,
            copies: written.iter().map(|w| !w).collect(),
            outputs,
            steps,
            scratch: widths,
        })
    }

    /// The input's element type.
    pub fn input(&self) -> DataType {
        self.input
    }

    /// The outputs' element types.
    pub fn outputs(&self) -> &[DataType] {
        &self.outputs
    }

    /// The steps, in order.
    pub fn steps(&self) -> &[ProgramStep] {
        &self.steps
    }

    /// Bytes per element of each scratch buffer.
    pub(super) fn scratch_widths(&self) -> &[usize] {
        &self.scratch
    }

    /// Whether output `k` is a copy of the input.
    pub(super) fn is_copy(&self, k: usize) -> bool {
        self.copies.get(k).copied().unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use ewise_core::NanPolicy;

    use super::*;

    const F32: DataType = DataType::Float32;
    const SIGN: StreamOp = StreamOp::Sign(NanPolicy::Zero);

    fn step(from: Place, to: Place) -> ProgramStep {
        ProgramStep {
            op: SIGN,
            input_type: F32,
            output_type: F32,
            from,
            to,
        }
    }

    fn refused(outputs: Vec<DataType>, steps: Vec<ProgramStep>, says: &str) {
        let err = StreamProgram::new(F32, outputs, steps).unwrap_err();
        assert!(err.to_string().contains(says), "{err}");
    }

    #[test]
    fn chains_through_scratch_and_copies_are_accepted() {
        let p = StreamProgram::new(
            F32,
            vec![F32, F32, F32],
            vec![
                step(Place::Input, Place::Scratch(1)),
                step(Place::Scratch(1), Place::Scratch(1)),
                step(Place::Scratch(1), Place::Output(0)),
                step(Place::Output(0), Place::Output(2)),
            ],
        )
        .unwrap();
        assert_eq!(p.scratch_widths(), [0, 4]);
        assert_eq!(
            (0..3).map(|k| p.is_copy(k)).collect::<Vec<_>>(),
            [false, true, false]
        );
    }

    #[test]
    fn mistakes_are_refused() {
        refused(
            vec![F32],
            vec![step(Place::Input, Place::Input)],
            "in place",
        );
        refused(
            vec![F32],
            vec![step(Place::Input, Place::Output(1))],
            "has 1 outputs",
        );
        refused(
            vec![F32],
            vec![step(Place::Scratch(0), Place::Output(0))],
            "nothing yet",
        );
        refused(
            vec![F32, F32],
            vec![
                step(Place::Output(1), Place::Output(0)),
                step(Place::Input, Place::Output(1)),
            ],
            "before any step writes it",
        );
        refused(
            vec![F32],
            vec![
                step(Place::Input, Place::Output(0)),
                step(Place::Input, Place::Output(0)),
            ],
            "an earlier step wrote",
        );
        refused(
            vec![DataType::Uint8],
            vec![step(Place::Input, Place::Scratch(0))],
            "copy of the input",
        );
        refused(
            vec![DataType::Uint8],
            vec![step(Place::Input, Place::Output(0))],
            "which holds Uint8",
        );
        let mut isinf = step(Place::Input, Place::Scratch(0));
        isinf.op = StreamOp::IsInfinity(ewise_core::InfinityMode::Either);
        let mut again = isinf;
        (again.from, again.output_type) = (Place::Scratch(0), DataType::Uint8);
        isinf.output_type = DataType::Uint8;
        again.input_type = DataType::Uint8;
        refused(vec![], vec![isinf, again], "only SIGN runs in place");
    }
}
