//! DirectML's C descriptions read into ewise's: every raw value checked before it
//! becomes a Rust enum, every count checked before the array it counts is read.

use std::slice;

use ewise::support::MAX_EXTENDED_DIMENSIONS;
use ewise::{
    DataType, Error, Extensions, FeatureLevel, InfinityMode, OperatorDesc, OperatorSupport,
    OperatorType, TensorDesc, TensorFlags, TensorRole,
};

use crate::status::{deref, Failure, Outcome};
use crate::types::*;

/// What a description is checked against before its arrays are read: the device's
/// level and extensions.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rules {
    pub(crate) level: FeatureLevel,
    pub(crate) extensions: Extensions,
}

/// A `DML_TENSOR_DATA_TYPE` value (or an ewise extension number) as a data type.
pub(crate) fn data_type(raw: DML_TENSOR_DATA_TYPE) -> Outcome<DataType> {
    match DataType::from_raw(raw) {
        Some(DataType::Unknown) | None => Err(Failure::invalid(format!(
            "data type {raw} is not a DML_TENSOR_DATA_TYPE (accepted: FLOAT32 1 to INT4 13, \
             and with Extensions the ewise types BFLOAT16 1000 to FLOAT8E5M2FNUZ 1005; \
             UNKNOWN 0 is no type)"
        ))),
        Some(t) => Ok(t),
    }
}

/// A `DML_IS_INFINITY_MODE` value (or the ewise extension 1000) as a mode.
pub(crate) fn infinity_mode(raw: DML_IS_INFINITY_MODE) -> Outcome<InfinityMode> {
    InfinityMode::ALL
        .into_iter()
        .find(|m| m.raw() == raw)
        .ok_or_else(|| {
            Failure::invalid(format!(
                "InfinityMode {raw} is not a DML_IS_INFINITY_MODE (accepted: EITHER 0, \
                 POSITIVE 1, NEGATIVE 2, and with Extensions NEITHER 1000)"
            ))
        })
}

