//! Bad files, bad paths and rejected shapes: one line naming the file and the problem,
//! exit status 1, no panic, and no output file.

mod common;

use common::*;
use ewise_cli::npy::{Header, MAGIC};

fn good_file() -> Vec<u8> {
    let header = Header {
        descr: "<f4".into(),
        fortran_order: false,
        shape: vec![2, 3],
    };
    let mut bytes = header.to_bytes();
    bytes.extend(std::iter::repeat_n(0u8, 24));
    bytes
}

fn with_text(text: &str) -> Vec<u8> {
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&[1, 0]);
    bytes.extend_from_slice(&(text.len() as u16).to_le_bytes());
    bytes.extend_from_slice(text.as_bytes());
    bytes.extend(std::iter::repeat_n(0u8, 64));
    bytes
}

#[test]
fn bad_files_give_one_line_errors_naming_the_file() {
    let good = good_file();
    let cases: Vec<(&str, Vec<u8>, &[&str])> = vec![
        ("empty", vec![], &["truncated", "0 bytes"]),
        ("short-magic", b"\x93NUM".to_vec(), &["truncated"]),
        ("zip", b"PK\x03\x04\x14\x00\x00\x00".to_vec(), &["not a .npy file"]),
        ("text", b"hello, world\n".to_vec(), &["not a .npy file"]),
        ("version", [&MAGIC[..], &[9, 0, 4, 0], b"{}  "].concat(), &["version 9.0"]),
        ("header-cut", good[..40].to_vec(), &["truncated", "header declares"]),
        ("data-cut", good[..good.len() - 5].to_vec(), &["lying header", "needs 24 bytes", "only 19"]),
        (
            "lying-shape",
            with_text("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }\n"),
            &["lying header", "(1000000, 1000000)"],
        ),
        ("huge-length", [&MAGIC[..], &[2, 0, 0xff, 0xff, 0xff, 0x7f], b"{"].concat(), &["implausible"]),
        ("not-literal", with_text("{'descr': '<f4', 'fortran_order': False, 'shape': (2,3) \n"), &["not a valid Python literal"]),
        ("not-dict", with_text("[1, 2, 3]\n"), &["not a dict"]),
        ("missing-key", with_text("{'descr': '<f4', 'shape': (2,)}\n"), &["no 'fortran_order' key"]),
        ("complex", with_text("{'descr': '<c8', 'fortran_order': False, 'shape': (2,)}\n"), &["'<c8'", "complex", "not supported"]),
        ("string", with_text("{'descr': '<U4', 'fortran_order': False, 'shape': (2,)}\n"), &["strings", "not supported"]),
        ("object", with_text("{'descr': '|O', 'fortran_order': False, 'shape': (2,)}\n"), &["Python objects", "not supported"]),
        (
            "structured",
            with_text("{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (2,)}\n"),
            &["structured dtypes"],
        ),
        ("bfloat16-untyped", with_text("{'descr': '<V2', 'fortran_order': False, 'shape': (2,)}\n"), &["--dtype bfloat16"]),
        ("negative-shape", with_text("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}\n"), &["'shape'", "non-negative"]),
        (
            "overflow-shape",
            with_text("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296)}\n"),
            &["64-bit"],
        ),
        ("deep", with_text(&"(".repeat(5000)), &["nested"]),
    ];
    let dir = temp_dir();
    for (name, bytes, fragments) in cases {
        let src = path(&dir, &format!("{name}.npy"));
        std::fs::write(&src, &bytes).unwrap();
        for op in ["sign", "is-infinity"] {
            let dst = path(&dir, &format!("{name}-out.npy"));
            let out = ewise([op, src.to_str().unwrap(), dst.to_str().unwrap()]);
            let mut all = fragments.to_vec();
            let shown = format!("{name}.npy: ");
            all.push(&shown);
            assert_error(&out, &all);
            assert!(!dst.exists(), "{name}: output exists");
        }
        let before = std::fs::read(&src).unwrap();
        let out = ewise(["sign", "--in-place", src.to_str().unwrap()]);
        assert_error(&out, fragments);
        assert_eq!(
            std::fs::read(&src).unwrap(),
            before,
            "{name}: in-place run changed a bad file"
        );
    }
    assert_eq!(file_names(dir.path()).len(), 20, "only the inputs remain");
}

#[test]
fn unreadable_and_unwritable_paths() {
    let dir = temp_dir();
    let src = path(&dir, "in.npy");
    std::fs::write(&src, good_file()).unwrap();
    let missing = path(&dir, "missing.npy");
    assert_error(
        &ewise([
            "sign",
            missing.to_str().unwrap(),
            path(&dir, "o.npy").to_str().unwrap(),
        ]),
        &["missing.npy: cannot open", "No such file"],
    );
    assert_error(
        &ewise([
            "sign",
            dir.path().to_str().unwrap(),
            path(&dir, "o.npy").to_str().unwrap(),
        ]),
        &["is a directory"],
    );
    let nowhere = dir.path().join("no-such-dir").join("o.npy");
    assert_error(
        &ewise(["sign", src.to_str().unwrap(), nowhere.to_str().unwrap()]),
        &[
            "o.npy: cannot create a file in",
            "no-such-dir",
            "No such file",
        ],
    );
    assert_error(
        &ewise(["sign", src.to_str().unwrap(), dir.path().to_str().unwrap()]),
        &["is a directory"],
    );
    assert_eq!(file_names(dir.path()), ["in.npy"]);
}

