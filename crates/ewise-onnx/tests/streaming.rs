//! Chunked execution ([`Streaming`]): the plan's sources and outputs, bit-exact
//! agreement with [`Model::run`] on whole tensors for every chunk length, type, NaN
//! policy and graph form (chains, fan-out, several inputs, outputs that are inputs or
//! initializers, initializer sources, input defaults, `dim_param` shapes, scalars and
//! empty tensors), chunk-sized scratch memory, and the errors of bad plans and chunks.

mod common;

use common::*;
use ewise_onnx::proto::ModelProto;
use ewise_onnx::{
    dtype, DataType, Error, Model, NanPolicy, Scratch, SourceKind, Streaming, Tensor,
};

const CHUNKS: [usize; 3] = [1, 7, 4096];

/// Deterministic bytes covering every bit pattern of small types (NaNs, infinities,
/// zeros of both signs, subnormals included).
fn bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

fn tensor(data_type: DataType, shape: &[usize], seed: u64) -> Tensor {
    let size = data_type.size_in_bytes().unwrap() as usize;
    let len = size * shape.iter().product::<usize>();
    Tensor::new(data_type, shape.to_vec(), bytes(len, seed)).unwrap()
}

/// Every graph output computed chunk by chunk, `chunk` elements at a time, from the
/// given inputs and the model's initializer bytes, with one scratch for all sources.
fn streamed(
    streaming: &Streaming,
    inputs: &[(&str, Tensor)],
    chunk: usize,
    scratch: &mut Scratch,
) -> Vec<(String, Tensor)> {
    let mut results: Vec<Vec<u8>> = streaming
        .outputs()
        .iter()
        .map(|o| vec![0xA5; o.elements * o.data_type.size_in_bytes().unwrap() as usize])
        .collect();
    let mut seen = vec![0; results.len()];
    for (s, source) in streaming.sources().iter().enumerate() {
        let data = match source.kind {
            SourceKind::Input => {
                assert_eq!(streaming.initializer_bytes(s), None);
                let (_, t) = inputs.iter().find(|(n, _)| *n == source.name).unwrap();
                assert_eq!((t.data_type, &t.shape), (source.data_type, &source.shape));
                t.data.as_slice()
            }
            _ => streaming.initializer_bytes(s).unwrap(),
        };
        let size = source.data_type.size_in_bytes().unwrap() as usize;
        assert_eq!(data.len(), source.elements * size);
        let mine = streaming.outputs_of(s);
        for &o in mine {
            assert_eq!(streaming.outputs()[o].source, s);
            seen[o] += 1;
        }
        let sizes: Vec<usize> = mine
            .iter()
            .map(|&o| streaming.outputs()[o].data_type.size_in_bytes().unwrap() as usize)
            .collect();
        let mut slices: Vec<&mut [u8]> = results
            .iter_mut()
            .enumerate()
            .filter(|(o, _)| mine.contains(o))
            .map(|(_, r)| r.as_mut_slice())
            .collect();
        let mut start = 0;
        while start < source.elements {
            let end = (start + chunk).min(source.elements);
            let mut outs: Vec<&mut [u8]> = slices
                .iter_mut()
                .zip(&sizes)
                .map(|(r, &z)| &mut r[start * z..end * z])
                .collect();
            streaming
                .run_chunk(s, &data[start * size..end * size], &mut outs, scratch)
                .unwrap();
            start = end;
        }
        let mut empty: Vec<&mut [u8]> = mine.iter().map(|_| &mut [][..]).collect();
        streaming.run_chunk(s, &[], &mut empty, scratch).unwrap();
    }
    assert!(seen.iter().all(|&n| n == 1), "{seen:?}");
    streaming
        .outputs()
        .iter()
        .zip(results)
        .map(|(o, data)| {
            let t = Tensor::new(o.data_type, o.shape.clone(), data).unwrap();
            (o.name.clone(), t)
        })
        .collect()
}