/// A `DML_FEATURE_LEVEL` value as a level.
pub(crate) fn feature_level(raw: DML_FEATURE_LEVEL) -> Outcome<FeatureLevel> {
    FeatureLevel::from_raw(raw).ok_or_else(|| {
        Failure::invalid(format!(
            "feature level {raw:#x} is not a DML_FEATURE_LEVEL (accepted: {})",
            FeatureLevel::ALL
                .iter()
                .map(|l| format!("{:#x}", l.raw()))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })
}

/// The operator description `desc` points to, as ewise's.
///
/// # Safety
/// `desc` and every pointer inside it, when not NULL, point to valid values of their C
/// types, and `Sizes`/`Strides` to at least `DimensionCount` entries when that count is
/// within the device's maximum.
pub(crate) unsafe fn operator_desc(
    desc: &DML_OPERATOR_DESC,
    rules: Rules,
) -> Outcome<OperatorDesc> {
    match desc.Type {
        DML_OPERATOR_ELEMENT_WISE_SIGN => {
            // SAFETY: the caller promises Desc points to the struct its Type names.
            let d: &DML_ELEMENT_WISE_SIGN_OPERATOR_DESC =
                unsafe { deref(desc.Desc.cast(), "DML_OPERATOR_DESC.Desc")? };
            let operator = OperatorType::ElementWiseSign;
            // SAFETY: as promised by the caller.
            let (input, output) = unsafe {
                (
                    tensor(d.InputTensor, operator, TensorRole::Input, rules)?,
                    tensor(d.OutputTensor, operator, TensorRole::Output, rules)?,
                )
            };
            Ok(OperatorDesc::sign(input, output))
        }
        DML_OPERATOR_ELEMENT_WISE_IS_INFINITY => {
            // SAFETY: the caller promises Desc points to the struct its Type names.
            let d: &DML_ELEMENT_WISE_IS_INFINITY_OPERATOR_DESC =
                unsafe { deref(desc.Desc.cast(), "DML_OPERATOR_DESC.Desc")? };
            let operator = OperatorType::ElementWiseIsInfinity;
            let mode = infinity_mode(d.InfinityMode)?;
            // SAFETY: as promised by the caller.
            let (input, output) = unsafe {
                (
                    tensor(d.InputTensor, operator, TensorRole::Input, rules)?,
                    tensor(d.OutputTensor, operator, TensorRole::Output, rules)?,
                )
            };
            Ok(OperatorDesc::is_infinity(input, output, mode))
        }
        other => Err(Failure::unsupported(format!(
            "DML_OPERATOR_TYPE {other} is not implemented by ewise (implemented: \
             DML_OPERATOR_ELEMENT_WISE_SIGN 79, DML_OPERATOR_ELEMENT_WISE_IS_INFINITY 100)"
        ))),
    }
}

/// The tensor description `ptr` points to.
///
/// # Safety
/// As for [`operator_desc`].
unsafe fn tensor(
    ptr: *const DML_TENSOR_DESC,
    operator: OperatorType,
    role: TensorRole,
    rules: Rules,
) -> Outcome<TensorDesc> {
    let what = |field: &str| format!("{operator}: {role} {field}");
    // SAFETY: the caller promises a non-NULL pointer is valid.
    let t = unsafe { deref(ptr, &what("(DML_TENSOR_DESC*)"))? };
    if t.Type != DML_TENSOR_TYPE_BUFFER {
        return Err(Failure::invalid(format!(
            "{}: {} is not DML_TENSOR_TYPE_BUFFER 1 (the only tensor type there is)",
            what("DML_TENSOR_DESC.Type"),
            t.Type
        )));
    }
    // SAFETY: a BUFFER tensor's Desc points to a DML_BUFFER_TENSOR_DESC when not NULL.
    let b: &DML_BUFFER_TENSOR_DESC =
        unsafe { deref(t.Desc.cast(), &what("DML_TENSOR_DESC.Desc"))? };
    let data_type = data_type(b.DataType)
        .map_err(|f| Failure::invalid(format!("{}: {}", what("DataType"), f.message)))?;
    if b.Flags & !DML_TENSOR_FLAG_OWNED_BY_DML != 0 {
        return Err(Failure::invalid(format!(
            "{}: {:#x} has unknown bits (accepted: DML_TENSOR_FLAG_NONE 0, \
             DML_TENSOR_FLAG_OWNED_BY_DML 1)",
            what("Flags"),
            b.Flags
        )));
    }
    check_dimension_count(b.DimensionCount, operator, role, rules)?;
    let count = b.DimensionCount as usize;
    // SAFETY: the count is within the device's maximum, and the caller promises the
    // arrays hold that many entries.
    let sizes = unsafe { array(b.Sizes, count, &what("Sizes"))? }.to_vec();
    let strides = if b.Strides.is_null() {
        None
    } else {
        // SAFETY: as for the sizes.
        Some(unsafe { array(b.Strides, count, &what("Strides"))? }.to_vec())
    };
    Ok(TensorDesc {
        data_type,
        flags: TensorFlags(b.Flags),
        sizes,
        strides,
        total_tensor_size_in_bytes: b.TotalTensorSizeInBytes,
        guaranteed_base_offset_alignment: b.GuaranteedBaseOffsetAlignment,
    })
}

/// Refuses a dimension count above what the device accepts for `operator`, with the
/// error validation gives, before any array of that length is read.
fn check_dimension_count(
    given: u32,
    operator: OperatorType,
    role: TensorRole,
    rules: Rules,
) -> Outcome<()> {
    let support = OperatorSupport::of(operator);
    let extended = rules.extensions == Extensions::Enabled;
    let (min, max) = match (extended, support.row_at(rules.level)) {
        (_, None) => {
            return Err(Error::OperatorNotAvailable {
                operator,
                level: rules.level,
                introduced: support.introduced,
            }
            .into())
        }
        (true, Some(_)) => (support.extended.min_dimensions, MAX_EXTENDED_DIMENSIONS),
        (false, Some(row)) => (row.min_dimensions, row.max_dimensions),
    };
    if given <= max {
        return Ok(());
    }
    Err(Error::UnsupportedDimensionCount {
        operator,
        tensor: role,
        given: given as usize,
        level: rules.level,
        extensions: extended,
        min,
        max,
    }
    .into())
}

/// `count` entries from `ptr`; NULL is refused unless `count` is 0.
///
/// # Safety
/// A non-NULL `ptr` points to at least `count` readable `u32`s.
unsafe fn array<'a>(ptr: *const u32, count: usize, what: &str) -> Outcome<&'a [u32]> {
    if count == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Failure::invalid(format!(
            "{what} is NULL but DimensionCount is {count}"
        )));
    }
    // SAFETY: non-NULL, and the caller promises `count` entries.
    Ok(unsafe { slice::from_raw_parts(ptr, count) })
}
