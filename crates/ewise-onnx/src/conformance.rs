//! The runner for ONNX's backend test cases: a directory holding `model.onnx` and
//! `test_data_set_*/` directories of `input_N.pb` and `output_N.pb` tensors.
//!
//! Outputs are compared bit for bit, except that a NaN matches any NaN of the same
//! type (payloads and signs of NaNs in ONNX's expected outputs are not meaningful).

use ewise_cpu::text::quoted;
use std::fmt;
use std::path::{Path, PathBuf};

use ewise_cpu::{DataType, NanPolicy};

use crate::dtype;
use crate::model::Model;
use crate::tensor::{shape_text, Tensor};

/// The result of one test case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseOutcome {
    /// The case's name: its directory's last component (`test_sign`).
    pub name: String,
    /// The case's directory.
    pub dir: PathBuf,
    /// Data sets that passed.
    pub passed_data_sets: usize,
    /// Why the case failed; `None` when it passed.
    pub failure: Option<String>,
}

impl CaseOutcome {
    /// True when the model loaded and every data set matched.
    pub fn passed(&self) -> bool {
        self.failure.is_none()
    }
}

impl fmt::Display for CaseOutcome {
    /// `PASS name` or `FAIL name: why`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.failure {
            None => write!(f, "PASS {}", self.name),
            Some(why) => write!(f, "FAIL {}: {why}", self.name),
        }
    }
}

/// `N passed, M failed` for a list of outcomes.
pub fn summary(outcomes: &[CaseOutcome]) -> String {
    let passed = outcomes.iter().filter(|o| o.passed()).count();
    format!("{passed} passed, {} failed", outcomes.len() - passed)
}

/// Runs the case in `dir` on the CPU with SIGN's NaN policy `policy`
/// ([`NanPolicy::Propagate`] is ONNX's). Never panics; every problem (unreadable files,
/// a model that fails to load, no data sets, a mismatch) is a failure with its reason.
pub fn run_case(dir: &Path, policy: NanPolicy) -> CaseOutcome {
    run_case_with(dir, policy, |model| model)
}

/// [`run_case`] on the GPU `gpu` (see [`Model::with_gpu`] for what the device must
/// accept), or on the CPU when `gpu` is `None`. GPU failures are failures of the case,
/// with their reason.
#[cfg(feature = "gpu")]
pub fn run_case_on(
    dir: &Path,
    policy: NanPolicy,
    gpu: Option<&ewise_gpu::GpuDevice>,
) -> CaseOutcome {
    run_case_with(dir, policy, |model| match gpu {
        Some(device) => model.with_gpu(device.clone()),
        None => model,
    })
}

/// [`run_case`] with the loaded model passed through `prepare` before it runs.
fn run_case_with(
    dir: &Path,
    policy: NanPolicy,
    prepare: impl FnOnce(Model) -> Model,
) -> CaseOutcome {
    let name = dir.file_name().map_or_else(
        || dir.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let mut outcome = CaseOutcome {
        name,
        dir: dir.to_path_buf(),
        passed_data_sets: 0,
        failure: None,
    };
    if let Err(why) = run_data_sets(dir, policy, prepare, &mut outcome.passed_data_sets) {
        outcome.failure = Some(why);
    }
    outcome
}

fn run_data_sets(
    dir: &Path,
    policy: NanPolicy,
    prepare: impl FnOnce(Model) -> Model,
    passed: &mut usize,
) -> Result<(), String> {
    let model = Model::load(dir.join("model.onnx"))
        .map_err(|e| format!("model does not load: {e}"))?
        .with_nan_policy(policy);
    let model = prepare(model);
    let mut sets: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let n = entry
                .file_name()
                .to_str()?
                .strip_prefix("test_data_set_")?
                .parse()
                .ok()?;
            entry.path().is_dir().then(|| (n, entry.path()))
        })
        .collect();
    if sets.is_empty() {
        return Err("no test_data_set_* directories".into());
    }
    sets.sort();
    for (_, set) in sets {
        let label = set
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        run_data_set(&model, &set).map_err(|why| format!("{label}: {why}"))?;
        *passed += 1;
    }
    Ok(())
}

/// The tensors `prefix_0.pb`, `prefix_1.pb`, ... of a data set, in order.
fn numbered_tensors(set: &Path, prefix: &str) -> Result<Vec<(String, Tensor)>, String> {
    let mut tensors = Vec::new();
    loop {
        let path = set.join(format!("{prefix}_{}.pb", tensors.len()));
        if !path.is_file() {
            return Ok(tensors);
        }
        tensors.push(Tensor::load_pb(&path).map_err(|e| e.to_string())?);
    }
}

fn run_data_set(model: &Model, set: &Path) -> Result<(), String> {
    let inputs = numbered_tensors(set, "input")?;
    let expected = numbered_tensors(set, "output")?;
    let positional: Vec<&str> = model
        .inputs()
        .iter()
        .filter(|i| !i.has_default)
        .map(|i| i.name.as_str())
        .collect();
    let mut named = Vec::with_capacity(inputs.len());
    for (i, (name, tensor)) in inputs.into_iter().enumerate() {
        let name = if model.input(&name).is_some() {
            name
        } else {
            positional
                .get(i)
                .ok_or_else(|| {
                    format!(
                        "input_{i}.pb has no matching graph input (the model takes {})",
                        positional.len()
                    )
                })?
                .to_string()
        };
        named.push((name, tensor));
    }
    let actual = model.run(named).map_err(|e| e.to_string())?;
    if actual.len() != expected.len() {
        return Err(format!(
            "the model gives {} outputs, the data set expects {}",
            actual.len(),
            expected.len()
        ));
    }
    for ((name, got), (_, want)) in actual.iter().zip(&expected) {
        compare(got, want).map_err(|why| format!("output {}: {why}", quoted(name)))?;
    }
    Ok(())
}

