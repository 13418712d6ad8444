//! What a run computes: the operator, whose rules apply, and the compiled chunk
//! operators that do the work.

use anyhow::{anyhow, Result};
use ewise_cli::npy::ElementType;
use ewise_cpu::{
    validate, CompiledOperator, DataType, Device, DeviceOptions, Error, Extensions, FeatureLevel,
    InfinityMode, NanPolicy, OperatorDesc, Parallelism, TensorDesc,
};

use crate::cli::{DeviceKind, ExecArgs, Semantics};

/// The operator a run applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// SIGN with this NaN policy.
    Sign(NanPolicy),
    /// IS_INFINITY with this mode.
    IsInfinity(InfinityMode),
}

/// An operator with the rules, level, device and threads it runs under.
#[derive(Debug, Clone, Copy)]
pub struct Job {
    pub op: Op,
    pub semantics: Semantics,
    /// The feature level: the one `--feature-level` names, else 6_4.
    pub level: FeatureLevel,
    /// Whether DirectML's strict rules apply (`--semantics dml` with `--feature-level`);
    /// otherwise the extended rules do (docs/SEMANTICS.md section 8.1).
    pub strict: bool,
    /// Whether a progress bar may be drawn (no `--no-progress`).
    pub progress: bool,
    pub parallelism: Parallelism,
    pub device: DeviceKind,
}

impl Job {
    /// The SIGN job the options ask for.
    pub fn sign(exec: &ExecArgs, nan: Option<NanPolicy>) -> Job {
        let policy = nan.unwrap_or(match exec.semantics {
            Semantics::Dml => NanPolicy::Zero,
            Semantics::Onnx => NanPolicy::Propagate,
        });
        Job::new(exec, Op::Sign(policy))
    }

    /// The IS_INFINITY job the options ask for.
    pub fn is_infinity(exec: &ExecArgs, mode: InfinityMode) -> Job {
        Job::new(exec, Op::IsInfinity(mode))
    }

    fn new(exec: &ExecArgs, op: Op) -> Job {
        Job {
            op,
            semantics: exec.semantics,
            level: exec.feature_level.unwrap_or(FeatureLevel::L6_4),
            strict: exec.semantics == Semantics::Dml && exec.feature_level.is_some(),
            progress: !exec.progress.no_progress,
            parallelism: Parallelism::threads(exec.threads),
            device: exec.device,
        }
    }

    /// SIGN's NaN policy, for SIGN jobs.
    pub fn nan_policy(&self) -> Option<NanPolicy> {
        match self.op {
            Op::Sign(policy) => Some(policy),
            Op::IsInfinity(_) => None,
        }
    }

    /// The description of a 1-D chunk of `len` elements (`len` below 2^32).
    pub fn chunk_desc(
        &self,
        input: DataType,
        output: DataType,
        len: usize,
    ) -> Result<OperatorDesc> {
        let size =
            u32::try_from(len).map_err(|_| anyhow!("chunk of {len} elements is too long"))?;
        Ok(self.desc(TensorDesc::new(input, &[size]), output))
    }

    /// The element type of the output for this input.
    pub fn output_type(&self, input: ElementType) -> ElementType {
        match self.op {
            Op::Sign(_) => input,
            Op::IsInfinity(_) => input.with_data_type(match self.semantics {
                Semantics::Dml => DataType::Uint8,
                Semantics::Onnx => DataType::Bool,
            }),
        }
    }

    fn desc(&self, input: TensorDesc, output_type: DataType) -> OperatorDesc {
        let mut output = input.clone();
        output.data_type = output_type;
        output.total_tensor_size_in_bytes = output.min_size_in_bytes().unwrap_or(0);
        match self.op {
            Op::Sign(_) => OperatorDesc::sign(input, output),
            Op::IsInfinity(mode) => OperatorDesc::is_infinity(input, output, mode),
        }
    }

    /// Checks the whole array under the job's rules: DirectML's strict validator at the
    /// feature level, or the ewise extensions. The error is one line, the validator's
    /// message plus a hint of what would accept the array.
    pub fn check_array(
        &self,
        input: ElementType,
        shape: &[u64],
        fortran_order: bool,
    ) -> Result<()> {
        let output = self.output_type(input).data_type;
        if self.strict {
            if let Some((axis, &size)) = shape
                .iter()
                .enumerate()
                .find(|(_, &s)| s > u64::from(u32::MAX))
            {
                return Err(anyhow!(
                    "dimension {axis} has {size} elements, more than DirectML's 32-bit sizes hold; hint: {LEAVE_OUT_LEVEL}"
                ));
            }
        }
        let sizes: Vec<u32> = shape
            .iter()
            .map(|&s| u32::try_from(s).unwrap_or(u32::MAX))
            .collect();
        let tensor = match fortran_strides(&sizes) {
            Some(strides) if fortran_order => {
                TensorDesc::strided(input.data_type, &sizes, &strides)
            }
            _ => TensorDesc::new(input.data_type, &sizes),
        };
        let desc = self.desc(tensor, output);
        let extensions = if self.strict {
            Extensions::Disabled
        } else {
            Extensions::Enabled
        };
        let Err(err) = validate(&desc, self.level, extensions) else {
            return Ok(());
        };
        Err(anyhow!("{err}{}", self.hint(&desc, &err)))
    }

