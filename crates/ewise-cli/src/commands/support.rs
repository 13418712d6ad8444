//! `ewise support`: the DirectML support tables, printed from the data the validator
//! reads.

use std::fmt::Write as _;

use ewise_cpu::support::{OperatorSupport, SupportRow, IS_INFINITY, OPERATORS, SIGN};
use ewise_cpu::{DataType, FeatureLevel};

use crate::cli::{Op, SupportArgs};
use crate::table::Table;

/// The text `ewise support` prints.
pub fn render(args: &SupportArgs) -> String {
    let operators: Vec<&OperatorSupport> = match args.op {
        None => OPERATORS.to_vec(),
        Some(Op::Sign) => vec![&SIGN],
        Some(Op::IsInfinity) => vec![&IS_INFINITY],
    };
    if args.json {
        json(&operators, args.feature_level)
    } else {
        text(&operators, args.feature_level)
    }
}

fn text(operators: &[&OperatorSupport], level: Option<FeatureLevel>) -> String {
    let mut out = String::new();
    for (i, op) in operators.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "{} (DML_OPERATOR_TYPE {})\n  introduced at feature level {}; output type: {}; in-place: {}",
            op.operator,
            op.operator.raw(),
            op.introduced,
            if op.same_data_type { "same as input" } else { "see table" },
            if op.in_place { "yes" } else { "no" },
        );
        let rows: Vec<(String, &SupportRow)> = match level {
            None => op
                .rows
                .iter()
                .map(|r| (r.from_level.to_string(), r))
                .chain(std::iter::once(("extensions".to_string(), &op.extended)))
                .collect(),
            Some(l) => match op.row_at(l) {
                Some(r) => vec![(format!("{l} (row from {})", r.from_level), r)],
                None => {
                    let _ = writeln!(
                        out,
                        "  not available at feature level {l} (introduced at {})",
                        op.introduced
                    );
                    continue;
                }
            },
        };
        let mut table = Table::new(&["feature level", "dimensions", "input types", "output types"]);
        for (label, row) in rows {
            let output = if op.same_data_type {
                "same as input".to_string()
            } else {
                names(row.output_types)
            };
            table.row(vec![label, dimensions(row), names(row.input_types), output]);
        }
        out.push('\n');
        out.push_str(&table.render("  "));
        if level.is_none() {
            out.push_str(
                "  (extensions: what `ewise sign` and `ewise is-infinity` accept without --feature-level, from the operator's introduction on)\n",
            );
        }
    }
    out
}

fn dimensions(row: &SupportRow) -> String {
    if row.min_dimensions == row.max_dimensions {
        row.min_dimensions.to_string()
    } else {
        format!("{} to {}", row.min_dimensions, row.max_dimensions)
    }
}

fn names(types: &[DataType]) -> String {
    types
        .iter()
        .map(|t| t.name())
        .collect::<Vec<_>>()
        .join(", ")
}

fn json(operators: &[&OperatorSupport], level: Option<FeatureLevel>) -> String {
    let mut out = String::from("{");
    if let Some(l) = level {
        let _ = write!(out, "\"feature_level\":\"{l}\",");
    }
    out.push_str("\"operators\":[");
    for (i, op) in operators.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(
            out,
            "{{\"name\":\"{}\",\"value\":{},\"introduced\":\"{}\",\"in_place\":{},\"same_data_type\":{},",
            op.operator,
            op.operator.raw(),
            op.introduced,
            op.in_place,
            op.same_data_type
        );
        let rows: Vec<&SupportRow> = match level {
            None => op.rows.iter().collect(),
            Some(l) => op.row_at(l).into_iter().collect(),
        };
        if let Some(l) = level {
            let _ = write!(out, "\"available\":{},", op.row_at(l).is_some());
        }
        out.push_str("\"rows\":[");
        for (j, row) in rows.iter().enumerate() {
            if j > 0 {
                out.push(',');
            }
            json_row(&mut out, row);
        }
        out.push_str("],\"extended\":");
        json_row(&mut out, &op.extended);
        out.push('}');
    }
    out.push_str("]}\n");
    out
}

fn json_row(out: &mut String, row: &SupportRow) {
    let list = |types: &[DataType]| {
        types
            .iter()
            .map(|t| format!("\"{}\"", t.name()))
            .collect::<Vec<_>>()
            .join(",")
    };
    let _ = write!(
        out,
        "{{\"from_level\":\"{}\",\"min_dimensions\":{},\"max_dimensions\":{},\"input_types\":[{}],\"output_types\":[{}]}}",
        row.from_level,
        row.min_dimensions,
        row.max_dimensions,
        list(row.input_types),
        list(row.output_types)
    );
}
