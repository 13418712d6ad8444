//! Tensor data in every form `TensorProto` allows: raw little-endian bytes, the typed
//! repeated fields, and external files; all decode to the same values.

mod common;

use std::path::Path;

use common::*;
use ewise_cpu::half::{bf16, f16};
use ewise_onnx::proto::{DataLocation, Message, StringStringEntryProto, TensorProto};
use ewise_onnx::{DataType, Error, Model, Tensor};

/// Sign of the initializer `w` (no graph inputs) at opset 13.
fn sign_of_initializer(w: TensorProto, elem: i32) -> ewise_onnx::proto::ModelProto {
    let mut g = graph(
        vec![node("Sign", "w", "y")],
        vec![],
        vec![value("y", elem, None)],
    );
    g.initializer.push(w);
    model(13, g)
}

fn run_initializer(w: TensorProto, elem: i32, dir: Option<&Path>) -> ewise_onnx::Result<Tensor> {
    let m = sign_of_initializer(w, elem);
    let model = Model::from_bytes(&m.encode_to_vec(), dir)?;
    Ok(model.run(Vec::<(String, Tensor)>::new())?.remove(0).1)
}

fn typed(data_type: i32, dims: &[i64]) -> TensorProto {
    TensorProto {
        name: "w".into(),
        data_type,
        dims: dims.to_vec(),
        ..Default::default()
    }
}

#[test]
fn raw_and_typed_fields_give_the_same_results_for_every_type() {
    let f = [-2.5f32, -0.0, 0.0, f32::from_bits(0x7FC0_0123)];
    let d = [-2.5f64, -0.0, 0.0, f64::from_bits(0xFFF8_0000_0000_0042)];
    let h = [-2.5f32, -0.0, 0.0, f32::INFINITY].map(f16::from_f32);
    let b = [-2.5f32, -0.0, 0.0, f32::NEG_INFINITY].map(bf16::from_f32);
    let mut cases: Vec<(i32, Vec<u8>, TensorProto)> = Vec::new();
    let le = |chunks: Vec<Vec<u8>>| chunks.concat();
    let mut t = typed(FLOAT, &[2, 2]);
    t.float_data = f.to_vec();
    cases.push((
        FLOAT,
        le(f.iter().map(|v| v.to_le_bytes().to_vec()).collect()),
        t,
    ));
    let mut t = typed(DOUBLE, &[2, 2]);
    t.double_data = d.to_vec();
    cases.push((
        DOUBLE,
        le(d.iter().map(|v| v.to_le_bytes().to_vec()).collect()),
        t,
    ));
    let mut t = typed(FLOAT16, &[2, 2]);
    t.int32_data = h.iter().map(|v| i32::from(v.to_bits())).collect();
    cases.push((
        FLOAT16,
        le(h.iter().map(|v| v.to_le_bytes().to_vec()).collect()),
        t,
    ));
    let mut t = typed(BFLOAT16, &[2, 2]);
    t.int32_data = b.iter().map(|v| i32::from(v.to_bits())).collect();
    cases.push((
        BFLOAT16,
        le(b.iter().map(|v| v.to_le_bytes().to_vec()).collect()),
        t,
    ));
    let mut t = typed(INT8, &[4]);
    t.int32_data = vec![-128, -1, 0, 127];
    cases.push((INT8, vec![0x80, 0xFF, 0, 0x7F], t));
    let mut t = typed(UINT8, &[4]);
    t.int32_data = vec![0, 1, 200, 255];
    cases.push((UINT8, vec![0, 1, 200, 255], t));
    let mut t = typed(INT16, &[2]);
    t.int32_data = vec![-32768, 9];
    cases.push((
        INT16,
        le(vec![
            (-32768i16).to_le_bytes().to_vec(),
            9i16.to_le_bytes().to_vec(),
        ]),
        t,
    ));
    let mut t = typed(UINT16, &[2]);
    t.int32_data = vec![65535, 0];
    cases.push((
        UINT16,
        le(vec![
            65535u16.to_le_bytes().to_vec(),
            0u16.to_le_bytes().to_vec(),
        ]),
        t,
    ));
    let mut t = typed(INT32, &[2]);
    t.int32_data = vec![i32::MIN, 3];
    cases.push((
        INT32,
        le(vec![
            i32::MIN.to_le_bytes().to_vec(),
            3i32.to_le_bytes().to_vec(),
        ]),
        t,
    ));
    let mut t = typed(INT64, &[2]);
    t.int64_data = vec![i64::MIN, 0];
    cases.push((
        INT64,
        le(vec![
            i64::MIN.to_le_bytes().to_vec(),
            0i64.to_le_bytes().to_vec(),
        ]),
        t,
    ));
    let mut t = typed(UINT32, &[2]);
    t.uint64_data = vec![u64::from(u32::MAX), 0];
    cases.push((
        UINT32,
        le(vec![
            u32::MAX.to_le_bytes().to_vec(),
            0u32.to_le_bytes().to_vec(),
        ]),
        t,
    ));
    let mut t = typed(UINT64, &[2]);
    t.uint64_data = vec![u64::MAX, 0];
    cases.push((
        UINT64,
        le(vec![
            u64::MAX.to_le_bytes().to_vec(),
            0u64.to_le_bytes().to_vec(),
        ]),
        t,
    ));

    for (elem, raw, typed_proto) in cases {
        let dims = typed_proto.dims.clone();
        let from_typed = run_initializer(typed_proto, elem, None).unwrap();
        let from_raw =
            run_initializer(raw_tensor("w", elem, &dims, raw.clone()), elem, None).unwrap();
        assert_eq!(from_typed, from_raw, "type {elem}");
        let dir = tempfile::tempdir().unwrap();
        let mut padded = vec![0xAAu8; 7];
        padded.extend_from_slice(&raw);
        std::fs::write(dir.path().join("w.bin"), &padded).unwrap();
        let mut ext = typed(elem, &dims);
        ext.data_location = DataLocation::External as i32;
        ext.external_data = vec![
            entry("location", "w.bin"),
            entry("offset", "7"),
            entry("length", &raw.len().to_string()),
        ];
        let from_external = run_initializer(ext, elem, Some(dir.path())).unwrap();
        assert_eq!(from_external, from_raw, "type {elem}");
    }
}

