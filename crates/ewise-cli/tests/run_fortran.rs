//! `ewise run` over column-major (`fortran_order`) inputs: the outputs are the row-major
//! results whatever the shape, element size and byte order, a 64 MiB input runs in far
//! less memory than it holds, and a pipe or a truncated file is still handled.
//!
//! The pipe (a FIFO) is Unix's and the memory bound is measured through Linux's
//! `/proc`; the rest runs on Windows too (scripts/windows-test.sh, under wine).

mod common;

use std::path::{Path, PathBuf};

use common::*;
use ewise_cpu::{DataType, NanPolicy};

/// `x -> Sign -> y` over ONNX element type `elem_type`, of any shape.
fn sign_model(dir: &Path, elem_type: i32) -> PathBuf {
    let path = dir.join(format!("sign-{elem_type}.onnx"));
    let bytes = model_bytes(
        13,
        vec![node("Sign", "x", "y", &[])],
        vec![value("x", elem_type, None)],
        vec![value("y", elem_type, None)],
    );
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Runs `model` on input `x` into `out`.
fn run(model: &Path, x: &Path, out: &Path) -> std::process::Output {
    ewise([
        "run",
        model.to_str().unwrap(),
        "-i",
        &format!("x={}", x.display()),
        "-o",
        out.to_str().unwrap(),
    ])
}

/// The row-major position of each column-major position of an array of `shape`.
fn column_major_order(shape: &[usize]) -> Vec<usize> {
    let count: usize = shape.iter().product();
    let mut index = vec![0usize; shape.len()];
    let mut order = Vec::with_capacity(count);
    for _ in 0..count {
        order.push(index.iter().zip(shape).fold(0, |at, (&i, &d)| at * d + i));
        for (i, &d) in index.iter_mut().zip(shape) {
            *i += 1;
            if *i < d {
                break;
            }
            *i = 0;
        }
    }
    order
}

/// Patterns whose SIGN tells them apart where the type allows: NaNs with distinct
/// payloads for float types (propagated unchanged), pseudo-random bits otherwise.
fn distinct_patterns(t: DataType, count: usize, seed: u64) -> Vec<u64> {
    let mut rng = Rng(seed);
    (0..count as u64)
        .map(|i| match t {
            DataType::Float64 => 0x7FF8_0000_0000_0000 | i,
            DataType::Float32 => 0x7FC0_0000 | (i & 0x3F_FFFF) | ((i >> 22 & 1) << 31),
            DataType::Float16 => 0x7E00 | (i & 0x1FF) | ((i >> 9 & 1) << 15),
            _ => rng.next() & ((1 << bits_of(t)) - 1),
        })
        .collect()
}

#[test]
fn column_major_inputs_give_row_major_outputs() {
    let types = [
        (3, "|i1", DataType::Int8, false),
        (10, "<f2", DataType::Float16, false),
        (10, ">f2", DataType::Float16, true),
        (1, "<f4", DataType::Float32, false),
        (1, ">f4", DataType::Float32, true),
        (11, "<f8", DataType::Float64, false),
    ];
    let shapes: [&[usize]; 9] = [
        &[7, 5],
        &[3, 1, 4, 2],
        &[2, 3, 4, 5, 6],
        &[1, 9],
        &[9, 1, 1],
        &[0, 4],
        &[700, 900],
        &[2, 1_100_000],
        &[3, 70, 5000],
    ];
    let dir = temp_dir();
    for (elem_type, descr, t, big_endian) in types {
        let model = sign_model(dir.path(), elem_type);
        let size = bits_of(t) as usize / 8;
        for (s, &shape) in shapes.iter().enumerate() {
            let count: usize = shape.iter().product();
            let stored = distinct_patterns(t, count, s as u64 + 1);
            let data: Vec<u8> = stored
                .iter()
                .flat_map(|&p| {
                    let bytes = p.to_le_bytes();
                    let mut e = bytes[..size].to_vec();
                    if big_endian {
                        e.reverse();
                    }
                    e
                })
                .collect();
            let x = dir
                .path()
                .join(format!("x-{s}-{elem_type}-{big_endian}.npy"));
            let dims: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
            write_npy(&x, descr, true, &dims, &data);
            let out = dir.path().join(format!("out-{s}-{elem_type}-{big_endian}"));
            let result = run(&model, &x, &out);
            assert!(
                result.status.success(),
                "{descr} {shape:?}: ewise failed ({}): {}",
                result.status,
                stderr(&result)
            );

            let mut row_major = vec![0u64; count];
            for (&at, &p) in column_major_order(shape).iter().zip(&stored) {
                row_major[at] = p;
            }
            let expected = to_le(&expected_sign(t, &row_major, NanPolicy::Propagate), size);
            let (header, got) = read_npy(&out.join("y.npy"));
            assert!(!header.fortran_order);
            assert_eq!(header.shape, dims);
            assert!(
                got == expected,
                "{descr} {shape:?}: the output is not the row-major result"
            );
        }
    }
}

#[test]
#[cfg(unix)]
fn a_column_major_input_from_a_pipe_is_reordered() {
    let dir = temp_dir();
    let model = sign_model(dir.path(), 11);
    let shape = [30usize, 40];
    let stored = distinct_patterns(DataType::Float64, 1200, 0);
    let mut bytes = ewise_cli::npy::Header {
        descr: "<f8".into(),
        fortran_order: true,
        shape: vec![30, 40],
    }
    .to_bytes();
    bytes.extend(to_le(&stored, 8));
    let fifo = dir.path().join("x.npy");
    mkfifo(&fifo);
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, bytes))
    };
    let out = dir.path().join("out");
    assert_ok(&run(&model, &fifo, &out));
    writer.join().unwrap().unwrap();
    let mut expected = vec![0u64; 1200];
    for (&at, &p) in column_major_order(&shape).iter().zip(&stored) {
        expected[at] = p;
    }
    let (_, got) = read_npy(&out.join("y.npy"));
    assert_eq!(from_le(&got, 8), expected);
}