#[test]
fn a_full_disk_is_reported() {
    if !std::path::Path::new("/dev/full").exists() {
        return;
    }
    let dir = temp_dir();
    let src = path(&dir, "in.npy");
    std::fs::write(&src, good_file()).unwrap();
    assert_error(
        &ewise(["sign", src.to_str().unwrap(), "/dev/full"]),
        &["/dev/full: write failed: no space left on device"],
    );
}

#[test]
fn feature_level_errors_name_the_rule_and_hint_at_what_accepts() {
    let dir = temp_dir();
    let dst = path(&dir, "o.npy");
    let file = |name: &str, descr: &str, shape: &[u64], size: usize| {
        let p = path(&dir, name);
        let n: u64 = shape.iter().product();
        write_npy(&p, descr, false, shape, &vec![0u8; n as usize * size]);
        p
    };
    let three_d = file("t3.npy", "<f4", &[2, 2, 2], 4);
    let err = assert_error(
        &ewise([
            "sign",
            three_d.to_str().unwrap(),
            dst.to_str().unwrap(),
            "--feature-level",
            "2_1",
        ]),
        &["t3.npy: "],
    );
    assert!(err.contains(
        "ELEMENT_WISE_SIGN: InputTensor DimensionCount 3 is not supported at feature level 2_1 (supported: 4); hint: use --feature-level 3_0 or above, or leave out --feature-level: without it the extended rules apply, which accept it"
    ), "{err}");
    assert_error(
        &ewise([
            "is-infinity",
            three_d.to_str().unwrap(),
            dst.to_str().unwrap(),
            "--feature-level",
            "2_0",
        ]),
        &[
            "ELEMENT_WISE_IS_INFINITY",
            "2_0",
            "hint: use --feature-level 2_1 or above",
        ],
    );
    assert_error(
        &ewise([
            "sign",
            three_d.to_str().unwrap(),
            dst.to_str().unwrap(),
            "--feature-level",
            "1_0",
        ]),
        &[
            "ELEMENT_WISE_SIGN",
            "hint: use --feature-level 2_0 or above",
        ],
    );
    let four_d = file("t4.npy", "<f4", &[1, 1, 2, 2], 4);
    assert_ok(&ewise([
        "sign",
        four_d.to_str().unwrap(),
        dst.to_str().unwrap(),
        "--feature-level",
        "2_0",
    ]));
    let int64 = file("i8.npy", "<i8", &[4], 8);
    assert_error(
        &ewise([
            "sign",
            int64.to_str().unwrap(),
            dst.to_str().unwrap(),
            "--feature-level",
            "4_0",
        ]),
        &[
            "data type INT64 is not supported at feature level 4_0",
            "hint: use --feature-level 4_1 or above, or leave out --feature-level",
        ],
    );
    assert_ok(&ewise([
        "sign",
        int64.to_str().unwrap(),
        dst.to_str().unwrap(),
        "--feature-level",
        "4_1",
    ]));
    let int32 = file("i4.npy", "<i4", &[1, 1, 1, 4], 4);
    assert_error(
        &ewise([
            "sign",
            int32.to_str().unwrap(),
            dst.to_str().unwrap(),
            "--feature-level",
            "2_0",
        ]),
        &["data type INT32", "hint: use --feature-level 2_1 or above"],
    );
    let nine_d = file("t9.npy", "<f2", &[1; 9], 2);
    let nine_d = nine_d.to_str().unwrap();
    assert_error(
        &ewise(["sign", nine_d, dst.to_str().unwrap(), "--feature-level", "6_4"]),
        &[
            "DimensionCount 9",
            "(supported: 1 to 8); hint: leave out --feature-level: without it the extended rules apply, which accept it",
        ],
    );
    assert_ok(&ewise(["sign", nine_d, dst.to_str().unwrap()]));
    let f64 = file("f8.npy", "<f8", &[3], 8);
    let f64 = f64.to_str().unwrap();
    let strict = ["--feature-level", "6_4"];
    assert_error(
        &ewise([&["is-infinity", f64, dst.to_str().unwrap()][..], &strict].concat()),
        &[
            "data type FLOAT64 is not supported",
            "hint: leave out --feature-level",
        ],
    );
    assert_ok(&ewise(["is-infinity", f64, dst.to_str().unwrap()]));
    assert!(!dst.exists() || std::fs::metadata(&dst).unwrap().len() > 0);
}

#[test]
fn usage_errors_exit_with_two() {
    for args in [
        vec!["sign", "a.npy", "b.npy", "--feature-level", "7_0"],
        vec!["sign", "a.npy", "b.npy", "--semantics", "tensorflow"],
        vec!["sign", "a.npy", "b.npy", "--nan", "one"],
        vec!["sign", "a.npy", "b.npy", "--threads", "-1"],
        vec!["sign", "a.npy", "b.npy", "--dtype", "complex"],
        vec!["sign", "--in-place", "a.npy", "b.npy"],
        vec!["is-infinity", "--in-place", "a.npy"],
        vec!["frobnicate"],
    ] {
        let out = ewise(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"));
    }
    let out = ewise(["sign", "a.npy", "b.npy", "--feature-level", "7_0"]);
    assert!(stderr(&out).contains("unknown feature level '7_0'"));
}
