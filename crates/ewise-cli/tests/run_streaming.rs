//! `ewise run` streams its inputs, on the CPU and on a GPU: a 64 MiB input runs in far
//! less memory than the input, memory follows `--chunk-size` rather than the data, and
//! the outputs hold exactly the values of the whole computation.
#![cfg(target_os = "linux")]

mod common;

use std::io::{BufWriter, Write};
use std::path::Path;

use common::*;
use ewise_cpu::reference::{is_infinity_bits, sign_bits};
use ewise_cpu::{DataType, InfinityMode, NanPolicy};

/// Elements of the input: 64 MiB of float32.
const N: usize = 16 << 20;

/// The most resident memory the run may reach, in KiB.
const PEAK_LIMIT_KIB: u64 = 48 << 10;

/// `x -> Sign -> a -> Sign -> y` and `x -> IsInf -> z` over float32 of any shape.
fn chain_model(path: &Path) {
    let bytes = model_bytes(
        20,
        vec![
            node("Sign", "x", "a", &[]),
            node("Sign", "a", "y", &[]),
            node("IsInf", "x", "z", &[]),
        ],
        vec![value("x", FLOAT, None)],
        vec![value("y", FLOAT, None), value("z", 9, None)],
    );
    std::fs::write(path, bytes).unwrap();
}

/// Writes little-endian float32 `[n]` of [`float32_pattern`].
fn write_input(path: &Path, n: usize) {
    let mut out = BufWriter::new(std::fs::File::create(path).unwrap());
    out.write_all(&f32_header(n as u64)).unwrap();
    for i in 0..n {
        out.write_all(&float32_pattern(i).to_le_bytes()).unwrap();
    }
    out.flush().unwrap();
}

/// The positions checked: both ends, every chunk boundary's neighbourhood for chunks
/// of any power-of-two size from 4 KiB, and a stride through the rest.
fn positions() -> Vec<usize> {
    let mut at: Vec<usize> = (0..4096).chain(N - 4096..N).collect();
    let mut boundary = 1024;
    while boundary < N {
        for b in (boundary..N).step_by(boundary).take(64) {
            at.extend(b.saturating_sub(3)..(b + 3).min(N));
        }
        boundary *= 2;
    }
    at.extend((0..N).step_by(997));
    at.sort_unstable();
    at.dedup();
    at
}

/// Runs the chain model over `x` into `outdir` with `args`; returns its peak resident
/// set in KiB.
fn peak_of_run(model: &Path, x: &Path, outdir: &Path, args: &[&str]) -> u64 {
    let peak = peak_of_ewise(&run_args(model, x, outdir, args));
    eprintln!("ewise run {args:?}: peak resident set {peak} KiB");
    peak
}

/// Checks `outdir`'s `y.npy` and `z.npy` at [`positions`] against the reference.
fn check_chain_outputs(outdir: &Path) {
    let (y_header, y) = read_npy(&outdir.join("y.npy"));
    let (z_header, z) = read_npy(&outdir.join("z.npy"));
    assert_eq!(y_header.shape, [N as u64]);
    assert_eq!(z_header.shape, [N as u64]);
    assert_eq!(z_header.descr, "|b1");
    assert!(!y_header.fortran_order && !z_header.fortran_order);
    assert_eq!((y.len(), z.len()), (4 * N, N));
    let t = DataType::Float32;
    for i in positions() {
        let bits = u64::from(float32_pattern(i));
        let once = sign_bits(t, bits, NanPolicy::Propagate).unwrap();
        let twice = sign_bits(t, once, NanPolicy::Propagate).unwrap() as u32;
        let got = u32::from_ne_bytes(y[4 * i..4 * i + 4].try_into().unwrap());
        assert_eq!(got, twice, "y[{i}] for input bits {bits:#010x}");
        let inf = is_infinity_bits(t, bits, InfinityMode::Either).unwrap();
        assert_eq!(
            u64::from(z[i]),
            u64::from(inf),
            "z[{i}] for input bits {bits:#010x}"
        );
    }
}

/// The most a GPU run's resident set may grow, in KiB, from a 4096-element input to
/// the 64 MiB one with `--chunk-size 1Mi`: the chunk's host buffers and, on a software
/// driver such as lavapipe, its GPU buffers too, far below the input's size.
const GPU_GROWTH_LIMIT_KIB: u64 = 24 << 10;

#[test]
fn a_64_mib_input_runs_in_less_memory_than_it_holds() {
    let dir = temp_dir();
    let model = dir.path().join("chain.onnx");
    chain_model(&model);
    let x = dir.path().join("x.npy");
    write_input(&x, N);
    let cpu = dir.path().join("cpu");
    let peak = peak_of_run(&model, &x, &cpu, &["--device", "cpu"]);
    if peaks_checked() {
        assert!(
            peak < PEAK_LIMIT_KIB,
            "peak resident set {peak} KiB, not below {PEAK_LIMIT_KIB} KiB, for a 64 MiB input"
        );
    }
    check_chain_outputs(&cpu);
    if !gpu() {
        return;
    }
    let small = dir.path().join("small.npy");
    write_input(&small, 4096);
    let args = ["--device", "gpu", "--chunk-size", "1Mi"];
    let base = peak_of_run(&model, &small, &dir.path().join("small-gpu"), &args);
    let gpu = dir.path().join("gpu");
    let peak = peak_of_run(&model, &x, &gpu, &args);
    if peaks_checked() {
        assert!(
            peak.saturating_sub(base) < GPU_GROWTH_LIMIT_KIB,
            "--device gpu: peak resident set {peak} KiB for a 64 MiB input, {base} KiB for 16 KiB: grew by {GPU_GROWTH_LIMIT_KIB} KiB or more"
        );
    }
    check_chain_outputs(&gpu);
    for name in ["y.npy", "z.npy"] {
        let same = std::fs::read(cpu.join(name)).unwrap() == std::fs::read(gpu.join(name)).unwrap();
        assert!(same, "--device gpu wrote another {name} than --device cpu");
    }
}

