//! Running graphs: multi-node chains and branches, buffer reuse and in-place Sign, the
//! NaN policy, shapes (0-d, empty, 9-d, more than 64 dimensions, `dim_param`), and the
//! checks a run makes on its inputs.

mod common;

use common::*;
use ewise_onnx::{DataType, Error, NanPolicy, Tensor};

#[test]
fn sign_feeds_is_inf_through_several_branches() {
    let model = load(&branching()).unwrap();
    let x = [f32::NEG_INFINITY, -0.0, 2.0, f32::NAN, f32::INFINITY];
    let (out, stats) = model
        .run_with_stats([("x", Tensor::from_values(vec![5], &x).unwrap())])
        .unwrap();
    let names: Vec<&str> = out.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["a", "b", "c", "t"]);
    assert_eq!(out[0].1.values::<bool>().unwrap(), [false; 5]);
    assert_eq!(
        out[1].1.values::<bool>().unwrap(),
        [true, false, false, false, false]
    );
    assert_eq!(out[2].1.values::<bool>().unwrap(), [false; 5]);
    let t: Vec<u32> = out[3]
        .1
        .values::<f32>()
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect();
    assert_eq!(
        t,
        [0xBF80_0000, 0, 0x3F80_0000, f32::NAN.to_bits(), 0x3F80_0000]
    );
    assert_eq!(stats.steps, 5);
    assert_eq!(stats.in_place, 1, "sign_s is the last use of s");
    assert!(stats.reused >= 1, "{stats:?}");
}

#[test]
fn the_plan_runs_sign_in_place_only_on_values_not_needed_afterwards() {
    let model = load(&branching()).unwrap();
    let plan: Vec<(String, bool)> = model
        .steps()
        .map(|s| (s.node.clone(), s.in_place))
        .collect();
    assert_eq!(
        plan,
        [
            ("node \"sign_x\" (#0, Sign)".to_string(), false),
            ("node \"inf_s\" (#1, IsInf)".to_string(), false),
            ("node \"neg_x\" (#2, IsInf)".to_string(), false),
            ("node \"sign_s\" (#3, Sign)".to_string(), true),
            ("node \"pos_t\" (#4, IsInf)".to_string(), false),
        ]
    );
}

#[test]
fn a_chain_of_signs_runs_entirely_in_place_on_the_caller_s_buffer() {
    let nodes = (0..6)
        .map(|i| node("Sign", &format!("v{i}"), &format!("v{}", i + 1)))
        .collect();
    let m = model(
        13,
        graph(
            nodes,
            vec![value("v0", INT16, None)],
            vec![value("v6", INT16, None)],
        ),
    );
    let model = load(&m).unwrap();
    let x = Tensor::from_values(vec![3], &[i16::MIN, 0, 300]).unwrap();
    let (out, stats) = model.run_with_stats([("v0", x)]).unwrap();
    assert_eq!(out[0].1.values::<i16>().unwrap(), [-1, 0, 1]);
    assert_eq!((stats.in_place, stats.allocated, stats.reused), (6, 0, 0));
}

#[test]
fn intermediate_buffers_are_reused() {
    let m = model(
        20,
        graph(
            vec![
                is_inf("x", "a", None, None),
                is_inf("x", "b", None, None),
                node("Sign", "x", "y"),
                is_inf("y", "c", None, None),
            ],
            vec![value("x", DOUBLE, None)],
            vec![value("a", BOOL, None), value("c", BOOL, None)],
        ),
    );
    let model = load(&m).unwrap();
    assert_eq!(model.steps().count(), 3, "b feeds no output");
    let x = Tensor::from_values(vec![4], &[1.0f64, f64::INFINITY, -1.0, 0.0]).unwrap();
    let (out, stats) = model.run_with_stats([("x", x)]).unwrap();
    assert_eq!(
        out[0].1.values::<bool>().unwrap(),
        [false, true, false, false]
    );
    assert_eq!(out[1].1.values::<bool>().unwrap(), [false; 4]);
    assert_eq!(stats.in_place, 1);
    assert_eq!((stats.allocated, stats.reused), (2, 0));
    let m = model_with_reuse();
    let (_, stats) = load(&m)
        .unwrap()
        .run_with_stats([("x", Tensor::from_values(vec![2], &[1.0f32, 2.0]).unwrap())])
        .unwrap();
    assert_eq!((stats.allocated, stats.reused), (2, 1), "{stats:?}");
}

/// x -> Sign -> s (not in place: x is still needed); x -> IsInf -> b frees x's buffer;
/// s -> IsInf -> c then reuses it.
fn model_with_reuse() -> ewise_onnx::proto::ModelProto {
    model(
        20,
        graph(
            vec![
                node("Sign", "x", "s"),
                is_inf("x", "b", None, None),
                is_inf("s", "c", None, None),
            ],
            vec![value("x", FLOAT, None)],
            vec![value("b", BOOL, None), value("c", BOOL, None)],
        ),
    )
}

