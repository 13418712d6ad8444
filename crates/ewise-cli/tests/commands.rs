//! `support`, `demo`, `--help` and `--version`.

mod common;

use common::*;
use ewise_cpu::support::OPERATORS;
use ewise_cpu::FeatureLevel;

fn stdout(args: &[&str]) -> String {
    let out = ewise(args);
    assert_ok(&out);
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

fn names(types: &[ewise_cpu::DataType]) -> String {
    types
        .iter()
        .map(|t| t.name())
        .collect::<Vec<_>>()
        .join(", ")
}

#[test]
fn support_prints_every_row_of_the_tables() {
    let text = stdout(&["support"]);
    for op in OPERATORS {
        assert!(text.contains(&format!(
            "{} (DML_OPERATOR_TYPE {})",
            op.operator,
            op.operator.raw()
        )));
        for row in op.rows.iter().chain([&op.extended]) {
            let line = text
                .lines()
                .find(|l| {
                    l.contains(&names(row.input_types))
                        && (l.trim_start().starts_with(&row.from_level.to_string())
                            || l.trim_start().starts_with("extensions"))
                })
                .unwrap_or_else(|| panic!("no row for {} from {}", op.operator, row.from_level));
            assert!(line.contains(&row.max_dimensions.to_string()), "{line}");
        }
    }
}

#[test]
fn support_at_a_level_shows_the_row_in_force() {
    let text = stdout(&["support", "--op", "is-infinity", "--feature-level", "5_0"]);
    assert!(!text.contains("ELEMENT_WISE_SIGN"));
    assert!(
        text.contains("5_0 (row from 3_0)  1 to 8      FLOAT32, FLOAT16  UINT8"),
        "{text}"
    );
    let text = stdout(&["support", "--feature-level", "2_0"]);
    assert!(
        text.contains("2_0 (row from 2_0)  4           FLOAT32, FLOAT16  same as input"),
        "{text}"
    );
    assert!(
        text.contains("not available at feature level 2_0 (introduced at 2_1)"),
        "{text}"
    );
}

#[test]
fn support_json_follows_the_tables() {
    let json = stdout(&["support", "--json"]);
    assert!(json.starts_with("{\"operators\":[{\"name\":\"ELEMENT_WISE_SIGN\",\"value\":79,\"introduced\":\"2_0\",\"in_place\":true"));
    let rows = json.matches("\"from_level\"").count();
    let expected: usize = OPERATORS.iter().map(|op| op.rows.len() + 1).sum();
    assert_eq!(rows, expected);
    assert_eq!(json.matches('{').count(), json.matches('}').count());
    assert_eq!(json.matches('[').count(), json.matches(']').count());
    let at = stdout(&[
        "support",
        "--json",
        "--op",
        "sign",
        "--feature-level",
        "1_0",
    ]);
    assert!(
        at.starts_with("{\"feature_level\":\"1_0\",\"operators\":[{\"name\":\"ELEMENT_WISE_SIGN\"")
    );
    assert!(at.contains("\"available\":false,\"rows\":[]"), "{at}");
    for level in FeatureLevel::ALL {
        let at = stdout(&["support", "--json", "--feature-level", &level.to_string()]);
        assert_eq!(
            at.matches("\"from_level\"").count(),
            2 + OPERATORS
                .iter()
                .filter(|op| op.row_at(level).is_some())
                .count()
        );
    }
}

#[test]
fn demo_shows_the_cases_that_matter() {
    let text = stdout(&["demo"]);
    for ty in [
        "FLOAT32", "FLOAT16", "BFLOAT16", "FLOAT64", "INT8", "UINT8", "INT64",
    ] {
        assert!(text.contains(ty), "{ty}");
    }
    let row = |start: &str| -> Vec<String> {
        text.lines()
            .find(|l| l.trim_start().starts_with(start))
            .unwrap_or_else(|| panic!("no row {start}"))
            .split("  ")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    };
    assert_eq!(
        row("-0 "),
        [
            "-0",
            "0x80000000",
            "+0 0x00000000",
            "+0 0x00000000",
            "0",
            "0",
            "0"
        ]
    );
    assert_eq!(
        row("-inf"),
        ["-inf", "0xff800000", "-1", "-1", "1", "0", "1"]
    );
    assert_eq!(
        row("NaN payload 0x1 (signaling)"),
        [
            "NaN payload 0x1 (signaling)",
            "0x7f800001",
            "+0 0x00000000",
            "NaN 0x7f800001",
            "0",
            "0",
            "0"
        ]
    );
    assert_eq!(
        row("+1.401e-45"),
        [
            "+1.401e-45 (min subnormal)",
            "0x00000001",
            "+1",
            "+1",
            "0",
            "0",
            "0"
        ]
    );
    assert!(text.contains("INT8   -128                  -1"), "{text}");
}

#[test]
fn help_has_examples_for_every_command_and_version_prints() {
    for args in [
        vec!["--help"],
        vec!["sign", "--help"],
        vec!["is-infinity", "--help"],
        vec!["support", "--help"],
        vec!["demo", "--help"],
    ] {
        let text = stdout(&args);
        assert!(text.contains("Examples:\n  ewise "), "{args:?}");
    }
    assert_eq!(
        stdout(&["--version"]),
        format!("ewise {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn bench_on_the_gpu_prints_json_rows_with_their_fields() {
    let out = ewise([
        "bench",
        "--device",
        "gpu",
        "--sizes",
        "4Ki",
        "--op",
        "sign",
        "--dtype",
        "float32",
        "--samples",
        "3",
        "--json",
    ]);
    let err = stderr(&out);
    if !out.status.success() && err.contains("no GPU adapter found") {
        ewise_testkit::skip_without_gpu(err);
        return;
    }
    assert_ok(&out);
    let text = String::from_utf8(out.stdout).expect("UTF-8 output");
    let rows: Vec<&str> = text.lines().filter(|l| l.contains("\"kind\"")).collect();
    let cases: Vec<&&str> = rows
        .iter()
        .filter(|r| r.contains("\"kind\": \"case\""))
        .collect();
    assert_eq!(cases.len(), 4, "one row per layout: {text}");
    for layout in ["contiguous", "transposed", "broadcast", "rows"] {
        assert!(
            cases
                .iter()
                .any(|r| r.contains(&format!("\"layout\": \"{layout}\""))),
            "{layout} missing: {text}"
        );
    }
    for row in &cases {
        for key in [
            "\"op\": \"sign\"",
            "\"dtype\": \"FLOAT32\"",
            "\"elements\": 4096",
            "\"threads\"",
            "\"gbps\"",
            "\"best_copy_gbps\"",
            "\"best_copy\"",
            "\"best_copy_threads\"",
            "\"ratio\"",
            "\"ns_per_call\"",
            "\"input_read_ns\"",
            "\"vs_read\"",
            "\"nan\"",
            "\"copies\"",
            "\"device\": \"gpu\"",
            "\"adapter\"",
            "\"timer\"",
            "\"loads_in_flight\": ",
            "\"min_row_units\": ",
            "\"row_units\": ",
        ] {
            assert!(row.contains(key), "{key} missing from {row}");
        }
        assert!(
            row.contains("\"timer\": \"timestamps\"") || row.contains("\"timer\": \"wall\""),
            "{row}"
        );
    }
    for what in [
        "\"what\": \"execute\", \"dtype\": \"FLOAT32\", \"elements\": 1,",
        "\"what\": \"execute\", \"dtype\": \"FLOAT32\", \"elements\": 4096,",
        "\"what\": \"bare-submit-wait\"",
        "\"what\": \"record\"",
    ] {
        assert!(
            rows.iter()
                .any(|r| r.contains("\"kind\": \"overhead\"") && r.contains(what)),
            "{what} missing: {text}"
        );
    }
    let bad = ewise(["bench", "--device", "gpu", "--threads", "2"]);
    assert_error(&bad, &["--threads applies to --device cpu only"]);

    // The hidden tuning options: in force in every row, validated by the library.
    let tuned = ewise([
        "bench",
        "--device",
        "gpu",
        "--sizes",
        "4Ki",
        "--op",
        "sign",
        "--dtype",
        "int8",
        "--layout",
        "rows",
        "--row-units",
        "2",
        "--gpu-loads-in-flight",
        "8",
        "--gpu-min-row-units",
        "3",
        "--samples",
        "3",
        "--json",
    ]);
    assert_ok(&tuned);
    let text = String::from_utf8(tuned.stdout).expect("UTF-8 output");
    let cases: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("\"kind\": \"case\""))
        .collect();
    assert_eq!(cases.len(), 1, "{text}");
    for key in [
        "\"layout\": \"rows\"",
        "\"row_units\": 2",
        "\"loads_in_flight\": 8",
        "\"min_row_units\": 3",
        "\"elements\": 4096",
    ] {
        assert!(cases[0].contains(key), "{key} missing from {text}");
    }
    let bad = ewise([
        "bench",
        "--device",
        "gpu",
        "--sizes",
        "4Ki",
        "--gpu-loads-in-flight",
        "3",
    ]);
    assert_error(&bad, &["invalid GPU tuning", "loads_in_flight 3"]);
}

#[test]
fn bench_refuses_gpu_tuning_on_the_cpu() {
    for option in ["--gpu-loads-in-flight", "--gpu-min-row-units"] {
        let bad = ewise(["bench", "--device", "cpu", "--sizes", "4Ki", option, "4"]);
        assert_error(&bad, &["need --device gpu"]);
    }
}

/// `ewise bench` on the CPU for 4096 float32 elements, with `EWISE_STREAM_THRESHOLD`
/// set to `threshold` (or removed).
fn bench_with_threshold(threshold: Option<&str>, json: bool) -> (String, String) {
    let mut command = ewise_command();
    command.args([
        "bench",
        "--device",
        "cpu",
        "--op",
        "sign",
        "--dtype",
        "float32",
        "--layout",
        "contiguous",
        "--sizes",
        "4Ki",
        "--samples",
        "3",
    ]);
    if json {
        command.arg("--json");
    }
    match threshold {
        Some(value) => command.env("EWISE_STREAM_THRESHOLD", value),
        None => command.env_remove("EWISE_STREAM_THRESHOLD"),
    };
    let out = command.output().expect("the ewise binary runs");
    assert_ok(&out);
    let err = stderr(&out);
    let text = String::from_utf8(out.stdout).expect("UTF-8 output");
    (text, err)
}

#[test]
fn bench_reports_the_caches_and_the_streaming_threshold() {
    let (text, _) = bench_with_threshold(None, false);
    assert!(text.contains("\ncaches: "), "{text}");
    assert!(
        text.contains("streaming stores when input + output is "),
        "{text}"
    );
    assert!(!text.contains("EWISE_STREAM_THRESHOLD"), "{text}");
    let row = text.lines().last().unwrap();
    assert!(
        row.ends_with(" plain"),
        "4096 elements stay in cache: {text}"
    );

    let (text, _) = bench_with_threshold(Some("0"), false);
    assert!(
        text.contains("is above 0 bytes (set by EWISE_STREAM_THRESHOLD)"),
        "{text}"
    );
    assert!(
        text.lines().last().unwrap().ends_with(" streaming"),
        "{text}"
    );

    let (text, _) = bench_with_threshold(Some("never"), false);
    assert!(
        text.contains("is never (set by EWISE_STREAM_THRESHOLD)"),
        "{text}"
    );

    let (text, err) = bench_with_threshold(Some("lots"), false);
    assert!(
        text.contains("warning: EWISE_STREAM_THRESHOLD='lots' is not a byte count"),
        "{text}"
    );
    assert!(text.lines().last().unwrap().ends_with(" plain"), "{text}");
    assert!(err.is_empty(), "{err}");

    let (text, err) = bench_with_threshold(Some("lots"), true);
    assert!(
        err.contains("warning: EWISE_STREAM_THRESHOLD='lots'"),
        "{err}"
    );
    for key in [
        "\"streams\": false",
        "\"stream_threshold\": ",
        "\"llc_bytes\": ",
        "\"l2_bytes\": ",
        "\"cache_source\": \"",
    ] {
        assert!(text.contains(key), "{key} missing from {text}");
    }
    let (text, _) = bench_with_threshold(Some("1Ki"), true);
    assert!(
        text.contains("\"streams\": true, \"stream_threshold\": 1024,"),
        "{text}"
    );
}
