//! Graphs on the GPU (`Model::with_gpu`): every graph shape the CPU tests run (chains,
//! in-place Sign, fan-out, outputs that are inputs or initializers, defaults,
//! `dim_param`s, 0-d, empty and many-dimensional tensors, every ONNX type, both NaN
//! policies) gives the CPU path's outputs bit for bit, its errors and its `RunStats`;
//! devices that cannot run ONNX models and GPU failures are typed errors.
//!
//! Without a GPU adapter each test says so on stderr and passes, unless
//! `EWISE_REQUIRE_GPU=1` (set by `scripts/gpu-driver.sh`, which selects lavapipe).

mod common;

use std::path::Path;

use common::gpu::{gpu, try_device};
use common::*;
use ewise_cpu::Extensions;
use ewise_gpu::GpuDevice;
use ewise_onnx::conformance::run_case_on;
use ewise_onnx::proto::ModelProto;
use ewise_onnx::{dtype, DataType, Error, Model, NanPolicy, Tensor};
use ewise_testkit::noise;
use proptest::prelude::*;

/// Runs `model` on `inputs` on the CPU and on `device`, asserts that both give the same
/// outputs and stats, or the same error, and returns the CPU's result.
fn same_on(
    device: &GpuDevice,
    model: &Model,
    inputs: &[(&str, Tensor)],
) -> Result<(Vec<(String, Tensor)>, ewise_onnx::RunStats), Error> {
    let owned = || inputs.iter().map(|(n, t)| (n.to_string(), t.clone()));
    let cpu = model.run_with_stats(owned());
    let on_gpu = model
        .clone()
        .with_gpu(device.clone())
        .run_with_stats(owned());
    match (&cpu, &on_gpu) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "CPU and GPU differ"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        _ => panic!("CPU gave {cpu:?}, GPU gave {on_gpu:?}"),
    }
    cpu
}

/// Bit patterns that matter for elements of `size` bytes (zeros of both signs,
/// infinities, NaNs with payloads and signs, ones, subnormals, extremes; every pattern
/// of one-byte types), in little-endian bytes.
fn specials(size: usize) -> Vec<u8> {
    let words: Vec<u64> = match size {
        1 => (0..=255).collect(),
        2 => vec![
            0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE01, 0x7F80, 0xFF80, 0x7FC1, 0x3C00, 0xBC00,
            0x3F80, 0x0001, 0x8001, 0x7FFF, 0xFFFF,
        ],
        4 => vec![
            0,
            0x8000_0000,
            0x7F80_0000,
            0xFF80_0000,
            0x7FC0_0001,
            0xFFC0_1234,
            0x3F80_0000,
            0xBF80_0000,
            1,
            0x8000_0001,
            0x7FFF_FFFF,
            0xFFFF_FFFF,
        ],
        _ => vec![
            0,
            0x8000_0000_0000_0000,
            0x7FF0_0000_0000_0000,
            0xFFF0_0000_0000_0000,
            0x7FF8_0000_0000_0001,
            0xFFF8_0000_0000_0007,
            0x3FF0_0000_0000_0000,
            0xBFF0_0000_0000_0000,
            1,
            0x8000_0000_0000_0001,
            0x7FFF_FFFF_FFFF_FFFF,
            u64::MAX,
        ],
    };
    words
        .iter()
        .flat_map(|w| w.to_le_bytes()[..size].to_vec())
        .collect()
}

/// A tensor of `shape` and ONNX type `elem`: the special patterns first, then noise.
fn tensor(elem: i32, shape: Vec<usize>, seed: u64) -> Tensor {
    let t = dtype::from_onnx(elem).expect("a type ewise holds");
    let size = t.size_in_bytes().expect("a sized type") as usize;
    let len = shape.iter().product::<usize>() * size;
    let mut data = specials(size);
    data.truncate(len);
    data.extend(noise(len - data.len(), seed));
    Tensor::new(t, shape, data).expect("a consistent tensor")
}

