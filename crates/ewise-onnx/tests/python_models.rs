//! Models and test data written by the onnx Python package (`tests/data/generate.py`,
//! onnx 1.22): typed tensor fields as `helper.make_tensor` fills them, external data as
//! `save_model` lays it out, `dim_param` shapes with an empty data set, and every bit
//! pattern of the four float8 formats.

use std::path::Path;

use ewise_onnx::conformance::run_case;
use ewise_onnx::{Dim, Model, NanPolicy};

fn case(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/python")
        .join(name)
}

fn passes(name: &str, data_sets: usize) {
    let outcome = run_case(&case(name), NanPolicy::Propagate);
    assert!(outcome.passed(), "{outcome}");
    assert_eq!(outcome.passed_data_sets, data_sets, "{outcome}");
}

#[test]
fn typed_fields_written_by_onnx_helper_decode_to_the_same_values() {
    passes("typed_initializers", 1);
}

#[test]
fn external_data_written_by_onnx_save_model_is_read_from_beside_the_model() {
    passes("external_data", 1);
}

#[test]
fn dim_param_chain_runs_with_two_sizes_including_empty() {
    passes("dim_param_chain", 2);
    let model = Model::load(case("dim_param_chain").join("model.onnx")).unwrap();
    let x = &model.inputs()[0];
    assert_eq!(x.shape, Some(vec![Dim::Param("N".into()), Dim::Fixed(3)]));
    assert_eq!(model.outputs().len(), 3);
    assert_eq!(model.opset(), 20);
}

#[test]
fn every_float8_bit_pattern_matches_onnx_under_is_inf() {
    passes("float8_all_patterns", 1);
}

#[test]
fn external_data_needs_its_directory() {
    let bytes = std::fs::read(case("external_data").join("model.onnx")).unwrap();
    let err = Model::from_bytes(&bytes, None).unwrap_err().to_string();
    assert!(err.contains("needs the model's directory"), "{err}");
    let empty = tempfile::tempdir().unwrap();
    let err = Model::from_bytes(&bytes, Some(empty.path()))
        .unwrap_err()
        .to_string();
    assert!(err.contains("weights.bin"), "{err}");
}

#[test]
fn the_runner_notices_a_mismatch() {
    let outcome = run_case(&case("typed_initializers"), NanPolicy::Zero);
    let text = outcome.to_string();
    assert!(
        text.starts_with("FAIL typed_initializers: test_data_set_0: output \"y_f16\": element 2 is 0x0000, expected 0x7E01"),
        "{text}"
    );
}
