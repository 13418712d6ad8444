//! [`Model`]: a loaded, checked ONNX model, ready to run any number of times.

use std::path::{Path, PathBuf};

use ewise_cpu::{DataType, Device, Extensions, NanPolicy};
use prost::Message;

use crate::error::{Error, Result};
use crate::exec::stream::Streaming;
use crate::exec::{self, RunStats};
use crate::files;
use crate::graph::{Graph, Step, ValueInfo};
use crate::proto::ModelProto;
use crate::tensor::Tensor;

/// When a load reads the external tensor data of the initializers some run reads
/// ([`Model::load_with`], [`Model::from_bytes_with`]).
///
/// Either way the load opens every such file as [`Model::from_bytes`] describes
/// (confined to the model's directory, no symbolic link followed, regular files only)
/// and checks each claimed range against the file's size; a model refused by one is
/// refused by the other, with the same error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ExternalData {
    /// Read into memory by the load (the default of [`Model::load`] and
    /// [`Model::from_bytes`]): runs use the bytes as they were then, and the files are
    /// closed when the load returns.
    #[default]
    Read,
    /// Not read by the load: each file the load opened and checked is kept for as long
    /// as the model (or a [`Streaming`] plan of it) lives, and each range is read when
    /// a run needs it, with positioned reads through a handle to that file. At most a
    /// few dozen handles stay open in the whole process, however many files models
    /// name: the least recently used is closed, and a file whose handle was closed is
    /// opened again when it is read, confined as the load opened it, and read only if
    /// it is still the file the load checked (the same identity, size and modification
    /// time), else [`Error::ExternalDataRefused`] with [`crate::Refusal::Changed`] (a
    /// link in its place is [`crate::Refusal::SymbolicLink`]; a file removed,
    /// [`Error::Io`]). [`Streaming::read_initializer`] reads such a source chunk by
    /// chunk, in memory bounded by the chunks; [`Model::run`] reads the ranges it needs
    /// whole, per run. A file whose handle is open and that was shrunk after the load so
    /// that it no longer holds a range is [`Error::ExternalDataTruncated`] when that
    /// range is read; other changes to a file whose handle is open show in the bytes
    /// read.
    Deferred,
}

/// A loaded ONNX model whose graph uses only Sign and IsInf.
///
/// Loading checks everything that does not depend on the input data: the default-domain
/// opset, every node's operator, version, attributes and input type, name uniqueness,
/// topological order, and declared types and fixed shapes. A run then checks the inputs
/// (names, types, shapes with `dim_param` sizes bound consistently) before computing.
///
/// SIGN's NaN policy defaults to [`NanPolicy::Propagate`] (ONNX's reference behaviour:
/// NaN in, the same NaN out); [`Model::with_nan_policy`] selects DirectML's `Zero`.
///
/// A model runs on the CPU (ewise-cpu) unless, with the `gpu` feature,
/// `Model::with_gpu` gives it a GPU: then the same plan runs on that GPU, with the same
/// outputs bit for bit, the same errors for the same inputs, and the same [`RunStats`].
#[derive(Debug, Clone)]
pub struct Model {
    graph: Graph,
    device: Device,
    nan_policy: NanPolicy,
    ir_version: i64,
    #[cfg(feature = "gpu")]
    gpu: Option<ewise_gpu::GpuDevice>,
}

impl Model {
    /// Reads and checks a `.onnx` file; external tensor data is read relative to the
    /// file's directory (see [`Model::from_bytes`]).
    ///
    /// `path` may be reached through symbolic links, but must be a regular file: a
    /// directory, FIFO, device or socket is an [`Error::Io`] saying what it is, given
    /// without opening it, and the open never blocks. The buffer for the file is
    /// allocated fallibly ([`Error::OutOfMemory`]).
    pub fn load(path: impl AsRef<Path>) -> Result<Model> {
        Model::load_with(path, ExternalData::Read)
    }

    /// [`Model::load`], reading external tensor data when `external` says
    /// ([`ExternalData::Deferred`]: when runs need it, chunk by chunk when streamed).
    pub fn load_with(path: impl AsRef<Path>, external: ExternalData) -> Result<Model> {
        let path = path.as_ref();
        let bytes = files::read_file(path)?;
        let base = path.parent().unwrap_or(Path::new("."));
        Model::decode(&bytes, Some(base), &path.display().to_string(), external)
    }