/// The ONNX types Sign-13 accepts.
const SIGN_TYPES: [i32; 12] = [
    FLOAT, UINT8, INT8, UINT16, INT16, INT32, INT64, FLOAT16, DOUBLE, UINT32, UINT64, BFLOAT16,
];

/// The ONNX types IsInf-20 accepts.
const IS_INF_TYPES: [i32; 8] = [
    FLOAT,
    DOUBLE,
    FLOAT16,
    BFLOAT16,
    FLOAT8E4M3FN,
    FLOAT8E4M3FNUZ,
    FLOAT8E5M2,
    FLOAT8E5M2FNUZ,
];

#[test]
fn branches_and_fan_out_match_the_cpu_with_the_same_stats() {
    let Some(device) = gpu() else { return };
    let model = load(&branching()).unwrap();
    for n in [0, 1, 5, 12, 1001] {
        let (_, stats) = same_on(device, &model, &[("x", tensor(FLOAT, vec![n], 1))]).unwrap();
        assert_eq!((stats.steps, stats.in_place), (5, 1));
    }
}

#[test]
fn a_chain_of_signs_runs_in_place_on_the_gpu() {
    let Some(device) = gpu() else { return };
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
    for n in [1, 3, 64, 333] {
        let (out, stats) = same_on(device, &model, &[("v0", tensor(INT16, vec![n], 2))]).unwrap();
        assert_eq!((stats.in_place, stats.allocated, stats.reused), (6, 0, 0));
        assert_eq!(out[0].1.shape, [n]);
    }
}

#[test]
fn freed_buffers_are_reused_as_on_the_cpu() {
    let Some(device) = gpu() else { return };
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
    let (_, stats) = same_on(
        device,
        &load(&m).unwrap(),
        &[("x", tensor(DOUBLE, vec![4], 3))],
    )
    .unwrap();
    assert_eq!((stats.in_place, stats.allocated, stats.reused), (1, 2, 0));

    // x -> Sign -> s (x still needed); x -> IsInf -> b frees x; s -> IsInf -> c reuses it.
    let m = model(
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
    );
    let (_, stats) = same_on(
        device,
        &load(&m).unwrap(),
        &[("x", tensor(FLOAT, vec![2], 4))],
    )
    .unwrap();
    assert_eq!((stats.allocated, stats.reused), (2, 1));

    // Two inputs of different sizes: a freed buffer too small for a later output is not
    // reused, even where the GPU's 4-byte rounding would make it fit.
    let m = model(
        20,
        graph(
            vec![
                is_inf("h", "hb", None, None),
                node("Sign", "f", "fs"),
                node("Sign", "fs", "ft"),
            ],
            vec![value("h", FLOAT16, None), value("f", FLOAT, None)],
            vec![
                value("hb", BOOL, None),
                value("fs", FLOAT, None),
                value("ft", FLOAT, None),
            ],
        ),
    );
    let model = load(&m).unwrap();
    for (h, f) in [(3, 2), (4, 2), (1, 1), (5, 3)] {
        same_on(
            device,
            &model,
            &[
                ("h", tensor(FLOAT16, vec![h], 5)),
                ("f", tensor(FLOAT, vec![f], 6)),
            ],
        )
        .unwrap();
    }
}