/// Elements from one slice, results into one vector per output.
#[cfg(feature = "gpu")]
struct Ends<'a> {
    input: &'a [u8],
    size: usize,
    outputs: Vec<Vec<u8>>,
}

#[cfg(feature = "gpu")]
impl ewise_gpu::stream::ChunkEnds for Ends<'_> {
    type Error = ewise_gpu::GpuError;

    fn read(&mut self, start: u64, bytes: &mut [u8]) -> Result<(), Self::Error> {
        let at = start as usize * self.size;
        bytes.copy_from_slice(&self.input[at..at + bytes.len()]);
        Ok(())
    }

    fn write(&mut self, _: u64, outputs: &[&[u8]]) -> Result<(), Self::Error> {
        assert_eq!(outputs.len(), self.outputs.len());
        for (all, chunk) in self.outputs.iter_mut().zip(outputs) {
            all.extend_from_slice(chunk);
        }
        Ok(())
    }

    fn stop_before(&mut self, _: u64) -> Result<bool, Self::Error> {
        Ok(false)
    }
}

/// Every graph output computed on the GPU, each source through its own
/// [`Streaming::gpu_stream`] in chunks of `chunk_bytes`; `None` without a GPU.
#[cfg(feature = "gpu")]
fn gpu_streamed(
    streaming: &Streaming,
    inputs: &[(&str, Tensor)],
    chunk_bytes: usize,
) -> Option<Vec<(String, Tensor)>> {
    let device = common::gpu::gpu()?;
    let mut results: Vec<Option<Vec<u8>>> = streaming.outputs().iter().map(|_| None).collect();
    for (s, source) in streaming.sources().iter().enumerate() {
        let data = match source.kind {
            SourceKind::Input => inputs
                .iter()
                .find(|(n, _)| *n == source.name)
                .unwrap()
                .1
                .data
                .as_slice(),
            _ => streaming.initializer_bytes(s).unwrap(),
        };
        let mut stream = streaming.gpu_stream(s, device, chunk_bytes).unwrap();
        let mine = streaming.outputs_of(s);
        let mut ends = Ends {
            input: data,
            size: source.data_type.size_in_bytes().unwrap() as usize,
            outputs: mine.iter().map(|_| Vec::new()).collect(),
        };
        let written = stream.run(source.elements as u64, &mut ends).unwrap();
        assert_eq!(written, source.elements as u64);
        for (&o, bytes) in mine.iter().zip(ends.outputs) {
            results[o] = Some(bytes);
        }
    }
    Some(
        streaming
            .outputs()
            .iter()
            .zip(results)
            .map(|(o, data)| {
                let t = Tensor::new(o.data_type, o.shape.clone(), data.unwrap()).unwrap();
                (o.name.clone(), t)
            })
            .collect(),
    )
}

/// Runs `model` whole and chunk by chunk at every length of [`CHUNKS`] (with a fresh
/// scratch and with one shared across lengths), and with the `gpu` feature through
/// GPU streams in chunks of 7 elements and of the default size, and requires the same
/// outputs, bit for bit; returns the plan.
fn agrees(model: &Model, inputs: &[(&str, Tensor)]) -> Streaming {
    let whole = model.run(inputs.iter().cloned()).unwrap();
    let descs: Vec<(&str, DataType, &[usize])> = inputs
        .iter()
        .map(|(n, t)| (*n, t.data_type, t.shape.as_slice()))
        .collect();
    let streaming = model.streaming(&descs).unwrap();
    let names: Vec<&str> = streaming
        .outputs()
        .iter()
        .map(|o| o.name.as_str())
        .collect();
    let expected: Vec<&str> = model.outputs().iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, expected);
    let mut shared = Scratch::new();
    for chunk in CHUNKS {
        for scratch in [&mut Scratch::new(), &mut shared] {
            let got = streamed(&streaming, inputs, chunk, scratch);
            assert_eq!(got, whole, "chunks of {chunk}");
        }
    }
    #[cfg(feature = "gpu")]
    for elements in [7, usize::MAX] {
        let widest = streaming
            .sources()
            .iter()
            .map(|s| s.data_type.size_in_bytes().unwrap() as usize);
        let chunk_bytes = elements.saturating_mul(widest.max().unwrap_or(1));
        if let Some(got) = gpu_streamed(
            &streaming,
            inputs,
            chunk_bytes.min(ewise_gpu::stream::DEFAULT_CHUNK_BYTES),
        ) {
            assert_eq!(got, whole, "GPU streams, {elements} elements per chunk");
        }
    }
    streaming
}

