//! Loading a graph: opset resolution, name and order checks, type inference, declared
//! type and shape checks, and the execution plan (which nodes run, in place or not, and
//! when each buffer can be reused).

use ewise_cpu::text::{clip, quoted};
use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ewise_cpu::{DataType, InfinityMode};

use crate::dtype;
use crate::error::{Error, Result};
use crate::external::{Extent, Reader};
use crate::model::ExternalData;
use crate::opset::{self, OpType, Schema};
use crate::proto::tensor_shape_proto::dimension;
use crate::proto::{type_proto, AttributeProto, AttributeType, ModelProto, NodeProto, TypeProto};
use crate::tensor::{native_in_place, supported_types, TensorHead};

/// One dimension of a declared shape.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Dim {
    /// `dim_value`: exactly this size.
    Fixed(usize),
    /// `dim_param`: any size, the same for every dimension of the graph with this name.
    Param(String),
    /// Neither: any size.
    Unknown,
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Fixed(n) => write!(f, "{n}"),
            Dim::Param(p) => f.write_str(p),
            Dim::Unknown => f.write_str("?"),
        }
    }
}

/// Formats a declared shape as `[N, 3, ?]`.
pub(crate) fn dims_text(dims: &[Dim]) -> String {
    let parts: Vec<String> = dims.iter().map(Dim::to_string).collect();
    format!("[{}]", parts.join(", "))
}

/// A graph input or output: its name, element type and declared shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueInfo {
    /// The value's name.
    pub name: String,
    /// The element type (declared for inputs, inferred for outputs).
    pub data_type: DataType,
    /// The declared shape; `None` when not even the rank is declared. For an output
    /// without a declaration, the shape declared for the graph input it derives from.
    pub shape: Option<Vec<Dim>>,
    /// For inputs: an initializer of the same name gives a default, so the input may be
    /// left out of a run. Always false for outputs.
    pub has_default: bool,
}

/// One node of the execution plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The node, as messages name it.
    pub node: String,
    /// The operator.
    pub op: OpType,
    /// The operator version that applies (9 or 13 for Sign, 10 or 20 for IsInf).
    pub version: i64,
    /// IsInf's detection mode from its attributes; `None` for Sign.
    pub mode: Option<InfinityMode>,
    /// The input value's name.
    pub input: String,
    /// The output value's name.
    pub output: String,
    /// Whether the output overwrites the input's buffer: Sign whose input is not needed
    /// afterwards and is not a constant. (A graph input left to its initializer default
    /// is constant data, so such a run copies instead.)
    pub in_place: bool,
}

/// Where a value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// Graph input number `index`, with an optional default initializer.
    Input {
        index: usize,
        default: Option<usize>,
    },
    /// Initializer number `index`, not overridable.
    Initializer(usize),
    /// The output of step-candidate node `node` (index into the graph's node list).
    Node(usize),
}

/// A shape declared for a value, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Declaration {
    pub by: String,
    pub dims: Vec<Dim>,
}

/// A value of the graph.
#[derive(Debug, Clone)]
pub(crate) struct Value {
    pub name: String,
    pub data_type: DataType,
    pub source: Source,
    pub declarations: Vec<Declaration>,
    pub is_output: bool,
}

impl Value {
    /// `input 'x'` for graph inputs, `value 'y'` otherwise.
    pub fn describe(&self) -> String {
        match self.source {
            Source::Input { .. } => format!("input {}", quoted(&self.name)),
            _ => format!("value {}", quoted(&self.name)),
        }
    }
}

/// A planned step with value indices and the values whose buffers it frees.
#[derive(Debug, Clone)]
pub(crate) struct PlannedStep {
    pub info: Step,
    pub input: usize,
    pub output: usize,
    pub release: Vec<usize>,
}

