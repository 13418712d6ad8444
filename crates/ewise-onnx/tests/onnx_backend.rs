//! ONNX's own backend test cases for Sign and IsInf, from the onnx package's data
//! directory. Set `EWISE_ONNX_TEST_DATA` to that directory (`scripts/onnx-conformance.sh`
//! prints it); without it the test only prints a note.

use std::path::PathBuf;

use ewise_onnx::conformance::{run_case, summary};
use ewise_onnx::NanPolicy;

const CASES: [&str; 6] = [
    "node/test_sign",
    "node/test_isinf",
    "node/test_isinf_positive",
    "node/test_isinf_negative",
    "node/test_isinf_float16",
    "simple/test_sign_model",
];

#[test]
fn onnx_backend_cases_pass() {
    let Some(data) = std::env::var_os("EWISE_ONNX_TEST_DATA") else {
        eprintln!(
            "note: EWISE_ONNX_TEST_DATA is not set; skipping ONNX's backend cases \
             (set it to the output of scripts/onnx-conformance.sh)"
        );
        return;
    };
    let data = PathBuf::from(data);
    let outcomes: Vec<_> = CASES
        .iter()
        .map(|case| run_case(&data.join(case), NanPolicy::Propagate))
        .collect();
    for outcome in &outcomes {
        eprintln!("{outcome}");
    }
    eprintln!("{}", summary(&outcomes));
    for outcome in &outcomes {
        assert!(outcome.passed(), "{outcome}");
        assert!(outcome.passed_data_sets >= 1, "{outcome}");
    }
}