fn elem(data_type: DataType) -> i32 {
    dtype::to_onnx(data_type).unwrap()
}

const SIGN_TYPES: [DataType; 12] = [
    DataType::Float16,
    DataType::Float32,
    DataType::Float64,
    DataType::Bfloat16,
    DataType::Int8,
    DataType::Int16,
    DataType::Int32,
    DataType::Int64,
    DataType::Uint8,
    DataType::Uint16,
    DataType::Uint32,
    DataType::Uint64,
];

const IS_INF_TYPES: [DataType; 8] = [
    DataType::Float32,
    DataType::Float64,
    DataType::Float16,
    DataType::Bfloat16,
    DataType::Float8E4M3Fn,
    DataType::Float8E4M3Fnuz,
    DataType::Float8E5M2,
    DataType::Float8E5M2Fnuz,
];

/// x -> Sign -> s -> Sign -> t, x -> Sign -> u (outputs s, t, u): Sign after Sign, fan-out.
fn sign_graph(t: i32) -> ModelProto {
    model(
        20,
        graph(
            vec![
                node("Sign", "x", "s"),
                node("Sign", "s", "t"),
                node("Sign", "x", "u"),
            ],
            vec![value("x", t, Some(&[D::P("N")]))],
            vec![
                value("s", t, None),
                value("t", t, None),
                value("u", t, None),
            ],
        ),
    )
}

/// For IsInf's types: x -> IsInf(each mode) -> i0..i3 and, where Sign takes the type,
/// x -> Sign -> s -> IsInf -> a (IsInf after Sign; Sign or IsInf after IsInf is refused
/// at load: IsInf gives bool, which neither accepts).
fn is_inf_graph(data_type: DataType) -> ModelProto {
    let t = elem(data_type);
    let mut nodes = vec![
        is_inf("x", "i0", None, None),
        is_inf("x", "i1", Some(1), Some(0)),
        is_inf("x", "i2", Some(0), Some(1)),
        is_inf("x", "i3", Some(0), Some(0)),
    ];
    let mut outputs: Vec<_> = (0..4)
        .map(|i| value(&format!("i{i}"), BOOL, None))
        .collect();
    if SIGN_TYPES.contains(&data_type) {
        nodes.push(node("Sign", "x", "s"));
        nodes.push(is_inf("s", "a", Some(1), Some(1)));
        outputs.push(value("a", BOOL, None));
    }
    model(
        20,
        graph(nodes, vec![value("x", t, Some(&[D::Unknown]))], outputs),
    )
}

#[test]
fn every_sign_type_agrees_with_whole_runs_under_both_nan_policies() {
    for data_type in SIGN_TYPES {
        let base = load(&sign_graph(elem(data_type))).unwrap();
        for policy in [NanPolicy::Propagate, NanPolicy::Zero] {
            let model = base.clone().with_nan_policy(policy);
            let x = tensor(data_type, &[5000], 1);
            let streaming = agrees(&model, &[("x", x)]);
            assert_eq!(streaming.outputs_of(0), [0, 1, 2]);
            assert!(streaming.outputs().iter().all(|o| !o.unchanged));
        }
    }
}