/// Where the data of an initializer some run reads is.
#[derive(Debug, Clone)]
pub(crate) enum Data {
    /// In memory: the elements' native-order bytes. Initializers whose external data is
    /// the same byte range share these bytes.
    Held(Arc<Vec<u8>>),
    /// In an external file, opened and checked at the load ([`ExternalData::Deferred`])
    /// and read when a run needs it. Initializers naming the same byte range share it.
    External(Arc<Extent>),
}

/// An initializer: its name, element type and shape, and its data when some run reads
/// it.
#[derive(Debug, Clone)]
pub(crate) struct Initializer {
    pub name: String,
    pub data_type: DataType,
    pub shape: Vec<usize>,
    /// `None` for an initializer no run reads, whose data was never decoded, read or
    /// opened.
    pub data: Option<Data>,
}

impl Initializer {
    /// The elements' bytes when they are in memory; `None` for data still in its file.
    /// Empty for an initializer no run reads.
    pub fn held(&self) -> Option<&[u8]> {
        match &self.data {
            None => Some(&[]),
            Some(Data::Held(data)) => Some(data),
            Some(Data::External(_)) => None,
        }
    }

    /// Fills `out` with the data's bytes from byte `start` on, in native order: `start`
    /// and `out.len()` are whole elements. Held data is copied; external data is read
    /// from its file ([`Extent::read_at`], whose errors apply). Bytes beyond the data
    /// are [`Error::InvalidChunk`].
    pub fn read_at(&self, start: usize, out: &mut [u8]) -> Result<()> {
        match &self.data {
            Some(Data::External(extent)) => {
                extent.read_at(&self.name, start, out)?;
                native_in_place(self.data_type, out);
                Ok(())
            }
            _ => {
                let held = self.held().unwrap_or_default();
                let bytes = start
                    .checked_add(out.len())
                    .and_then(|end| held.get(start..end))
                    .ok_or_else(|| Error::InvalidChunk {
                        reason: format!(
                            "{} bytes from byte {start} of initializer {}, which holds {} bytes",
                            out.len(),
                            quoted(&self.name),
                            held.len()
                        ),
                    })?;
                out.copy_from_slice(bytes);
                Ok(())
            }
        }
    }
}

/// The bytes of initializers brought into memory for one run that needs them whole:
/// held data shared, external data read when first asked for (a range shared by several
/// initializers of one element size read once per run).
#[derive(Default)]
pub(crate) struct InMemory {
    read: HashMap<(usize, usize), Arc<Vec<u8>>>,
}

impl InMemory {
    /// All of `init`'s bytes, in native order: empty for an initializer no run reads;
    /// external data read whole with [`Extent::read_all`] (its buffer reserved
    /// fallibly, [`Error::OutOfMemory`]).
    pub fn get(&mut self, init: &Initializer) -> Result<Arc<Vec<u8>>> {
        match &init.data {
            None => Ok(Arc::new(Vec::new())),
            Some(Data::Held(data)) => Ok(Arc::clone(data)),
            Some(Data::External(extent)) => {
                let size = init.data_type.size_in_bytes().unwrap_or(1) as usize;
                let key = (Arc::as_ptr(extent) as usize, size);
                if let Some(data) = self.read.get(&key) {
                    return Ok(Arc::clone(data));
                }
                let mut data = extent.read_all(&init.name)?;
                native_in_place(init.data_type, &mut data);
                let data = Arc::new(data);
                self.read.insert(key, Arc::clone(&data));
                Ok(data)
            }
        }
    }
}

/// A checked graph, ready to run.
#[derive(Debug, Clone)]
pub(crate) struct Graph {
    pub opset: i64,
    pub inputs: Vec<ValueInfo>,
    pub outputs: Vec<ValueInfo>,
    pub initializers: Vec<Initializer>,
    pub values: Vec<Value>,
    /// Value index of each graph input, then of each graph output.
    pub input_values: Vec<usize>,
    pub output_values: Vec<usize>,
    pub steps: Vec<PlannedStep>,
    /// The external data files read (or opened, for data read later), each once, in
    /// first-use order.
    pub data_files: Vec<PathBuf>,
}

