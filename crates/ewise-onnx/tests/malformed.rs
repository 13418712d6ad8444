//! Malformed models: each gives a typed error naming the problem, and no input bytes
//! make the loader panic.

mod common;

use common::*;
use ewise_onnx::proto::{GraphProto, Message, ModelProto, OperatorSetIdProto};
use ewise_onnx::{Error, Model};
use proptest::prelude::*;

fn sign_model() -> ModelProto {
    model(
        13,
        graph(
            vec![
                named(node("Sign", "x", "s"), "a"),
                named(is_inf("s", "y", None, None), "b"),
            ],
            vec![value("x", FLOAT, Some(&[D::V(2)]))],
            vec![value("y", BOOL, Some(&[D::V(2)]))],
        ),
    )
}

fn with_graph(f: impl FnOnce(&mut GraphProto)) -> ModelProto {
    let mut m = sign_model();
    m.opset_import[0].version = 20;
    f(m.graph.as_mut().unwrap());
    m
}

fn err(m: &ModelProto) -> Error {
    load(m).expect_err("the model should be refused")
}

#[test]
fn the_well_formed_base_model_loads() {
    let mut m = sign_model();
    m.opset_import[0].version = 20;
    assert!(load(&m).is_ok());
}

#[test]
fn every_truncation_of_a_valid_model_is_refused() {
    let bytes = sign_model().encode_to_vec();
    let mut decode_errors = 0;
    for len in 0..bytes.len() {
        let e = Model::from_bytes(&bytes[..len], None).expect_err("a truncated model");
        if matches!(e, Error::Decode { .. }) {
            decode_errors += 1;
        }
    }
    assert!(
        decode_errors > bytes.len() / 2,
        "{decode_errors} of {}",
        bytes.len()
    );
}

#[test]
fn wrong_wire_types_are_decode_errors() {
    let e = Model::from_bytes(&[0x3A, 0x02, 0x08], None).unwrap_err();
    assert!(matches!(e, Error::Decode { .. }), "{e}");
    let e = Model::from_bytes(&[0x3D, 1, 2, 3, 4], None).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("model bytes is not a valid ONNX ModelProto"),
        "{e}"
    );
    let e = Model::from_bytes(&[0x42, 0x03, 0x10, 0x80], None).unwrap_err();
    assert!(matches!(e, Error::Decode { .. }), "{e}");
    let mut g = graph(vec![], vec![], vec![]).encode_to_vec();
    g.extend_from_slice(&[0x0A, 0x05, 0x22, 0x03, 0xFF, 0xFE, 0xFD]);
    let mut bytes = vec![0x3A, g.len() as u8];
    bytes.extend_from_slice(&g);
    let e = Model::from_bytes(&bytes, None).unwrap_err();
    assert!(
        matches!(e, Error::Decode { .. }),
        "invalid UTF-8 in op_type: {e}"
    );
}

#[test]
fn a_missing_graph_or_opset_is_refused() {
    let mut m = sign_model();
    m.graph = None;
    assert_eq!(
        err(&m).to_string(),
        "model has no graph (ModelProto field 7 `graph` is missing)"
    );
    let mut m = sign_model();
    m.opset_import.clear();
    assert!(matches!(err(&m), Error::NoDefaultOpset));
    let mut m = sign_model();
    m.opset_import.push(OperatorSetIdProto {
        domain: "ai.onnx".into(),
        version: 9,
    });
    assert!(matches!(
        err(&m),
        Error::DuplicateOpsetImport {
            first: 13,
            second: 9,
            ..
        }
    ));
    assert!(matches!(
        Model::load("/nonexistent/model.onnx"),
        Err(Error::Io { .. })
    ));
}

#[test]
fn unknown_operators_and_domains_name_the_node_and_the_supported_list() {
    let m = with_graph(|g| g.node[0].op_type = "Abs".into());
    assert_eq!(
        err(&m).to_string(),
        "node \"a\" (#0, Abs): operator \"Abs\" of domain \"\" is not supported (supported: \
         Sign (opsets 9, 13), IsInf (opsets 10, 20) of the default domain)"
    );
    let m = with_graph(|g| g.node[1].domain = "com.microsoft".into());
    let e = err(&m);
    assert!(
        matches!(&e, Error::UnsupportedOperator { node, domain, .. } if node == "node \"b\" (#1, IsInf)" && domain == "com.microsoft"),
        "{e}"
    );
    let m = with_graph(|g| g.node[0].op_type = "sign".into());
    assert!(matches!(err(&m), Error::UnsupportedOperator { .. }));
}

