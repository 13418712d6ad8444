//! The vectorized contiguous walk ([`Walk::Vector`]): 16-byte units.
//!
//! A unit is one `vec4<u32>` of output (16 bytes) and the `in_size / out_size` input
//! vectors its elements come from; both start 16-byte aligned in their windows. The
//! dispatch covers only whole units (the run's body): the operator runs the unaligned
//! head and the tail with the scalar [`Walk::Contiguous`] kernel, in a second dispatch.
//!
//! Invocation `t` of workgroup block `b = t / WORKGROUP` handles units
//! `b * WORKGROUP * unroll + j * WORKGROUP + t % WORKGROUP` for `j` below the unroll
//! factor, so that each load and each store of a workgroup is one coalesced 4 KiB run.
//! Every load of an invocation is issued before its first store. A unit past the body
//! loads the invocation's first unit again (never a word another invocation writes)
//! and stores nothing.
//!
//! Uniform parameters (the [`super::PARAMS_HEADER`] block): `grid_x` the invocations of
//! a grid row, `in_base` and `out_base` the vector index of the body's first input and
//! output vector in their windows, `count` the units of the body.
//!
//! The row walk ([`Walk::Rows`], [`super::rows`]) runs the same body and differs only in
//! `at(u)`, which maps unit `u` to its first input vector and its output vector.

use std::fmt::Write;

use super::{lanes, op_fn, word_op_fn, KernelKey, Op, Walk, WORKGROUP};
use ewise_core::InfinityMode;

/// Input vectors one invocation aims to have in flight by default: the unroll factor is
/// this many (a kernel key's `loads`, the device's [`crate::Tuning`]) divided by the input
/// vectors of a unit (at least one unit).
pub(crate) const LOADS_IN_FLIGHT: u32 = 4;

/// Bytes of output one unit writes.
pub(crate) const UNIT_BYTES: u64 = 16;

impl KernelKey {
    /// The vectorized key of a contiguous walk, `None` where there is none (the copy
    /// kernel, other walks, outputs wider than inputs).
    pub(crate) fn vector(&self) -> Option<KernelKey> {
        let eligible =
            self.walk == Walk::Contiguous && self.op != Op::Copy && self.in_size >= self.out_size;
        eligible.then_some(KernelKey {
            walk: Walk::Vector,
            ..*self
        })
    }

    /// Input vectors per unit.
    pub(crate) fn vectors_in(&self) -> u32 {
        (self.in_size / self.out_size).max(1)
    }

    /// Units one invocation of the vector walk handles.
    pub(crate) fn unroll(&self) -> u32 {
        (self.loads / self.vectors_in()).max(1)
    }
}

/// The WGSL source of a [`Walk::Vector`] or [`Walk::Rows`] kernel.
pub(crate) fn source(key: &KernelKey) -> String {
    let mut s = String::with_capacity(4096);
    let r = key.vectors_in();
    match key.walk {
        Walk::Rows { dims } => super::rows::params_and_at(&mut s, dims, r),
        _ => {
            s.push_str("struct Params {\n    limit: u32,\n    grid_x: u32,\n    in_base: u32,\n    out_base: u32,\n    count: u32,\n    skip_at: u32,\n    skip: u32,\n    pad: u32,\n};\n@group(0) @binding(0) var<uniform> p: Params;\n");
            let _ = writeln!(
                s,
                "fn at(u: u32) -> vec2<u32> {{ return vec2<u32>(p.in_base + u * {r}u, p.out_base + u); }}"
            );
        }
    }
    s.push_str("@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;\n");
    let read = if key.shared {
        "dst[v]"
    } else {
        s.push_str("@group(0) @binding(2) var<storage, read> src: array<vec4<u32>>;\n");
        "src[v]"
    };
    let _ = writeln!(s, "fn vin(v: u32) -> vec4<u32> {{ return {read}; }}");
    s.push_str(&unit_fn(key));
    main_fn(&mut s, r, key.unroll());
    s
}

