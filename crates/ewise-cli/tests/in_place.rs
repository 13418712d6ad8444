//! `ewise sign --in-place`: correct, header untouched, idempotent, and completed by a
//! second run after being killed mid-way.

mod common;

use std::io::{Read as _, Seek as _, SeekFrom};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;
use ewise_cpu::{DataType, NanPolicy};

#[test]
fn rewrites_data_and_never_the_header() {
    let dir = temp_dir();
    let file = path(&dir, "x.npy");
    for (descr, t, flags) in [
        ("<f4", DataType::Float32, vec![]),
        ("<f2", DataType::Float16, vec!["--semantics", "onnx"]),
        (
            "<f8",
            DataType::Float64,
            vec!["--semantics", "onnx", "--nan", "zero"],
        ),
        ("<i8", DataType::Int64, vec![]),
        ("|u1", DataType::Uint8, vec![]),
        (
            "<V2",
            DataType::Bfloat16,
            vec!["--semantics", "onnx", "--dtype", "bfloat16"],
        ),
    ] {
        let size = t.size_in_bytes().unwrap() as usize;
        let input = patterns(t, 30, 5);
        write_npy(
            &file,
            descr,
            true,
            &[input.len() as u64],
            &to_le(&input, size),
        );
        let before = std::fs::read(&file).unwrap();
        let header_len = before.len() - input.len() * size;
        let mut args = vec!["sign", "--in-place", file.to_str().unwrap()];
        args.extend(&flags);
        assert_ok(&ewise(&args));
        let after = std::fs::read(&file).unwrap();
        assert_eq!(
            after[..header_len],
            before[..header_len],
            "{descr}: header changed"
        );
        let policy = if flags.contains(&"onnx") && !flags.contains(&"zero") {
            NanPolicy::Propagate
        } else {
            NanPolicy::Zero
        };
        let want = expected_sign(t, &input, policy);
        assert_eq!(from_le(&after[header_len..], size), want, "{descr}");
        assert_ok(&ewise(&args));
        assert_eq!(
            std::fs::read(&file).unwrap(),
            after,
            "{descr}: a second run changed the file"
        );
    }
}

#[test]
fn big_endian_files_stay_big_endian() {
    let dir = temp_dir();
    let file = path(&dir, "be.npy");
    let data: Vec<u8> = [-3i32, 0, 7].iter().flat_map(|v| v.to_be_bytes()).collect();
    write_npy(&file, ">i4", false, &[3], &data);
    assert_ok(&ewise(["sign", "--in-place", file.to_str().unwrap()]));
    let (header, out) = read_npy(&file);
    assert_eq!(header.descr, ">i4");
    assert_eq!(
        out,
        [-1i32, 0, 1]
            .iter()
            .flat_map(|v| v.to_be_bytes())
            .collect::<Vec<_>>()
    );
}

#[test]
fn refuses_what_it_cannot_do_safely() {
    let dir = temp_dir();
    let file = path(&dir, "odd.npy");
    let mut text = String::from("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }");
    while (10 + text.len() + 1) % 4 != 1 {
        text.push(' ');
    }
    text.push('\n');
    let mut bytes = ewise_cli::npy::MAGIC.to_vec();
    bytes.extend_from_slice(&[1, 0]);
    bytes.extend_from_slice(&(text.len() as u16).to_le_bytes());
    bytes.extend_from_slice(text.as_bytes());
    bytes.extend_from_slice(&[0x80, 0, 0, 0xbf, 0, 0, 0, 0x40]);
    std::fs::write(&file, &bytes).unwrap();
    assert_error(
        &ewise(["sign", "--in-place", file.to_str().unwrap()]),
        &["odd.npy", "not a multiple of the 4-byte element size"],
    );
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
    let out = path(&dir, "out.npy");
    assert_ok(&ewise([
        "sign",
        file.to_str().unwrap(),
        out.to_str().unwrap(),
    ]));

    let three_d = path(&dir, "t3.npy");
    write_npy(
        &three_d,
        "<f4",
        false,
        &[1, 1, 2],
        &[0x80, 0, 0, 0xbf, 0, 0, 0, 0x40],
    );
    let before = std::fs::read(&three_d).unwrap();
    assert_error(
        &ewise([
            "sign",
            "--in-place",
            three_d.to_str().unwrap(),
            "--feature-level",
            "2_1",
        ]),
        &["DimensionCount 3", "--feature-level 3_0"],
    );
    assert_eq!(std::fs::read(&three_d).unwrap(), before);
}

const BLOCK: usize = 1 << 20;

#[test]
fn a_killed_run_is_completed_by_running_again() {
    let dir = temp_dir();
    let file = path(&dir, "big.npy");
    let t = DataType::Float32;
    let block = patterns(t, BLOCK - 15, 21);
    assert_eq!(block.len(), BLOCK);
    let blocks = 48;
    let block_bytes = to_le(&block, 4);
    let header = f32_header((BLOCK * blocks) as u64);
    let mut bytes = header.clone();
    for _ in 0..blocks {
        bytes.extend_from_slice(&block_bytes);
    }
    std::fs::write(&file, &bytes).unwrap();
    drop(bytes);
    let want = to_le(&expected_sign(t, &block, NanPolicy::Zero), 4);

    let mut child = ewise_command()
        .args(["sign", "--in-place", file.to_str().unwrap()])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = std::fs::File::open(&file).unwrap();
    let mut first = vec![0u8; 64];
    let start = Instant::now();
    loop {
        reader.seek(SeekFrom::Start(header.len() as u64)).unwrap();
        reader.read_exact(&mut first).unwrap();
        if first != block_bytes[..64] || start.elapsed() > Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(20));
            break;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(!err.contains("panicked"), "{err}");

    let after = std::fs::read(&file).unwrap();
    assert_eq!(after[..header.len()], header[..], "the header changed");
    let mut done = 0usize;
    for (i, element) in after[header.len()..].chunks_exact(4).enumerate() {
        let j = (i % BLOCK) * 4;
        let (old, new) = (&block_bytes[j..j + 4], &want[j..j + 4]);
        assert!(
            element == old || element == new,
            "element {i} is neither old nor done"
        );
        done += usize::from(element == new && old != new);
    }
    eprintln!("killed ({status}) with {done} changed elements written");

    assert_ok(&ewise(["sign", "--in-place", file.to_str().unwrap()]));
    let after = std::fs::read(&file).unwrap();
    assert_eq!(after[..header.len()], header[..]);
    for (i, chunk) in after[header.len()..].chunks(BLOCK * 4).enumerate() {
        assert!(chunk == &want[..], "block {i} differs after the second run");
    }
}