#[test]
fn every_is_inf_type_and_mode_agrees_with_whole_runs() {
    for data_type in IS_INF_TYPES {
        let base = load(&is_inf_graph(data_type)).unwrap();
        for policy in [NanPolicy::Propagate, NanPolicy::Zero] {
            let model = base.clone().with_nan_policy(policy);
            let x = tensor(data_type, &[4500], 2);
            let streaming = agrees(&model, &[("x", x)]);
            assert!(streaming
                .outputs()
                .iter()
                .all(|o| o.data_type == DataType::Bool && o.source == 0));
        }
    }
    let opset_10 = load(&single(10, is_inf("x", "y", Some(0), None), DOUBLE, BOOL)).unwrap();
    agrees(&opset_10, &[("x", tensor(DataType::Float64, &[3, 700], 3))]);
}

#[test]
fn a_chain_of_signs_streams_through_one_scratch_buffer() {
    let nodes = (0..6)
        .map(|i| node("Sign", &format!("v{i}"), &format!("v{}", i + 1)))
        .collect();
    let m = model(
        13,
        graph(
            nodes,
            vec![value("v0", DOUBLE, None)],
            vec![value("v6", DOUBLE, None)],
        ),
    );
    let model = load(&m).unwrap();
    let streaming = agrees(&model, &[("v0", tensor(DataType::Float64, &[9000], 4))]);
    // v1 is copied out of the caller's read-only chunk, v2..v5 overwrite it, v6 is
    // written into the output slice.
    assert_eq!(streaming.scratch_bytes(4096), 4096 * 8);
}

#[test]
fn fan_out_with_sign_in_place_and_dim_params() {
    let model = load(&branching()).unwrap();
    let x = tensor(DataType::Float32, &[6001], 5);
    let streaming = agrees(&model, &[("x", x)]);
    assert_eq!(streaming.sources().len(), 1);
    assert_eq!(streaming.outputs_of(0), [0, 1, 2, 3]);
    // s is alive in scratch until sign_s overwrites it with t, which is an output:
    // one float32 buffer at most.
    assert!(streaming.scratch_bytes(100) <= 100 * 4, "{streaming:?}");
}

#[test]
fn outputs_feeding_further_nodes_are_read_back_from_the_caller_s_slices() {
    let m = model(
        20,
        graph(
            vec![
                node("Sign", "x", "a"),
                node("Sign", "a", "b"),
                is_inf("b", "c", None, None),
                node("Sign", "b", "d"),
                is_inf("d", "e", Some(0), None),
            ],
            vec![value("x", FLOAT16, None)],
            vec![
                value("a", FLOAT16, None),
                value("b", FLOAT16, None),
                value("c", BOOL, None),
                value("e", BOOL, None),
            ],
        ),
    );
    let model = load(&m).unwrap();
    let streaming = agrees(&model, &[("x", tensor(DataType::Float16, &[4097], 6))]);
    assert_eq!(
        streaming.scratch_bytes(10),
        10 * 2,
        "only d is intermediate"
    );
}

#[test]
fn independent_inputs_stream_separately() {
    let m = model(
        20,
        graph(
            vec![
                node("Sign", "x", "y"),
                is_inf("z", "w", None, Some(0)),
                node("Sign", "z", "v"),
            ],
            vec![
                value("x", INT32, Some(&[D::P("N"), D::V(3)])),
                value("z", BFLOAT16, Some(&[D::P("M")])),
                value("unused", INT8, Some(&[D::P("N")])),
            ],
            vec![
                value("w", BOOL, None),
                value("y", INT32, Some(&[D::P("N"), D::V(3)])),
                value("v", BFLOAT16, None),
            ],
        ),
    );
    let model = load(&m).unwrap();
    let inputs = [
        ("x", tensor(DataType::Int32, &[1500, 3], 7)),
        ("z", tensor(DataType::Bfloat16, &[5003], 8)),
        ("unused", tensor(DataType::Int8, &[1500], 9)),
    ];
    let streaming = agrees(&model, &inputs);
    let names: Vec<&str> = streaming
        .sources()
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, ["x", "z"], "unused feeds no output");
    assert_eq!(streaming.outputs_of(0), [1]);
    assert_eq!(streaming.outputs_of(1), [0, 2]);
    assert_eq!(streaming.sources()[0].shape, [1500, 3]);
    assert_eq!(streaming.sources()[0].elements, 4500);
    assert_eq!(streaming.outputs()[1].shape, [1500, 3]);
    assert_eq!(streaming.scratch_bytes(4096), 0);
}

