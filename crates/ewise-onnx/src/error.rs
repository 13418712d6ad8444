//! Typed errors of the ONNX front end. Every message names what was wrong (the file, the
//! node, the operator and version, the value, the type) and what would be accepted.

use ewise_cpu::text::quoted;
use std::path::PathBuf;

/// Everything that can go wrong loading or running a model.
///
/// Nodes are named in messages as `node 'NAME' (#INDEX, OP)`, or `node #INDEX (OP)` when
/// the node has no name.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// Bytes that are not a valid protobuf encoding of the expected message.
    #[error("{what} is not a valid ONNX {message}: {source}")]
    Decode {
        /// What was decoded (a file name, or `model bytes`).
        what: String,
        /// The message expected (`ModelProto`, `TensorProto`).
        message: &'static str,
        /// prost's description of the problem.
        #[source]
        source: prost::DecodeError,
    },
    /// The model has no graph.
    #[error("model has no graph (ModelProto field 7 `graph` is missing)")]
    MissingGraph,
    /// The model imports no version of the default domain.
    #[error("model imports no version of the default domain (an opset_import entry with domain \"\" or \"ai.onnx\" is required)")]
    NoDefaultOpset,
    /// The model imports one domain twice.
    #[error("model imports domain {} twice (versions {first} and {second}); each domain may be imported once", quoted(.domain))]
    DuplicateOpsetImport {
        /// The domain (`""` for the default one).
        domain: String,
        /// The first version.
        first: i64,
        /// The second version.
        second: i64,
    },
    /// A default-domain opset version outside what ewise knows.
    #[error("model imports default-domain opset {version} (supported: {min} to {max})")]
    UnsupportedOpset {
        /// The version imported.
        version: i64,
        /// Lowest version accepted.
        min: i64,
        /// Highest version accepted: the newest ewise knows the operator definitions of.
        max: i64,
    },
    /// A node of a domain or type ewise does not implement.
    #[error("{node}: operator {} of domain {} is not supported (supported: {supported})", quoted(.op_type), quoted(.domain))]
    UnsupportedOperator {
        /// The node.
        node: String,
        /// Its `op_type`.
        op_type: String,
        /// Its domain.
        domain: String,
        /// The operators ewise implements.
        supported: String,
    },
    /// An operator used with an opset older than its first version.
    #[error(
        "{node}: {op} does not exist at opset {opset} (it was introduced in opset {introduced})"
    )]
    OperatorNotInOpset {
        /// The node.
        node: String,
        /// The operator.
        op: &'static str,
        /// The model's default-domain opset.
        opset: i64,
        /// The operator's first version.
        introduced: i64,
    },
    /// A data type the operator version does not accept.
    #[error("{node}: {op}-{version} does not accept input type {given} (accepted: {accepted})")]
    UnsupportedType {
        /// The node.
        node: String,
        /// The operator.
        op: &'static str,
        /// The operator version that applies.
        version: i64,
        /// The type given (ONNX's name).
        given: String,
        /// The types that version accepts.
        accepted: String,
    },
    /// A node with the wrong number of inputs or outputs.
    #[error("{node}: {op}-{version} takes exactly {expected} {role}, {given} given")]
    Arity {
        /// The node.
        node: String,
        /// The operator.
        op: &'static str,
        /// The operator version.
        version: i64,
        /// `input` or `output`.
        role: &'static str,
        /// How many the node lists.
        given: usize,
        /// How many the operator takes.
        expected: usize,
    },
    /// An attribute the operator does not have.
    #[error("{node}: {op}-{version} has no attribute {} (accepted: {accepted})", quoted(.name))]
    UnknownAttribute {
        /// The node.
        node: String,
        /// The operator.
        op: &'static str,
        /// The operator version.
        version: i64,
        /// The attribute's name.
        name: String,
        /// The attributes the operator has.
        accepted: String,
    },
    /// An attribute given with the wrong kind of value, or twice.
    #[error("{node}: attribute {} of {op}-{version} {problem}", quoted(.name))]
    InvalidAttribute {
        /// The node.
        node: String,
        /// The operator.
        op: &'static str,
        /// The operator version.
        version: i64,
        /// The attribute's name.
        name: String,
        /// What is wrong, e.g. `has type FLOAT (expected INT)`.
        problem: String,
    },
    /// A name that must be non-empty is empty.
    #[error("{what} has an empty name (names of graph inputs, outputs, initializers and node outputs must be non-empty)")]
    EmptyName {
        /// Which entry, e.g. `graph input #0`.
        what: String,
    },
    /// A name used twice where names must be unique.
    #[error("{kind} name {} is used twice ({detail})", quoted(.name))]
    DuplicateName {
        /// The namespace: `value`, `node`, `initializer`, `graph input`, `graph output`.
        kind: &'static str,
        /// The name.
        name: String,
        /// Where the two uses are.
        detail: String,
    },
    /// A node input that nothing defines.
    #[error(
        "{node}: input {} is not a graph input, an initializer or the output of any node", quoted(.name))]
    UndefinedInput {
        /// The node.
        node: String,
        /// The value's name.
        name: String,
    },
    /// A node input produced by a later node (the graph is not in topological order).
    #[error("{node}: input {} is produced later, by {producer} (nodes must be listed in topological order)", quoted(.name))]
    NotTopologicallySorted {
        /// The consuming node.
        node: String,
        /// The value's name.
        name: String,
        /// The producing node.
        producer: String,
    },
    /// Nodes that depend on each other in a cycle.
    #[error("graph has a cycle through {}", nodes.join(", "))]
    Cycle {
        /// The nodes on cycles.
        nodes: Vec<String>,
    },
    /// A graph output that nothing defines.
    #[error(
        "graph output {} is not a graph input, an initializer or the output of any node", quoted(.name))]
    UndefinedOutput {
        /// The output's name.
        name: String,
    },
    /// A graph input without a tensor type.
    #[error("graph input {} {problem} (a tensor_type with an elem_type is required)", quoted(.name))]
    MissingType {
        /// The input's name.
        name: String,
        /// What is missing, e.g. `has no type` or `has type sequence_type`.
        problem: String,
    },
    /// A declared type or shape that is malformed.
    #[error("{what}: invalid declaration: {reason}")]
    InvalidDeclaration {
        /// The value, e.g. `graph input 'x'`.
        what: String,
        /// What is wrong.
        reason: String,
    },
    /// An element type ewise cannot hold.
    #[error("{what}: element type {given} is not supported (supported: {supported})")]
    UnsupportedElementType {
        /// The value or tensor.
        what: String,
        /// ONNX's name of the type.
        given: String,
        /// The element types ewise can hold.
        supported: String,
    },
    /// A declared type that differs from the inferred or actual one.
    #[error("{what} is declared as {declared}, but is {actual}")]
    TypeMismatch {
        /// The value, e.g. `graph output 'y'`.
        what: String,
        /// The declared type (ONNX's name).
        declared: String,
        /// The inferred or given type (ONNX's name).
        actual: String,
    },
    /// A declared shape that disagrees with the inferred or actual one.
    #[error("{what} has shape {actual}, but {declared}: {reason}")]
    ShapeMismatch {
        /// The value, e.g. `input 'x'`.
        what: String,
        /// The inferred or actual shape.
        actual: String,
        /// Where the declaration is and what it says, e.g. `graph output 'y' declares
        /// [N, 3]`.
        declared: String,
        /// The first disagreement.
        reason: String,
    },
    /// Tensor data that is malformed or does not match its type and shape.
    #[error("tensor {}: {reason}", quoted(.name))]
    InvalidTensor {
        /// The tensor's name (may be empty).
        name: String,
        /// What is wrong and what was expected.
        reason: String,
    },
    /// External tensor data that ewise will not read: its location leaves the model's
    /// directory, passes through a symbolic link, or names something other than a
    /// regular file; or, opened again after the load, it is no longer the file the load
    /// checked ([`Refusal::Changed`]). Nothing was read from it.
    #[error("external data location {} of tensor {} {reason}; ewise reads only regular files inside the model's directory", quoted(.location), quoted(.tensor))]
    ExternalDataRefused {
        /// The tensor's name.
        tensor: String,
        /// The location, as the model gives it.
        location: String,
        /// Why it was refused.
        reason: Refusal,
    },
    /// External tensor data read after the load (a model loaded with
    /// [`crate::ExternalData::Deferred`]) whose file, read through a handle open since
    /// the load, no longer holds the tensor's range: another program shrank it. Nothing past the
    /// file's new end was read.
    #[error("external data location {} of tensor {} shrank after the model was loaded: the tensor needs bytes {offset} to {} of the file ({len} bytes), but it now holds {size} bytes", quoted(.location), quoted(.tensor), offset.saturating_add(*len))]
    ExternalDataTruncated {
        /// The tensor's name.
        tensor: String,
        /// The location, as the model gives it.
        location: String,
        /// The tensor's first byte in the file.
        offset: u64,
        /// The tensor's byte size.
        len: u64,
        /// The file's size now.
        size: u64,
    },
    /// Memory for data whose size the model claims could not be allocated. The claim
    /// was within what the file holds, so the model may be sound but too large for this
    /// process.
    #[error("cannot allocate {bytes} bytes for {what} (out of memory)")]
    OutOfMemory {
        /// What the memory was for, e.g. `the external data of tensor "w"`.
        what: String,
        /// The size claimed.
        bytes: u64,
    },
    /// A model feature ewise does not implement.
    #[error("{feature} is not supported")]
    Unsupported {
        /// The feature, e.g. `sparse initializers (1 in the graph)`.
        feature: String,
    },
    /// A run was given an input the model does not have.
    #[error("input {} is not an input of the model (accepted: {accepted})", quoted(.name))]
    UnknownInput {
        /// The name given.
        name: String,
        /// The model's input names.
        accepted: String,
    },
    /// A run was given one input twice.
    #[error("input {} is given twice", quoted(.name))]
    DuplicateInput {
        /// The name.
        name: String,
    },
    /// A run lacks a required input.
    #[error("input {} is required but was not given (required: {required})", quoted(.name))]
    MissingInput {
        /// The missing input.
        name: String,
        /// All required inputs.
        required: String,
    },
    /// A chunk given to [`crate::Streaming::run_chunk`] that does not fit the plan: a
    /// source index out of range, bytes that are not whole elements, or output slices
    /// of the wrong number or lengths.
    #[error("invalid streaming chunk: {reason}")]
    InvalidChunk {
        /// What is wrong and what was expected.
        reason: String,
    },
    /// A tensor too large for this machine or for ewise's tensor descriptions.
    #[error("{what} with shape {shape} is too large ({limit})")]
    TooLarge {
        /// The value.
        what: String,
        /// Its shape.
        shape: String,
        /// The limit exceeded.
        limit: &'static str,
    },
    /// The kernel library refused an operator or execution.
    #[error("{node}: {source}")]
    Kernel {
        /// The node.
        node: String,
        /// ewise-cpu's error.
        #[source]
        source: ewise_cpu::Error,
    },
    /// The GPU failed at a node's work, or at moving a value to or from the GPU (with the
    /// `gpu` feature). Mistakes in descriptions and bindings are [`Error::Kernel`], as
    /// on the CPU.
    #[cfg(feature = "gpu")]
    #[error("{node}: GPU failure: {source}")]
    Gpu {
        /// The node, or what was being done: `upload of input "x"`, `download of
        /// graph output "y"`, `submission of the graph's steps`.
        node: String,
        /// ewise-gpu's error.
        #[source]
        source: ewise_gpu::GpuError,
    },
    /// A GPU device that cannot run every ONNX type a model may use (with the `gpu`
    /// feature): [`crate::Model::with_gpu`] needs a device built with
    /// `Extensions::Enabled` at `FeatureLevel::LATEST`.
    #[cfg(feature = "gpu")]
    #[error("the GPU device on {adapter} cannot run ONNX models: {reason} (build it with GpuDevice::builder().extensions(Extensions::Enabled), at the default feature level)")]
    UnsuitableGpu {
        /// The adapter.
        adapter: String,
        /// What the device lacks.
        reason: String,
    },
}