/// `unit(a0, ...)`: the output vector of a unit from its input vectors.
fn unit_fn(key: &KernelKey) -> String {
    let r = key.vectors_in();
    let params: Vec<String> = (0..r).map(|k| format!("a{k}: vec4<u32>")).collect();
    let head = format!("fn unit({}) -> vec4<u32> {{\n", params.join(", "));
    let mut s = String::new();
    if key.out_size == 8 {
        s.push_str(&op_fn(key.op));
        let _ = write!(s, "{head}    return vec4<u32>(op(a0.xy), op(a0.zw));\n}}\n");
        return s;
    }
    s.push_str(&word_fn(key));
    let lanes = ["x", "y", "z", "w"];
    let words: Vec<String> = (0..4)
        .map(|k| {
            let inputs: Vec<String> = (k * r..(k + 1) * r)
                .map(|f| format!("a{}.{}", f / 4, lanes[(f % 4) as usize]))
                .collect();
            format!("outw({})", inputs.join(", "))
        })
        .collect();
    let _ = write!(s, "{head}    return vec4<u32>({});\n}}\n", words.join(", "));
    s
}

/// `outw(w0, ...)`: one output word from the `in_size / out_size` input words that its
/// elements come from.
fn word_fn(key: &KernelKey) -> String {
    if let Some(opw) = word_op_fn(key) {
        return format!("{opw}fn outw(w0: u32) -> u32 {{ return opw(w0); }}\n");
    }
    match (key.op, key.in_size) {
        (Op::NeverInf { .. }, _) => "fn outw(w0: u32) -> u32 { return 0u; }\n".into(),
        (Op::IsInf { inf, mode, .. }, 1 | 2) => is_inf_swar(key.in_size, inf, mode),
        (_, 8) => {
            let packed = "op(vec2<u32>(w0, w1)) | (op(vec2<u32>(w2, w3)) << 8u) | (op(vec2<u32>(w4, w5)) << 16u) | (op(vec2<u32>(w6, w7)) << 24u)";
            format!("{}{}", op_fn(key.op), outw(8, packed))
        }
        (_, 4) if key.out_size == 1 => {
            let packed = "op(w0) | (op(w1) << 8u) | (op(w2) << 16u) | (op(w3) << 24u)";
            format!("{}{}", op_fn(key.op), outw(4, packed))
        }
        _ => format!("{}{}", op_fn(key.op), outw(1, "op(w0)")),
    }
}

/// `fn outw` taking `n` words and returning `expr`.
fn outw(n: u32, expr: &str) -> String {
    let params: Vec<String> = (0..n).map(|k| format!("w{k}: u32")).collect();
    format!(
        "fn outw({}) -> u32 {{ return {expr}; }}\n",
        params.join(", ")
    )
}

/// IS_INFINITY of every 8- or 16-bit lane of a word at once: `hits(x)` has bit 0 of each
/// lane set where the lane is the infinity `mode` asks for (a lane is zero after the
/// exclusive or with that pattern; carry-free lane arithmetic as in
/// [`word_op_fn`]); `outw` packs them into bytes.
fn is_inf_swar(size: u32, inf: u64, mode: InfinityMode) -> String {
    let bits = size * 8;
    let lanes = |v: u64| lanes(bits, v);
    let top = 1u64 << (bits - 1);
    let (tops, lows, infs) = (lanes(top), lanes(top - 1), lanes(inf));
    let diff = match mode {
        InfinityMode::Either => format!("(x & 0x{lows:X}u) ^ 0x{infs:X}u"),
        InfinityMode::Positive => format!("x ^ 0x{infs:X}u"),
        InfinityMode::Negative => format!("x ^ 0x{:X}u", infs | tops),
        InfinityMode::Neither => "0xFFFFFFFFu".into(),
    };
    let hits = format!(
        "fn hits(x: u32) -> u32 {{\n    let d = {diff};\n    let nonzero = (((d & 0x{lows:X}u) + 0x{lows:X}u) | d) & 0x{tops:X}u;\n    return (~nonzero & 0x{tops:X}u) >> {shift}u;\n}}\n",
        shift = bits - 1
    );
    let packed = if bits == 8 {
        outw(1, "hits(w0)")
    } else {
        let spread =
            "(h0 & 1u) | ((h0 >> 8u) & 0x100u) | ((h1 & 1u) << 16u) | ((h1 << 8u) & 0x1000000u)";
        format!(
            "fn outw(w0: u32, w1: u32) -> u32 {{\n    let h0 = hits(w0);\n    let h1 = hits(w1);\n    return {spread};\n}}\n"
        )
    };
    hits + &packed
}