/// Compares `actual` with `expected`: same type, same shape, and every element's bits
/// equal, except that NaN matches NaN.
pub fn compare(actual: &Tensor, expected: &Tensor) -> Result<(), String> {
    if actual.data_type != expected.data_type {
        return Err(format!(
            "type {} differs from the expected {}",
            dtype::name(actual.data_type),
            dtype::name(expected.data_type)
        ));
    }
    if actual.shape != expected.shape {
        return Err(format!(
            "shape {} differs from the expected {}",
            shape_text(&actual.shape),
            shape_text(&expected.shape)
        ));
    }
    if actual.data.len() != expected.data.len() {
        return Err(format!(
            "{} data bytes differ from the expected {}",
            actual.data.len(),
            expected.data.len()
        ));
    }
    let size = usize::try_from(actual.data_type.size_in_bytes().unwrap_or(1)).unwrap_or(1);
    for (i, (a, e)) in actual
        .data
        .chunks_exact(size)
        .zip(expected.data.chunks_exact(size))
        .enumerate()
    {
        let (a, e) = (bits(a), bits(e));
        let both_nan = is_nan(actual.data_type, a) && is_nan(actual.data_type, e);
        if a != e && !both_nan {
            return Err(format!(
                "element {i} is 0x{a:0w$X}, expected 0x{e:0w$X}",
                w = size * 2
            ));
        }
    }
    Ok(())
}

/// The native-endian bytes of one element as an integer.
fn bits(bytes: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    if cfg!(target_endian = "big") {
        a[8 - bytes.len()..].copy_from_slice(bytes);
        u64::from_be_bytes(a)
    } else {
        a[..bytes.len()].copy_from_slice(bytes);
        u64::from_le_bytes(a)
    }
}

/// Whether an element's bit pattern is a NaN of `data_type`.
fn is_nan(data_type: DataType, bits: u64) -> bool {
    let ieee = |exponent_mask: u64, mantissa_mask: u64| {
        bits & exponent_mask == exponent_mask && bits & mantissa_mask != 0
    };
    match data_type {
        DataType::Float64 => ieee(0x7FF0_0000_0000_0000, 0x000F_FFFF_FFFF_FFFF),
        DataType::Float32 => ieee(0x7F80_0000, 0x007F_FFFF),
        DataType::Float16 => ieee(0x7C00, 0x03FF),
        DataType::Bfloat16 => ieee(0x7F80, 0x007F),
        DataType::Float8E5M2 => ieee(0x7C, 0x03),
        DataType::Float8E4M3Fn => bits & 0x7F == 0x7F,
        DataType::Float8E4M3Fnuz | DataType::Float8E5M2Fnuz => bits == 0x80,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_matches_any_nan_but_nothing_else() {
        let a = Tensor::from_values(vec![3], &[f32::NAN, -0.0, 1.0]).unwrap();
        let b = Tensor::from_values(vec![3], &[-f32::from_bits(0x7F80_0001), -0.0, 1.0]).unwrap();
        assert_eq!(compare(&a, &b), Ok(()));
        let c = Tensor::from_values(vec![3], &[f32::NAN, 0.0, 1.0]).unwrap();
        assert_eq!(
            compare(&a, &c),
            Err("element 1 is 0x80000000, expected 0x00000000".into())
        );
        let d = Tensor::from_values(vec![3], &[f32::INFINITY, -0.0, 1.0]).unwrap();
        assert!(compare(&a, &d).is_err());
    }

    #[test]
    fn float8_nan_patterns() {
        assert!(is_nan(DataType::Float8E4M3Fn, 0xFF));
        assert!(!is_nan(DataType::Float8E4M3Fn, 0x7E));
        assert!(is_nan(DataType::Float8E5M2, 0x7D));
        assert!(!is_nan(DataType::Float8E5M2, 0x7C));
        assert!(is_nan(DataType::Float8E5M2Fnuz, 0x80));
        assert!(!is_nan(DataType::Float8E4M3Fnuz, 0x00));
        assert!(!is_nan(DataType::Int8, 0xFF));
    }

    #[test]
    fn type_and_shape_mismatches_are_reported() {
        let a = Tensor::from_values(vec![1], &[1.0f32]).unwrap();
        let b = Tensor::from_values(vec![1], &[1.0f64]).unwrap();
        assert_eq!(
            compare(&a, &b),
            Err("type float differs from the expected double".into())
        );
        let c = Tensor::from_values(vec![1, 1], &[1.0f32]).unwrap();
        assert_eq!(
            compare(&a, &c),
            Err("shape [1] differs from the expected [1, 1]".into())
        );
    }

    #[test]
    fn missing_directory_is_a_failure_not_a_panic() {
        let outcome = run_case(Path::new("/nonexistent/test_x"), NanPolicy::Propagate);
        assert!(!outcome.passed());
        assert!(outcome
            .to_string()
            .starts_with("FAIL test_x: model does not load"));
        assert_eq!(summary(&[outcome]), "0 passed, 1 failed");
    }
}