    /// Decodes and checks a serialized `ModelProto`. External tensor data is read
    /// relative to `base_dir`; without one, a model that has external data is refused.
    ///
    /// External data is read only from regular files inside `base_dir`, reached without
    /// following any symbolic link below it (`base_dir` itself and its ancestors may be
    /// links); anything else is [`Error::ExternalDataRefused`], and a FIFO never blocks
    /// the load. Each claimed range is checked against the file's size before memory
    /// is allocated for it, and that allocation is fallible ([`Error::OutOfMemory`]).
    /// Only initializers some run can read (inputs of the planned nodes, graph outputs,
    /// and the defaults of graph inputs that are such) are read; the others keep only
    /// their type and shape. Initializers naming the same file, offset and length share
    /// one read. [`Model::data_files`] lists the files read.
    pub fn from_bytes(bytes: &[u8], base_dir: Option<&Path>) -> Result<Model> {
        Model::decode(bytes, base_dir, "model bytes", ExternalData::Read)
    }

    /// [`Model::from_bytes`], reading external tensor data when `external` says
    /// ([`ExternalData::Deferred`]: when runs need it, chunk by chunk when streamed).
    pub fn from_bytes_with(
        bytes: &[u8],
        base_dir: Option<&Path>,
        external: ExternalData,
    ) -> Result<Model> {
        Model::decode(bytes, base_dir, "model bytes", external)
    }

    /// Checks a decoded `ModelProto` (see [`Model::from_bytes`] for `base_dir`).
    pub fn from_proto(proto: &ModelProto, base_dir: Option<&Path>) -> Result<Model> {
        Model::build(proto, base_dir, ExternalData::Read)
    }

    fn build(proto: &ModelProto, base_dir: Option<&Path>, external: ExternalData) -> Result<Model> {
        let graph = Graph::build(proto, base_dir, external)?;
        let device = Device::builder()
            .extensions(Extensions::Enabled)
            .nan_policy(NanPolicy::Propagate)
            .build()
            .map_err(|source| Error::Kernel {
                node: "device".into(),
                source,
            })?;
        Ok(Model {
            graph,
            device,
            nan_policy: NanPolicy::Propagate,
            ir_version: proto.ir_version,
            #[cfg(feature = "gpu")]
            gpu: None,
        })
    }

    fn decode(
        bytes: &[u8],
        base_dir: Option<&Path>,
        what: &str,
        external: ExternalData,
    ) -> Result<Model> {
        let proto = ModelProto::decode(bytes).map_err(|source| Error::Decode {
            what: what.to_string(),
            message: "ModelProto",
            source,
        })?;
        Model::build(&proto, base_dir, external)
    }

    /// This model with SIGN's NaN policy set to `policy`.
    pub fn with_nan_policy(mut self, policy: NanPolicy) -> Model {
        self.nan_policy = policy;
        self
    }

    /// SIGN's NaN policy.
    pub fn nan_policy(&self) -> NanPolicy {
        self.nan_policy
    }

    /// This model running on the GPU `device` (with the `gpu` feature).
    ///
    /// Runs then upload each graph input, initializer and default that a node reads
    /// once, keep every value the nodes compute in GPU buffers (Sign in place where
    /// [`Step::in_place`] says so, freed buffers reused), submit all the nodes' work at
    /// once and download only the graph outputs. Outputs, errors for bad inputs (checked
    /// before the GPU is touched) and [`RunStats`] are those of the CPU path; failures of
    /// the GPU itself are [`Error::Gpu`], naming the node or transfer.
    ///
    /// The device must accept every type and shape an ONNX model may use: build it with
    /// `Extensions::Enabled` at the default feature level (`FeatureLevel::LATEST`), e.g.
    /// `GpuDevice::builder().extensions(Extensions::Enabled).build()`. Runs on any other
    /// device fail with [`Error::UnsuitableGpu`] after checking their inputs. The
    /// device's own NaN policy is not used: the model's ([`Model::with_nan_policy`])
    /// applies on both paths.
    #[cfg(feature = "gpu")]
    pub fn with_gpu(mut self, device: ewise_gpu::GpuDevice) -> Model {
        self.gpu = Some(device);
        self
    }