    fn hint(&self, desc: &OperatorDesc, err: &Error) -> String {
        if let Error::OperatorNotAvailable { introduced, .. } = err {
            return format!("; hint: use --feature-level {introduced} or above");
        }
        if !self.strict {
            return String::new();
        }
        let higher = FeatureLevel::ALL
            .into_iter()
            .filter(|&l| l > self.level)
            .find(|&l| validate(desc, l, Extensions::Disabled).is_ok());
        let extended = validate(desc, self.level, Extensions::Enabled).is_ok();
        match (higher, extended) {
            (Some(l), true) => {
                format!("; hint: use --feature-level {l} or above, or {LEAVE_OUT_LEVEL}")
            }
            (Some(l), false) => format!("; hint: use --feature-level {l} or above"),
            (None, true) => format!("; hint: {LEAVE_OUT_LEVEL}"),
            (None, false) => String::new(),
        }
    }

    /// Operators for contiguous chunks of `input` elements.
    pub fn kernels(&self, input: DataType, output: DataType) -> Result<Kernels> {
        let device = Device::builder()
            .options(device_options(self.level))
            .parallelism(self.parallelism)
            .build()?;
        Ok(Kernels::new(self, device, input, output))
    }
}

/// The hint for an array that only DirectML's strict rules refuse.
const LEAVE_OUT_LEVEL: &str =
    "leave out --feature-level: without it the extended rules apply, which accept it";

/// The options the CPU and GPU devices of a run open with: `level`, with the ewise
/// extensions (each command validates what it runs under its own semantics first).
pub fn device_options(level: FeatureLevel) -> DeviceOptions {
    DeviceOptions::default()
        .feature_level(level)
        .extensions(Extensions::Enabled)
}

/// Column-major strides in elements for these sizes, if they fit DirectML's `u32`.
fn fortran_strides(sizes: &[u32]) -> Option<Vec<u32>> {
    let mut strides = Vec::with_capacity(sizes.len());
    let mut acc: u32 = 1;
    for &size in sizes {
        strides.push(acc);
        acc = acc.checked_mul(size.max(1))?;
    }
    Some(strides)
}

/// A device that compiles the 1-D chunk operators of [`Kernels`] (the CPU's [`Device`];
/// the GPU's chunks run through [`ewise_gpu::stream`], which keeps its own).
pub trait ChunkDevice {
    /// Its compiled operator.
    type Compiled;

    /// `desc` compiled, with `policy` for SIGN.
    fn compile_chunk(
        &self,
        desc: &OperatorDesc,
        policy: Option<NanPolicy>,
    ) -> Result<Self::Compiled>;
}

impl ChunkDevice for Device {
    type Compiled = CompiledOperator;

    fn compile_chunk(
        &self,
        desc: &OperatorDesc,
        policy: Option<NanPolicy>,
    ) -> Result<CompiledOperator> {
        let mut operator = self.create_operator(desc)?;
        if let Some(policy) = policy {
            operator = operator.with_nan_policy(policy);
        }
        Ok(operator.compile()?)
    }
}

/// Compiled 1-D operators over chunks of elements on a device, one per chunk length seen.
pub struct Kernels<D: ChunkDevice = Device> {
    job: Job,
    device: D,
    input: DataType,
    output: DataType,
    compiled: Vec<(usize, D::Compiled)>,
}

impl<D: ChunkDevice> Kernels<D> {
    /// Operators for `job` from `input` to `output` elements on `device`.
    pub fn new(job: &Job, device: D, input: DataType, output: DataType) -> Kernels<D> {
        Kernels {
            job: *job,
            device,
            input,
            output,
            compiled: Vec::new(),
        }
    }

    /// The operator for a chunk of `len` elements (`len` below 2^32), compiled on first
    /// use.
    pub fn get(&mut self, len: usize) -> Result<&D::Compiled> {
        let i = match self.compiled.iter().position(|(n, _)| *n == len) {
            Some(i) => i,
            None => {
                let desc = self.job.chunk_desc(self.input, self.output, len)?;
                let compiled = self.device.compile_chunk(&desc, self.job.nan_policy())?;
                self.compiled.push((len, compiled));
                self.compiled.len() - 1
            }
        };
        Ok(&self.compiled[i].1)
    }
}