fn node_label(index: usize, node: &NodeProto) -> String {
    if node.name.is_empty() {
        format!("node #{index} ({})", clip(&node.op_type))
    } else {
        format!(
            "node {} (#{index}, {})",
            quoted(&node.name),
            clip(&node.op_type)
        )
    }
}

fn default_opset(model: &ModelProto) -> Result<i64> {
    let mut seen: HashMap<&str, i64> = HashMap::new();
    for import in &model.opset_import {
        let domain = if opset::is_default_domain(&import.domain) {
            ""
        } else {
            import.domain.as_str()
        };
        if let Some(&first) = seen.get(domain) {
            return Err(Error::DuplicateOpsetImport {
                domain: domain.to_string(),
                first,
                second: import.version,
            });
        }
        seen.insert(domain, import.version);
    }
    let version = *seen.get("").ok_or(Error::NoDefaultOpset)?;
    if !(opset::MIN_OPSET..=opset::MAX_OPSET).contains(&version) {
        return Err(Error::UnsupportedOpset {
            version,
            min: opset::MIN_OPSET,
            max: opset::MAX_OPSET,
        });
    }
    Ok(version)
}

/// The element type and shape of a declared tensor type; `Ok(None)` when `ty` declares
/// no element type (allowed for outputs and value_info, which are then only inferred).
fn declared_type(
    what: &str,
    ty: Option<&TypeProto>,
) -> Result<Option<(DataType, Option<Vec<Dim>>)>> {
    let Some(value) = ty.and_then(|t| t.value.as_ref()) else {
        return Ok(None);
    };
    let type_proto::Value::TensorType(tensor) = value else {
        return Err(Error::Unsupported {
            feature: format!("{what} of kind {}", value.kind_name()),
        });
    };
    if tensor.elem_type == 0 {
        return Ok(None);
    }
    let data_type =
        dtype::from_onnx(tensor.elem_type).ok_or_else(|| Error::UnsupportedElementType {
            what: what.to_string(),
            given: dtype::onnx_name(tensor.elem_type),
            supported: supported_types(),
        })?;
    let shape = match &tensor.shape {
        None => None,
        Some(shape) => {
            let mut dims = Vec::with_capacity(shape.dim.len());
            for (i, d) in shape.dim.iter().enumerate() {
                dims.push(match &d.value {
                    Some(dimension::Value::DimValue(v)) => {
                        Dim::Fixed(usize::try_from(*v).map_err(|_| Error::InvalidDeclaration {
                            what: what.to_string(),
                            reason: format!("dim_value {v} at dimension {i} (sizes must be >= 0)"),
                        })?)
                    }
                    Some(dimension::Value::DimParam(p)) if !p.is_empty() => Dim::Param(p.clone()),
                    _ => Dim::Unknown,
                });
            }
            Some(dims)
        }
    };
    Ok(Some((data_type, shape)))
}

fn type_mismatch(what: String, declared: DataType, actual: DataType) -> Error {
    Error::TypeMismatch {
        what,
        declared: dtype::name(declared),
        actual: dtype::name(actual),
    }
}

