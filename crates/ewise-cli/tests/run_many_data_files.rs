//! `ewise run` on a model whose initializers are stored one per file (what ONNX's
//! `save_as_external_data(all_tensors_to_one_file=False)` writes): 300 data files run
//! under `ulimit -n 64`, because the loader keeps a bounded number of them open and
//! opens the others again, checked, when they are read.
#![cfg(unix)]

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::*;
use ewise_onnx::proto::{self, DataLocation, StringStringEntryProto, TensorProto};

/// The number of initializers, each in its own data file.
const FILES: usize = 300;

const UINT8: i32 = 2;

/// The bytes of initializer `w<i>`.
fn bytes(i: usize) -> [u8; 3] {
    [(i % 256) as u8, 0, 200]
}

/// `y<i> = Sign(w<i>)` for uint8 `[3]` initializers `w<i>`, each stored in `dir` as
/// `w<i>.bin`.
fn one_file_per_tensor(dir: &Path) -> Vec<u8> {
    let entry = |key: &str, value: String| StringStringEntryProto {
        key: key.into(),
        value,
    };
    let mut graph = proto::GraphProto {
        name: "one file per tensor".into(),
        ..Default::default()
    };
    for i in 0..FILES {
        let location = format!("w{i}.bin");
        std::fs::write(dir.join(&location), bytes(i)).unwrap();
        graph.initializer.push(TensorProto {
            name: format!("w{i}"),
            data_type: UINT8,
            dims: vec![3],
            data_location: DataLocation::External as i32,
            external_data: vec![entry("location", location), entry("length", "3".into())],
            ..Default::default()
        });
        let y = format!("y{i}");
        graph.node.push(node("Sign", &format!("w{i}"), &y, &[]));
        graph.output.push(value(&y, UINT8, Some(&[3])));
    }
    graph_model_bytes(13, graph)
}

#[test]
fn three_hundred_data_files_run_under_ulimit_n_64() {
    if std::env::var(RUNNER_ENV).is_ok_and(|r| !r.trim().is_empty()) {
        eprintln!("skipping: {RUNNER_ENV} is set");
        return;
    }
    let dir = temp_dir();
    let model = dir.path().join("model.onnx");
    std::fs::write(&model, one_file_per_tensor(dir.path())).unwrap();
    let outdir = dir.path().join("out");
    let mut command = Command::new("sh");
    command
        .args(["-c", "ulimit -n 64 && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_ewise"))
        .arg("run")
        .arg(&model)
        .arg("-o")
        .arg(&outdir)
        .args(["--device", "cpu"]);
    let out = output_within(command, Duration::from_secs(300)).expect("ewise finishes");
    assert_ok(&out);
    assert_eq!(file_names(&outdir).len(), FILES);
    for i in 0..FILES {
        let (header, data) = read_npy(&outdir.join(format!("y{i}.npy")));
        assert_eq!(header.shape, [3], "y{i}");
        assert_eq!(data, [u8::from(i % 256 != 0), 0, 1], "y{i}");
    }
}