/// Elements of the inputs of [`many_outputs_and_an_initializer_over_many_chunks`]: 4 MiB
/// of float32, so that each source runs in many chunks.
const M: usize = 1 << 20;

/// Outputs derived from `x` in [`many_outputs_and_an_initializer_over_many_chunks`]:
/// more than a run keeps open at once.
const FAN_OUT: usize = 20;

#[test]
fn many_outputs_and_an_initializer_over_many_chunks() {
    use ewise_onnx::proto::{self, TensorProto};

    let dir = temp_dir();
    let x_bits: Vec<u32> = (0..M).map(float32_pattern).collect();
    let w_bits: Vec<u32> = (0..M).map(|i| float32_pattern(i + 5)).collect();
    let names: Vec<String> = (0..FAN_OUT).map(|i| format!("y{i}")).collect();
    let mut nodes: Vec<proto::NodeProto> =
        names.iter().map(|y| node("Sign", "x", y, &[])).collect();
    nodes.push(node("Sign", "w", "v", &[]));
    let mut outputs: Vec<proto::ValueInfoProto> =
        names.iter().map(|y| value(y, FLOAT, None)).collect();
    outputs.push(value("v", FLOAT, None));
    let w = TensorProto {
        name: "w".into(),
        dims: vec![M as i64],
        data_type: FLOAT,
        raw_data: w_bits.iter().flat_map(|b| b.to_le_bytes()).collect(),
        ..Default::default()
    };
    let model = dir.path().join("fan.onnx");
    let graph = proto::GraphProto {
        name: "fan out".into(),
        node: nodes,
        input: vec![value("x", FLOAT, Some(&[M as i64]))],
        output: outputs,
        initializer: vec![w],
        ..Default::default()
    };
    std::fs::write(&model, graph_model_bytes(13, graph)).unwrap();
    let x = dir.path().join("x.npy");
    let big_endian: Vec<u8> = x_bits.iter().flat_map(|b| b.to_be_bytes()).collect();
    write_npy(&x, ">f4", false, &[M as u64], &big_endian);
    let signs = |bits: &[u32]| -> Vec<u8> {
        bits.iter()
            .flat_map(|&b| {
                let s = sign_bits(DataType::Float32, u64::from(b), NanPolicy::Propagate).unwrap();
                (s as u32).to_ne_bytes()
            })
            .collect()
    };
    let expected_y = signs(&x_bits);
    let expected_v = signs(&w_bits);
    let mut runs = vec![
        vec!["--device", "cpu"],
        vec!["--device", "cpu", "--chunk-size", "64Ki"],
    ];
    if gpu() {
        runs.push(vec!["--device", "gpu", "--chunk-size", "256Ki"]);
    }
    for (k, args) in runs.iter().enumerate() {
        let outdir = dir.path().join(format!("out{k}"));
        assert_ok(&ewise(run_args(&model, &x, &outdir, args)));
        for name in names.iter().chain([&"v".to_string()]) {
            let (header, data) = read_npy(&outdir.join(format!("{name}.npy")));
            assert_eq!(header.shape, [M as u64], "{name} {args:?}");
            assert!(!header.fortran_order, "{name} {args:?}");
            let expected = if name == "v" {
                &expected_v
            } else {
                &expected_y
            };
            assert!(
                data == *expected,
                "{name}.npy differs from the reference with {args:?}"
            );
        }
        let mut files = file_names(&outdir);
        files.sort();
        assert_eq!(files.len(), FAN_OUT + 1, "no temporary left: {files:?}");
    }
}

#[test]
fn chunk_sizes_that_cannot_work_are_refused_before_anything_is_written() {
    let dir = temp_dir();
    let x = dir.path().join("x.npy");
    write_input(&x, 8);
    let model = dir.path().join("chain.onnx");
    chain_model(&model);
    let outdir = dir.path().join("out");
    let run =
        |chunk: &str, model: &Path| ewise(run_args(model, &x, &outdir, &["--chunk-size", chunk]));
    for bad in ["0", "4095", "2Gi", "1Ti", "4.5Mi", "lots", ""] {
        let out = run(bad, &model);
        let err = stderr(&out);
        assert_error_exit(out.status, 2, &err, &["--chunk-size", "4Ki to 1Gi"]);
    }
    assert_ok(&run("4Ki", &model));
    assert_ok(&run("1Gi", &model));

    let fan_out = 1100;
    let names: Vec<String> = (0..fan_out).map(|i| format!("y{i}")).collect();
    let wide = dir.path().join("wide.onnx");
    let bytes = model_bytes(
        13,
        names.iter().map(|y| node("Sign", "x", y, &[])).collect(),
        vec![value("x", FLOAT, None)],
        names.iter().map(|y| value(y, FLOAT, None)).collect(),
    );
    std::fs::write(&wide, bytes).unwrap();
    let _ = std::fs::remove_dir_all(&outdir);
    assert_error(
        &run("4Ki", &wide),
        &[
            "--chunk-size 4096 cannot hold one element",
            "\"x\"",
            "4404 bytes",
        ],
    );
    assert!(!outdir.exists(), "a refused run created OUTDIR");
}