fn entry(key: &str, value: &str) -> StringStringEntryProto {
    StringStringEntryProto {
        key: key.into(),
        value: value.into(),
    }
}

#[test]
fn typed_nan_payloads_and_negative_zero_survive_decoding_bit_for_bit() {
    let mut t = typed(FLOAT, &[3]);
    t.float_data = vec![f32::from_bits(0xFFC0_0001), -0.0, 1.0];
    let decoded = Tensor::from_proto(&t, None).unwrap();
    let bits: Vec<u32> = decoded
        .values::<f32>()
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect();
    assert_eq!(bits, [0xFFC0_0001, 0x8000_0000, 0x3F80_0000]);
}

#[test]
fn external_data_without_length_reads_the_tensor_size_from_the_offset() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data"), [9u8, 0x80, 0x01, 0x7F]).unwrap();
    let mut ext = typed(INT8, &[3]);
    ext.data_location = DataLocation::External as i32;
    ext.external_data = vec![entry("location", "data"), entry("offset", "1")];
    let y = run_initializer(ext, INT8, Some(dir.path())).unwrap();
    assert_eq!(y.values::<i8>().unwrap(), [-1, 1, 1]);
}

#[test]
fn external_data_errors_are_checked_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("small"), [0u8; 8]).unwrap();
    let cases: Vec<(Vec<StringStringEntryProto>, &str)> = vec![
        (vec![], "external_data has no location"),
        (
            vec![entry("location", "/etc/passwd")],
            "must be a relative path",
        ),
        (vec![entry("location", "../x")], "must be a relative path"),
        (vec![entry("location", "missing")], "cannot read"),
        (
            vec![entry("location", "small"), entry("offset", "4")],
            "which has 8",
        ),
        (
            vec![
                entry("location", "small"),
                entry("offset", "18446744073709551615"),
            ],
            "which has 8",
        ),
        (
            vec![entry("location", "small"), entry("length", "4")],
            "length is 4",
        ),
        (
            vec![entry("location", "small"), entry("offset", "-1")],
            "non-negative integer",
        ),
    ];
    for (entries, expected) in cases {
        let mut ext = typed(DOUBLE, &[1]);
        ext.data_location = DataLocation::External as i32;
        ext.external_data = entries;
        let err = run_initializer(ext, DOUBLE, Some(dir.path()))
            .unwrap_err()
            .to_string();
        assert!(err.contains(expected), "{err} (expected {expected:?})");
    }
    let mut huge = typed(DOUBLE, &[1 << 40, 1 << 20]);
    huge.data_location = DataLocation::External as i32;
    huge.external_data = vec![entry("location", "small")];
    assert!(run_initializer(huge, DOUBLE, Some(dir.path())).is_err());
}

