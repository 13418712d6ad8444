//! The operator versions ewise implements, as data: docs/SEMANTICS.md section 6.
//!
//! A node's version is resolved from the model's default-domain import: the highest
//! version of its operator not above the imported opset.

use ewise_cpu::DataType;

/// Lowest default-domain opset accepted (ONNX's first).
pub const MIN_OPSET: i64 = 1;
/// Highest default-domain opset accepted: the newest whose operator definitions ewise
/// knows (that of onnx 1.22). A later opset could redefine Sign or IsInf, so it is
/// refused rather than guessed at.
pub const MAX_OPSET: i64 = 27;

/// Which ONNX operator a schema describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpType {
    /// `Sign`: output has the input's type.
    Sign,
    /// `IsInf`: output is `bool`; attributes `detect_positive`, `detect_negative`.
    IsInf,
}

impl OpType {
    /// Both operators.
    pub const ALL: [OpType; 2] = [OpType::Sign, OpType::IsInf];

    /// The `op_type` string.
    pub const fn name(self) -> &'static str {
        match self {
            OpType::Sign => "Sign",
            OpType::IsInf => "IsInf",
        }
    }

    /// The operator with this `op_type` (case-sensitive, as ONNX is).
    pub fn from_name(op_type: &str) -> Option<OpType> {
        OpType::ALL.into_iter().find(|op| op.name() == op_type)
    }
}

/// One version of an operator: where it starts and what it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schema {
    /// The operator.
    pub op: OpType,
    /// The opset that introduced this version.
    pub since_version: i64,
    /// The accepted input types; Sign's output type is its input's, IsInf's is bool.
    pub input_types: &'static [DataType],
    /// The attribute names (all INT, default 1).
    pub attributes: &'static [&'static str],
}

const SIGN_9: &[DataType] = &[
    DataType::Float16,
    DataType::Float32,
    DataType::Float64,
    DataType::Int8,
    DataType::Int16,
    DataType::Int32,
    DataType::Int64,
    DataType::Uint8,
    DataType::Uint16,
    DataType::Uint32,
    DataType::Uint64,
];

const SIGN_13: &[DataType] = &[
    DataType::Float16,
    DataType::Float32,
    DataType::Float64,
    DataType::Int8,
    DataType::Int16,
    DataType::Int32,
    DataType::Int64,
    DataType::Uint8,
    DataType::Uint16,
    DataType::Uint32,
    DataType::Uint64,
    DataType::Bfloat16,
];

const IS_INF_10: &[DataType] = &[DataType::Float32, DataType::Float64];

const IS_INF_20: &[DataType] = &[
    DataType::Float32,
    DataType::Float64,
    DataType::Float16,
    DataType::Bfloat16,
    DataType::Float8E4M3Fn,
    DataType::Float8E4M3Fnuz,
    DataType::Float8E5M2,
    DataType::Float8E5M2Fnuz,
];

const IS_INF_ATTRIBUTES: &[&str] = &["detect_positive", "detect_negative"];

/// Every operator version ewise implements, oldest first per operator.
pub const SCHEMAS: [Schema; 4] = [
    Schema {
        op: OpType::Sign,
        since_version: 9,
        input_types: SIGN_9,
        attributes: &[],
    },
    Schema {
        op: OpType::Sign,
        since_version: 13,
        input_types: SIGN_13,
        attributes: &[],
    },
    Schema {
        op: OpType::IsInf,
        since_version: 10,
        input_types: IS_INF_10,
        attributes: IS_INF_ATTRIBUTES,
    },
    Schema {
        op: OpType::IsInf,
        since_version: 20,
        input_types: IS_INF_20,
        attributes: IS_INF_ATTRIBUTES,
    },
];

/// The version of `op` that applies at `opset`: the newest not above it. `Err` holds the
/// operator's first version when `opset` predates it.
pub fn resolve(op: OpType, opset: i64) -> Result<&'static Schema, i64> {
    let versions = SCHEMAS.iter().filter(|s| s.op == op);
    versions
        .clone()
        .filter(|s| s.since_version <= opset)
        .max_by_key(|s| s.since_version)
        .ok_or_else(|| versions.map(|s| s.since_version).min().unwrap_or(i64::MAX))
}

/// True for the names of ONNX's default domain: `""` and `"ai.onnx"`.
pub fn is_default_domain(domain: &str) -> bool {
    domain.is_empty() || domain == "ai.onnx"
}

/// `Sign (opsets 9, 13), IsInf (opsets 10, 20) of the default domain`.
pub(crate) fn supported_text() -> String {
    let ops: Vec<String> = OpType::ALL
        .iter()
        .map(|&op| {
            let versions: Vec<String> = SCHEMAS
                .iter()
                .filter(|s| s.op == op)
                .map(|s| s.since_version.to_string())
                .collect();
            format!("{} (opsets {})", op.name(), versions.join(", "))
        })
        .collect();
    format!("{} of the default domain", ops.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolution_picks_the_newest_version_not_above_the_opset() {
        let v = |op, opset| resolve(op, opset).map(|s| s.since_version);
        assert_eq!(v(OpType::Sign, 8), Err(9));
        assert_eq!(v(OpType::Sign, 9), Ok(9));
        assert_eq!(v(OpType::Sign, 12), Ok(9));
        assert_eq!(v(OpType::Sign, 13), Ok(13));
        assert_eq!(v(OpType::Sign, MAX_OPSET), Ok(13));
        assert_eq!(v(OpType::IsInf, 9), Err(10));
        assert_eq!(v(OpType::IsInf, 19), Ok(10));
        assert_eq!(v(OpType::IsInf, 20), Ok(20));
    }

    #[test]
    fn supported_list_names_every_version() {
        assert_eq!(
            supported_text(),
            "Sign (opsets 9, 13), IsInf (opsets 10, 20) of the default domain"
        );
    }
}