#[test]
fn every_type_and_both_nan_policies_match_the_cpu_bit_for_bit() {
    let Some(device) = gpu() else { return };
    for elem in SIGN_TYPES {
        // x -> Sign -> a in place (x is not needed afterwards); a is an output, so
        // a -> Sign -> b copies; b -> Sign -> c in place.
        let m = model(
            13,
            graph(
                vec![
                    node("Sign", "x", "a"),
                    node("Sign", "a", "b"),
                    node("Sign", "b", "c"),
                ],
                vec![value("x", elem, None)],
                vec![value("a", elem, None), value("c", elem, None)],
            ),
        );
        let model = load(&m).unwrap();
        for policy in [NanPolicy::Propagate, NanPolicy::Zero] {
            let model = model.clone().with_nan_policy(policy);
            for n in [1, 2, 3, 5, 7, 300] {
                let (_, stats) =
                    same_on(device, &model, &[("x", tensor(elem, vec![n], n as u64))]).unwrap();
                assert_eq!((stats.steps, stats.in_place), (3, 2), "{elem}");
            }
        }
    }
    for elem in IS_INF_TYPES {
        for (pos, neg) in [
            (None, None),
            (Some(1), Some(0)),
            (Some(0), Some(1)),
            (Some(0), Some(0)),
        ] {
            let m = model(
                20,
                graph(
                    vec![is_inf("x", "y", pos, neg)],
                    vec![value("x", elem, None)],
                    vec![value("y", BOOL, None)],
                ),
            );
            let model = load(&m).unwrap();
            for n in [1, 3, 6, 257, 300] {
                same_on(device, &model, &[("x", tensor(elem, vec![n], 7))]).unwrap();
            }
        }
    }
}

#[test]
fn nan_payloads_survive_propagate_and_become_zero_under_zero() {
    let Some(device) = gpu() else { return };
    let model = load(&single(13, node("Sign", "x", "y"), FLOAT, FLOAT)).unwrap();
    let x = Tensor::from_values(
        vec![4],
        &[
            f32::from_bits(0x7FC0_0001),
            f32::from_bits(0xFF80_0001),
            -0.0,
            -3.0,
        ],
    )
    .unwrap();
    let bits = |policy| -> Vec<u32> {
        let out = model
            .clone()
            .with_nan_policy(policy)
            .with_gpu(device.clone())
            .run([("x", x.clone())])
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
        bits(NanPolicy::Propagate),
        [0x7FC0_0001, 0xFF80_0001, 0, 0xBF80_0000]
    );
    assert_eq!(bits(NanPolicy::Zero), [0, 0, 0, 0xBF80_0000]);
}

#[test]
fn scalars_empty_and_many_dimensional_tensors_run() {
    let Some(device) = gpu() else { return };
    let is_inf = load(&single(20, node("IsInf", "x", "y"), FLOAT, BOOL)).unwrap();
    let sign = load(&single(13, node("Sign", "x", "y"), INT8, INT8)).unwrap();
    let chain = load(&model(
        13,
        graph(
            vec![node("Sign", "x", "s"), node("Sign", "s", "y")],
            vec![value("x", UINT16, None)],
            vec![value("s", UINT16, None), value("y", UINT16, None)],
        ),
    ))
    .unwrap();
    let out = same_on(device, &is_inf, &[("x", Tensor::scalar(f32::NEG_INFINITY))]).unwrap();
    assert_eq!(out.0[0].1.values::<bool>().unwrap(), [true]);
    let shapes = [
        vec![],
        vec![0],
        vec![3, 0, 2],
        vec![0; 9],
        vec![2, 1, 2, 1, 2, 1, 2, 1, 2],
        vec![1; 65],
        vec![1; 70],
        [vec![3], vec![1; 68], vec![2]].concat(),
    ];
    for shape in shapes {
        same_on(device, &is_inf, &[("x", tensor(FLOAT, shape.clone(), 8))]).unwrap();
        same_on(device, &sign, &[("x", tensor(INT8, shape.clone(), 9))]).unwrap();
        let (out, _) =
            same_on(device, &chain, &[("x", tensor(UINT16, shape.clone(), 10))]).unwrap();
        assert_eq!(out[1].1.shape, shape);
    }
}