#[test]
fn malformed_tensor_data_is_refused_with_the_reason() {
    let cases: Vec<(TensorProto, &str)> = vec![
        (
            raw_tensor("w", FLOAT, &[2], vec![0; 7]),
            "raw_data has 7 bytes, but shape [2] of float needs 8",
        ),
        (typed(FLOAT, &[2]), "no data for 2 elements"),
        (
            {
                let mut t = typed(FLOAT, &[2]);
                t.float_data = vec![1.0];
                t
            },
            "float_data has 1 entries, but the shape needs 2",
        ),
        (
            {
                let mut t = typed(INT64, &[1]);
                t.int32_data = vec![1];
                t
            },
            "int64 data is in int32_data (accepted: raw_data or int64_data)",
        ),
        (
            {
                let mut t = typed(FLOAT16, &[1]);
                t.int32_data = vec![70000];
                t
            },
            "outside 0 to 65535 for float16",
        ),
        (
            {
                let mut t = typed(FLOAT, &[1]);
                t.data_location = 7;
                t
            },
            "data_location is 7",
        ),
        (raw_tensor("w", FLOAT, &[-2], vec![]), "dims[0] is -2"),
    ];
    for (t, expected) in cases {
        let err = run_initializer(t, FLOAT, None).unwrap_err();
        assert!(
            matches!(
                err,
                Error::InvalidTensor { .. } | Error::TypeMismatch { .. }
            ),
            "{err}"
        );
        assert!(
            err.to_string().contains(expected),
            "{err} (expected {expected:?})"
        );
    }
    let err = run_initializer(raw_tensor("w", STRING, &[1], vec![0]), FLOAT, None).unwrap_err();
    assert!(
        err.to_string()
            .contains("element type string is not supported"),
        "{err}"
    );
}

#[test]
fn tensors_round_trip_through_pb_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.pb");
    let t = Tensor::from_values(vec![2, 0, 3], &[] as &[u16]).unwrap();
    std::fs::write(&path, t.to_proto("e").unwrap().encode_to_vec()).unwrap();
    assert_eq!(Tensor::load_pb(&path).unwrap(), ("e".to_string(), t));
    let s = Tensor::scalar(bf16::from_f32(-3.0));
    std::fs::write(&path, s.to_proto("s").unwrap().encode_to_vec()).unwrap();
    let (_, back) = Tensor::load_pb(&path).unwrap();
    assert_eq!(back, s);
    assert_eq!(back.data_type, DataType::Bfloat16);
    std::fs::write(&path, [0xFFu8, 0xFF]).unwrap();
    assert!(matches!(Tensor::load_pb(&path), Err(Error::Decode { .. })));
}

#[test]
fn an_initializer_is_the_default_of_an_input_of_the_same_name() {
    let mut g = graph(
        vec![node("Sign", "x", "y")],
        vec![value("x", INT32, Some(&[D::V(2)]))],
        vec![value("y", INT32, None)],
    );
    g.initializer.push(raw_tensor(
        "x",
        INT32,
        &[2],
        [(-5i32).to_le_bytes(), 6i32.to_le_bytes()].concat(),
    ));
    let model = load(&model(13, g)).unwrap();
    assert!(model.inputs()[0].has_default);
    let (out, stats) = model
        .run_with_stats(Vec::<(String, Tensor)>::new())
        .unwrap();
    assert_eq!(out[0].1.values::<i32>().unwrap(), [-1, 1]);
    assert_eq!(
        stats.in_place, 0,
        "the default is constant data: no in-place run"
    );
    let given = Tensor::from_values(vec![2], &[0i32, -9]).unwrap();
    let (out, stats) = model.run_with_stats([("x", given)]).unwrap();
    assert_eq!(out[0].1.values::<i32>().unwrap(), [0, -1]);
    assert_eq!(stats.in_place, 1);
    let wrong = Tensor::from_values(vec![3], &[0i32, -9, 1]).unwrap();
    let err = model.run([("x", wrong)]).unwrap_err().to_string();
    assert!(err.contains("input \"x\" has shape [3]"), "{err}");
}