#[test]
fn a_truncated_column_major_input_is_refused() {
    let dir = temp_dir();
    let model = sign_model(dir.path(), 1);
    let x = dir.path().join("x.npy");
    write_npy(&x, "<f4", true, &[4, 5], &[0u8; 4 * 19]);
    let out = dir.path().join("out");
    assert_error(&run(&model, &x, &out), &["x.npy", "truncated", "80 bytes"]);
    assert!(!out.exists());
}

/// Rows and columns of the 64 MiB float64 input.
#[cfg(target_os = "linux")]
const ROWS: usize = 2048;
#[cfg(target_os = "linux")]
const COLS: usize = 4096;

/// The most resident memory the run may reach, in KiB.
#[cfg(target_os = "linux")]
const PEAK_LIMIT_KIB: u64 = 48 << 10;

/// The NaN whose payload is column-major position `i`.
#[cfg(target_os = "linux")]
fn nan_at(i: usize) -> u64 {
    0x7FF8_0000_0000_0000 | i as u64
}

/// On the CPU whatever `EWISE_DEVICE` says: a software GPU driver's own memory would
/// count in the peak (`run_streaming` bounds the GPU path's growth instead).
#[cfg(target_os = "linux")]
#[test]
fn a_64_mib_column_major_input_runs_in_less_memory_than_it_holds() {
    use std::io::{BufWriter, Write};

    let dir = temp_dir();
    let model = sign_model(dir.path(), 11);
    let x = dir.path().join("x.npy");
    {
        let mut file = BufWriter::new(std::fs::File::create(&x).unwrap());
        let header = ewise_cli::npy::Header {
            descr: "<f8".into(),
            fortran_order: true,
            shape: vec![ROWS as u64, COLS as u64],
        };
        file.write_all(&header.to_bytes()).unwrap();
        for i in 0..ROWS * COLS {
            file.write_all(&nan_at(i).to_le_bytes()).unwrap();
        }
        file.flush().unwrap();
    }
    let outdir = dir.path().join("out");
    let peak = peak_of_ewise(&run_args(&model, &x, &outdir, &["--device", "cpu"]));
    eprintln!(
        "peak resident set: {peak} KiB for a {} KiB column-major input",
        (ROWS * COLS * 8) >> 10
    );
    if peaks_checked() {
        assert!(
            peak < PEAK_LIMIT_KIB,
            "peak resident set {peak} KiB, not below {PEAK_LIMIT_KIB} KiB, for a 64 MiB input"
        );
    }

    let (header, y) = read_npy(&outdir.join("y.npy"));
    assert_eq!(header.shape, [ROWS as u64, COLS as u64]);
    assert!(!header.fortran_order);
    assert_eq!(y.len(), ROWS * COLS * 8);
    for (p, got) in y.chunks_exact(8).enumerate() {
        let (row, col) = (p / COLS, p % COLS);
        let got = u64::from_le_bytes(got.try_into().unwrap());
        assert_eq!(got, nan_at(row + ROWS * col), "y[{row}, {col}]");
    }
}
