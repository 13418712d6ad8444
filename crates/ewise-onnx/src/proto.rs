//! The part of ONNX's protobuf schema (`onnx.proto`) that ewise reads, as prost messages.
//!
//! Field numbers are those of ONNX's IR specification. Fields ewise never looks at are
//! left out: the decoder skips them as unknown fields. Messages that only matter for
//! being *present* (sparse initializers, non-tensor types) are kept as raw bytes so a
//! model using them can be refused with a clear error instead of being misread.
//!
//! These structs are public so that callers (and tests) can build models in code and
//! encode them with [`prost::Message::encode_to_vec`].

pub use prost::Message;

/// `ModelProto`: the top-level message of a `.onnx` file.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ModelProto {
    /// `ir_version` (1): the IR version the model follows.
    #[prost(int64, tag = "1")]
    pub ir_version: i64,
    /// `producer_name` (2).
    #[prost(string, tag = "2")]
    pub producer_name: String,
    /// `producer_version` (3).
    #[prost(string, tag = "3")]
    pub producer_version: String,
    /// `domain` (4): the model's own namespace.
    #[prost(string, tag = "4")]
    pub domain: String,
    /// `model_version` (5).
    #[prost(int64, tag = "5")]
    pub model_version: i64,
    /// `doc_string` (6).
    #[prost(string, tag = "6")]
    pub doc_string: String,
    /// `graph` (7): the computation.
    #[prost(message, optional, tag = "7")]
    pub graph: Option<GraphProto>,
    /// `opset_import` (8): the operator set version imported for each domain.
    #[prost(message, repeated, tag = "8")]
    pub opset_import: Vec<OperatorSetIdProto>,
    /// `metadata_props` (14).
    #[prost(message, repeated, tag = "14")]
    pub metadata_props: Vec<StringStringEntryProto>,
}

/// `OperatorSetIdProto`: one imported operator set.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OperatorSetIdProto {
    /// `domain` (1): `""` and `"ai.onnx"` both name the default domain.
    #[prost(string, tag = "1")]
    pub domain: String,
    /// `version` (2).
    #[prost(int64, tag = "2")]
    pub version: i64,
}

/// `StringStringEntryProto`: a key/value pair (metadata, external data locations).
#[derive(Clone, PartialEq, prost::Message)]
pub struct StringStringEntryProto {
    /// `key` (1).
    #[prost(string, tag = "1")]
    pub key: String,
    /// `value` (2).
    #[prost(string, tag = "2")]
    pub value: String,
}

/// `GraphProto`: nodes in topological order, with the graph's inputs, outputs and
/// constant initializers.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GraphProto {
    /// `node` (1).
    #[prost(message, repeated, tag = "1")]
    pub node: Vec<NodeProto>,
    /// `name` (2).
    #[prost(string, tag = "2")]
    pub name: String,
    /// `initializer` (5): constant tensors; one named like a graph input is that input's
    /// default value.
    #[prost(message, repeated, tag = "5")]
    pub initializer: Vec<TensorProto>,
    /// `doc_string` (10).
    #[prost(string, tag = "10")]
    pub doc_string: String,
    /// `input` (11).
    #[prost(message, repeated, tag = "11")]
    pub input: Vec<ValueInfoProto>,
    /// `output` (12).
    #[prost(message, repeated, tag = "12")]
    pub output: Vec<ValueInfoProto>,
    /// `value_info` (13): declared types of intermediate values.
    #[prost(message, repeated, tag = "13")]
    pub value_info: Vec<ValueInfoProto>,
    /// `sparse_initializer` (15), kept undecoded: ewise refuses sparse tensors.
    #[prost(bytes = "vec", repeated, tag = "15")]
    pub sparse_initializer: Vec<Vec<u8>>,
}

/// `NodeProto`: one operator call.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NodeProto {
    /// `input` (1): value names; `""` marks an omitted optional input.
    #[prost(string, repeated, tag = "1")]
    pub input: Vec<String>,
    /// `output` (2): value names.
    #[prost(string, repeated, tag = "2")]
    pub output: Vec<String>,
    /// `name` (3): optional; unique within the graph when given.
    #[prost(string, tag = "3")]
    pub name: String,
    /// `op_type` (4): the operator, e.g. `Sign`.
    #[prost(string, tag = "4")]
    pub op_type: String,
    /// `attribute` (5).
    #[prost(message, repeated, tag = "5")]
    pub attribute: Vec<AttributeProto>,
    /// `doc_string` (6).
    #[prost(string, tag = "6")]
    pub doc_string: String,
    /// `domain` (7): the operator's domain; `""` (or `"ai.onnx"`) is the default one.
    #[prost(string, tag = "7")]
    pub domain: String,
    /// `overload` (8): for model-local functions.
    #[prost(string, tag = "8")]
    pub overload: String,
}

