//! The CLI's defaults are the ones docs/SEMANTICS.md section 8.2 states: this test reads
//! that table (the rows after the `<!-- defaults-table` marker, up to the next blank
//! line; the column headed "CLI `sign`, `is-infinity`") and checks every row against
//! the built `ewise sign` and `ewise is-infinity` run without options. A setting or a
//! cell this test does not know fails it, so the table and the CLI cannot drift apart.
//!
//! The software-renderer row runs `--device gpu` on the adapter `ewise devices` picks
//! (lavapipe in CI); without an adapter it skips with a line, unless
//! EWISE_REQUIRE_GPU=1.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::*;
use ewise_cpu::{DataType, InfinityMode, NanPolicy};

/// The variable that sets `--device`; removed, so that the defaults are what runs.
const DEVICE_ENV: &str = "EWISE_DEVICE";

/// The column of the table that describes the CLI.
const COLUMN: &str = "CLI `sign`, `is-infinity`";

/// A scratch directory with the inputs the rows run on.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch { dir: temp_dir() }
    }

    /// `name` in the scratch directory.
    fn at(&self, name: &str) -> PathBuf {
        path(&self.dir, name)
    }

    /// Writes `patterns` of type `t` as `name` (a 1-D array, or `shape` when given).
    fn input(
        &self,
        name: &str,
        descr: &str,
        t: DataType,
        shape: &[u64],
        patterns: &[u64],
    ) -> PathBuf {
        let size = t.size_in_bytes().expect("sized type") as usize;
        let file = self.at(name);
        write_npy(&file, descr, false, shape, &to_le(patterns, size));
        file
    }

    /// The test patterns of `t`, written as `name`.
    fn patterns(&self, name: &str, descr: &str, t: DataType) -> (PathBuf, Vec<u64>) {
        let p = patterns(t, 64, 49);
        (self.input(name, descr, t, &[p.len() as u64], &p), p)
    }
}

/// Runs `ewise` with `args` and no `EWISE_DEVICE` in its environment.
fn run(args: &[&str]) -> Output {
    let mut command = ewise_command();
    command.args(args).env_remove(DEVICE_ENV);
    command.output().expect("the ewise binary runs")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 temporary path")
}

/// Whether `cell` says accepted (true) or refused (false); any other word fails.
fn accepted(setting: &str, cell: &str) -> bool {
    match cell {
        "accepted" => true,
        "refused" => false,
        other => panic!("row {setting:?}: the cell {other:?} is not accepted or refused"),
    }
}

/// Checks that SIGN of `file` (patterns `input` of type `t`, with `extra` options) is
/// accepted and gives the reference bits under NaN policy Zero, or is refused, as
/// `accept` says; returns the refusal's message.
fn sign_is(
    scratch: &Scratch,
    accept: bool,
    t: DataType,
    (file, input): (&Path, &[u64]),
    extra: &[&str],
) -> Option<String> {
    let out_file = scratch.at("sign-out.npy");
    let _ = std::fs::remove_file(&out_file);
    let mut args = vec!["sign", s(file), s(&out_file)];
    args.extend_from_slice(extra);
    let out = run(&args);
    if !accept {
        let text = assert_error(&out, &[]);
        assert!(
            !out_file.exists(),
            "{args:?} was refused but wrote its output"
        );
        return Some(text);
    }
    assert_ok(&out);
    let (header, data) = read_npy(&out_file);
    let size = t.size_in_bytes().expect("sized type") as usize;
    assert_eq!(
        from_le(&data, size),
        expected_sign(t, input, NanPolicy::Zero),
        "{args:?}"
    );
    assert_eq!(header.shape.iter().product::<u64>(), input.len() as u64);
    None
}

/// The rule of row "rules" or "rules with a feature level" (`extra` the options that
/// row adds): the extended rules accept float64, an empty array, a 0-d array and an
/// empty array with a dimension beyond 2^32 - 1; the strict ones refuse each, with a
/// message naming the rule broken and the hint that the extended rules accept it.
fn check_rules(scratch: &Scratch, setting: &str, cell: &str, extra: &[&str]) {
    let extended = match cell {
        "extended" => true,
        "strict" => false,
        other => panic!("row {setting:?}: the cell {other:?} is not extended or strict"),
    };
    let (f64_file, f64_patterns) = scratch.patterns("rules-f64.npy", "<f8", DataType::Float64);
    let zero_d = scratch.input(
        "rules-0d.npy",
        "<f4",
        DataType::Float32,
        &[],
        &[0xbf80_0000],
    );
    let empty = scratch.input("rules-empty.npy", "<f4", DataType::Float32, &[0, 3], &[]);
    let huge_empty = scratch.input(
        "rules-huge-empty.npy",
        "<f4",
        DataType::Float32,
        &[0, 5_000_000_000],
        &[],
    );
    let cases: [(&Path, &[u64], DataType, &str); 4] = [
        (&f64_file, &f64_patterns, DataType::Float64, "FLOAT64"),
        (
            &zero_d,
            &[0xbf80_0000],
            DataType::Float32,
            "DimensionCount 0",
        ),
        (&empty, &[], DataType::Float32, "is 0"),
        (&huge_empty, &[], DataType::Float32, "32-bit"),
    ];
    for (file, input, t, rule) in cases {
        let Some(message) = sign_is(scratch, extended, t, (file, input), extra) else {
            continue;
        };
        assert!(
            message.to_lowercase().contains(&rule.to_lowercase()),
            "row {setting:?}: the refusal of {} names no {rule:?}: {message}",
            file.display()
        );
        assert!(
            message.contains("hint: leave out --feature-level"),
            "row {setting:?}: the refusal of {} gives no hint: {message}",
            file.display()
        );
    }
    let out_file = scratch.at("rules-isinf.npy");
    let out = run(&[&["is-infinity", s(&f64_file), s(&out_file)][..], extra].concat());
    assert_eq!(
        out.status.success(),
        extended,
        "{setting}: is-infinity float64: {}",
        stderr(&out)
    );
}