/// IsInf's mode from its attributes (each INT, default 1, non-zero meaning true), after
/// checking that every attribute is one the schema has, given once, with an INT value.
fn attributes(
    label: &str,
    schema: &Schema,
    attrs: &[AttributeProto],
) -> Result<Option<InfinityMode>> {
    let op = schema.op.name();
    let version = schema.since_version;
    let mut values: HashMap<&str, i64> = HashMap::new();
    for attr in attrs {
        if !schema.attributes.contains(&attr.name.as_str()) {
            return Err(Error::UnknownAttribute {
                node: label.to_string(),
                op,
                version,
                name: attr.name.clone(),
                accepted: if schema.attributes.is_empty() {
                    "none".into()
                } else {
                    schema.attributes.join(", ")
                },
            });
        }
        let invalid = |problem: String| Error::InvalidAttribute {
            node: label.to_string(),
            op,
            version,
            name: attr.name.clone(),
            problem,
        };
        match AttributeType::try_from(attr.r#type) {
            Ok(AttributeType::Int | AttributeType::Undefined) => {}
            Ok(other) => {
                return Err(invalid(format!(
                    "has type {} (expected INT)",
                    other.as_str_name()
                )))
            }
            Err(_) => {
                return Err(invalid(format!(
                    "has unknown type {} (expected INT)",
                    attr.r#type
                )))
            }
        }
        if !attr.ref_attr_name.is_empty() {
            return Err(invalid(
                "refers to a function attribute (ref_attr_name), which only functions may do"
                    .into(),
            ));
        }
        if values.insert(attr.name.as_str(), attr.i).is_some() {
            return Err(invalid("is given more than once".into()));
        }
    }
    Ok(match schema.op {
        OpType::Sign => None,
        OpType::IsInf => {
            let flag = |name: &str| values.get(name).is_none_or(|&v| v != 0);
            Some(InfinityMode::from_detect(
                flag("detect_positive"),
                flag("detect_negative"),
            ))
        }
    })
}

impl AttributeType {
    fn as_str_name(self) -> &'static str {
        match self {
            AttributeType::Undefined => "UNDEFINED",
            AttributeType::Float => "FLOAT",
            AttributeType::Int => "INT",
            AttributeType::String => "STRING",
            AttributeType::Tensor => "TENSOR",
            AttributeType::Graph => "GRAPH",
            AttributeType::Floats => "FLOATS",
            AttributeType::Ints => "INTS",
            AttributeType::Strings => "STRINGS",
            AttributeType::Tensors => "TENSORS",
            AttributeType::Graphs => "GRAPHS",
            AttributeType::SparseTensor => "SPARSE_TENSOR",
            AttributeType::SparseTensors => "SPARSE_TENSORS",
            AttributeType::TypeProto => "TYPE_PROTO",
            AttributeType::TypeProtos => "TYPE_PROTOS",
        }
    }
}

/// The nodes that lie on cycles: what never becomes ready (Kahn's algorithm), less the
/// nodes that only consume from a cycle without feeding one (Kahn's algorithm on the
/// reversed edges). Linear in nodes and edges.
fn cycle_nodes(nodes: &[NodeProto], producers: &HashMap<&str, usize>) -> Vec<String> {
    let n = nodes.len();
    let deps: Vec<Vec<usize>> = nodes
        .iter()
        .map(|node| {
            node.input
                .iter()
                .filter_map(|i| producers.get(i.as_str()).copied())
                .collect()
        })
        .collect();
    let mut consumers: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, d) in deps.iter().enumerate() {
        for &p in d {
            consumers[p].push(i);
        }
    }
    let mut removed = vec![false; n];
    let mut waiting: Vec<usize> = deps.iter().map(Vec::len).collect();
    let mut ready: Vec<usize> = (0..n).filter(|&i| waiting[i] == 0).collect();
    while let Some(i) = ready.pop() {
        removed[i] = true;
        for &c in &consumers[i] {
            waiting[c] -= 1;
            if waiting[c] == 0 {
                ready.push(c);
            }
        }
    }
    let mut feeding: Vec<usize> = (0..n)
        .map(|i| consumers[i].iter().filter(|&&c| !removed[c]).count())
        .collect();
    let mut sinks: Vec<usize> = (0..n).filter(|&i| !removed[i] && feeding[i] == 0).collect();
    while let Some(i) = sinks.pop() {
        removed[i] = true;
        for &p in &deps[i] {
            if !removed[p] {
                feeding[p] -= 1;
                if feeding[p] == 0 {
                    sinks.push(p);
                }
            }
        }
    }
    (0..n)
        .filter(|&i| !removed[i])
        .map(|i| node_label(i, &nodes[i]))
        .collect()
}

