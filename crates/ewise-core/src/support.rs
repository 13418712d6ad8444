//! The DirectML support tables (docs/SEMANTICS.md section 3), kept as data.
//!
//! Validation, `ewise support` and the tests all read these tables; nothing else in the
//! code knows which level supports what.

use crate::dtype::DataType;
use crate::level::FeatureLevel;
use crate::operator::OperatorType;

use DataType::*;

/// Highest dimension count accepted through [`crate::Extensions::Enabled`] (numpy's limit).
pub const MAX_EXTENDED_DIMENSIONS: u32 = 64;

/// Highest element count of one tensor under the strict DirectML rules (2^32 - 1).
pub const MAX_STRICT_ELEMENTS: u64 = u32::MAX as u64;

/// What one operator accepts from one feature level on (until a higher row replaces it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SupportRow {
    /// The first level this row applies to.
    pub from_level: FeatureLevel,
    /// Lowest accepted dimension count.
    pub min_dimensions: u32,
    /// Highest accepted dimension count.
    pub max_dimensions: u32,
    /// Accepted input data types.
    pub input_types: &'static [DataType],
    /// Accepted output data types.
    pub output_types: &'static [DataType],
}

impl SupportRow {
    /// Whether this dimension count is accepted.
    pub fn accepts_dimensions(&self, count: usize) -> bool {
        u32::try_from(count).is_ok_and(|c| (self.min_dimensions..=self.max_dimensions).contains(&c))
    }
}

/// Everything about one operator's support.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OperatorSupport {
    /// The operator.
    pub operator: OperatorType,
    /// The level that introduced it.
    pub introduced: FeatureLevel,
    /// Whether the output may be bound to exactly the input's buffer range.
    pub in_place: bool,
    /// Whether the output must have the input's data type.
    pub same_data_type: bool,
    /// The DirectML rows, lowest level first.
    pub rows: &'static [SupportRow],
    /// What the operator accepts when extensions are enabled (any level from
    /// `introduced` on): a superset of every DirectML row.
    pub extended: SupportRow,
}

const SIGN_2_0: &[DataType] = &[Float32, Float16];
const SIGN_2_1: &[DataType] = &[Float32, Float16, Int32, Int16, Int8, Uint32, Uint16, Uint8];
const SIGN_4_1: &[DataType] = &[
    Float32, Float16, Int64, Int32, Int16, Int8, Uint64, Uint32, Uint16, Uint8,
];
const SIGN_EXTENDED: &[DataType] = &[
    Float32, Float16, Float64, Bfloat16, Int64, Int32, Int16, Int8, Uint64, Uint32, Uint16, Uint8,
];
const IS_INF_INPUT: &[DataType] = &[Float32, Float16];
const IS_INF_OUTPUT: &[DataType] = &[Uint8];
const IS_INF_INPUT_EXTENDED: &[DataType] = &[
    Float32,
    Float16,
    Float64,
    Bfloat16,
    Float8E4M3Fn,
    Float8E4M3Fnuz,
    Float8E5M2,
    Float8E5M2Fnuz,
];
const IS_INF_OUTPUT_EXTENDED: &[DataType] = &[Uint8, Bool];

/// `ELEMENT_WISE_SIGN`.
pub const SIGN: OperatorSupport = OperatorSupport {
    operator: OperatorType::ElementWiseSign,
    introduced: FeatureLevel::L2_0,
    in_place: true,
    same_data_type: true,
    rows: &[
        SupportRow {
            from_level: FeatureLevel::L2_0,
            min_dimensions: 4,
            max_dimensions: 4,
            input_types: SIGN_2_0,
            output_types: SIGN_2_0,
        },
        SupportRow {
            from_level: FeatureLevel::L2_1,
            min_dimensions: 4,
            max_dimensions: 4,
            input_types: SIGN_2_1,
            output_types: SIGN_2_1,
        },
        SupportRow {
            from_level: FeatureLevel::L3_0,
            min_dimensions: 1,
            max_dimensions: 8,
            input_types: SIGN_2_1,
            output_types: SIGN_2_1,
        },
        SupportRow {
            from_level: FeatureLevel::L4_1,
            min_dimensions: 1,
            max_dimensions: 8,
            input_types: SIGN_4_1,
            output_types: SIGN_4_1,
        },
    ],
    extended: SupportRow {
        from_level: FeatureLevel::L2_0,
        min_dimensions: 0,
        max_dimensions: MAX_EXTENDED_DIMENSIONS,
        input_types: SIGN_EXTENDED,
        output_types: SIGN_EXTENDED,
    },
};

/// `ELEMENT_WISE_IS_INFINITY`.
pub const IS_INFINITY: OperatorSupport = OperatorSupport {
    operator: OperatorType::ElementWiseIsInfinity,
    introduced: FeatureLevel::L2_1,
    in_place: false,
    same_data_type: false,
    rows: &[
        SupportRow {
            from_level: FeatureLevel::L2_1,
            min_dimensions: 4,
            max_dimensions: 4,
            input_types: IS_INF_INPUT,
            output_types: IS_INF_OUTPUT,
        },
        SupportRow {
            from_level: FeatureLevel::L3_0,
            min_dimensions: 1,
            max_dimensions: 8,
            input_types: IS_INF_INPUT,
            output_types: IS_INF_OUTPUT,
        },
    ],
    extended: SupportRow {
        from_level: FeatureLevel::L2_1,
        min_dimensions: 0,
        max_dimensions: MAX_EXTENDED_DIMENSIONS,
        input_types: IS_INF_INPUT_EXTENDED,
        output_types: IS_INF_OUTPUT_EXTENDED,
    },
};

/// Every operator's support, in [`OperatorType::ALL`] order.
pub const OPERATORS: [&OperatorSupport; 2] = [&SIGN, &IS_INFINITY];

impl OperatorSupport {
    /// The support record of this operator.
    pub fn of(operator: OperatorType) -> &'static OperatorSupport {
        match operator {
            OperatorType::ElementWiseSign => &SIGN,
            OperatorType::ElementWiseIsInfinity => &IS_INFINITY,
        }
    }

    /// The DirectML row in force at this level; `None` before the operator's introduction.
    pub fn row_at(&self, level: FeatureLevel) -> Option<&'static SupportRow> {
        self.rows.iter().rev().find(|row| row.from_level <= level)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_ordered_and_start_at_introduction() {
        for op in OPERATORS {
            assert_eq!(op.rows[0].from_level, op.introduced);
            assert!(op
                .rows
                .windows(2)
                .all(|w| w[0].from_level < w[1].from_level));
            for row in op.rows {
                assert!(row
                    .input_types
                    .iter()
                    .all(|t| op.extended.input_types.contains(t)));
                assert!(row
                    .output_types
                    .iter()
                    .all(|t| op.extended.output_types.contains(t)));
                assert!(op.extended.min_dimensions <= row.min_dimensions);
                assert!(op.extended.max_dimensions >= row.max_dimensions);
            }
        }
    }
}