#[test]
fn inputs_initializers_and_defaults_as_sources_and_as_outputs() {
    let mut g = graph(
        vec![
            node("Sign", "x", "y"),
            node("Sign", "k", "ks"),
            is_inf("d", "di", None, None),
        ],
        vec![value("x", UINT8, None), value("d", FLOAT, None)],
        vec![
            value("x", UINT8, None),
            value("y", UINT8, None),
            value("k", INT64, None),
            value("ks", INT64, None),
            value("d", FLOAT, None),
            value("di", BOOL, None),
            value("c", UINT16, None),
        ],
    );
    let k: Vec<u8> = [-5i64, 0, 7, i64::MIN, i64::MAX]
        .iter()
        .cycle()
        .take(2000)
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    g.initializer
        .push(raw_tensor("k", INT64, &[2000], k.clone()));
    let d = bytes(4 * 3000, 10);
    g.initializer
        .push(raw_tensor("d", FLOAT, &[3000], d.clone()));
    g.initializer.push(raw_tensor(
        "c",
        UINT16,
        &[2, 2],
        vec![1, 2, 3, 4, 5, 6, 7, 8],
    ));
    let model = load(&model(13, g)).unwrap();

    let x = tensor(DataType::Uint8, &[4100], 11);
    let streaming = agrees(&model, &[("x", x)]);
    let plan: Vec<(&str, SourceKind, usize)> = streaming
        .sources()
        .iter()
        .map(|s| (s.name.as_str(), s.kind, s.elements))
        .collect();
    assert_eq!(
        plan,
        [
            ("x", SourceKind::Input, 4100),
            ("d", SourceKind::InputDefault, 3000),
            ("k", SourceKind::Initializer, 2000),
            ("c", SourceKind::Initializer, 4),
        ]
    );
    assert_eq!(streaming.initializer_bytes(1), Some(d.as_slice()));
    assert_eq!(streaming.initializer_bytes(2), Some(k.as_slice()));
    assert_eq!(streaming.initializer_bytes(4), None);
    let unchanged: Vec<&str> = streaming
        .outputs()
        .iter()
        .filter(|o| o.unchanged)
        .map(|o| o.name.as_str())
        .collect();
    assert_eq!(unchanged, ["x", "k", "d", "c"]);
    assert_eq!(streaming.outputs_of(0), [0, 1]);
    assert_eq!(streaming.outputs_of(1), [4, 5]);
    assert_eq!(streaming.outputs_of(2), [2, 3]);
    assert_eq!(streaming.outputs_of(3), [6]);
    assert_eq!(streaming.outputs_of(4), [0usize; 0]);

    let given_d = tensor(DataType::Float32, &[2, 50], 12);
    let streaming = agrees(
        &model,
        &[("d", given_d), ("x", tensor(DataType::Uint8, &[0], 13))],
    );
    assert_eq!(streaming.sources()[1].kind, SourceKind::Input);
    assert_eq!(streaming.sources()[1].shape, [2, 50]);
    assert_eq!(streaming.sources()[0].elements, 0);
}

#[test]
fn scalars_empty_and_high_rank_tensors() {
    let m = model(
        20,
        graph(
            vec![node("Sign", "x", "s"), is_inf("s", "y", None, None)],
            vec![value("x", DOUBLE, None)],
            vec![value("s", DOUBLE, None), value("y", BOOL, None)],
        ),
    );
    let model = load(&m).unwrap();
    let shapes: [&[usize]; 5] = [
        &[],
        &[0],
        &[4, 0, 2],
        &[1; 70],
        &[2, 1, 3, 1, 2, 1, 2, 1, 3],
    ];
    for shape in shapes {
        agrees(&model, &[("x", tensor(DataType::Float64, shape, 14))]);
    }
}

