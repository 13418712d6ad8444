//! `--device gpu` and its environment: an `EWISE_GPU_BACKEND` that names no backend
//! counts as unset; a missing adapter is reported with backends named as that variable
//! takes them; and without `XDG_RUNTIME_DIR` nothing below ewise (Mesa's Vulkan layers,
//! libwayland) writes to standard error, so a run says nothing and an error is one line.
//!
//! These run on whatever adapter `ewise devices` marks (lavapipe in CI). Without one
//! they skip with a line, unless EWISE_REQUIRE_GPU=1.

mod common;

use std::process::Command;

use common::*;

/// A one-element float32 file and the path of its output.
fn files(dir: &tempfile::TempDir) -> (String, String) {
    let src = path(dir, "in.npy");
    write_npy(
        &src,
        "<f4",
        false,
        &[2],
        &to_le(&[0xc020_0000, 0x4040_0000], 4),
    );
    let dst = path(dir, "out.npy");
    (src.display().to_string(), dst.display().to_string())
}

fn sign_on_gpu(src: &str, dst: &str) -> Command {
    let mut command = ewise_command();
    command.args(["sign", src, dst, "--device", "gpu"]);
    command
}

/// The lines ewise itself did not write (every line of its own starts with `ewise:`).
fn foreign_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| !l.starts_with("ewise: ")).collect()
}

#[test]
fn a_backend_variable_that_names_no_backend_counts_as_unset() {
    if !gpu() {
        return;
    }
    let dir = temp_dir();
    let (src, dst) = files(&dir);
    for value in ["", ",", " , ", " ,, "] {
        let _ = std::fs::remove_file(&dst);
        let out = sign_on_gpu(&src, &dst)
            .env("EWISE_GPU_BACKEND", value)
            .output()
            .unwrap();
        assert_ok(&out);
        let (_, data) = read_npy(std::path::Path::new(&dst));
        assert_eq!(
            from_le(&data, 4),
            [0xbf80_0000, 0x3f80_0000],
            "EWISE_GPU_BACKEND={value:?}"
        );
    }
}

#[test]
fn a_missing_adapter_names_backends_as_the_variable_takes_them() {
    let absent = if cfg!(target_os = "macos") {
        "dx12"
    } else {
        "metal"
    };
    let dir = temp_dir();
    let (src, dst) = files(&dir);
    let out = sign_on_gpu(&src, &dst)
        .env("EWISE_GPU_BACKEND", format!(" {absent} ,"))
        .output()
        .unwrap();
    let text = assert_error(
        &out,
        &[
            "no GPU adapter found",
            &format!("tried backends {absent} (EWISE_GPU_BACKEND);"),
        ],
    );
    for raw in ["Backends(", "NOOP", "BROWSER_WEBGPU", "0x0"] {
        assert!(!text.contains(raw), "{raw} in {text}");
    }
    let out = sign_on_gpu(&src, &dst)
        .env_remove("EWISE_GPU_BACKEND")
        .env("EWISE_GPU_ADAPTER", "no adapter is called this")
        .output()
        .unwrap();
    let text = assert_error(&out, &["tried backends vulkan, metal, dx12;"]);
    assert!(!text.contains("Backends("), "{text}");
}

#[test]
fn without_xdg_runtime_dir_the_driver_stays_silent() {
    if !gpu() {
        return;
    }
    let dir = temp_dir();
    let (src, dst) = files(&dir);
    let out = sign_on_gpu(&src, &dst)
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .unwrap();
    assert_ok(&out);
    let text = stderr(&out);
    assert!(foreign_lines(&text).is_empty(), "{text}");
    assert!(!text.contains("XDG_RUNTIME_DIR"), "{text}");

    let out = sign_on_gpu(&src, &dst)
        .env_remove("XDG_RUNTIME_DIR")
        .env("EWISE_GPU_ADAPTER", "no adapter is called this")
        .output()
        .unwrap();
    let text = assert_error(&out, &["no GPU adapter found"]);
    assert_eq!(text.lines().count(), 1, "{text}");

    for args in [&["devices"][..], &["devices", "--json"]] {
        let out = ewise_command()
            .args(args)
            .env_remove("XDG_RUNTIME_DIR")
            .output()
            .unwrap();
        assert_ok(&out);
        let text = stderr(&out);
        assert!(!text.contains("XDG_RUNTIME_DIR"), "{args:?}: {text}");
    }
}