#[test]
fn dim_params_and_bad_inputs_give_the_cpu_errors_before_the_gpu_is_used() {
    let Some(device) = gpu() else { return };
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
    let t = |shape: Vec<usize>| tensor(FLOAT, shape, 11);
    for n in [0, 1, 5] {
        same_on(device, &model, &[("x", t(vec![n, 2])), ("z", t(vec![n]))]).unwrap();
    }
    let bad: [&[(&str, Tensor)]; 6] = [
        &[("x", t(vec![3, 2])), ("z", t(vec![4]))],
        &[("x", t(vec![3, 3])), ("z", t(vec![3]))],
        &[("x", t(vec![3, 2]))],
        &[("x", t(vec![3, 2])), ("z", t(vec![3])), ("q", t(vec![1]))],
        &[("x", t(vec![3, 2])), ("x", t(vec![3, 2]))],
        &[("x", t(vec![3, 2])), ("z", tensor(INT32, vec![3], 12))],
    ];
    for inputs in bad {
        assert!(same_on(device, &model, inputs).is_err());
    }
    let broken = Tensor {
        data_type: DataType::Float32,
        shape: vec![2],
        data: vec![0; 5],
    };
    let err = same_on(device, &model, &[("x", broken), ("z", t(vec![1]))]).unwrap_err();
    assert!(matches!(err, Error::InvalidTensor { .. }), "{err}");
}

#[test]
fn outputs_that_are_inputs_initializers_or_defaults_come_back_unchanged() {
    let Some(device) = gpu() else { return };
    let mut g = graph(
        vec![
            node("Sign", "x", "y"),
            node("Sign", "k", "ks"),
            node("Sign", "d", "ds"),
        ],
        vec![value("x", UINT8, None), value("d", INT32, None)],
        vec![
            value("x", UINT8, None),
            value("y", UINT8, None),
            value("k", UINT16, None),
            value("ks", UINT16, None),
            value("d", INT32, None),
            value("ds", INT32, None),
        ],
    );
    g.initializer
        .push(raw_tensor("k", UINT16, &[3], vec![5, 0, 0, 0, 0, 0x80]));
    g.initializer.push(raw_tensor(
        "d",
        INT32,
        &[2],
        [-9i32, 4].iter().flat_map(|v| v.to_le_bytes()).collect(),
    ));
    let outputs = load(&model(13, g)).unwrap();
    let x = Tensor::from_values(vec![3], &[0u8, 7, 255]).unwrap();
    let (out, _) = same_on(device, &outputs, &[("x", x.clone())]).unwrap();
    assert_eq!(out[0].1, x);
    assert_eq!(out[3].1.values::<u16>().unwrap(), [1, 0, 1]);
    assert_eq!(out[5].1.values::<i32>().unwrap(), [-1, 1]);
    let d = Tensor::from_values(vec![3], &[0i32, -5, 6]).unwrap();
    let (out, _) = same_on(device, &outputs, &[("x", x), ("d", d.clone())]).unwrap();
    assert_eq!(out[4].1, d);
    assert_eq!(out[5].1.values::<i32>().unwrap(), [0, -1, 1]);

    // A default read by an in-place Sign is copied, never overwritten: runs repeat.
    let mut g = graph(
        vec![node("Sign", "w", "s")],
        vec![value("w", INT64, None)],
        vec![value("s", INT64, None)],
    );
    g.initializer
        .push(raw_tensor("w", INT64, &[1], (-4i64).to_le_bytes().to_vec()));
    let defaulted = load(&model(13, g)).unwrap();
    for _ in 0..2 {
        let (out, stats) = same_on(device, &defaulted, &[]).unwrap();
        assert_eq!(out[0].1.values::<i64>().unwrap(), [-1]);
        assert_eq!((stats.in_place, stats.allocated), (0, 1));
    }
}

fn python_case(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/python")
        .join(name)
}