#[test]
fn nan_and_negative_zero_under_both_policies_bit_for_bit() {
    let x32 = [
        f32::from_bits(0x7FC0_0001),
        f32::from_bits(0xFF80_0001),
        -0.0,
        0.0,
        f32::from_bits(1),
        f32::from_bits(0x8000_0001),
    ];
    let model = load(&single(13, node("Sign", "x", "y"), FLOAT, FLOAT)).unwrap();
    assert_eq!(model.nan_policy(), NanPolicy::Propagate);
    let run = |policy| -> Vec<u32> {
        let out = model
            .clone()
            .with_nan_policy(policy)
            .run([("x", Tensor::from_values(vec![6], &x32).unwrap())])
            .unwrap();
        out[0]
            .1
            .values::<f32>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect()
    };
    assert_eq!(
        run(NanPolicy::Propagate),
        [0x7FC0_0001, 0xFF80_0001, 0, 0, 0x3F80_0000, 0xBF80_0000]
    );
    assert_eq!(run(NanPolicy::Zero), [0, 0, 0, 0, 0x3F80_0000, 0xBF80_0000]);

    for (elem, t, nan, neg_zero) in [
        (FLOAT16, DataType::Float16, 0xFE01u16, 0x8000u16),
        (BFLOAT16, DataType::Bfloat16, 0x7FC1, 0x8000),
    ] {
        let model = load(&single(13, node("Sign", "x", "y"), elem, elem)).unwrap();
        for (policy, expected) in [(NanPolicy::Propagate, [nan, 0]), (NanPolicy::Zero, [0, 0])] {
            let data = [nan.to_le_bytes(), neg_zero.to_le_bytes()].concat();
            let x = Tensor::new(t, vec![2], data).unwrap();
            let out = model
                .clone()
                .with_nan_policy(policy)
                .run([("x", x)])
                .unwrap();
            let y: Vec<u16> = out[0]
                .1
                .data
                .chunks(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect();
            assert_eq!(y, expected, "{t} {policy}");
        }
    }
    let model = load(&single(13, node("Sign", "x", "y"), DOUBLE, DOUBLE)).unwrap();
    for (policy, expected) in [
        (NanPolicy::Propagate, [0xFFF8_0000_0000_0007u64, 0]),
        (NanPolicy::Zero, [0, 0]),
    ] {
        let x =
            Tensor::from_values(vec![2], &[f64::from_bits(0xFFF8_0000_0000_0007), -0.0]).unwrap();
        let out = model
            .clone()
            .with_nan_policy(policy)
            .run([("x", x)])
            .unwrap();
        let y: Vec<u64> = out[0]
            .1
            .values::<f64>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect();
        assert_eq!(y, expected, "{policy}");
    }
}

#[test]
fn scalars_empty_tensors_and_many_dimensions_run() {
    let model = load(&branching()).unwrap();
    let err = model
        .run([("x", Tensor::scalar(1.0f32))])
        .unwrap_err()
        .to_string();
    assert!(err.contains("rank 0 differs from the declared 1"), "{err}");

    let model = load(&single(20, node("IsInf", "x", "y"), FLOAT, BOOL)).unwrap();
    let y = &model
        .run([("x", Tensor::scalar(f32::NEG_INFINITY))])
        .unwrap()[0]
        .1;
    assert_eq!(
        (y.shape.clone(), y.values::<bool>().unwrap()),
        (vec![], vec![true])
    );

    for shape in [vec![0], vec![3, 0, 2], vec![0; 9]] {
        let x = Tensor::from_values(shape.clone(), &[] as &[f32]).unwrap();
        let y = &model.run([("x", x)]).unwrap()[0].1;
        assert_eq!((&y.shape, y.data.len()), (&shape, 0));
    }

    let sign = load(&single(13, node("Sign", "x", "y"), INT8, INT8)).unwrap();
    let nine = vec![2, 1, 2, 1, 2, 1, 2, 1, 2];
    let values: Vec<i8> = (0..32).map(|i| (i * 9 - 128) as i8).collect();
    let y = &sign
        .run([("x", Tensor::from_values(nine.clone(), &values).unwrap())])
        .unwrap()[0]
        .1;
    assert_eq!(y.shape, nine);
    let expected: Vec<i8> = values.iter().map(|v| v.signum()).collect();
    assert_eq!(y.values::<i8>().unwrap(), expected);

    let many = vec![1; 70];
    let y = &sign
        .run([("x", Tensor::from_values(many.clone(), &[-7i8]).unwrap())])
        .unwrap()[0]
        .1;
    assert_eq!(
        (y.shape.clone(), y.values::<i8>().unwrap()),
        (many, vec![-1])
    );
}

#[test]
fn dim_params_accept_any_size_but_the_same_size_everywhere() {
    let m = model(
        13,
        graph(
            vec![node("Sign", "x", "y"), node("Sign", "z", "w")],
            vec![
                value("x", FLOAT, Some(&[D::P("N"), D::V(2)])),
                value("z", FLOAT, Some(&[D::P("N")])),
            ],
            vec![
                value("y", FLOAT, Some(&[D::P("N"), D::P("M")])),
                value("w", FLOAT, Some(&[D::P("N")])),
            ],
        ),
    );
    let model = load(&m).unwrap();
    let t = |shape: Vec<usize>| {
        let n = shape.iter().product();
        Tensor::from_values(shape, &vec![1.0f32; n]).unwrap()
    };
    for n in [0, 1, 5] {
        assert!(model.run([("x", t(vec![n, 2])), ("z", t(vec![n]))]).is_ok());
    }
    let err = model
        .run([("x", t(vec![3, 2])), ("z", t(vec![4]))])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "input \"z\" has shape [4], but graph input \"z\" declares [N]: dimension 0 (N) is 4, \
         but N is 3 in input \"x\" dimension 0"
    );
    let err = model
        .run([("x", t(vec![3, 3])), ("z", t(vec![3]))])
        .unwrap_err();
    assert!(
        err.to_string().contains("dimension 1 is 3, declared 2"),
        "{err}"
    );
    assert!(model
        .check_inputs(&[
            ("x", DataType::Float32, &[7, 2]),
            ("z", DataType::Float32, &[7])
        ])
        .is_ok());
    assert!(model
        .check_inputs(&[
            ("x", DataType::Float32, &[7, 2]),
            ("z", DataType::Float32, &[6])
        ])
        .is_err());
}