/// Why [`Error::ExternalDataRefused`] refused an external data location.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// The location is absolute, has a `..` or a drive prefix, or names no file.
    OutsideDirectory,
    /// The data file itself is a symbolic link (on Windows, any reparse point).
    SymbolicLink,
    /// A directory on the way to the data file is a symbolic link.
    LinkedDirectory {
        /// The location's leading components up to and including the link.
        component: String,
    },
    /// A component on the way to the data file is not a directory.
    NotADirectory {
        /// The location's leading components up to and including that one.
        component: String,
    },
    /// The data file is not a regular file.
    NotRegularFile {
        /// What it is instead.
        kind: FileKind,
    },
    /// The data file, opened again to be read after the load (a model loaded with
    /// [`crate::ExternalData::Deferred`] keeps a bounded number of files open), is not
    /// the file the load checked: another file, or the same one with another size or
    /// modification time.
    Changed,
}

/// The kinds of file that are not regular files, as [`Refusal::NotRegularFile`] names
/// them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileKind {
    /// A directory.
    Directory,
    /// A FIFO (named pipe).
    Fifo,
    /// A character device, such as `/dev/zero`.
    CharacterDevice,
    /// A block device.
    BlockDevice,
    /// A Unix domain socket.
    Socket,
    /// Anything else the operating system reports that is not a regular file.
    Other,
}

impl std::fmt::Display for FileKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FileKind::Directory => "a directory",
            FileKind::Fifo => "a FIFO (named pipe)",
            FileKind::CharacterDevice => "a character device",
            FileKind::BlockDevice => "a block device",
            FileKind::Socket => "a socket",
            FileKind::Other => "not a regular file",
        })
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::OutsideDirectory => f.write_str(
                "resolves outside the model's directory (it must be a relative path without `..`)",
            ),
            Refusal::SymbolicLink => f.write_str("is a symbolic link"),
            Refusal::LinkedDirectory { component } => {
                write!(f, "passes through {}, a symbolic link", quoted(component))
            }
            Refusal::NotADirectory { component } => {
                write!(f, "passes through {}, which is not a directory", quoted(component))
            }
            Refusal::NotRegularFile {
                kind: FileKind::Other,
            } => f.write_str("is not a regular file"),
            Refusal::NotRegularFile { kind } => write!(f, "is {kind}"),
            Refusal::Changed => f.write_str(
                "is no longer the file the model was loaded with (it was replaced, resized or modified since)",
            ),
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    #[test]
    fn errors_stay_small_enough_to_return_by_value() {
        assert!(std::mem::size_of::<super::Error>() <= 112);
    }
}