#[test]
fn dangling_inputs_cycles_and_order_are_checked() {
    let m = with_graph(|g| g.node[1].input[0] = "nowhere".into());
    assert_eq!(
        err(&m).to_string(),
        "node \"b\" (#1, IsInf): input \"nowhere\" is not a graph input, an initializer or the \
         output of any node"
    );
    let m = with_graph(|g| g.node.swap(0, 1));
    assert_eq!(
        err(&m).to_string(),
        "node \"b\" (#0, IsInf): input \"s\" is produced later, by node \"a\" (#1, Sign) (nodes \
         must be listed in topological order)"
    );
    let m = with_graph(|g| {
        g.node[0].input[0] = "t".into();
        g.node.push(named(node("Sign", "s", "t"), "c"));
    });
    assert_eq!(
        err(&m).to_string(),
        "graph has a cycle through node \"a\" (#0, Sign), node \"c\" (#2, Sign)"
    );
    let m = with_graph(|g| {
        g.node.push(named(node("Sign", "loop", "loop"), "self"));
    });
    assert!(matches!(err(&m), Error::Cycle { nodes } if nodes.len() == 1));
    let m = with_graph(|g| g.output[0].name = "missing".into());
    assert!(matches!(err(&m), Error::UndefinedOutput { .. }));
}

#[test]
fn duplicate_and_empty_names_are_refused() {
    let m = with_graph(|g| g.node[1].name = "a".into());
    assert_eq!(
        err(&m).to_string(),
        "node name \"a\" is used twice (nodes #0 and #1)"
    );
    let m = with_graph(|g| g.node[1].output[0] = "s".into());
    assert!(
        matches!(err(&m), Error::DuplicateName { kind: "value", .. }),
        "two producers of one value"
    );
    let m = with_graph(|g| g.node[0].output[0] = "x".into());
    assert!(err(&m)
        .to_string()
        .contains("already a graph input or initializer"));
    let m = with_graph(|g| g.input.push(value("x", FLOAT, None)));
    assert!(matches!(
        err(&m),
        Error::DuplicateName {
            kind: "graph input",
            ..
        }
    ));
    let m = with_graph(|g| g.output.push(g.output[0].clone()));
    assert!(matches!(
        err(&m),
        Error::DuplicateName {
            kind: "graph output",
            ..
        }
    ));
    let m = with_graph(|g| {
        g.initializer.push(raw_tensor("k", FLOAT, &[], vec![0; 4]));
        g.initializer.push(raw_tensor("k", FLOAT, &[], vec![0; 4]));
    });
    assert!(matches!(
        err(&m),
        Error::DuplicateName {
            kind: "initializer",
            ..
        }
    ));
    let m = with_graph(|g| g.input[0].name.clear());
    assert!(matches!(err(&m), Error::EmptyName { .. }));
}

#[test]
fn node_arity_and_input_types_are_checked() {
    let m = with_graph(|g| g.node[0].input.push("x".into()));
    assert_eq!(
        err(&m).to_string(),
        "node \"a\" (#0, Sign): Sign-13 takes exactly 1 input, 2 given"
    );
    let m = with_graph(|g| g.node[0].output.clear());
    assert!(matches!(
        err(&m),
        Error::Arity {
            role: "output",
            given: 0,
            ..
        }
    ));
    let m = with_graph(|g| g.node[0].input[0].clear());
    assert!(matches!(
        err(&m),
        Error::Arity {
            role: "input",
            given: 0,
            ..
        }
    ));
    let m = with_graph(|g| g.input[0].r#type = None);
    assert!(matches!(err(&m), Error::MissingType { .. }));
    let m = with_graph(|g| g.input[0] = value("x", 14, None));
    assert!(err(&m)
        .to_string()
        .contains("element type complex64 is not supported"));
    let m = with_graph(|g| g.input[0] = value("x", 99, None));
    assert!(err(&m)
        .to_string()
        .contains("element type type 99 is not supported"));
    let m = with_graph(|g| g.input[0] = value("x", FLOAT, Some(&[D::V(-1)])));
    assert!(matches!(err(&m), Error::InvalidDeclaration { .. }));
    let m = with_graph(|g| g.sparse_initializer.push(vec![]));
    assert!(matches!(err(&m), Error::Unsupported { .. }));
    let m = with_graph(|g| {
        g.input[0].r#type = Some(ewise_onnx::proto::TypeProto {
            value: Some(ewise_onnx::proto::type_proto::Value::SequenceType(vec![])),
            ..Default::default()
        })
    });
    assert_eq!(
        err(&m).to_string(),
        "graph input \"x\" of kind sequence_type is not supported"
    );
}