#[test]
fn input_checks_are_those_of_a_run() {
    let m = model(
        20,
        graph(
            vec![node("Sign", "x", "y"), node("Sign", "z", "w")],
            vec![
                value("x", FLOAT, Some(&[D::P("N"), D::V(2)])),
                value("z", FLOAT, Some(&[D::P("N")])),
            ],
            vec![value("y", FLOAT, None), value("w", FLOAT, None)],
        ),
    );
    let model = load(&m).unwrap();
    let cases: Vec<Vec<(&str, DataType, Vec<usize>)>> = vec![
        vec![("x", DataType::Float32, vec![3, 2])],
        vec![
            ("x", DataType::Float32, vec![3, 2]),
            ("z", DataType::Float32, vec![4]),
        ],
        vec![
            ("x", DataType::Float32, vec![3, 3]),
            ("z", DataType::Float32, vec![3]),
        ],
        vec![
            ("x", DataType::Float64, vec![3, 2]),
            ("z", DataType::Float32, vec![3]),
        ],
        vec![
            ("x", DataType::Float32, vec![3, 2]),
            ("x", DataType::Float32, vec![3, 2]),
        ],
        vec![("q", DataType::Float32, vec![1])],
    ];
    for case in cases {
        let descs: Vec<(&str, DataType, &[usize])> = case
            .iter()
            .map(|(n, t, s)| (*n, *t, s.as_slice()))
            .collect();
        let tensors: Vec<(&str, Tensor)> = case
            .iter()
            .map(|(n, t, s)| (*n, tensor(*t, s, 15)))
            .collect();
        let expected = model.run(tensors).unwrap_err().to_string();
        let got = model.streaming(&descs).unwrap_err().to_string();
        assert_eq!(got, expected);
    }
    let ok = model
        .streaming(&[
            ("z", DataType::Float32, &[3]),
            ("x", DataType::Float32, &[3, 2]),
        ])
        .unwrap();
    assert_eq!(ok.sources()[1].shape, [3]);
}

#[test]
fn chunks_that_do_not_fit_the_plan_are_refused_before_writing() {
    let model = load(&branching()).unwrap();
    let streaming = model.streaming(&[("x", DataType::Float32, &[8])]).unwrap();
    let mut scratch = Scratch::new();
    let input = [0u8; 8];
    let mut outs = [[7u8; 2], [7; 2], [7; 2], [7; 2]];
    let mut t = [7u8; 8];
    let invalid = |e: Error| match e {
        Error::InvalidChunk { reason } => reason,
        other => panic!("{other}"),
    };
    let [a, b, c, _] = &mut outs;
    let e = streaming
        .run_chunk(1, &input, &mut [a, b, c, &mut t], &mut scratch)
        .unwrap_err();
    assert!(invalid(e).contains("source index 1 is out of range"));
    let [a, b, c, _] = &mut outs;
    let e = streaming
        .run_chunk(0, &input[..7], &mut [a, b, c, &mut t], &mut scratch)
        .unwrap_err();
    assert!(invalid(e).contains("7 bytes of source \"x\" are not whole float elements"));
    let [a, b, c, _] = &mut outs;
    let e = streaming
        .run_chunk(0, &input, &mut [a, b, c], &mut scratch)
        .unwrap_err();
    assert!(invalid(e).contains("3 output slices given for source \"x\", which has 4"));
    let [a, b, c, _] = &mut outs;
    let e = streaming
        .run_chunk(0, &input, &mut [a, b, &mut c[..1], &mut t], &mut scratch)
        .unwrap_err();
    assert!(invalid(e).contains("output \"c\" holds 1 bytes, but 2 elements of bool need 2"));
    let [a, b, c, _] = &mut outs;
    let e = streaming
        .run_chunk(0, &input, &mut [a, b, c, &mut t[..7]], &mut scratch)
        .unwrap_err();
    assert!(invalid(e).contains("output \"t\" holds 7 bytes"));
    assert!(outs.iter().flatten().all(|&v| v == 7) && t == [7; 8]);
    let [a, b, c, _] = &mut outs;
    streaming
        .run_chunk(0, &input, &mut [a, b, c, &mut t], &mut scratch)
        .unwrap();
    assert_eq!(t, [0; 8]);
}