    /// The GPU this model runs on, if [`Model::with_gpu`] gave it one.
    #[cfg(feature = "gpu")]
    pub fn gpu(&self) -> Option<&ewise_gpu::GpuDevice> {
        self.gpu.as_ref()
    }

    /// The external data files this load read (with [`ExternalData::Deferred`]: opened
    /// and checked for runs to read), each once, in the order first opened:
    /// `base_dir` joined with each location's components (`.` left out), the path it
    /// was opened by. Two locations naming one file (e.g. through a hard link) give one
    /// entry, under the first one's path, so compare file identities rather than paths.
    /// The `.onnx` file given to [`Model::load`] is not listed; files of initializers
    /// that were not read (see [`Model::from_bytes`]) are not either. A caller that
    /// writes files should refuse to write any of these.
    pub fn data_files(&self) -> &[PathBuf] {
        &self.graph.data_files
    }

    /// The default-domain opset the model imports.
    pub fn opset(&self) -> i64 {
        self.graph.opset
    }

    /// The model's IR version, as declared.
    pub fn ir_version(&self) -> i64 {
        self.ir_version
    }

    /// The graph inputs in declaration order, with declared types and shapes.
    pub fn inputs(&self) -> &[ValueInfo] {
        &self.graph.inputs
    }

    /// The graph input named `name`.
    pub fn input(&self, name: &str) -> Option<&ValueInfo> {
        self.graph.inputs.iter().find(|i| i.name == name)
    }

    /// The graph outputs in declaration order, with inferred types.
    pub fn outputs(&self) -> &[ValueInfo] {
        &self.graph.outputs
    }

    /// The execution plan: the nodes that contribute to some output, in order.
    pub fn steps(&self) -> impl ExactSizeIterator<Item = &Step> {
        self.graph.steps.iter().map(|s| &s.info)
    }

    /// Checks inputs described by name, element type and shape, without their data (a
    /// caller can check `.npy` headers before reading the files). Fails as
    /// [`Model::run`] would for the same names, types and shapes.
    pub fn check_inputs(&self, inputs: &[(&str, DataType, &[usize])]) -> Result<()> {
        exec::check_inputs(&self.graph, inputs).map(|_| ())
    }

    /// Plans a run of the model chunk by chunk on inputs described by name, element type
    /// and shape (see [`Streaming`]). The inputs are checked as [`Model::check_inputs`]
    /// checks them, failing as [`Model::run`] would for the same names, types and
    /// shapes; an input left out that has an initializer default streams from the
    /// default's bytes ([`Streaming::initializer_bytes`]). The plan uses the model's NaN
    /// policy as it is now.
    pub fn streaming(&self, inputs: &[(&str, DataType, &[usize])]) -> Result<Streaming> {
        Streaming::new(&self.graph, &self.device, self.nan_policy, inputs)
    }

    /// Runs the model on `inputs` given by name (each graph input without a default
    /// exactly once) and returns every graph output, by name, in declaration order.
    ///
    /// The inputs are taken by value so their buffers can be reused: Sign runs in place
    /// on an input that nothing else needs afterwards. External data that an
    /// [`ExternalData::Deferred`] load left in its files is read whole here, for this
    /// run, where the run needs it (buffers reserved fallibly, [`Error::OutOfMemory`]);
    /// stream such a model ([`Model::streaming`]) to hold only chunks of it.
    pub fn run<I, S>(&self, inputs: I) -> Result<Vec<(String, Tensor)>>
    where
        I: IntoIterator<Item = (S, Tensor)>,
        S: Into<String>,
    {
        self.run_with_stats(inputs).map(|(outputs, _)| outputs)
    }

    /// [`Model::run`], also returning what the run did with memory.
    pub fn run_with_stats<I, S>(&self, inputs: I) -> Result<(Vec<(String, Tensor)>, RunStats)>
    where
        I: IntoIterator<Item = (S, Tensor)>,
        S: Into<String>,
    {
        let inputs = inputs.into_iter().map(|(n, t)| (n.into(), t)).collect();
        #[cfg(feature = "gpu")]
        if let Some(gpu) = &self.gpu {
            return exec::gpu::run(&self.graph, gpu, self.nan_policy, inputs);
        }
        exec::run(&self.graph, &self.device, self.nan_policy, inputs)
    }
}