/// The entry point: `unroll` units per invocation, `r` input vectors each, every load
/// before the first store. `at(u)` gives unit `u`'s first input vector and its output
/// vector.
fn main_fn(s: &mut String, r: u32, unroll: u32) {
    let _ = write!(
        s,
        "@compute @workgroup_size({WORKGROUP})\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {{\n    let t = gid.x + gid.y * p.grid_x;\n    let u0 = (t - t % {WORKGROUP}u) * {unroll}u + t % {WORKGROUP}u;\n    if (u0 >= p.count) {{ return; }}\n    let x0 = at(u0);\n"
    );
    for j in 1..unroll {
        let _ = writeln!(
            s,
            "    let u{j} = u0 + {}u;\n    let x{j} = at(select(u0, u{j}, u{j} < p.count));",
            j * WORKGROUP
        );
    }
    for j in 0..unroll {
        for k in 0..r {
            let _ = writeln!(s, "    let a{j}_{k} = vin(x{j}.x + {k}u);");
        }
    }
    for j in 0..unroll {
        let args: Vec<String> = (0..r).map(|k| format!("a{j}_{k}")).collect();
        let store = format!("dst[x{j}.y] = unit({});", args.join(", "));
        if j == 0 {
            let _ = writeln!(s, "    {store}");
        } else {
            let _ = writeln!(s, "    if (u{j} < p.count) {{ {store} }}");
        }
    }
    s.push_str("}\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use ewise_core::{DataType, NanPolicy};

    fn key(op: Op, in_size: u32, out_size: u32) -> KernelKey {
        KernelKey {
            op,
            in_size,
            out_size,
            walk: Walk::Contiguous,
            shared: false,
            loads: LOADS_IN_FLIGHT,
        }
    }

    #[test]
    fn units_take_input_vectors_by_size_ratio_and_unroll_to_fill_the_loads() {
        let sign = Op::sign(DataType::Int8, NanPolicy::Zero).unwrap();
        let inf = |t| Op::is_infinity(t, InfinityMode::Either).unwrap();
        let cases = [
            (key(sign, 1, 1), 1, LOADS_IN_FLIGHT),
            (key(inf(DataType::Float16), 2, 1), 2, LOADS_IN_FLIGHT / 2),
            (key(inf(DataType::Float32), 4, 1), 4, 1),
            (key(inf(DataType::Float64), 8, 1), 8, 1),
        ];
        for (k, vectors, unroll) in cases {
            let v = k.vector().unwrap();
            assert_eq!(
                (v.vectors_in(), v.unroll()),
                (vectors, unroll.max(1)),
                "{k:?}"
            );
        }
        assert_eq!(key(Op::Copy, 4, 4).vector(), None);
        let strided = KernelKey {
            walk: Walk::Strided { dims: 2 },
            ..key(sign, 1, 1)
        };
        assert_eq!(strided.vector(), None);
    }

    #[test]
    fn the_unroll_follows_the_keys_loads_in_flight() {
        let sign = key(Op::sign(DataType::Int8, NanPolicy::Zero).unwrap(), 1, 1);
        let inf = key(
            Op::is_infinity(DataType::Float32, InfinityMode::Either).unwrap(),
            4,
            1,
        );
        for loads in [1, 2, 4, 8, 16] {
            let v = KernelKey { loads, ..sign }.vector().unwrap();
            assert_eq!(v.unroll(), loads);
            let lines = source(&v).matches("= vin(").count() as u32;
            assert_eq!(lines, loads, "one load per unit of the unroll");
            let w = KernelKey { loads, ..inf }.vector().unwrap();
            assert_eq!(w.unroll(), (loads / 4).max(1));
        }
        let (a, b) = (
            KernelKey { loads: 2, ..sign }.vector().unwrap(),
            KernelKey { loads: 8, ..sign }.vector().unwrap(),
        );
        assert_ne!(a, b, "keys of different tunings differ");
        assert_ne!(source(&a), source(&b));
    }

    #[test]
    fn every_load_comes_before_the_first_store() {
        let v = key(Op::sign(DataType::Float32, NanPolicy::Zero).unwrap(), 4, 4)
            .vector()
            .unwrap();
        let src = source(&v);
        let last_load = src.rfind("= vin(").unwrap();
        let first_store = src.find("dst[x").unwrap();
        assert!(last_load < first_store, "{src}");
        assert!(src.contains("array<vec4<u32>>"));
    }
}