/// `AttributeProto.AttributeType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum AttributeType {
    /// `UNDEFINED` (0): old models that leave the type out.
    Undefined = 0,
    /// `FLOAT` (1).
    Float = 1,
    /// `INT` (2).
    Int = 2,
    /// `STRING` (3).
    String = 3,
    /// `TENSOR` (4).
    Tensor = 4,
    /// `GRAPH` (5).
    Graph = 5,
    /// `FLOATS` (6).
    Floats = 6,
    /// `INTS` (7).
    Ints = 7,
    /// `STRINGS` (8).
    Strings = 8,
    /// `TENSORS` (9).
    Tensors = 9,
    /// `GRAPHS` (10).
    Graphs = 10,
    /// `SPARSE_TENSOR` (11).
    SparseTensor = 11,
    /// `SPARSE_TENSORS` (12).
    SparseTensors = 12,
    /// `TYPE_PROTO` (13).
    TypeProto = 13,
    /// `TYPE_PROTOS` (14).
    TypeProtos = 14,
}

/// `AttributeProto`: a named attribute of a node. Only the scalar value fields are
/// decoded; the kind of value is given by `type`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AttributeProto {
    /// `name` (1).
    #[prost(string, tag = "1")]
    pub name: String,
    /// `f` (2): a FLOAT value.
    #[prost(float, tag = "2")]
    pub f: f32,
    /// `i` (3): an INT value.
    #[prost(int64, tag = "3")]
    pub i: i64,
    /// `s` (4): a STRING value.
    #[prost(bytes = "vec", tag = "4")]
    pub s: Vec<u8>,
    /// `t` (5): a TENSOR value.
    #[prost(message, optional, tag = "5")]
    pub t: Option<TensorProto>,
    /// `floats` (7): a FLOATS value.
    #[prost(float, repeated, tag = "7")]
    pub floats: Vec<f32>,
    /// `ints` (8): an INTS value.
    #[prost(int64, repeated, tag = "8")]
    pub ints: Vec<i64>,
    /// `strings` (9): a STRINGS value.
    #[prost(bytes = "vec", repeated, tag = "9")]
    pub strings: Vec<Vec<u8>>,
    /// `doc_string` (13).
    #[prost(string, tag = "13")]
    pub doc_string: String,
    /// `type` (20): which value field holds the attribute ([`AttributeType`]).
    #[prost(enumeration = "AttributeType", tag = "20")]
    pub r#type: i32,
    /// `ref_attr_name` (21): only meaningful inside functions.
    #[prost(string, tag = "21")]
    pub ref_attr_name: String,
}

/// `ValueInfoProto`: a value's name and declared type.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ValueInfoProto {
    /// `name` (1).
    #[prost(string, tag = "1")]
    pub name: String,
    /// `type` (2).
    #[prost(message, optional, tag = "2")]
    pub r#type: Option<TypeProto>,
    /// `doc_string` (3).
    #[prost(string, tag = "3")]
    pub doc_string: String,
}

/// `TypeProto`: the type of a value.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TypeProto {
    /// The `value` oneof: a tensor type, or another kind that ewise refuses.
    #[prost(oneof = "type_proto::Value", tags = "1, 4, 5, 7, 8, 9")]
    pub value: Option<type_proto::Value>,
    /// `denotation` (6).
    #[prost(string, tag = "6")]
    pub denotation: String,
}

/// Nested messages of [`TypeProto`].
pub mod type_proto {
    /// `TypeProto.Tensor`: element type and (optional) shape.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Tensor {
        /// `elem_type` (1): a `TensorProto.DataType` value.
        #[prost(int32, tag = "1")]
        pub elem_type: i32,
        /// `shape` (2): absent when even the rank is unknown.
        #[prost(message, optional, tag = "2")]
        pub shape: Option<super::TensorShapeProto>,
    }

    /// The `TypeProto.value` oneof. Kinds other than tensors stay undecoded.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Value {
        /// `tensor_type` (1).
        #[prost(message, tag = "1")]
        TensorType(Tensor),
        /// `sequence_type` (4), undecoded.
        #[prost(bytes, tag = "4")]
        SequenceType(Vec<u8>),
        /// `map_type` (5), undecoded.
        #[prost(bytes, tag = "5")]
        MapType(Vec<u8>),
        /// `opaque_type` (7), undecoded.
        #[prost(bytes, tag = "7")]
        OpaqueType(Vec<u8>),
        /// `sparse_tensor_type` (8), undecoded.
        #[prost(bytes, tag = "8")]
        SparseTensorType(Vec<u8>),
        /// `optional_type` (9), undecoded.
        #[prost(bytes, tag = "9")]
        OptionalType(Vec<u8>),
    }

    impl Value {
        /// The kind's name in ONNX's schema (`tensor_type`, `sequence_type`, ...).
        pub fn kind_name(&self) -> &'static str {
            match self {
                Value::TensorType(_) => "tensor_type",
                Value::SequenceType(_) => "sequence_type",
                Value::MapType(_) => "map_type",
                Value::OpaqueType(_) => "opaque_type",
                Value::SparseTensorType(_) => "sparse_tensor_type",
                Value::OptionalType(_) => "optional_type",
            }
        }
    }
}

