//! Validation of operator descriptions against a feature level and the support tables.

use crate::error::{Error, Result};
use crate::layout::output_overlaps;
use crate::level::FeatureLevel;
use crate::operator::{OperatorDesc, OperatorType, TensorRole};
use crate::support::{OperatorSupport, SupportRow, MAX_STRICT_ELEMENTS};
use crate::tensor::{TensorDesc, TensorFlags};

/// Whether descriptions may go beyond what DirectML accepts.
///
/// `Disabled` (the default) is the strict DirectML API: only the support tables of
/// docs/SEMANTICS.md section 3 at the device's level. `Enabled` is the explicit opt-in the
/// ONNX front end and the CLI's ONNX semantics use; it accepts, from the operator's
/// introduction on:
/// - the extension data types (BFLOAT16, BOOL output for IS_INFINITY, the float8
///   formats for IS_INFINITY) and FLOAT64,
/// - 0 to [`crate::support::MAX_EXTENDED_DIMENSIONS`] dimensions (0 is a scalar),
/// - sizes of 0 (empty tensors) and more than 2^32 - 1 elements,
/// - [`crate::InfinityMode::Neither`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Extensions {
    /// Strict DirectML rules.
    #[default]
    Disabled,
    /// ewise extensions accepted.
    Enabled,
}

/// Checks a description as DirectML's operator creation does, at `level`.
///
/// Errors name the operator, the tensor, the field, the value and what is accepted.
pub fn validate(desc: &OperatorDesc, level: FeatureLevel, extensions: Extensions) -> Result<()> {
    let operator = desc.operator_type();
    let support = OperatorSupport::of(operator);
    let strict_row = support.row_at(level).ok_or(Error::OperatorNotAvailable {
        operator,
        level,
        introduced: support.introduced,
    })?;
    let extended = extensions == Extensions::Enabled;
    let row = if extended {
        &support.extended
    } else {
        strict_row
    };
    if let OperatorDesc::IsInfinity(d) = desc {
        if d.mode.is_extension() && !extended {
            return Err(Error::UnsupportedInfinityMode {
                operator,
                given: d.mode,
            });
        }
    }
    let rules = Rules {
        operator,
        level,
        extended,
        row,
    };
    rules.tensor(TensorRole::Input, desc.input())?;
    rules.tensor(TensorRole::Output, desc.output())?;
    let (input, output) = (desc.input(), desc.output());
    if support.same_data_type && input.data_type != output.data_type {
        return Err(Error::DataTypeMismatch {
            operator,
            input: input.data_type,
            output: output.data_type,
        });
    }
    if input.sizes != output.sizes {
        return Err(Error::SizesMismatch {
            operator,
            input: input.sizes.clone(),
            output: output.sizes.clone(),
        });
    }
    Ok(())
}

struct Rules<'a> {
    operator: OperatorType,
    level: FeatureLevel,
    extended: bool,
    row: &'a SupportRow,
}

impl Rules<'_> {
    fn tensor(&self, tensor: TensorRole, desc: &TensorDesc) -> Result<()> {
        let operator = self.operator;
        if desc.flags != TensorFlags::NONE {
            return Err(Error::UnsupportedFlags {
                operator,
                tensor,
                given: desc.flags,
            });
        }
        let supported = match tensor {
            TensorRole::Input => self.row.input_types,
            TensorRole::Output => self.row.output_types,
        };
        if !supported.contains(&desc.data_type) {
            return Err(Error::UnsupportedDataType {
                operator,
                tensor,
                given: desc.data_type,
                level: self.level,
                extensions: self.extended,
                supported,
            });
        }
        let element_size = desc.data_type.size_in_bytes().unwrap_or(1);
        if !self.row.accepts_dimensions(desc.sizes.len()) {
            return Err(Error::UnsupportedDimensionCount {
                operator,
                tensor,
                given: desc.sizes.len(),
                level: self.level,
                extensions: self.extended,
                min: self.row.min_dimensions,
                max: self.row.max_dimensions,
            });
        }
        if !self.extended {
            if let Some(dimension) = desc.sizes.iter().position(|&s| s == 0) {
                return Err(Error::ZeroSize {
                    operator,
                    tensor,
                    dimension,
                    sizes: desc.sizes.clone(),
                });
            }
            let count = desc
                .sizes
                .iter()
                .fold(1u128, |acc, &s| acc.saturating_mul(u128::from(s)));
            if count > u128::from(MAX_STRICT_ELEMENTS) {
                return Err(Error::TooManyElements {
                    operator,
                    tensor,
                    sizes: desc.sizes.clone(),
                    count,
                    max: MAX_STRICT_ELEMENTS,
                });
            }
        }
        if let Some(strides) = &desc.strides {
            if strides.len() != desc.sizes.len() {
                return Err(Error::StrideCount {
                    operator,
                    tensor,
                    given: strides.len(),
                    expected: desc.sizes.len(),
                });
            }
            if tensor == TensorRole::Output {
                let zero = strides
                    .iter()
                    .zip(&desc.sizes)
                    .position(|(&stride, &size)| stride == 0 && size > 1);
                if let Some(dimension) = zero {
                    return Err(Error::ZeroOutputStride {
                        operator,
                        dimension,
                        strides: strides.clone(),
                    });
                }
                let wide: Vec<u64> = strides.iter().map(|&s| s.into()).collect();
                if output_overlaps(&desc.sizes, &wide) {
                    return Err(Error::OverlappingOutput {
                        operator,
                        sizes: desc.sizes.clone(),
                        strides: strides.clone(),
                    });
                }
            }
        }
        let too_large = || Error::TensorTooLarge {
            operator,
            tensor,
            sizes: desc.sizes.clone(),
            data_type: desc.data_type,
        };
        let required = desc.min_size_in_bytes().ok_or_else(too_large)?;
        if required > isize::MAX as u64 {
            return Err(too_large());
        }
        if desc.total_tensor_size_in_bytes < required {
            return Err(Error::TotalSizeTooSmall {
                operator,
                tensor,
                given: desc.total_tensor_size_in_bytes,
                required,
            });
        }
        let alignment = desc.guaranteed_base_offset_alignment;
        if alignment != 0 && (!alignment.is_power_of_two() || u64::from(alignment) < element_size) {
            return Err(Error::InvalidAlignment {
                operator,
                tensor,
                given: alignment,
                element_size,
            });
        }
        Ok(())
    }
}
