//! Shapes, memory orders, byte orders, format versions and sizes that span many chunks.

mod common;

use common::*;
use ewise_cli::npy::MAGIC;
use ewise_cpu::{DataType, InfinityMode, NanPolicy};

fn run_ok(args: &[&str]) {
    assert_ok(&ewise(args));
}

#[test]
fn fortran_order_is_kept_and_data_stays_in_memory_order() {
    let dir = temp_dir();
    let input = patterns(DataType::Float32, 13, 1);
    assert_eq!(input.len(), 28);
    let (src, dst) = (path(&dir, "f.npy"), path(&dir, "o.npy"));
    write_npy(&src, "<f4", true, &[4, 7], &to_le(&input, 4));
    for semantics in ["dml", "onnx"] {
        run_ok(&[
            "sign",
            src.to_str().unwrap(),
            dst.to_str().unwrap(),
            "--semantics",
            semantics,
        ]);
        let (header, data) = read_npy(&dst);
        assert!(header.fortran_order);
        assert_eq!(header.shape, [4, 7]);
        let policy = if semantics == "dml" {
            NanPolicy::Zero
        } else {
            NanPolicy::Propagate
        };
        assert_eq!(
            from_le(&data, 4),
            expected_sign(DataType::Float32, &input, policy)
        );
    }
    run_ok(&["is-infinity", src.to_str().unwrap(), dst.to_str().unwrap()]);
    let (header, data) = read_npy(&dst);
    assert!(header.fortran_order);
    assert_eq!(header.descr, "|u1");
    assert_eq!(
        from_le(&data, 1),
        expected_is_infinity(DataType::Float32, &input, InfinityMode::Either)
    );
}

#[test]
fn scalars_and_empty_arrays_under_onnx_semantics() {
    let dir = temp_dir();
    let (src, dst) = (path(&dir, "s.npy"), path(&dir, "o.npy"));
    write_npy(&src, "<f8", false, &[], &(-0.0f64).to_le_bytes());
    run_ok(&[
        "sign",
        src.to_str().unwrap(),
        dst.to_str().unwrap(),
        "--semantics",
        "onnx",
    ]);
    let (header, data) = read_npy(&dst);
    assert!(header.shape.is_empty());
    assert_eq!(data, 0.0f64.to_le_bytes());
    write_npy(&src, "<f4", false, &[], &f32::NEG_INFINITY.to_le_bytes());
    run_ok(&[
        "is-infinity",
        src.to_str().unwrap(),
        dst.to_str().unwrap(),
        "--semantics",
        "onnx",
        "--mode",
        "negative",
    ]);
    let (header, data) = read_npy(&dst);
    assert_eq!(
        (header.descr.as_str(), header.shape.len(), data),
        ("|b1", 0, vec![1])
    );
    let out = ewise([
        "sign",
        src.to_str().unwrap(),
        path(&dir, "x.npy").to_str().unwrap(),
        "--feature-level",
        "6_4",
    ]);
    assert_error(
        &out,
        &["DimensionCount 0", "hint: leave out --feature-level"],
    );
    run_ok(&["sign", src.to_str().unwrap(), dst.to_str().unwrap()]);
    assert_eq!(read_npy(&dst).1, (-1.0f32).to_le_bytes());

    for shape in [vec![0u64], vec![3, 0, 2]] {
        write_npy(&src, "<i2", false, &shape, &[]);
        run_ok(&[
            "sign",
            src.to_str().unwrap(),
            dst.to_str().unwrap(),
            "--semantics",
            "onnx",
        ]);
        let (header, data) = read_npy(&dst);
        assert_eq!(header.shape, shape);
        assert!(data.is_empty());
        let out = ewise([
            "sign",
            src.to_str().unwrap(),
            path(&dir, "x.npy").to_str().unwrap(),
            "--feature-level",
            "6_4",
        ]);
        assert_error(&out, &["is 0", "hint: leave out --feature-level"]);
        run_ok(&["sign", src.to_str().unwrap(), dst.to_str().unwrap()]);
        assert_eq!(read_npy(&dst).0.shape, shape);
    }
    write_npy(&src, "<f2", true, &[2, 0], &[]);
    run_ok(&[
        "is-infinity",
        src.to_str().unwrap(),
        dst.to_str().unwrap(),
        "--semantics",
        "onnx",
    ]);
    let (header, data) = read_npy(&dst);
    assert_eq!(
        (header.descr.as_str(), header.fortran_order, data.len()),
        ("|b1", true, 0)
    );
    assert!(!path(&dir, "x.npy").exists());
}

#[test]
fn more_than_eight_dimensions_under_onnx_semantics() {
    let dir = temp_dir();
    let (src, dst) = (path(&dir, "d.npy"), path(&dir, "o.npy"));
    let shape = [2u64, 1, 1, 1, 1, 1, 1, 1, 1, 2];
    let input: Vec<u64> = vec![0x80, 0x7f, 0x00, 0x05];
    write_npy(&src, "|i1", false, &shape, &to_le(&input, 1));
    run_ok(&[
        "sign",
        src.to_str().unwrap(),
        dst.to_str().unwrap(),
        "--semantics",
        "onnx",
    ]);
    assert_eq!(read_npy(&dst).1, [0xff, 1, 0, 1]);
    assert_error(
        &ewise([
            "sign",
            src.to_str().unwrap(),
            path(&dir, "x.npy").to_str().unwrap(),
            "--feature-level",
            "6_4",
        ]),
        &["DimensionCount 10", "hint: leave out --feature-level"],
    );
    std::fs::remove_file(&dst).unwrap();
    run_ok(&["sign", src.to_str().unwrap(), dst.to_str().unwrap()]);
    assert_eq!(read_npy(&dst).1, [0xff, 1, 0, 1]);
}