impl Graph {
    /// Checks and plans the graph of `model`, then decodes the data of the initializers
    /// some run reads, their external data (relative to `base_dir`) read now or, as
    /// `external` says, opened and checked for reads later; the others keep only their
    /// type and shape.
    pub fn build(
        model: &ModelProto,
        base_dir: Option<&Path>,
        external: ExternalData,
    ) -> Result<Graph> {
        let opset = default_opset(model)?;
        let graph = model.graph.as_ref().ok_or(Error::MissingGraph)?;
        if !graph.sparse_initializer.is_empty() {
            return Err(Error::Unsupported {
                feature: format!(
                    "sparse initializers ({} in the graph)",
                    graph.sparse_initializer.len()
                ),
            });
        }
        let mut b = Builder::default();
        let mut initializer_index: HashMap<&str, usize> = HashMap::new();
        let mut heads = Vec::with_capacity(graph.initializer.len());
        for (i, proto) in graph.initializer.iter().enumerate() {
            if proto.name.is_empty() {
                return Err(Error::EmptyName {
                    what: format!("initializer #{i}"),
                });
            }
            if initializer_index.insert(&proto.name, i).is_some() {
                return Err(Error::DuplicateName {
                    kind: "initializer",
                    name: proto.name.clone(),
                    detail: "two initializers".into(),
                });
            }
            let head = TensorHead::parse(proto)?;
            b.initializers.push(Initializer {
                name: proto.name.clone(),
                data_type: head.data_type,
                shape: head.shape.clone(),
                data: None,
            });
            heads.push(head);
        }
        let mut inputs = Vec::with_capacity(graph.input.len());
        for (index, info) in graph.input.iter().enumerate() {
            if info.name.is_empty() {
                return Err(Error::EmptyName {
                    what: format!("graph input #{index}"),
                });
            }
            if b.ids.contains_key(&info.name) {
                return Err(Error::DuplicateName {
                    kind: "graph input",
                    name: info.name.clone(),
                    detail: "two graph inputs".into(),
                });
            }
            let what = format!("graph input {}", quoted(&info.name));
            let (data_type, shape) = match declared_type(&what, info.r#type.as_ref())? {
                Some(t) => t,
                None => {
                    return Err(Error::MissingType {
                        name: info.name.clone(),
                        problem: "has no element type".into(),
                    })
                }
            };
            let default = initializer_index.get(info.name.as_str()).copied();
            if let Some(i) = default {
                let init = &b.initializers[i];
                if init.data_type != data_type {
                    return Err(type_mismatch(
                        format!("initializer {} (default of {what})", quoted(&info.name)),
                        data_type,
                        init.data_type,
                    ));
                }
            }
            let mut declarations = Vec::new();
            if let Some(dims) = &shape {
                declarations.push(Declaration {
                    by: what,
                    dims: dims.clone(),
                });
            }
            b.add(
                info.name.clone(),
                data_type,
                Source::Input { index, default },
                declarations,
            );
            inputs.push(ValueInfo {
                name: info.name.clone(),
                data_type,
                shape,
                has_default: default.is_some(),
            });
        }
        for (i, proto) in graph.initializer.iter().enumerate() {
            if !b.ids.contains_key(&proto.name) {
                let data_type = b.initializers[i].data_type;
                b.add(
                    proto.name.clone(),
                    data_type,
                    Source::Initializer(i),
                    Vec::new(),
                );
            }
        }

        let mut producers: HashMap<&str, usize> = HashMap::new();
        let mut node_names: HashMap<&str, usize> = HashMap::new();
        for (i, node) in graph.node.iter().enumerate() {
            if !node.name.is_empty() {
                if let Some(first) = node_names.insert(&node.name, i) {
                    return Err(Error::DuplicateName {
                        kind: "node",
                        name: node.name.clone(),
                        detail: format!("nodes #{first} and #{i}"),
                    });
                }
            }
            for output in node.output.iter().filter(|o| !o.is_empty()) {
                if b.ids.contains_key(output) {
                    return Err(Error::DuplicateName {
                        kind: "value",
                        name: output.clone(),
                        detail: format!(
                            "{} produces it, but it is already a graph input or initializer",
                            node_label(i, node)
                        ),
                    });
                }
                if let Some(first) = producers.insert(output, i) {
                    return Err(Error::DuplicateName {
                        kind: "value",
                        name: output.clone(),
                        detail: format!(
                            "produced by both {} and {}",
                            node_label(first, &graph.node[first]),
                            node_label(i, node)
                        ),
                    });
                }
            }
        }

        let mut candidates = Vec::with_capacity(graph.node.len());
        for (i, node) in graph.node.iter().enumerate() {
            let label = node_label(i, node);
            let unsupported = || Error::UnsupportedOperator {
                node: label.clone(),
                op_type: node.op_type.clone(),
                domain: node.domain.clone(),
                supported: opset::supported_text(),
            };
            if !opset::is_default_domain(&node.domain) {
                return Err(unsupported());
            }
            let op = OpType::from_name(&node.op_type).ok_or_else(unsupported)?;
            let schema =
                opset::resolve(op, opset).map_err(|introduced| Error::OperatorNotInOpset {
                    node: label.clone(),
                    op: op.name(),
                    opset,
                    introduced,
                })?;
            let arity = |role, given: usize| Error::Arity {
                node: label.clone(),
                op: op.name(),
                version: schema.since_version,
                role,
                given,
                expected: 1,
            };
            if node.input.len() != 1 || node.input[0].is_empty() {
                return Err(arity(
                    "input",
                    node.input.iter().filter(|s| !s.is_empty()).count(),
                ));
            }
            if node.output.len() != 1 || node.output[0].is_empty() {
                return Err(arity(
                    "output",
                    node.output.iter().filter(|s| !s.is_empty()).count(),
                ));
            }
            let mode = attributes(&label, schema, &node.attribute)?;
            let input_name = &node.input[0];
            let Some(&input) = b.ids.get(input_name) else {
                return Err(match producers.get(input_name.as_str()) {
                    Some(_) => {
                        let cycle = cycle_nodes(&graph.node, &producers);
                        if cycle.is_empty() {
                            let p = producers[input_name.as_str()];
                            Error::NotTopologicallySorted {
                                node: label,
                                name: input_name.clone(),
                                producer: node_label(p, &graph.node[p]),
                            }
                        } else {
                            Error::Cycle { nodes: cycle }
                        }
                    }
                    None => Error::UndefinedInput {
                        node: label,
                        name: input_name.clone(),
                    },
                });
            };
            let input_type = b.values[input].data_type;
            if !schema.input_types.contains(&input_type) {
                return Err(Error::UnsupportedType {
                    node: label,
                    op: op.name(),
                    version: schema.since_version,
                    given: dtype::name(input_type),
                    accepted: dtype::names(schema.input_types),
                });
            }
            let output_type = match op {
                OpType::Sign => input_type,
                OpType::IsInf => DataType::Bool,
            };
            let output = b.add(
                node.output[0].clone(),
                output_type,
                Source::Node(i),
                Vec::new(),
            );
            candidates.push(PlannedStep {
                info: Step {
                    node: label,
                    op,
                    version: schema.since_version,
                    mode,
                    input: input_name.clone(),
                    output: node.output[0].clone(),
                    in_place: false,
                },
                input,
                output,
                release: Vec::new(),
            });
        }

        for info in &graph.value_info {
            let Some(&v) = b.ids.get(&info.name) else {
                continue;
            };
            let by = format!("value_info {}", quoted(&info.name));
            if let Some((declared, shape)) = declared_type(&by, info.r#type.as_ref())? {
                let actual = b.values[v].data_type;
                if declared != actual {
                    return Err(type_mismatch(b.values[v].describe(), declared, actual));
                }
                if let Some(dims) = shape {
                    b.values[v].declarations.push(Declaration { by, dims });
                }
            }
        }

        let roots = b.roots(&candidates);
        let mut outputs = Vec::with_capacity(graph.output.len());
        let mut output_values = Vec::with_capacity(graph.output.len());
        for (i, info) in graph.output.iter().enumerate() {
            if info.name.is_empty() {
                return Err(Error::EmptyName {
                    what: format!("graph output #{i}"),
                });
            }
            let v = *b
                .ids
                .get(&info.name)
                .ok_or_else(|| Error::UndefinedOutput {
                    name: info.name.clone(),
                })?;
            if b.values[v].is_output {
                return Err(Error::DuplicateName {
                    kind: "graph output",
                    name: info.name.clone(),
                    detail: "two graph outputs".into(),
                });
            }
            b.values[v].is_output = true;
            let by = format!("graph output {}", quoted(&info.name));
            let actual = b.values[v].data_type;
            let mut shape = None;
            if let Some((declared, dims)) = declared_type(&by, info.r#type.as_ref())? {
                if declared != actual {
                    return Err(type_mismatch(by, declared, actual));
                }
                if let Some(dims) = dims {
                    shape = Some(dims.clone());
                    b.values[v].declarations.push(Declaration { by, dims });
                }
            }
            if shape.is_none() {
                shape = b.root_shape(roots[v]);
            }
            outputs.push(ValueInfo {
                name: info.name.clone(),
                data_type: actual,
                shape,
                has_default: false,
            });
            output_values.push(v);
        }

        b.check_declarations(&candidates)?;
        let steps = b.plan(candidates, &output_values);
        let mut reader = Reader::new(base_dir);
        for i in b.read_initializers(&steps) {
            let deferred = match external {
                ExternalData::Deferred => heads[i].describe(&mut reader)?,
                ExternalData::Read => None,
            };
            b.initializers[i].data = Some(match deferred {
                Some(extent) => Data::External(extent),
                None => Data::Held(heads[i].data(&mut reader)?),
            });
        }
        let input_values = (0..inputs.len()).collect();
        Ok(Graph {
            opset,
            inputs,
            outputs,
            initializers: b.initializers,
            values: b.values,
            input_values,
            output_values,
            steps,
            data_files: reader.into_files(),
        })
    }
}