#[test]
fn declared_shapes_that_contradict_each_other_are_refused_at_load() {
    let m = model(
        13,
        graph(
            vec![node("Sign", "x", "y")],
            vec![value("x", FLOAT, Some(&[D::P("N"), D::V(3)]))],
            vec![value("y", FLOAT, Some(&[D::P("N"), D::V(4)]))],
        ),
    );
    let err = load(&m).unwrap_err();
    assert_eq!(
        err.to_string(),
        "value \"y\" has shape [N, 3] (from graph input \"x\"), but graph output \"y\" declares \
         [N, 4]: dimension 1 is 4, not 3"
    );
    let m = model(
        13,
        graph(
            vec![node("Sign", "x", "y")],
            vec![value("x", FLOAT, Some(&[D::V(3)]))],
            vec![value("y", FLOAT, Some(&[D::V(3), D::V(1)]))],
        ),
    );
    assert!(matches!(load(&m), Err(Error::ShapeMismatch { .. })));
    let mut g = graph(
        vec![node("Sign", "x", "y")],
        vec![value("x", FLOAT, None)],
        vec![value("y", FLOAT, None)],
    );
    g.value_info.push(value("y", DOUBLE, None));
    assert_eq!(
        load(&model(13, g)).unwrap_err().to_string(),
        "value \"y\" is declared as double, but is float"
    );
}

#[test]
fn run_inputs_are_checked_by_name_type_and_count() {
    let m = model(
        13,
        graph(
            vec![node("Sign", "x", "y"), node("Sign", "z", "w")],
            vec![value("x", FLOAT, None), value("z", INT64, None)],
            vec![value("y", FLOAT, None), value("w", INT64, None)],
        ),
    );
    let model = load(&m).unwrap();
    let f = || Tensor::scalar(1.0f32);
    let i = || Tensor::scalar(1i64);
    let err = model.run([("x", f())]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "input \"z\" is required but was not given (required: x, z)"
    );
    let err = model.run([("x", f()), ("z", i()), ("q", f())]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "input \"q\" is not an input of the model (accepted: x, z)"
    );
    let err = model.run([("x", f()), ("x", f())]).unwrap_err();
    assert_eq!(err.to_string(), "input \"x\" is given twice");
    let err = model.run([("x", f()), ("z", f())]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "input \"z\" is declared as int64, but is float"
    );
    let broken = Tensor {
        data_type: DataType::Float32,
        shape: vec![2],
        data: vec![0; 5],
    };
    let err = model.run([("x", broken), ("z", i())]).unwrap_err();
    assert!(
        err.to_string()
            .contains("data holds 5 bytes, but shape [2] of float needs 8"),
        "{err}"
    );
    assert_eq!(model.input("z").unwrap().data_type, DataType::Int64);
    assert!(model.input("y").is_none());
}

#[test]
fn a_graph_output_may_be_an_input_or_a_constant() {
    let mut g = graph(
        vec![node("Sign", "x", "y")],
        vec![value("x", UINT8, None)],
        vec![
            value("x", UINT8, None),
            value("y", UINT8, None),
            value("k", UINT16, None),
        ],
    );
    g.initializer
        .push(raw_tensor("k", UINT16, &[1], vec![5, 0]));
    let model = load(&model(13, g)).unwrap();
    let out = model
        .run([("x", Tensor::from_values(vec![3], &[0u8, 7, 255]).unwrap())])
        .unwrap();
    assert_eq!(out[0].1.values::<u8>().unwrap(), [0, 7, 255]);
    assert_eq!(out[1].1.values::<u8>().unwrap(), [0, 1, 1]);
    assert_eq!(out[2].1.values::<u16>().unwrap(), [5]);
}