/// `TensorShapeProto`: one entry per dimension.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorShapeProto {
    /// `dim` (1).
    #[prost(message, repeated, tag = "1")]
    pub dim: Vec<tensor_shape_proto::Dimension>,
}

/// Nested messages of [`TensorShapeProto`].
pub mod tensor_shape_proto {
    /// `TensorShapeProto.Dimension`: a fixed size, a symbol, or neither (unknown).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Dimension {
        /// The `value` oneof.
        #[prost(oneof = "dimension::Value", tags = "1, 2")]
        pub value: Option<dimension::Value>,
        /// `denotation` (3).
        #[prost(string, tag = "3")]
        pub denotation: String,
    }

    /// Nested types of [`Dimension`].
    pub mod dimension {
        /// The `TensorShapeProto.Dimension.value` oneof.
        #[derive(Clone, PartialEq, prost::Oneof)]
        pub enum Value {
            /// `dim_value` (1): a fixed size.
            #[prost(int64, tag = "1")]
            DimValue(i64),
            /// `dim_param` (2): a symbol; equal symbols in one graph have equal sizes.
            #[prost(string, tag = "2")]
            DimParam(String),
        }
    }
}

/// `TensorProto.DataLocation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum DataLocation {
    /// `DEFAULT` (0): the data is inside the message.
    Default = 0,
    /// `EXTERNAL` (1): the data is in a file named by `external_data`.
    External = 1,
}

/// `TensorProto`: a tensor value (initializers, test data files).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorProto {
    /// `dims` (1): the shape; empty for a scalar.
    #[prost(int64, repeated, tag = "1")]
    pub dims: Vec<i64>,
    /// `data_type` (2): a `TensorProto.DataType` value (see [`crate::dtype`]).
    #[prost(int32, tag = "2")]
    pub data_type: i32,
    /// `segment` (3): set only for chunked tensors, which ewise refuses.
    #[prost(message, optional, tag = "3")]
    pub segment: Option<tensor_proto::Segment>,
    /// `float_data` (4): FLOAT elements.
    #[prost(float, repeated, tag = "4")]
    pub float_data: Vec<f32>,
    /// `int32_data` (5): INT32, INT16, INT8, UINT16, UINT8, BOOL elements, and the bit
    /// patterns of FLOAT16, BFLOAT16 and the float8 formats.
    #[prost(int32, repeated, tag = "5")]
    pub int32_data: Vec<i32>,
    /// `string_data` (6): STRING elements.
    #[prost(bytes = "vec", repeated, tag = "6")]
    pub string_data: Vec<Vec<u8>>,
    /// `int64_data` (7): INT64 elements.
    #[prost(int64, repeated, tag = "7")]
    pub int64_data: Vec<i64>,
    /// `name` (8).
    #[prost(string, tag = "8")]
    pub name: String,
    /// `raw_data` (9): all elements, little-endian, packed row-major.
    #[prost(bytes = "vec", tag = "9")]
    pub raw_data: Vec<u8>,
    /// `double_data` (10): DOUBLE elements.
    #[prost(double, repeated, tag = "10")]
    pub double_data: Vec<f64>,
    /// `uint64_data` (11): UINT32 and UINT64 elements.
    #[prost(uint64, repeated, tag = "11")]
    pub uint64_data: Vec<u64>,
    /// `doc_string` (12).
    #[prost(string, tag = "12")]
    pub doc_string: String,
    /// `external_data` (13): `location`, `offset`, `length` (and `checksum`) of data
    /// stored outside the message.
    #[prost(message, repeated, tag = "13")]
    pub external_data: Vec<StringStringEntryProto>,
    /// `data_location` (14): [`DataLocation`].
    #[prost(enumeration = "DataLocation", tag = "14")]
    pub data_location: i32,
}

/// Nested messages of [`TensorProto`].
pub mod tensor_proto {
    /// `TensorProto.Segment`: the range of a chunk of a larger tensor.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Segment {
        /// `begin` (1).
        #[prost(int64, tag = "1")]
        pub begin: i64,
        /// `end` (2).
        #[prost(int64, tag = "2")]
        pub end: i64,
    }
}