#[test]
fn scratch_memory_stays_chunk_sized() {
    let fan_out = load(&branching()).unwrap();
    let chunk = 4096;
    let mut capacities = Vec::new();
    for n in [10_000usize, 1 << 20] {
        let streaming = fan_out
            .streaming(&[("x", DataType::Float32, &[n])])
            .unwrap();
        let x = tensor(DataType::Float32, &[n], 16);
        let mut scratch = Scratch::new();
        let got = streamed(&streaming, &[("x", x.clone())], chunk, &mut scratch);
        assert_eq!(got, fan_out.run([("x", x)]).unwrap());
        assert!(scratch.capacity_bytes() > 0);
        assert!(scratch.capacity_bytes() <= streaming.scratch_bytes(chunk));
        // At most (values alive at once) x chunk x 8 bytes: s is the one intermediate.
        assert_eq!(streaming.scratch_bytes(chunk), chunk * 4);
        capacities.push(scratch.capacity_bytes());
    }
    assert_eq!(
        capacities[0], capacities[1],
        "independent of the input's size"
    );

    let nodes = (0..4)
        .map(|i| is_inf("x", &format!("b{i}"), Some(i % 2), None))
        .chain((0..4).map(|i| node("Sign", "x", &format!("s{i}"))))
        .collect();
    let outputs = (0..4)
        .map(|i| value(&format!("b{i}"), BOOL, None))
        .chain((0..4).map(|i| value(&format!("s{i}"), DOUBLE, None)))
        .collect();
    let wide = load(&model(
        20,
        graph(nodes, vec![value("x", DOUBLE, None)], outputs),
    ))
    .unwrap();
    let streaming = wide
        .streaming(&[("x", DataType::Float64, &[1 << 18])])
        .unwrap();
    assert_eq!(
        streaming.scratch_bytes(chunk),
        0,
        "every node writes an output"
    );
    let mut scratch = Scratch::new();
    streamed(
        &streaming,
        &[("x", tensor(DataType::Float64, &[1 << 18], 17))],
        chunk,
        &mut scratch,
    );
    assert_eq!(scratch.capacity_bytes(), 0);
}

#[test]
fn one_scratch_serves_several_plans_and_models() {
    let a = load(&sign_graph(INT16)).unwrap();
    let b = load(&is_inf_graph(DataType::Float32)).unwrap();
    let xa = tensor(DataType::Int16, &[300], 18);
    let xb = tensor(DataType::Float32, &[300], 19);
    let sa = a.streaming(&[("x", DataType::Int16, &[300])]).unwrap();
    let sb = b.streaming(&[("x", DataType::Float32, &[300])]).unwrap();
    let mut scratch = Scratch::new();
    for _ in 0..2 {
        for chunk in CHUNKS {
            let got = streamed(&sa, &[("x", xa.clone())], chunk, &mut scratch);
            assert_eq!(got, a.run([("x", xa.clone())]).unwrap());
            let got = streamed(&sb, &[("x", xb.clone())], chunk, &mut scratch);
            assert_eq!(got, b.run([("x", xb.clone())]).unwrap());
        }
    }
}

#[test]
fn plans_are_shareable_across_threads() {
    fn shareable<T: Send + Sync>() {}
    fn sendable<T: Send>() {}
    shareable::<Streaming>();
    sendable::<Scratch>();
}
