//! The row walk ([`Walk::Rows`]): the vectorized walk over rows that are contiguous in
//! both tensors.
//!
//! The walk's innermost dimension has stride 1 in both tensors and every outer stride
//! is a whole number of 16-byte vectors in both, so each row's body (its whole 16-byte
//! units of output) starts at the same column of every row. The dispatch covers only
//! the bodies; the operator runs the columns before and after them (the same in every
//! row) as strided walks over those columns.
//!
//! Unit `u` is unit `u % row_units` of row `u / row_units`; the row index is taken
//! apart along the outer dimensions, innermost last, as the strided walk takes apart
//! an element index. The units then run through the vector walk's body ([`super::vector`]).
//!
//! Uniform parameters (the [`super::PARAMS_HEADER`] block, then one `vec4<u32>` per outer
//! dimension, outermost first): `grid_x` the invocations of a grid row, `in_base` and
//! `out_base` the vector index of the first row's first body vector in each window,
//! `count` the units of all bodies, `row_units` the units of one body; per dimension
//! its size and its stride in input vectors and in output vectors.

use std::fmt::Write;

use super::{KernelKey, Walk};

impl KernelKey {
    /// The row key of a strided walk over `dims` dimensions whose innermost is
    /// contiguous in both tensors; `None` where there is none (the copy kernel, other
    /// walks, outputs wider than inputs, a single dimension).
    pub(crate) fn rows(&self) -> Option<KernelKey> {
        let dims = match self.walk {
            Walk::Strided { dims } | Walk::StridedWords { dims } => dims,
            _ => return None,
        };
        let contiguous = KernelKey {
            walk: Walk::Contiguous,
            ..*self
        };
        (dims > 1 && contiguous.vector().is_some()).then_some(KernelKey {
            walk: Walk::Rows { dims: dims - 1 },
            ..*self
        })
    }
}

/// Writes the uniform block of a row kernel over `dims` outer dimensions and `at(u)`,
/// unit `u`'s first input vector (of `r` per unit) and its output vector.
pub(super) fn params_and_at(s: &mut String, dims: u32, r: u32) {
    let _ = write!(
        s,
        "struct Params {{\n    limit: u32,\n    grid_x: u32,\n    in_base: u32,\n    out_base: u32,\n    count: u32,\n    row_units: u32,\n    pad0: u32,\n    pad1: u32,\n    dims: array<vec4<u32>, {dims}>,\n}};\n@group(0) @binding(0) var<uniform> p: Params;\n"
    );
    let _ = write!(
        s,
        "fn at(u: u32) -> vec2<u32> {{\n    var rest = u / p.row_units;\n    let k = u - rest * p.row_units;\n    var a = p.in_base + k * {r}u;\n    var b = p.out_base + k;\n"
    );
    for d in (0..dims).rev() {
        let index = if d == 0 {
            "rest".to_string()
        } else {
            format!("rest % p.dims[{d}].x")
        };
        let _ = writeln!(
            s,
            "    let i{d} = {index};\n    a += i{d} * p.dims[{d}].y;\n    b += i{d} * p.dims[{d}].z;"
        );
        if d > 0 {
            let _ = writeln!(s, "    rest = rest / p.dims[{d}].x;");
        }
    }
    s.push_str("    return vec2<u32>(a, b);\n}\n");
}

#[cfg(test)]
mod tests {
    use super::super::{source, Op};
    use super::*;
    use ewise_core::{DataType, InfinityMode, NanPolicy};

    fn key(op: Op, in_size: u32, out_size: u32, walk: Walk) -> KernelKey {
        KernelKey {
            op,
            in_size,
            out_size,
            walk,
            shared: false,
            loads: super::super::LOADS_IN_FLIGHT,
        }
    }

    #[test]
    fn strided_walks_of_two_or_more_dimensions_have_a_row_form() {
        let sign = Op::sign(DataType::Float32, NanPolicy::Zero).unwrap();
        let inf = Op::is_infinity(DataType::Float16, InfinityMode::Either).unwrap();
        let rows = |k: KernelKey| k.rows().map(|r| r.walk);
        assert_eq!(
            rows(key(sign, 4, 4, Walk::Strided { dims: 3 })),
            Some(Walk::Rows { dims: 2 })
        );
        assert_eq!(
            rows(key(inf, 2, 1, Walk::StridedWords { dims: 2 })),
            Some(Walk::Rows { dims: 1 })
        );
        assert_eq!(rows(key(sign, 4, 4, Walk::Strided { dims: 1 })), None);
        assert_eq!(rows(key(sign, 4, 4, Walk::Contiguous)), None);
        assert_eq!(rows(key(Op::Copy, 4, 4, Walk::Strided { dims: 2 })), None);
    }

    #[test]
    fn row_kernels_share_the_vector_body() {
        let sign = Op::sign(DataType::Int8, NanPolicy::Zero).unwrap();
        let k = key(sign, 1, 1, Walk::Strided { dims: 3 }).rows().unwrap();
        let src = source(&k);
        assert!(src.contains("dims: array<vec4<u32>, 2>"), "{src}");
        assert!(src.contains("fn opw("), "{src}");
        let last_load = src.rfind("= vin(").unwrap();
        let first_store = src.find("dst[x").unwrap();
        assert!(last_load < first_store, "{src}");
    }
}