/// A row naming a type and whether the CLI takes it without options.
fn check_type(
    scratch: &Scratch,
    setting: &str,
    cell: &str,
    t: DataType,
    descr: &str,
    extra: &[&str],
) {
    let name = format!("type-{}.npy", descr.trim_start_matches('<'));
    let (file, input) = scratch.patterns(&name, descr, t);
    sign_is(scratch, accepted(setting, cell), t, (&file, &input), extra);
}

fn check_mode_neither(scratch: &Scratch, setting: &str, cell: &str) {
    let (file, _) = scratch.patterns("neither.npy", "<f4", DataType::Float32);
    let out_file = scratch.at("neither-out.npy");
    let out = run(&["is-infinity", s(&file), s(&out_file), "--mode", "neither"]);
    if !accepted(setting, cell) {
        assert_error(&out, &["NEITHER"]);
        return;
    }
    assert_ok(&out);
    let (_, data) = read_npy(&out_file);
    assert!(!data.is_empty() && data.iter().all(|&b| b == 0), "{data:?}");
}

fn check_nan_policy(scratch: &Scratch, setting: &str, cell: &str) {
    let policy = match cell {
        "zero" => NanPolicy::Zero,
        "propagate" => NanPolicy::Propagate,
        other => panic!("row {setting:?}: the cell {other:?} is not a NaN policy"),
    };
    let nan = 0x7fc0_0001u64;
    let input = [nan, 0xffc0_0000, 0x7f80_0001, 0xbf80_0000];
    let file = scratch.input("nan.npy", "<f4", DataType::Float32, &[4], &input);
    let out_file = scratch.at("nan-out.npy");
    assert_ok(&run(&["sign", s(&file), s(&out_file)]));
    let (_, data) = read_npy(&out_file);
    let expected = expected_sign(DataType::Float32, &input, policy);
    assert_eq!(from_le(&data, 4), expected, "row {setting:?}");
    if policy == NanPolicy::Zero {
        assert_eq!(&expected[..3], [0, 0, 0], "NaN gives +0's bits");
    }
}

fn check_mode(scratch: &Scratch, setting: &str, cell: &str) {
    let mode = match cell {
        "either" => InfinityMode::Either,
        "positive" => InfinityMode::Positive,
        "negative" => InfinityMode::Negative,
        "neither" => InfinityMode::Neither,
        other => panic!("row {setting:?}: the cell {other:?} is not a mode"),
    };
    let (file, input) = scratch.patterns("mode.npy", "<f4", DataType::Float32);
    let out_file = scratch.at("mode-out.npy");
    assert_ok(&run(&["is-infinity", s(&file), s(&out_file)]));
    let (_, data) = read_npy(&out_file);
    let expected = expected_is_infinity(DataType::Float32, &input, mode);
    assert_eq!(from_le(&data, 1), expected, "row {setting:?}");
    assert!(
        expected.contains(&1) && expected.contains(&0),
        "{expected:?}"
    );
}

fn check_output_type(scratch: &Scratch, setting: &str, cell: &str) {
    let descr = match cell {
        "uint8" => "|u1",
        "bool" => "|b1",
        other => panic!("row {setting:?}: the cell {other:?} is not an output type"),
    };
    let (file, _) = scratch.patterns("output.npy", "<f4", DataType::Float32);
    let out_file = scratch.at("output-out.npy");
    assert_ok(&run(&["is-infinity", s(&file), s(&out_file)]));
    let (header, _) = read_npy(&out_file);
    assert_eq!(header.descr, descr, "row {setting:?}");
}

