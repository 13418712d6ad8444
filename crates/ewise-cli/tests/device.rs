//! `--device gpu` against `--device cpu`: the same files, byte for byte, for every data
//! type, byte order, memory order and size (several streamed chunks included), in place
//! and out of place; and the errors when there is no GPU.
//!
//! These run on whatever adapter `ewise devices` marks (lavapipe in CI). Without one
//! they skip with a line, unless EWISE_REQUIRE_GPU=1.

mod common;

use common::*;
use ewise_cpu::DataType;

/// Runs `args` with `--device cpu` and with `--device gpu`, each writing its own output
/// (the last argument), and asserts the two files are identical.
fn same_on_both(dir: &tempfile::TempDir, args: &[&str], label: &str) {
    let mut files = Vec::new();
    for device in ["cpu", "gpu"] {
        let dst = path(dir, &format!("{label}-{device}.npy"));
        let mut full: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        full.push(dst.display().to_string());
        full.extend(["--device".into(), device.into()]);
        let out = ewise(&full);
        assert_ok(&out);
        files.push(std::fs::read(&dst).unwrap());
    }
    assert!(
        files[0] == files[1],
        "{label}: --device gpu differs from cpu"
    );
}

const TYPES: [(&str, DataType, Option<&str>); 14] = [
    ("<f2", DataType::Float16, None),
    ("<f4", DataType::Float32, None),
    ("<f8", DataType::Float64, None),
    ("|i1", DataType::Int8, None),
    ("<i2", DataType::Int16, None),
    ("<i4", DataType::Int32, None),
    ("<i8", DataType::Int64, None),
    ("|u1", DataType::Uint8, None),
    ("<u2", DataType::Uint16, None),
    ("<u4", DataType::Uint32, None),
    ("<u8", DataType::Uint64, None),
    ("<V2", DataType::Bfloat16, Some("bfloat16")),
    ("<f1", DataType::Float8E5M2, Some("float8e5m2")),
    ("|V1", DataType::Float8E4M3Fn, Some("float8e4m3fn")),
];

#[test]
fn every_type_and_option_gives_the_cpu_bytes() {
    if !gpu() {
        return;
    }
    let dir = temp_dir();
    for (i, &(descr, t, flag)) in TYPES.iter().enumerate() {
        let size = t.size_in_bytes().unwrap() as usize;
        // An odd count: sub-word types end inside a 32-bit word.
        let mut input = patterns(t, 60, i as u64);
        input.truncate(63);
        let src = path(&dir, &format!("in{i}.npy"));
        write_npy(&src, descr, false, &[7, 9], &to_le(&input, size));
        let src = src.display().to_string();
        let dtype: Vec<&str> = flag.map_or(vec![], |f| vec!["--dtype", f]);
        let float = t.is_float();
        let float8 = size == 1 && float;
        let mut runs: Vec<Vec<&str>> = Vec::new();
        if !float8 {
            runs.push(vec!["sign", &src, "--semantics", "onnx"]);
            runs.push(vec!["sign", &src, "--semantics", "onnx", "--nan", "zero"]);
        }
        if float {
            for mode in ["either", "positive", "negative", "neither"] {
                runs.push(vec![
                    "is-infinity",
                    &src,
                    "--semantics",
                    "onnx",
                    "--mode",
                    mode,
                ]);
            }
        }
        if matches!(t, DataType::Float32 | DataType::Float16) {
            runs.push(vec!["is-infinity", &src]);
            runs.push(vec!["sign", &src]);
        }
        for (k, mut args) in runs.into_iter().enumerate() {
            args.extend(&dtype);
            same_on_both(&dir, &args, &format!("{t}-{k}"));
        }
    }
}

#[test]
fn byte_order_memory_order_and_many_chunks() {
    if !gpu() {
        return;
    }
    let dir = temp_dir();
    // Big-endian float32 in Fortran order.
    let t = DataType::Float32;
    let input = patterns(t, 5000, 7);
    let n = input.len() / 10 * 10;
    let be: Vec<u8> = input[..n]
        .iter()
        .flat_map(|&p| (p as u32).to_be_bytes())
        .collect();
    let src = path(&dir, "be.npy");
    write_npy(&src, ">f4", true, &[10, n as u64 / 10], &be);
    let src = src.display().to_string();
    same_on_both(&dir, &["sign", &src, "--semantics", "onnx"], "be-sign");
    same_on_both(&dir, &["is-infinity", &src], "be-isinf");

    // More than three 8 MiB chunks of int16, with an odd tail.
    let t = DataType::Int16;
    let count = (13 << 20) + 3;
    let mut rng = Rng(11);
    let data: Vec<u8> = (0..count)
        .flat_map(|_| (rng.next() as u16).to_le_bytes())
        .collect();
    let src = path(&dir, "big.npy");
    write_npy(&src, "<i2", false, &[count as u64], &data);
    let src = src.display().to_string();
    same_on_both(&dir, &["sign", &src], &format!("big-{t}"));
    let (_, out) = read_npy(&path(&dir, &format!("big-{t}-gpu.npy")));
    let expected = expected_sign(t, &from_le(&data, 2), ewise_cpu::NanPolicy::Zero);
    assert!(
        from_le(&out, 2) == expected,
        "big int16 differs from the reference"
    );
}