#[derive(Default)]
struct Builder {
    values: Vec<Value>,
    ids: HashMap<String, usize>,
    initializers: Vec<Initializer>,
}

impl Builder {
    fn add(
        &mut self,
        name: String,
        data_type: DataType,
        source: Source,
        declarations: Vec<Declaration>,
    ) -> usize {
        let id = self.values.len();
        self.ids.insert(name.clone(), id);
        self.values.push(Value {
            name,
            data_type,
            source,
            declarations,
            is_output: false,
        });
        id
    }

    /// For every value, the graph input or initializer value it derives from (every
    /// operator here is element-wise, so all values of one chain share a shape).
    fn roots(&self, steps: &[PlannedStep]) -> Vec<usize> {
        let mut roots: Vec<usize> = (0..self.values.len()).collect();
        for step in steps {
            roots[step.output] = roots[step.input];
        }
        roots
    }

    fn root_shape(&self, root: usize) -> Option<Vec<Dim>> {
        match self.values[root].source {
            Source::Initializer(i) => Some(
                self.initializers[i]
                    .shape
                    .iter()
                    .map(|&d| Dim::Fixed(d))
                    .collect(),
            ),
            _ => self.values[root]
                .declarations
                .first()
                .map(|d| d.dims.clone()),
        }
    }