fn arbitrary_model() -> impl Strategy<Value = Vec<u8>> {
    let valid = sign_model().encode_to_vec();
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..256),
        (0..valid.len()).prop_map({
            let valid = valid.clone();
            move |len| valid[..len].to_vec()
        }),
        (proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)).prop_map(
            move |edits| {
                let mut bytes = valid.clone();
                for (at, byte) in edits {
                    let i = at.index(bytes.len());
                    bytes[i] = byte;
                }
                bytes
            }
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn no_bytes_make_the_loader_panic(bytes in arbitrary_model()) {
        if let Ok(model) = Model::from_bytes(&bytes, None) {
            let inputs: Vec<(String, ewise_onnx::Tensor)> = model
                .inputs()
                .iter()
                .map(|i| {
                    let shape: Vec<usize> = i.shape.iter().flatten().map(|_| 1).collect();
                    let size = i.data_type.size_in_bytes().unwrap_or(1) as usize;
                    (i.name.clone(), ewise_onnx::Tensor {
                        data_type: i.data_type,
                        shape,
                        data: vec![0; size],
                    })
                })
                .collect();
            let _ = model.run(inputs);
        }
    }
}

/// A model's strings are hostile: whatever error quotes one (a node, operator, value,
/// input, output, initializer or domain name of a megabyte) shows it cut to 64
/// characters and says how long it was.
#[test]
fn hostile_names_are_cut_in_every_message() {
    let long = "n".repeat(1 << 20);
    let said = format!("…({} chars)", 1 << 20);
    let refusals: Vec<(&str, ModelProto)> = vec![
        (
            "unsupported operator",
            with_graph(|g| g.node[0].op_type = long.clone()),
        ),
        (
            "node name",
            with_graph(|g| {
                g.node[1].name = long.clone();
                g.node[1].attribute.push(int_attr("bogus", 1));
            }),
        ),
        (
            "undefined input",
            with_graph(|g| g.node[1].input[0] = long.clone()),
        ),
        (
            "undefined output",
            with_graph(|g| g.output[0].name = long.clone()),
        ),
        (
            "duplicate name",
            with_graph(|g| {
                g.node[0].output[0] = long.clone();
                g.node[1].input[0] = long.clone();
                g.node[1].output[0] = long.clone();
            }),
        ),
        (
            "attribute",
            with_graph(|g| g.node[1].attribute.push(int_attr(&long, 1))),
        ),
        (
            "initializer",
            with_graph(|g| {
                g.initializer
                    .push(raw_tensor(&long, FLOAT, &[2], vec![0; 3]))
            }),
        ),
        ("domain", {
            let mut m = sign_model();
            for _ in 0..2 {
                m.opset_import.push(OperatorSetIdProto {
                    domain: long.clone(),
                    version: 1,
                });
            }
            m
        }),
    ];
    for (what, m) in refusals {
        let message = err(&m).to_string();
        assert!(message.len() < 1_000, "{what}: {} bytes", message.len());
        assert!(message.contains(&said), "{what}: {message}");
    }
    let m = sign_model();
    let model = load(&m).unwrap();
    let message = model
        .check_inputs(&[(long.as_str(), ewise_onnx::DataType::Float32, &[2])])
        .unwrap_err()
        .to_string();
    assert!(
        message.len() < 1_000 && message.contains(&said),
        "{message}"
    );
}