#[test]
fn in_place_on_the_gpu_matches_the_cpu() {
    if !gpu() {
        return;
    }
    let dir = temp_dir();
    for (descr, t, big) in [
        ("<f2", DataType::Float16, false),
        (">f4", DataType::Float32, true),
        ("|i1", DataType::Int8, false),
    ] {
        let size = t.size_in_bytes().unwrap() as usize;
        let count = (3 << 20) / size + 5;
        let input = patterns(t, count, 3);
        let mut bytes = to_le(&input, size);
        if big {
            bytes
                .chunks_exact_mut(size)
                .for_each(|element| element.reverse());
        }
        let mut files = Vec::new();
        for device in ["cpu", "gpu"] {
            let file = path(&dir, &format!("{t}-{device}.npy"));
            write_npy(&file, descr, false, &[input.len() as u64], &bytes);
            let out = ewise([
                "sign",
                "--in-place",
                file.to_str().unwrap(),
                "--device",
                device,
            ]);
            assert_ok(&out);
            files.push(std::fs::read(&file).unwrap());
        }
        assert!(files[0] == files[1], "{descr}: in place on gpu differs");
    }
}

#[test]
fn empty_and_zero_dimensional_arrays() {
    if !gpu() {
        return;
    }
    let dir = temp_dir();
    let empty = path(&dir, "empty.npy");
    write_npy(&empty, "<f4", false, &[0, 3], &[]);
    let scalar = path(&dir, "scalar.npy");
    write_npy(&scalar, "<f2", false, &[], &0xfc00u16.to_le_bytes());
    for src in [&empty, &scalar] {
        let src = src.display().to_string();
        same_on_both(&dir, &["sign", &src, "--semantics", "onnx"], "s");
        same_on_both(&dir, &["is-infinity", &src, "--semantics", "onnx"], "i");
    }
}

#[test]
fn without_an_adapter_gpu_runs_fail_cleanly_and_write_nothing() {
    let absent = if cfg!(target_os = "macos") {
        "dx12"
    } else {
        "metal"
    };
    let dir = temp_dir();
    let src = path(&dir, "in.npy");
    write_npy(
        &src,
        "<f4",
        false,
        &[2],
        &to_le(&[0x3f80_0000, 0xbf80_0000], 4),
    );
    let dst = path(&dir, "out.npy");
    std::fs::write(&dst, b"keep me").unwrap();
    let out = ewise_command()
        .env("EWISE_GPU_BACKEND", absent)
        .args(["sign", src.to_str().unwrap(), dst.to_str().unwrap()])
        .args(["--device", "gpu"])
        .output()
        .unwrap();
    // What this system's users install (ewise-gpu's no-adapter hint).
    let install = if cfg!(windows) {
        "d3d10warp.dll"
    } else if cfg!(target_os = "macos") {
        "Metal"
    } else {
        "mesa-vulkan-drivers"
    };
    assert_error(&out, &["--device gpu", "no GPU adapter found", install]);
    assert_eq!(std::fs::read(&dst).unwrap(), b"keep me");
    assert_eq!(file_names(dir.path()), ["in.npy", "out.npy"]);

    let out = ewise_command()
        .env("EWISE_GPU_BACKEND", absent)
        .arg("devices")
        .output()
        .unwrap();
    assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("No GPU adapter found"), "{text}");
    assert!(text.contains(install), "{text}");
    let out = ewise_command()
        .env("EWISE_GPU_BACKEND", absent)
        .args(["devices", "--json"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "[]\n");

    let out = ewise_command()
        .env("EWISE_GPU_BACKEND", "glide")
        .args(["sign", src.to_str().unwrap(), dst.to_str().unwrap()])
        .args(["--device", "gpu"])
        .output()
        .unwrap();
    assert_error(&out, &["EWISE_GPU_BACKEND=glide", "vulkan, metal, dx12"]);
    let out = ewise(["sign", "x.npy", "y.npy", "--device", "tpu"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("[possible values: cpu, gpu]"));
}

#[test]
fn the_device_option_can_come_from_the_environment() {
    if !gpu() {
        return;
    }
    let dir = temp_dir();
    let src = path(&dir, "in.npy");
    write_npy(&src, "<f4", false, &[1], &to_le(&[0x3f80_0000], 4));
    let dst = path(&dir, "out.npy");
    // A backend that does not exist: the run must try the GPU to fail like this.
    let out = ewise_command()
        .env("EWISE_DEVICE", "gpu")
        .env("EWISE_GPU_ADAPTER", "no adapter is called this")
        .args(["sign", src.to_str().unwrap(), dst.to_str().unwrap()])
        .output()
        .unwrap();
    assert_error(&out, &["no GPU adapter found"]);
    let out = ewise_command()
        .env("EWISE_DEVICE", "gpu")
        .env("EWISE_GPU_ADAPTER", "no adapter is called this")
        .args(["sign", src.to_str().unwrap(), dst.to_str().unwrap()])
        .args(["--device", "cpu"])
        .output()
        .unwrap();
    assert_ok(&out);
}
