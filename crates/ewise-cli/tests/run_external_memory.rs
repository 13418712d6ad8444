//! `ewise run` streams an initializer stored as ONNX external data: a 1 GiB tensor in a
//! data file beside the model goes through Sign in a small fraction of its size, read
//! chunk by chunk from the file the model loader opened, and the output holds exactly
//! the signs of every element.
//!
//! The run is on the CPU whatever `EWISE_DEVICE` says: a GPU run's resident set also
//! holds the driver's (on lavapipe its GPU buffers too), which `run_streaming` bounds
//! as growth instead; `onnx.rs` checks the GPU's bytes from external data.
//!
//! The peak is the kernel's own count for the finished child (`getrusage` with
//! `RUSAGE_CHILDREN`, which is why this binary holds one test and starts one process),
//! so no sampling can miss it.
#![cfg(target_os = "linux")]

mod common;

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

use common::*;
use ewise_cpu::reference::sign_bits;
use ewise_cpu::{DataType, NanPolicy};
use ewise_onnx::proto::{self, DataLocation, StringStringEntryProto, TensorProto};

/// Elements of the initializer: 1 GiB of float32.
const N: usize = 1 << 28;

/// Bytes before the tensor in the data file, so that the offset is honoured.
const OFFSET: usize = 4096 + 12;

/// The most resident memory the run may reach, in KiB: an eighth of the tensor.
const PEAK_LIMIT_KIB: u64 = 128 << 10;

/// Elements written or checked at a time.
const BLOCK: usize = 1 << 20;

/// Writes the data file: [`OFFSET`] bytes of 0xEE, then the tensor's little-endian
/// elements, then a few more 0xEE bytes.
fn write_data(path: &Path) {
    let mut out = BufWriter::with_capacity(4 << 20, File::create(path).unwrap());
    out.write_all(&[0xEE; OFFSET]).unwrap();
    let mut block = Vec::with_capacity(4 * BLOCK);
    for start in (0..N).step_by(BLOCK) {
        block.clear();
        block.extend((start..start + BLOCK).flat_map(|i| float32_pattern(i).to_le_bytes()));
        out.write_all(&block).unwrap();
    }
    out.write_all(&[0xEE; 100]).unwrap();
    out.flush().unwrap();
}

/// `y = Sign(w)` where `w` is a float32 `[N]` initializer stored in `w.bin` at
/// [`OFFSET`], with its length given.
fn model_bytes() -> Vec<u8> {
    let entry = |key: &str, value: String| StringStringEntryProto {
        key: key.into(),
        value,
    };
    let w = TensorProto {
        name: "w".into(),
        data_type: FLOAT,
        dims: vec![N as i64],
        data_location: DataLocation::External as i32,
        external_data: vec![
            entry("location", "w.bin".into()),
            entry("offset", OFFSET.to_string()),
            entry("length", (4 * N).to_string()),
        ],
        ..Default::default()
    };
    graph_model_bytes(
        13,
        proto::GraphProto {
            name: "external".into(),
            node: vec![node("Sign", "w", "y", &[])],
            initializer: vec![w],
            output: vec![value("y", FLOAT, Some(&[N as i64]))],
            ..Default::default()
        },
    )
}

/// The largest peak resident set of the waited-for children of this process, in KiB.
fn children_peak_kib() -> u64 {
    // SAFETY: getrusage writes one `rusage` into the zeroed value it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage), 0);
        usage
    };
    u64::try_from(usage.ru_maxrss).unwrap()
}

/// Free bytes on the file system holding `dir`.
fn free_bytes(dir: &Path) -> u64 {
    let stat = rustix::fs::statvfs(dir).unwrap();
    stat.f_bavail.saturating_mul(stat.f_frsize as u64)
}

/// Checks `y.npy`: its header, and every element against the reference Sign.
fn check_output(path: &Path) {
    let mut file = File::open(path).unwrap();
    let mut head = vec![0u8; 128];
    file.read_exact(&mut head).unwrap();
    let parsed = ewise_cli::npy::Header::parse(&head).unwrap();
    assert_eq!(parsed.header.descr, "<f4");
    assert_eq!(parsed.header.shape, [N as u64]);
    assert_eq!(parsed.data_offset, 128);
    let mut block = vec![0u8; 4 * BLOCK];
    for start in (0..N).step_by(BLOCK) {
        file.read_exact(&mut block).unwrap();
        for (k, got) in block.chunks_exact(4).enumerate() {
            let i = start + k;
            let want = sign_bits(
                DataType::Float32,
                float32_pattern(i).into(),
                NanPolicy::Propagate,
            )
            .unwrap() as u32;
            let got = u32::from_le_bytes(got.try_into().unwrap());
            assert_eq!(
                got,
                want,
                "y[{i}] for input bits {:#010x}",
                float32_pattern(i)
            );
        }
    }
    assert_eq!(
        file.read(&mut [0u8; 1]).unwrap(),
        0,
        "y.npy is longer than its data"
    );
}

#[test]
fn a_1_gib_external_initializer_runs_in_an_eighth_of_its_size() {
    let dir = temp_dir();
    if free_bytes(dir.path()) < 3 << 30 {
        eprintln!("skipping: needs 3 GiB of free disk for 1 GiB in and 1 GiB out");
        return;
    }
    let started = Instant::now();
    write_data(&dir.path().join("w.bin"));
    let model = dir.path().join("model.onnx");
    std::fs::write(&model, model_bytes()).unwrap();
    let out = dir.path().join("out");
    let written = started.elapsed();

    let before = children_peak_kib();
    let mut child = ewise_command()
        .arg("run")
        .arg(&model)
        .args(["--device", "cpu"])
        .arg("-o")
        .arg(&out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the ewise binary starts");
    let ran = Instant::now();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "ewise run failed: {err}");
    let peak = children_peak_kib();
    eprintln!(
        "data written in {written:?}; ewise run took {:?}, peak resident set {peak} KiB",
        ran.elapsed()
    );
    assert_eq!(
        before, 0,
        "this test's process had another child before ewise"
    );
    if peaks_checked() {
        assert!(
            peak < PEAK_LIMIT_KIB,
            "peak resident set {peak} KiB, not below {PEAK_LIMIT_KIB} KiB, for a 1 GiB external initializer"
        );
    }
    let checking = Instant::now();
    check_output(&out.join("y.npy"));
    eprintln!("output checked in {:?}", checking.elapsed());
}