#[test]
fn python_written_cases_pass_on_the_gpu() {
    let Some(device) = gpu() else { return };
    for (name, sets) in [
        ("typed_initializers", 1),
        ("external_data", 1),
        ("dim_param_chain", 2),
        ("float8_all_patterns", 1),
    ] {
        let outcome = run_case_on(&python_case(name), NanPolicy::Propagate, Some(device));
        assert!(outcome.passed(), "{outcome}");
        assert_eq!(outcome.passed_data_sets, sets, "{outcome}");
        let on_cpu = run_case_on(&python_case(name), NanPolicy::Propagate, None);
        assert_eq!(on_cpu, outcome);
    }
    let outcome = run_case_on(
        &python_case("typed_initializers"),
        NanPolicy::Zero,
        Some(device),
    );
    assert!(
        outcome.to_string().starts_with(
            "FAIL typed_initializers: test_data_set_0: output \"y_f16\": element 2 is 0x0000, expected 0x7E01"
        ),
        "{outcome}"
    );
}

#[test]
fn a_device_without_extensions_is_refused_with_a_typed_error() {
    if gpu().is_none() {
        return;
    }
    let Some(strict) = try_device(GpuDevice::builder()) else {
        return;
    };
    let model = load(&single(13, node("Sign", "x", "y"), FLOAT, FLOAT))
        .unwrap()
        .with_gpu(strict);
    assert!(model.gpu().is_some());
    let err = model
        .run([("x", Tensor::from_values(vec![2], &[1.0f32, -2.0]).unwrap())])
        .unwrap_err();
    assert!(matches!(err, Error::UnsuitableGpu { .. }), "{err}");
    assert!(err.to_string().contains("Extensions::Enabled"), "{err}");
    // Input checks come first, as on the CPU.
    let err = model.run([("y", Tensor::scalar(1.0f32))]).unwrap_err();
    assert!(matches!(err, Error::UnknownInput { .. }), "{err}");
}

#[test]
fn a_lost_device_is_a_gpu_error_naming_what_failed_not_a_panic() {
    if gpu().is_none() {
        return;
    }
    let Some(lost) = try_device(GpuDevice::builder().extensions(Extensions::Enabled)) else {
        return;
    };
    lost.wgpu_device().destroy();
    let model = load(&model(
        13,
        graph(
            vec![node("Sign", "x", "s"), node("Sign", "s", "y")],
            vec![value("x", FLOAT, None)],
            vec![value("y", FLOAT, None)],
        ),
    ))
    .unwrap()
    .with_gpu(lost);
    let err = model
        .run([(
            "x",
            Tensor::from_values(vec![3], &[1.0f32, -2.0, 0.0]).unwrap(),
        )])
        .unwrap_err();
    eprintln!("a lost device gives: {err}");
    assert!(matches!(err, Error::Gpu { .. }), "{err}");
    assert!(err.to_string().contains("GPU failure"), "{err}");
}

/// One node of a generated graph: Sign or IsInf (with detect flags), reading `x` or the
/// output of an earlier Sign.
#[derive(Debug, Clone)]
struct GenNode {
    is_inf: Option<(i64, i64)>,
    source: usize,
}

/// A generated graph: `x` of type `elem`, the nodes, and which values are outputs.
fn generated(elem: i32, nodes: &[GenNode], outputs: u32) -> ModelProto {
    let sign_ok = SIGN_TYPES.contains(&elem);
    let inf_ok = IS_INF_TYPES.contains(&elem);
    let mut readable = vec!["x".to_string()];
    let mut made = Vec::new();
    let mut protos = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        let input = readable[n.source % readable.len()].clone();
        let output = format!("v{i}");
        match n.is_inf {
            Some((pos, neg)) if inf_ok => {
                protos.push(is_inf(&input, &output, Some(pos), Some(neg)))
            }
            _ if sign_ok => {
                protos.push(node("Sign", &input, &output));
                readable.push(output.clone());
            }
            _ => protos.push(is_inf(&input, &output, None, None)),
        }
        made.push(output);
    }
    let mut outs: Vec<_> = ["x".to_string()]
        .iter()
        .chain(&made)
        .enumerate()
        .filter(|(i, _)| (outputs >> i) & 1 == 1)
        .map(|(_, name)| value(name, 0, None))
        .collect();
    if outs.is_empty() {
        outs.push(value(made.last().map_or("x", |s| s.as_str()), 0, None));
    }
    model(20, graph(protos, vec![value("x", elem, None)], outs))
}

