//! Builders for models made in code, shared by the integration tests.
#![allow(dead_code)]

use ewise_onnx::proto::tensor_shape_proto::{dimension, Dimension};
use ewise_onnx::proto::{
    type_proto, AttributeProto, AttributeType, GraphProto, Message, ModelProto, NodeProto,
    OperatorSetIdProto, TensorProto, TensorShapeProto, TypeProto, ValueInfoProto,
};
use ewise_onnx::{Model, Result};

#[cfg(feature = "gpu")]
pub mod gpu;

pub const FLOAT: i32 = 1;
pub const UINT8: i32 = 2;
pub const INT8: i32 = 3;
pub const UINT16: i32 = 4;
pub const INT16: i32 = 5;
pub const INT32: i32 = 6;
pub const INT64: i32 = 7;
pub const STRING: i32 = 8;
pub const BOOL: i32 = 9;
pub const FLOAT16: i32 = 10;
pub const DOUBLE: i32 = 11;
pub const UINT32: i32 = 12;
pub const UINT64: i32 = 13;
pub const BFLOAT16: i32 = 16;
pub const FLOAT8E4M3FN: i32 = 17;
pub const FLOAT8E4M3FNUZ: i32 = 18;
pub const FLOAT8E5M2: i32 = 19;
pub const FLOAT8E5M2FNUZ: i32 = 20;

/// A declared dimension: a number or a symbol.
pub enum D {
    V(i64),
    P(&'static str),
    Unknown,
}

pub fn tensor_type(elem_type: i32, shape: Option<&[D]>) -> TypeProto {
    TypeProto {
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type,
            shape: shape.map(|dims| TensorShapeProto {
                dim: dims
                    .iter()
                    .map(|d| Dimension {
                        value: match d {
                            D::V(v) => Some(dimension::Value::DimValue(*v)),
                            D::P(p) => Some(dimension::Value::DimParam(p.to_string())),
                            D::Unknown => None,
                        },
                        ..Default::default()
                    })
                    .collect(),
            }),
        })),
        ..Default::default()
    }
}

pub fn value(name: &str, elem_type: i32, shape: Option<&[D]>) -> ValueInfoProto {
    ValueInfoProto {
        name: name.into(),
        r#type: Some(tensor_type(elem_type, shape)),
        ..Default::default()
    }
}

pub fn node(op_type: &str, input: &str, output: &str) -> NodeProto {
    NodeProto {
        input: vec![input.into()],
        output: vec![output.into()],
        op_type: op_type.into(),
        ..Default::default()
    }
}

pub fn named(mut n: NodeProto, name: &str) -> NodeProto {
    n.name = name.into();
    n
}

pub fn int_attr(name: &str, i: i64) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        i,
        r#type: AttributeType::Int as i32,
        ..Default::default()
    }
}

pub fn is_inf(input: &str, output: &str, pos: Option<i64>, neg: Option<i64>) -> NodeProto {
    let mut n = node("IsInf", input, output);
    if let Some(p) = pos {
        n.attribute.push(int_attr("detect_positive", p));
    }
    if let Some(v) = neg {
        n.attribute.push(int_attr("detect_negative", v));
    }
    n
}

pub fn graph(
    nodes: Vec<NodeProto>,
    inputs: Vec<ValueInfoProto>,
    outputs: Vec<ValueInfoProto>,
) -> GraphProto {
    GraphProto {
        node: nodes,
        name: "g".into(),
        input: inputs,
        output: outputs,
        ..Default::default()
    }
}

pub fn model(opset: i64, graph: GraphProto) -> ModelProto {
    ModelProto {
        ir_version: 9,
        opset_import: vec![OperatorSetIdProto {
            domain: String::new(),
            version: opset,
        }],
        graph: Some(graph),
        ..Default::default()
    }
}

/// Encodes and loads back, as a file would be.
pub fn load(model: &ModelProto) -> Result<Model> {
    Model::from_bytes(&model.encode_to_vec(), None)
}

/// One node `op` from `x` to `y` at `opset`, with declared element types and no shapes.
pub fn single(opset: i64, n: NodeProto, in_type: i32, out_type: i32) -> ModelProto {
    model(
        opset,
        graph(
            vec![n],
            vec![value("x", in_type, None)],
            vec![value("y", out_type, None)],
        ),
    )
}

pub fn raw_tensor(name: &str, data_type: i32, dims: &[i64], raw: Vec<u8>) -> TensorProto {
    TensorProto {
        name: name.into(),
        data_type,
        dims: dims.to_vec(),
        raw_data: raw,
        ..Default::default()
    }
}

/// x (float [N]) -> Sign -> s; s -> IsInf -> a; x -> IsInf(neg only) -> b;
/// s -> Sign -> t; t -> IsInf(pos only) -> c. Outputs a, b, c, t.
pub fn branching() -> ModelProto {
    model(
        20,
        graph(
            vec![
                named(node("Sign", "x", "s"), "sign_x"),
                named(is_inf("s", "a", None, None), "inf_s"),
                named(is_inf("x", "b", Some(0), Some(1)), "neg_x"),
                named(node("Sign", "s", "t"), "sign_s"),
                named(is_inf("t", "c", Some(1), Some(0)), "pos_t"),
            ],
            vec![value("x", FLOAT, Some(&[D::P("N")]))],
            vec![
                value("a", BOOL, Some(&[D::P("N")])),
                value("b", BOOL, Some(&[D::P("N")])),
                value("c", BOOL, None),
                value("t", FLOAT, Some(&[D::Unknown])),
            ],
        ),
    )
}
