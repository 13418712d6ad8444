//! `ewise run --device cpu` streams its inputs: a 64 MiB input runs in far less memory
//! than the input, and the outputs hold exactly the values of the whole computation.
#![cfg(target_os = "linux")]

mod common;

use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;
use ewise_cpu::reference::{is_infinity_bits, sign_bits};
use ewise_cpu::{DataType, InfinityMode, NanPolicy};

/// Elements of the input: 64 MiB of float32.
const N: usize = 16 << 20;

/// The most resident memory the run may reach, in KiB.
const PEAK_LIMIT_KIB: u64 = 48 << 10;

/// `x -> Sign -> a -> Sign -> y` and `x -> IsInf -> z` over float32 `[N]`.
fn chain_model(path: &Path) {
    let n = N as i64;
    let bytes = model_bytes(
        20,
        vec![
            node("Sign", "x", "a", &[]),
            node("Sign", "a", "y", &[]),
            node("IsInf", "x", "z", &[]),
        ],
        vec![value("x", FLOAT, Some(&[n]))],
        vec![value("y", FLOAT, Some(&[n])), value("z", 9, Some(&[n]))],
    );
    std::fs::write(path, bytes).unwrap();
}

/// The bits of input element `i`: special values, then a spread of ordinary ones.
fn input_bits(i: usize) -> u32 {
    const SPECIAL: [u32; 9] = [
        0xFF80_0000, // -inf
        0x7F80_0000, // +inf
        0x8000_0000, // -0
        0x0000_0000, // +0
        0x7FC0_0001, // NaN with a payload
        0xFFC0_0000, // negative NaN
        0x0000_0001, // smallest subnormal
        0x8080_0000, // -smallest normal
        0x7F7F_FFFF, // largest finite
    ];
    match i % 13 {
        k if k < SPECIAL.len() => SPECIAL[k],
        _ => (i as u32).wrapping_mul(0x9E37_79B9),
    }
}

/// Writes `x.npy`: little-endian float32 `[N]` of [`input_bits`].
fn write_input(path: &Path) {
    let mut out = BufWriter::new(std::fs::File::create(path).unwrap());
    out.write_all(&f32_header(N as u64)).unwrap();
    for i in 0..N {
        out.write_all(&input_bits(i).to_le_bytes()).unwrap();
    }
    out.flush().unwrap();
}

/// A process's peak resident set (`VmHWM`), in KiB, while it exists.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
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

#[test]
fn a_64_mib_input_runs_in_less_memory_than_it_holds() {
    let dir = temp_dir();
    let model = dir.path().join("chain.onnx");
    chain_model(&model);
    let x = dir.path().join("x.npy");
    write_input(&x);
    let outdir = dir.path().join("out");
    let mut child = ewise_command()
        .args(["run", model.to_str().unwrap(), "-i"])
        .arg(format!("x={}", x.display()))
        .arg("-o")
        .arg(&outdir)
        .args(["--device", "cpu"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let started = Instant::now();
    let mut peak = None;
    let status = loop {
        if let Some(kib) = peak_rss_kib(pid) {
            peak = Some(kib);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "ewise run did not finish in 10 minutes"
        );
        std::thread::sleep(Duration::from_millis(2));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(status.success(), "ewise run failed: {err}");
    let peak = peak.expect("the peak resident set was read at least once");
    eprintln!(
        "peak resident set: {peak} KiB for a {} KiB input",
        (N * 4) >> 10
    );
    if std::env::var(RUNNER_ENV).is_ok_and(|r| !r.trim().is_empty()) {
        eprintln!("not checking the peak: {RUNNER_ENV} runs ewise inside an emulator");
    } else {
        assert!(
            peak < PEAK_LIMIT_KIB,
            "peak resident set {peak} KiB, not below {PEAK_LIMIT_KIB} KiB, for a 64 MiB input"
        );
    }

    let (y_header, y) = read_npy(&outdir.join("y.npy"));
    let (z_header, z) = read_npy(&outdir.join("z.npy"));
    assert_eq!(y_header.shape, [N as u64]);
    assert_eq!(z_header.shape, [N as u64]);
    assert_eq!(z_header.descr, "|b1");
    assert!(!y_header.fortran_order && !z_header.fortran_order);
    assert_eq!((y.len(), z.len()), (4 * N, N));
    let t = DataType::Float32;
    for i in positions() {
        let bits = u64::from(input_bits(i));
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
    let x_bits: Vec<u32> = (0..M).map(input_bits).collect();
    let w_bits: Vec<u32> = (0..M).map(|i| input_bits(i + 5)).collect();
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
    let outdir = dir.path().join("out");
    let out = ewise([
        "run",
        model.to_str().unwrap(),
        "-i",
        &format!("x={}", x.display()),
        "-o",
        outdir.to_str().unwrap(),
        "--device",
        "cpu",
    ]);
    assert_ok(&out);

    let signs = |bits: &[u32]| -> Vec<u8> {
        bits.iter()
            .flat_map(|&b| {
                let s = sign_bits(DataType::Float32, u64::from(b), NanPolicy::Propagate).unwrap();
                (s as u32).to_ne_bytes()
            })
            .collect()
    };
    let expected_y = signs(&x_bits);
    for name in names.iter().chain([&"v".to_string()]) {
        let (header, data) = read_npy(&outdir.join(format!("{name}.npy")));
        assert_eq!(header.shape, [M as u64], "{name}");
        assert!(!header.fortran_order, "{name}");
        let expected = if name == "v" {
            signs(&w_bits)
        } else {
            expected_y.clone()
        };
        assert!(data == expected, "{name}.npy differs from the reference");
    }
    let mut files = file_names(&outdir);
    files.sort();
    assert_eq!(files.len(), FAN_OUT + 1, "no temporary left: {files:?}");
}