fn gen_node() -> impl Strategy<Value = GenNode> {
    (prop::option::of((0i64..2, 0i64..2)), 0usize..8)
        .prop_map(|(is_inf, source)| GenNode { is_inf, source })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn generated_graphs_match_the_cpu(
        elem in prop::sample::select(vec![
            FLOAT, UINT8, INT8, UINT16, INT16, INT32, INT64, FLOAT16, DOUBLE, UINT32, UINT64,
            BFLOAT16, FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ,
        ]),
        nodes in prop::collection::vec(gen_node(), 1..6),
        outputs in 0u32..128,
        shape in prop::collection::vec(0usize..6, 0..4),
        zero in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let Some(device) = gpu() else { return Ok(()) };
        let policy = if zero { NanPolicy::Zero } else { NanPolicy::Propagate };
        let model = load(&generated(elem, &nodes, outputs)).unwrap().with_nan_policy(policy);
        same_on(device, &model, &[("x", tensor(elem, shape, seed))]).unwrap();
    }
}

/// More elements than one kernel call is given for a shape that cannot be described as
/// it is (65 dimensions): the run is split into 1-d chunks bound at their offsets. Needs
/// about 8 GiB of memory, so it runs only when asked for (`--ignored`).
#[test]
#[ignore = "needs about 8 GiB of memory and a minute on lavapipe"]
fn chunked_runs_of_more_than_a_gibi_element_match_the_cpu() {
    let Some(device) = gpu() else { return };
    let shape = [vec![1; 64], vec![(1 << 30) + 3]].concat();
    let x = tensor(INT8, shape, 13);
    for outputs in [
        vec![value("y", INT8, None)],
        vec![value("y", INT8, None), value("x", INT8, None)],
    ] {
        let m = model(
            13,
            graph(
                vec![node("Sign", "x", "y")],
                vec![value("x", INT8, None)],
                outputs,
            ),
        );
        same_on(device, &load(&m).unwrap(), &[("x", x.clone())]).unwrap();
    }
}

#[test]
fn external_data_left_in_its_file_runs_as_data_read_by_the_load() {
    let Some(device) = gpu() else { return };
    let dir = tempfile::tempdir().unwrap();
    let n = 1000;
    std::fs::write(dir.path().join("w.bin"), specials(4).repeat(n / 10 + 1)).unwrap();
    let entry = |key: &str, value: String| ewise_onnx::proto::StringStringEntryProto {
        key: key.into(),
        value,
    };
    let w = ewise_onnx::proto::TensorProto {
        name: "w".into(),
        data_type: FLOAT,
        dims: vec![n as i64],
        data_location: ewise_onnx::proto::DataLocation::External as i32,
        external_data: vec![
            entry("location", "w.bin".into()),
            entry("offset", "4".into()),
        ],
        ..Default::default()
    };
    let mut g = graph(
        vec![
            node("Sign", "w", "s"),
            node("Sign", "s", "y"),
            node("IsInf", "w", "z"),
        ],
        vec![],
        vec![
            value("y", FLOAT, None),
            value("z", BOOL, None),
            value("w", FLOAT, None),
        ],
    );
    g.initializer.push(w);
    let path = dir.path().join("model.onnx");
    std::fs::write(
        &path,
        ewise_onnx::proto::Message::encode_to_vec(&model(20, g)),
    )
    .unwrap();
    let read = Model::load(&path).unwrap();
    let deferred = Model::load_with(&path, ewise_onnx::ExternalData::Deferred).unwrap();
    let expected = read.run_with_stats(Vec::<(String, Tensor)>::new()).unwrap();
    assert_eq!(same_on(device, &deferred, &[]).unwrap(), expected);
}