    /// Load-time shape check: all declarations about values of one chain (and the
    /// actual shape of a constant root) agree on the rank and on every fixed size.
    /// Symbolic sizes are checked per run, when they are known.
    fn check_declarations(&self, steps: &[PlannedStep]) -> Result<()> {
        let mut groups: HashMap<usize, Vec<(usize, Declaration)>> = HashMap::new();
        let roots = self.roots(steps);
        for (v, value) in self.values.iter().enumerate() {
            let root = roots[v];
            let group = groups.entry(root).or_default();
            if v == root {
                let fixed = match value.source {
                    Source::Initializer(i) => Some(self.initializers[i].shape.clone()),
                    Source::Input {
                        default: Some(i), ..
                    } => Some(self.initializers[i].shape.clone()),
                    _ => None,
                };
                if let Some(shape) = fixed {
                    group.insert(
                        0,
                        (
                            v,
                            Declaration {
                                by: format!("initializer {}", quoted(&value.name)),
                                dims: shape.into_iter().map(Dim::Fixed).collect(),
                            },
                        ),
                    );
                }
            }
            group.extend(value.declarations.iter().map(|d| (v, d.clone())));
        }
        for group in groups.values() {
            let Some((_, first)) = group.first() else {
                continue;
            };
            for (v, d) in &group[1..] {
                let mismatch = |reason: String| Error::ShapeMismatch {
                    what: self.values[*v].describe(),
                    actual: format!("{} (from {})", dims_text(&first.dims), first.by),
                    declared: format!("{} declares {}", d.by, dims_text(&d.dims)),
                    reason,
                };
                if d.dims.len() != first.dims.len() {
                    return Err(mismatch(format!(
                        "rank {} differs from {}",
                        d.dims.len(),
                        first.dims.len()
                    )));
                }
                for (i, (a, b)) in first.dims.iter().zip(&d.dims).enumerate() {
                    if let (Dim::Fixed(a), Dim::Fixed(b)) = (a, b) {
                        if a != b {
                            return Err(mismatch(format!("dimension {i} is {b}, not {a}")));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The initializers a run of `steps` reads, in index order: those of the values a
    /// step takes as input and of the graph outputs, for a graph input its default.
    fn read_initializers(&self, steps: &[PlannedStep]) -> BTreeSet<usize> {
        let read = steps
            .iter()
            .map(|s| s.input)
            .chain((0..self.values.len()).filter(|&v| self.values[v].is_output));
        read.filter_map(|v| match self.values[v].source {
            Source::Initializer(i)
            | Source::Input {
                default: Some(i), ..
            } => Some(i),
            _ => None,
        })
        .collect()
    }

    /// Keeps the steps some graph output depends on, and decides in-place execution and
    /// when each value's buffer is freed.
    fn plan(&self, candidates: Vec<PlannedStep>, outputs: &[usize]) -> Vec<PlannedStep> {
        let mut needed = vec![false; self.values.len()];
        for &v in outputs {
            needed[v] = true;
        }
        let mut keep = vec![false; candidates.len()];
        for (k, step) in candidates.iter().enumerate().rev() {
            if needed[step.output] {
                keep[k] = true;
                needed[step.input] = true;
            }
        }
        let mut steps: Vec<PlannedStep> = candidates
            .into_iter()
            .zip(keep)
            .filter_map(|(s, k)| k.then_some(s))
            .collect();
        let mut last_use = vec![None; self.values.len()];
        for (k, step) in steps.iter().enumerate() {
            last_use[step.input] = Some(k);
        }
        for (k, step) in steps.iter_mut().enumerate() {
            let input = &self.values[step.input];
            let last = last_use[step.input] == Some(k) && !input.is_output;
            step.info.in_place = step.info.op == OpType::Sign
                && last
                && !matches!(input.source, Source::Initializer(_));
            if last {
                step.release.push(step.input);
            }
        }
        steps
    }
}