/// The default device: with EWISE_GPU_BACKEND set to something no GPU device accepts, a
/// run on the CPU succeeds and one on the GPU fails naming that variable.
fn check_device(scratch: &Scratch, setting: &str, cell: &str) {
    let on_gpu = match cell {
        "cpu" => false,
        "gpu" => true,
        other => panic!("row {setting:?}: the cell {other:?} is not a device"),
    };
    let (file, _) = scratch.patterns("device.npy", "<f4", DataType::Float32);
    let out_file = scratch.at("device-out.npy");
    for command in ["sign", "is-infinity"] {
        let out = ewise_command()
            .args([command, s(&file), s(&out_file)])
            .env_remove(DEVICE_ENV)
            .env("EWISE_GPU_BACKEND", "no-such-backend")
            .output()
            .expect("the ewise binary runs");
        if on_gpu {
            assert_error(&out, &["EWISE_GPU_BACKEND"]);
        } else {
            assert_ok(&out);
        }
    }
}

/// `--device gpu` on a software renderer that nobody named: one warning line on
/// standard error, the sentence ewise-gpu gives every front end; named with
/// EWISE_GPU_ADAPTER, no warning.
fn check_software_renderer(scratch: &Scratch, setting: &str, cell: &str) {
    if cell != "stderr warning" {
        panic!("row {setting:?}: the cell {cell:?} is not \"stderr warning\"");
    }
    let devices = ewise_command()
        .args(["devices", "--json"])
        .env_remove(ewise_gpu::ADAPTER_ENV)
        .output()
        .expect("the ewise binary runs");
    assert_ok(&devices);
    let json = String::from_utf8_lossy(&devices.stdout).into_owned();
    let Some(chosen) = json
        .split('{')
        .find(|adapter| adapter.contains("\"chosen\": true"))
    else {
        ewise_testkit::skip_without_gpu(format!(
            "row {setting:?}: `ewise devices` finds no GPU adapter: {json}"
        ));
        return;
    };
    if !chosen.contains("\"type\": \"software\"") {
        eprintln!(
            "skipping row {setting:?}: the adapter chosen here is not a software renderer: {chosen}"
        );
        return;
    }
    let (file, _) = scratch.patterns("gpu.npy", "<f4", DataType::Float32);
    let out_file = scratch.at("gpu-out.npy");
    let gpu_run = |adapter: Option<&str>| {
        let mut command = ewise_command();
        command
            .args(["sign", s(&file), s(&out_file), "--device", "gpu"])
            .env_remove(ewise_gpu::ADAPTER_ENV);
        if let Some(name) = adapter {
            command.env(ewise_gpu::ADAPTER_ENV, name);
        }
        let out = command.output().expect("the ewise binary runs");
        assert_ok(&out);
        stderr(&out)
    };
    let text = gpu_run(None);
    let warnings: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("ewise: warning: "))
        .collect();
    assert_eq!(warnings.len(), 1, "row {setting:?}: {text}");
    for part in [
        "a software renderer chosen because no GPU was found",
        ewise_gpu::ADAPTER_ENV,
    ] {
        assert!(
            warnings[0].contains(part),
            "row {setting:?}: {part:?} in {text}"
        );
    }
    if std::env::var_os(ewise_gpu::ADAPTER_ENV).is_none() {
        let device = ewise_gpu::GpuDevice::new().expect("the adapter ewise opened opens here");
        let sentence = device
            .software_warning()
            .expect("the same software renderer");
        assert_eq!(warnings[0], format!("ewise: warning: {sentence}"));
    }
    let name = chosen
        .split("\"name\": \"")
        .nth(1)
        .and_then(|rest| rest.split(" (").next())
        .expect("the chosen adapter has a name");
    let text = gpu_run(Some(name));
    assert!(!text.contains("warning"), "named {name:?}: {text}");
}

#[test]
fn every_row_of_the_defaults_table_holds_for_the_cli() {
    let scratch = Scratch::new();
    let rows = ewise_testkit::defaults_column(COLUMN);
    assert!(rows.len() >= 10, "the defaults table has only {rows:?}");
    for (setting, cell) in &rows {
        let (setting, cell) = (setting.as_str(), cell.as_str());
        match setting {
            "rules" => check_rules(&scratch, setting, cell, &[]),
            "rules with a feature level" => {
                check_rules(&scratch, setting, cell, &["--feature-level", "6_4"])
            }
            "float64 input" => check_type(&scratch, setting, cell, DataType::Float64, "<f8", &[]),
            "int64 input" => check_type(&scratch, setting, cell, DataType::Int64, "<i8", &[]),
            "bfloat16 input" => check_type(
                &scratch,
                setting,
                cell,
                DataType::Bfloat16,
                "<V2",
                &["--dtype", "bfloat16"],
            ),
            "IS_INFINITY mode `neither`" => check_mode_neither(&scratch, setting, cell),
            "SIGN NaN policy" => check_nan_policy(&scratch, setting, cell),
            "IS_INFINITY mode" => check_mode(&scratch, setting, cell),
            "IS_INFINITY output" => check_output_type(&scratch, setting, cell),
            "device" => check_device(&scratch, setting, cell),
            "software renderer chosen unasked" => check_software_renderer(&scratch, setting, cell),
            other => panic!("the defaults table has a row {other:?} (cell {cell:?}) that this test does not know"),
        }
    }
}
