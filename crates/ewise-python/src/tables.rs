//! The support tables and feature levels as Python values, in the shape of
//! `ewise support --json`.

use ewise_cpu::{DataType, FeatureLevel, OperatorSupport, SupportRow};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// `{"feature_level"?, "operators": [...]}`: every operator's rows (or, for a level,
/// the row in force there and whether the operator exists there) and its extended row.
pub(crate) fn of<'py>(
    py: Python<'py>,
    level: Option<FeatureLevel>,
) -> PyResult<Bound<'py, PyDict>> {
    let root = PyDict::new(py);
    if let Some(l) = level {
        root.set_item("feature_level", l.to_string())?;
    }
    let operators = PyList::empty(py);
    for op in ewise_cpu::support::OPERATORS {
        operators.append(operator(py, op, level)?)?;
    }
    root.set_item("operators", operators)?;
    Ok(root)
}

fn operator<'py>(
    py: Python<'py>,
    op: &OperatorSupport,
    level: Option<FeatureLevel>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", op.operator.name())?;
    d.set_item("value", op.operator.raw())?;
    d.set_item("introduced", op.introduced.to_string())?;
    d.set_item("in_place", op.in_place)?;
    d.set_item("same_data_type", op.same_data_type)?;
    let rows: Vec<&SupportRow> = match level {
        None => op.rows.iter().collect(),
        Some(l) => {
            d.set_item("available", op.row_at(l).is_some())?;
            op.row_at(l).into_iter().collect()
        }
    };
    let list = PyList::empty(py);
    for r in rows {
        list.append(row(py, r)?)?;
    }
    d.set_item("rows", list)?;
    d.set_item("extended", row(py, &op.extended)?)?;
    Ok(d)
}

fn row<'py>(py: Python<'py>, r: &SupportRow) -> PyResult<Bound<'py, PyDict>> {
    let names = |types: &[DataType]| types.iter().map(|t| t.name()).collect::<Vec<_>>();
    let d = PyDict::new(py);
    d.set_item("from_level", r.from_level.to_string())?;
    d.set_item("min_dimensions", r.min_dimensions)?;
    d.set_item("max_dimensions", r.max_dimensions)?;
    d.set_item("input_types", names(r.input_types))?;
    d.set_item("output_types", names(r.output_types))?;
    Ok(d)
}