#[test]
fn big_endian_inputs_are_converted_and_written_back_big_endian() {
    let dir = temp_dir();
    let (src, dst) = (path(&dir, "be.npy"), path(&dir, "o.npy"));
    for (descr, t) in [
        (">f4", DataType::Float32),
        (">i2", DataType::Int16),
        (">f8", DataType::Float64),
    ] {
        let size = t.size_in_bytes().unwrap() as usize;
        let input = patterns(t, 10, 3);
        let be: Vec<u8> = input
            .iter()
            .flat_map(|p| p.to_be_bytes()[8 - size..].to_vec())
            .collect();
        write_npy(&src, descr, false, &[input.len() as u64], &be);
        run_ok(&[
            "sign",
            src.to_str().unwrap(),
            dst.to_str().unwrap(),
            "--semantics",
            "onnx",
        ]);
        let (header, data) = read_npy(&dst);
        assert_eq!(header.descr, descr);
        let got: Vec<u64> = data
            .chunks_exact(size)
            .map(|c| c.iter().fold(0u64, |acc, &b| acc << 8 | u64::from(b)))
            .collect();
        assert_eq!(
            got,
            expected_sign(t, &input, NanPolicy::Propagate),
            "{descr}"
        );
        if t.is_float() {
            run_ok(&[
                "is-infinity",
                src.to_str().unwrap(),
                dst.to_str().unwrap(),
                "--semantics",
                "onnx",
            ]);
            let (header, data) = read_npy(&dst);
            assert_eq!(header.descr, "|b1");
            assert_eq!(
                from_le(&data, 1),
                expected_is_infinity(t, &input, InfinityMode::Either)
            );
        }
    }
}

fn header_bytes(version: u8, text: &str) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&[version, 0]);
    if version == 1 {
        out.extend_from_slice(&(text.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(text.as_bytes());
    out
}

#[test]
fn format_versions_one_two_and_three_and_unaligned_headers() {
    let dir = temp_dir();
    let (src, dst) = (path(&dir, "v.npy"), path(&dir, "o.npy"));
    let values = [-2.0f32, 0.0, f32::INFINITY];
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    for (version, text) in [
        (
            1,
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\n",
        ),
        (
            2,
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }           \n",
        ),
        (
            3,
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }   \n",
        ),
    ] {
        let mut bytes = header_bytes(version, text);
        bytes.extend_from_slice(&data);
        std::fs::write(&src, bytes).unwrap();
        run_ok(&["sign", src.to_str().unwrap(), dst.to_str().unwrap()]);
        let out = std::fs::read(&dst).unwrap();
        assert_eq!(
            &out[..8],
            b"\x93NUMPY\x01\x00",
            "outputs are written as version 1.0"
        );
        assert_eq!(out.len() % 64, 12);
        assert_eq!(
            read_npy(&dst).1,
            [-1.0f32, 0.0, 1.0]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect::<Vec<_>>()
        );
    }
}

#[test]
fn files_spanning_many_chunks_match_the_reference() {
    let dir = temp_dir();
    let (src, dst) = (path(&dir, "big.npy"), path(&dir, "o.npy"));
    let t = DataType::Float32;
    let input = patterns(t, 2_500_000, 11);
    write_npy(&src, "<f4", false, &[input.len() as u64], &to_le(&input, 4));
    let want = expected_sign(t, &input, NanPolicy::Zero);
    for threads in ["1", "3", "0"] {
        run_ok(&[
            "sign",
            src.to_str().unwrap(),
            dst.to_str().unwrap(),
            "--threads",
            threads,
        ]);
        assert!(from_le(&read_npy(&dst).1, 4) == want, "threads {threads}");
    }
    run_ok(&["is-infinity", src.to_str().unwrap(), dst.to_str().unwrap()]);
    assert!(from_le(&read_npy(&dst).1, 1) == expected_is_infinity(t, &input, InfinityMode::Either));
}

#[test]
fn devices_are_written_directly() {
    let dir = temp_dir();
    let src = path(&dir, "in.npy");
    write_npy(&src, "<f4", false, &[2], &[0; 8]);
    let null = if cfg!(windows) { "NUL" } else { "/dev/null" };
    assert_ok(&ewise(["sign", src.to_str().unwrap(), null]));
    if cfg!(windows) {
        assert_ok(&ewise(["sign", src.to_str().unwrap(), r"\\.\nul"]));
        assert_ok(&ewise([
            "sign",
            src.to_str().unwrap(),
            path(&dir, "NUL").to_str().unwrap(),
        ]));
    }
    assert_eq!(
        file_names(dir.path()),
        ["in.npy"],
        "nothing written beside the input"
    );
}
