//! ONNX models built in code for the tests: graph inputs and outputs, nodes, and whole
//! serialized models.

use ewise_onnx::proto::{self, Message};

/// ONNX element type number of float32.
pub const FLOAT: i32 = 1;

/// A graph input or output of ONNX element type `elem_type`, with a fixed shape if
/// one is given.
pub fn value(name: &str, elem_type: i32, shape: Option<&[i64]>) -> proto::ValueInfoProto {
    use proto::tensor_shape_proto::{dimension, Dimension};
    let shape = shape.map(|dims| proto::TensorShapeProto {
        dim: dims
            .iter()
            .map(|&d| Dimension {
                value: Some(dimension::Value::DimValue(d)),
                ..Default::default()
            })
            .collect(),
    });
    proto::ValueInfoProto {
        name: name.into(),
        r#type: Some(proto::TypeProto {
            value: Some(proto::type_proto::Value::TensorType(
                proto::type_proto::Tensor { elem_type, shape },
            )),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A node `op(input) -> output` named `"{op} {output}"`, with integer attributes.
pub fn node(op: &str, input: &str, output: &str, ints: &[(&str, i64)]) -> proto::NodeProto {
    proto::NodeProto {
        input: vec![input.into()],
        output: vec![output.into()],
        op_type: op.into(),
        name: format!("{op} {output}"),
        attribute: ints
            .iter()
            .map(|&(name, i)| proto::AttributeProto {
                name: name.into(),
                i,
                r#type: proto::AttributeType::Int as i32,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// A serialized model of `graph` importing default-domain opset `opset`.
pub fn graph_model_bytes(opset: i64, graph: proto::GraphProto) -> Vec<u8> {
    proto::ModelProto {
        ir_version: 9,
        opset_import: vec![proto::OperatorSetIdProto {
            domain: String::new(),
            version: opset,
        }],
        graph: Some(graph),
        ..Default::default()
    }
    .encode_to_vec()
}

/// A serialized model importing default-domain opset `opset`, whose graph (named
/// `test`) is these nodes, inputs and outputs.
pub fn model_bytes(
    opset: i64,
    nodes: Vec<proto::NodeProto>,
    inputs: Vec<proto::ValueInfoProto>,
    outputs: Vec<proto::ValueInfoProto>,
) -> Vec<u8> {
    graph_model_bytes(
        opset,
        proto::GraphProto {
            name: "test".into(),
            node: nodes,
            input: inputs,
            output: outputs,
            ..Default::default()
        },
    )
}

/// `x -> Sign -> y` over float32 `[n]` (opset 13; input and output both of shape
/// `[n]`).
pub fn sign_model(n: i64) -> Vec<u8> {
    model_bytes(
        13,
        vec![node("Sign", "x", "y", &[])],
        vec![value("x", FLOAT, Some(&[n]))],
        vec![value("y", FLOAT, Some(&[n]))],
    )
}
