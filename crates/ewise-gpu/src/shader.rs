//! WGSL kernels, generated per kernel key.
//!
//! Every tensor is an array of 32-bit words and every element is taken out of (and put
//! back into) its words with bit operations, so no adapter feature (SHADER_F16,
//! SHADER_INT64) is needed and no float instruction ever touches the data: backends may
//! assume that floats hold no NaN or infinity, and lavapipe's `sign(NaN)` is 0.
//!
//! Two walks:
//! - [`Walk::Contiguous`]: one run, contiguous in both tensors. Each invocation owns one
//!   output word (or, for 8-byte outputs, one element) and writes it whole, merging the
//!   bytes of partly covered words at the run's ends with what is there.
//! - [`Walk::Strided`]: one invocation per element, its index taken apart along the
//!   simplified dimensions. 8- and 16-bit outputs are written with `atomicAnd` and
//!   `atomicOr` on their own bits, so neighbours sharing a word never lose a byte.
//! - [`Walk::StridedWords`]: a strided input into a packed 8- or 16-bit output (a
//!   transposed or broadcast input, IS_INFINITY's byte outputs): each invocation owns one
//!   output word, takes each lane's index apart to find its input element, and writes
//!   the word whole, as the contiguous walk does; no atomics.
//!
//! - [`Walk::Vector`]: the contiguous walk in 16-byte units where both tensors line up
//!   on 16 bytes ([`vector`]).
//! - [`Walk::Rows`]: the same units over rows that are contiguous in both tensors and
//!   start at the same 16-byte phase ([`rows`]).
//!
//! With `shared`, the input is read from the output's binding: in-place execution and
//! disjoint ranges of one buffer (wgpu refuses one buffer bound twice in a dispatch with
//! a writable use).

use std::fmt::Write;

mod rows;
mod vector;

pub(crate) use vector::{LOADS_IN_FLIGHT, UNIT_BYTES};

use ewise_core::{DataType, InfinityMode, NanPolicy};

/// Invocations per workgroup.
pub(crate) const WORKGROUP: u32 = 256;

/// What one element becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Op {
    /// SIGN of a float given by its width and exponent mask (sign bit excluded).
    SignFloat {
        bits: u32,
        inf: u64,
        one: u64,
        policy: NanPolicy,
    },
    /// SIGN of a signed integer of this width.
    SignSigned { bits: u32 },
    /// SIGN of an unsigned integer of this width.
    SignUnsigned { bits: u32 },
    /// IS_INFINITY of a float of this width whose positive infinity is `inf`.
    IsInf {
        bits: u32,
        inf: u64,
        mode: InfinityMode,
    },
    /// IS_INFINITY of a format without infinities: always false.
    NeverInf { bits: u32 },
    /// The input word unchanged (copies into scratch buffers).
    Copy,
}

impl Op {
    /// The kernel op for SIGN of `data_type`; `None` for types SIGN does not take.
    pub(crate) fn sign(data_type: DataType, policy: NanPolicy) -> Option<Op> {
        use DataType::*;
        let float = |bits, inf, one| Op::SignFloat {
            bits,
            inf,
            one,
            policy,
        };
        Some(match data_type {
            Float32 => float(32, 0x7F80_0000, 0x3F80_0000),
            Float16 => float(16, 0x7C00, 0x3C00),
            Bfloat16 => float(16, 0x7F80, 0x3F80),
            Float64 => float(64, 0x7FF0_0000_0000_0000, 0x3FF0_0000_0000_0000),
            Int8 | Int16 | Int32 | Int64 => Op::SignSigned {
                bits: bits_of(data_type)?,
            },
            Uint8 | Uint16 | Uint32 | Uint64 => Op::SignUnsigned {
                bits: bits_of(data_type)?,
            },
            _ => return None,
        })
    }

    /// The kernel op for IS_INFINITY of `data_type`; `None` for non-float types.
    pub(crate) fn is_infinity(data_type: DataType, mode: InfinityMode) -> Option<Op> {
        use DataType::*;
        let inf = |bits, inf| Op::IsInf { bits, inf, mode };
        Some(match data_type {
            Float32 => inf(32, 0x7F80_0000),
            Float16 => inf(16, 0x7C00),
            Bfloat16 => inf(16, 0x7F80),
            Float64 => inf(64, 0x7FF0_0000_0000_0000),
            Float8E5M2 => inf(8, 0x7C),
            Float8E4M3Fn | Float8E4M3Fnuz | Float8E5M2Fnuz => Op::NeverInf { bits: 8 },
            _ => return None,
        })
    }
}

fn bits_of(data_type: DataType) -> Option<u32> {
    data_type.size_in_bytes().map(|b| b as u32 * 8)
}

/// How invocations map to elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Walk {
    /// One run, contiguous in both tensors. Invocations from `skip_at` on run `skip`
    /// invocations further (a hole that a [`Walk::Vector`] dispatch fills).
    Contiguous,
    /// The 16-byte aligned body of a contiguous run, in 16-byte units of output.
    Vector,
    /// This many dimensions (at least 1), taken apart from a linear index.
    Strided { dims: u32 },
    /// As `Strided`, for 8- and 16-bit outputs packed in walking order: output element
    /// `out_base + t` for linear index `t`, one invocation per output word.
    StridedWords { dims: u32 },
    /// The 16-byte aligned bodies of rows contiguous in both tensors, in 16-byte units of
    /// output; the rows' positions taken apart along this many outer dimensions.
    Rows { dims: u32 },
}

impl Walk {
    /// A name for debugging tools: the label of the walk's bind groups.
    pub(crate) fn label(&self) -> &'static str {
        match self {
            Walk::Contiguous => "ewise contiguous",
            Walk::Vector => "ewise vector",
            Walk::Strided { .. } => "ewise strided",
            Walk::StridedWords { .. } => "ewise strided words",
            Walk::Rows { .. } => "ewise rows",
        }
    }
}

/// Everything that makes one compute pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct KernelKey {
    pub op: Op,
    /// Input element size in bytes (1, 2, 4 or 8).
    pub in_size: u32,
    /// Output element size in bytes (1, 2, 4 or 8).
    pub out_size: u32,
    pub walk: Walk,
    /// The input is read from the output's binding.
    pub shared: bool,
    /// Input vectors one invocation of the vector and row kernels aims to have in
    /// flight (the device's [`crate::Tuning`] when the operator was compiled; the
    /// unroll factor comes from it): part of the key, so that a pipeline built under
    /// one tuning is never reused under another.
    pub loads: u32,
}

impl KernelKey {
    /// Whether outputs are written with atomics (sub-word elements at any stride).
    pub(crate) fn atomic(&self) -> bool {
        self.out_size < 4 && matches!(self.walk, Walk::Strided { .. })
    }

    /// Invocations the walk needs for `count` elements whose output starts at element
    /// `out_base` of its window.
    pub(crate) fn invocations(&self, count: u64, out_base: u64) -> u64 {
        match self.walk {
            Walk::Contiguous | Walk::StridedWords { .. } if self.out_size < 4 => {
                let first = out_base * u64::from(self.out_size);
                let end = first + count * u64::from(self.out_size);
                end.div_ceil(4) - first / 4
            }
            _ => count,
        }
    }
}

/// The most dimensions a strided walk takes apart (DirectML's tensors have at most 8).
const MAX_WALK_DIMS: u32 = 8;

/// Every kernel key an operator can compile: each op with its element sizes, on every
/// walk it can take (vector and row bodies included), reading its own input binding or
/// the output's, at the default and the extreme loads in flight.
pub(crate) fn every_key() -> Vec<KernelKey> {
    use std::collections::HashSet;
    let mut ops = vec![(Op::Copy, 4, 4)];
    for data_type in DataType::ALL {
        let Some(size) = data_type.size_in_bytes().map(|b| b as u32) else {
            continue;
        };
        for policy in NanPolicy::ALL {
            ops.extend(Op::sign(data_type, policy).map(|op| (op, size, size)));
        }
        for mode in InfinityMode::ALL {
            ops.extend(Op::is_infinity(data_type, mode).map(|op| (op, size, 1)));
        }
    }
    let mut seen = HashSet::new();
    let mut keys = Vec::new();
    for (op, in_size, out_size) in ops {
        let mut walks = vec![Walk::Contiguous];
        if op != Op::Copy {
            for dims in 1..=MAX_WALK_DIMS {
                walks.push(Walk::Strided { dims });
                if out_size < 4 {
                    walks.push(Walk::StridedWords { dims });
                }
            }
        }
        for walk in walks {
            for shared in [false, true] {
                for loads in [1, vector::LOADS_IN_FLIGHT, crate::MAX_LOADS_IN_FLIGHT] {
                    let key = KernelKey {
                        op,
                        in_size,
                        out_size,
                        walk,
                        shared,
                        loads,
                    };
                    for k in [Some(key), key.vector(), key.rows()].into_iter().flatten() {
                        if seen.insert(k) {
                            keys.push(k);
                        }
                    }
                }
            }
        }
    }
    keys
}

/// The kernels a new device compiles before it is handed out, to know that its adapter
/// compiles ewise's kernels at all: SIGN of float32 on the contiguous walk and its
/// vector body, the pair every contiguous float32 operator runs, at the default tuning.
pub(crate) fn probe_keys() -> [KernelKey; 2] {
    let contiguous = KernelKey {
        op: Op::sign(DataType::Float32, NanPolicy::Zero).expect("SIGN takes float32"),
        in_size: 4,
        out_size: 4,
        walk: Walk::Contiguous,
        shared: false,
        loads: vector::LOADS_IN_FLIGHT,
    };
    [
        contiguous,
        contiguous.vector().expect("float32 SIGN has a vector body"),
    ]
}

/// Bytes of the uniform block before its dimensions: the invocation limit, the grid's
/// row length, the input and output bases (in elements of their windows), the element
/// count, the contiguous walk's hole (`skip_at`, `skip`) and padding.
pub(crate) const PARAMS_HEADER: u64 = 32;

/// The WGSL source of a kernel.
pub(crate) fn source(key: &KernelKey) -> String {
    let mut s = String::with_capacity(4096);
    let atomic = key.atomic();
    let word = if atomic { "atomic<u32>" } else { "u32" };
    let dims = match key.walk {
        Walk::Contiguous | Walk::Vector | Walk::Rows { .. } => 0,
        Walk::Strided { dims } | Walk::StridedWords { dims } => dims,
    };
    s.push_str("struct Params {\n    limit: u32,\n    grid_x: u32,\n    in_base: u32,\n    out_base: u32,\n    count: u32,\n    skip_at: u32,\n    skip: u32,\n    pad: u32,\n");
    if dims > 0 {
        let _ = writeln!(s, "    dims: array<vec4<u32>, {dims}>,");
    }
    s.push_str("};\n@group(0) @binding(0) var<uniform> p: Params;\n");
    let _ = writeln!(
        s,
        "@group(0) @binding(1) var<storage, read_write> dst: array<{word}>;"
    );
    if !key.shared {
        s.push_str("@group(0) @binding(2) var<storage, read> src: array<u32>;\n");
    }
    let read = match (key.shared, atomic) {
        (false, _) => "src[i]",
        (true, false) => "dst[i]",
        (true, true) => "atomicLoad(&dst[i])",
    };
    let _ = writeln!(s, "fn word(i: u32) -> u32 {{ return {read}; }}");
    s.push_str(&load_fn(key.in_size));
    s.push_str(&op_fn(key.op));
    match key.walk {
        Walk::Vector | Walk::Rows { .. } => return vector::source(key),
        Walk::Contiguous if key.out_size < 4 => contiguous_words(&mut s, key),
        Walk::StridedWords { dims } => strided_words(&mut s, key, dims),
        Walk::Contiguous => {
            s.push_str(&store_fn(key.out_size, false));
            main_fn(
                &mut s,
                "    let e = i;\n    store(p.out_base + e, op(load(p.in_base + e)));\n",
                true,
            );
        }
        Walk::Strided { dims } => {
            s.push_str(&store_fn(key.out_size, atomic));
            let mut body = String::from(
                "    var rest = i;\n    var a = p.in_base;\n    var b = p.out_base;\n",
            );
            let _ = writeln!(
                body,
                "    for (var d = {}i; d >= 0i; d--) {{\n        let dim = p.dims[d];\n        let k = rest % dim.x;\n        rest = rest / dim.x;\n        a += k * dim.y;\n        b += k * dim.z;\n    }}",
                dims - 1
            );
            body.push_str("    store(b, op(load(a)));\n");
            main_fn(&mut s, &body, false);
        }
    }
    s
}

/// `load(e)`: the bits of input element `e` (a `vec2` of low and high words for 8 bytes).
fn load_fn(size: u32) -> String {
    match size {
        1 => {
            "fn load(e: u32) -> u32 { return (word(e >> 2u) >> ((e & 3u) * 8u)) & 0xFFu; }\n".into()
        }
        2 => "fn load(e: u32) -> u32 { return (word(e >> 1u) >> ((e & 1u) * 16u)) & 0xFFFFu; }\n"
            .into(),
        4 => "fn load(e: u32) -> u32 { return word(e); }\n".into(),
        _ => {
            "fn load(e: u32) -> vec2<u32> { return vec2<u32>(word(2u * e), word(2u * e + 1u)); }\n"
                .into()
        }
    }
}

/// `store(e, v)`: writes output element `e`.
fn store_fn(size: u32, atomic: bool) -> String {
    match (size, atomic) {
        (4, _) => "fn store(e: u32, v: u32) { dst[e] = v; }\n".into(),
        (8, _) => {
            "fn store(e: u32, v: vec2<u32>) { dst[2u * e] = v.x; dst[2u * e + 1u] = v.y; }\n".into()
        }
        (_, true) => {
            let per = 4 / size;
            let mask = (1u64 << (size * 8)) - 1;
            format!(
                "fn store(e: u32, v: u32) {{\n    let w = e / {per}u;\n    let shift = (e % {per}u) * {bits}u;\n    atomicAnd(&dst[w], ~(0x{mask:X}u << shift));\n    atomicOr(&dst[w], v << shift);\n}}\n",
                bits = size * 8
            )
        }
        (_, false) => unreachable!("sub-word outputs of the contiguous walk are written by words"),
    }
}

/// The entry point: `body` runs for linear index `i` from invocation `t` below
/// `p.limit`; with `hole`, `i` is `t` below `p.skip_at` and `t + p.skip` from there on.
fn main_fn(s: &mut String, body: &str, hole: bool) {
    let i = if hole {
        "select(t, t + p.skip, t >= p.skip_at)"
    } else {
        "t"
    };
    let _ = write!(
        s,
        "@compute @workgroup_size({WORKGROUP})\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {{\n    let t = gid.x + gid.y * p.grid_x;\n    if (t >= p.limit) {{ return; }}\n    let i = {i};\n{body}}}\n"
    );
}

/// The contiguous walk for 8- and 16-bit outputs: invocation `i` owns output word
/// `first + i` and fills the lanes that elements cover, keeping the other bytes. Where
/// the operator has a whole-word form ([`word_op_fn`]) and the word's elements fill it
/// and sit in one input word, in the same lanes, one word in gives the word out.
fn contiguous_words(s: &mut String, key: &KernelKey) {
    let size = key.out_size;
    let per = 4 / size;
    let bits = size * 8;
    let mask = (1u64 << bits) - 1;
    let mut body = format!("    let first = p.out_base / {per}u;\n    let w = first + i;\n");
    if let Some(word_op) = word_op_fn(key) {
        s.push_str(&word_op);
        let _ = write!(
            body,
            "    let lane0 = w * {per}u;\n    if (lane0 >= p.out_base && lane0 - p.out_base + {per}u <= p.count) {{\n        let e = p.in_base + lane0 - p.out_base;\n        if (e % {per}u == 0u) {{\n            dst[w] = opw(word(e / {per}u));\n            return;\n        }}\n    }}\n"
        );
    }
    let _ = write!(
        body,
        "    var out = 0u;\n    var covered = 0u;\n    for (var j = 0u; j < {per}u; j++) {{\n        let o = w * {per}u + j;\n        if (o >= p.out_base && o - p.out_base < p.count) {{\n            let e = o - p.out_base;\n            out |= op(load(p.in_base + e)) << (j * {bits}u);\n            covered |= 0x{mask:X}u << (j * {bits}u);\n        }}\n    }}\n    if (covered == 0xFFFFFFFFu) {{\n        dst[w] = out;\n    }} else {{\n        dst[w] = (dst[w] & ~covered) | out;\n    }}\n"
    );
    main_fn(s, &body, true);
}

/// The strided walk into a packed 8- or 16-bit output: invocation `i` owns output word
/// `first + i`; each covered lane takes its linear index apart along the dimensions to
/// find its input element.
fn strided_words(s: &mut String, key: &KernelKey, dims: u32) {
    let size = key.out_size;
    let per = 4 / size;
    let bits = size * 8;
    let mask = (1u64 << bits) - 1;
    let last = dims - 1;
    let body = format!(
        "    let first = p.out_base / {per}u;\n    let w = first + i;\n    var out = 0u;\n    var covered = 0u;\n    for (var j = 0u; j < {per}u; j++) {{\n        let o = w * {per}u + j;\n        if (o >= p.out_base && o - p.out_base < p.count) {{\n            var rest = o - p.out_base;\n            var a = p.in_base;\n            for (var d = {last}i; d >= 0i; d--) {{\n                let dim = p.dims[d];\n                a += (rest % dim.x) * dim.y;\n                rest = rest / dim.x;\n            }}\n            out |= op(load(a)) << (j * {bits}u);\n            covered |= 0x{mask:X}u << (j * {bits}u);\n        }}\n    }}\n    if (covered == 0xFFFFFFFFu) {{\n        dst[w] = out;\n    }} else {{\n        dst[w] = (dst[w] & ~covered) | out;\n    }}\n"
    );
    main_fn(s, &body, false);
}

/// `v` repeated in every `bits`-wide lane (8 or 16) of a 32-bit word.
fn lanes(bits: u32, v: u64) -> u64 {
    if bits == 8 {
        v * 0x0101_0101
    } else {
        v * 0x0001_0001
    }
}

/// `opw(x)`: the operator on every lane of a word of 8- or 16-bit elements at once, with
/// carry-free lane arithmetic (each lane's sum stays below its top bit plus one), for the
/// operators that map a lane to a lane of the same width: SIGN of integers and of
/// float16 and bfloat16. `None` for the others.
fn word_op_fn(key: &KernelKey) -> Option<String> {
    if key.in_size != key.out_size || key.in_size > 2 {
        return None;
    }
    let bits = key.in_size * 8;
    let lanes = |v: u64| lanes(bits, v);
    let top = 1u64 << (bits - 1);
    let (tops, lows, ones) = (lanes(top), lanes(top - 1), lanes(1));
    let shift = bits - 1;
    // Per lane, bit `top` set where the lane is not zero (its low bits are, or its top).
    let nonzero = format!("((((x & 0x{lows:X}u) + 0x{lows:X}u) | x) & 0x{tops:X}u)");
    Some(match key.op {
        Op::SignUnsigned { .. } => {
            format!("fn opw(x: u32) -> u32 {{ return {nonzero} >> {shift}u; }}\n")
        }
        Op::SignSigned { .. } => {
            let minus = (1u64 << bits) - 2;
            format!(
                "fn opw(x: u32) -> u32 {{\n    let negative = (x >> {shift}u) & 0x{ones:X}u;\n    return ({nonzero} >> {shift}u) | (negative * 0x{minus:X}u);\n}}\n"
            )
        }
        Op::SignFloat {
            inf, one, policy, ..
        } => {
            let nan = match policy {
                NanPolicy::Zero => "",
                NanPolicy::Propagate => " | (x & ((nan >> {shift}u) * 0x{all:X}u))",
            };
            let nan = nan
                .replace("{shift}", &shift.to_string())
                .replace("{all:X}", &format!("{:X}", (1u64 << bits) - 1));
            // A lane's magnitude is NaN above `inf`: adding `top - inf - 1` reaches `top`.
            let above = lanes(top - inf - 1);
            let (all, one) = ((1u64 << bits) - 1, lanes(one));
            format!(
                "fn opw(x: u32) -> u32 {{\n    let mag = x & 0x{lows:X}u;\n    let nonzero = (mag + 0x{lows:X}u) & 0x{tops:X}u;\n    let nan = (mag + 0x{above:X}u) & 0x{tops:X}u;\n    let unit = ((nonzero & ~nan) >> {shift}u) * 0x{all:X}u;\n    return (unit & ((x & 0x{tops:X}u) | 0x{one:X}u)){nan};\n}}\n"
            )
        }
        _ => return None,
    })
}

/// `op(x)`: the operator on one element's bits.
fn op_fn(op: Op) -> String {
    match op {
        Op::Copy => "fn op(x: u32) -> u32 { return x; }\n".into(),
        Op::SignFloat {
            bits: 64,
            inf,
            one,
            policy,
        } => {
            let nan = match policy {
                NanPolicy::Zero => "vec2<u32>(0u, 0u)",
                NanPolicy::Propagate => "x",
            };
            format!(
                "fn op(x: vec2<u32>) -> vec2<u32> {{\n    let hi = x.y & 0x7FFFFFFFu;\n    let unit = vec2<u32>(0u, select(0u, (x.y & 0x80000000u) | 0x{one:X}u, (hi | x.x) != 0u));\n    return select(unit, {nan}, (hi > 0x{inf:X}u) | ((hi == 0x{inf:X}u) & (x.x != 0u)));\n}}\n",
                inf = inf >> 32,
                one = one >> 32
            )
        }
        Op::SignFloat {
            bits,
            inf,
            one,
            policy,
        } => {
            let sign = 1u64 << (bits - 1);
            let nan = match policy {
                NanPolicy::Zero => "0u",
                NanPolicy::Propagate => "x",
            };
            format!(
                "fn op(x: u32) -> u32 {{\n    let mag = x & 0x{abs:X}u;\n    let unit = select(0u, (x & 0x{sign:X}u) | 0x{one:X}u, mag != 0u);\n    return select(unit, {nan}, mag > 0x{inf:X}u);\n}}\n",
                abs = sign - 1
            )
        }
        Op::SignSigned { bits: 64 } => "fn op(x: vec2<u32>) -> vec2<u32> {\n    let unit = vec2<u32>(select(0u, 1u, (x.x | x.y) != 0u), 0u);\n    return select(unit, vec2<u32>(0xFFFFFFFFu, 0xFFFFFFFFu), (x.y & 0x80000000u) != 0u);\n}\n".into(),
        Op::SignSigned { bits } => {
            let sign = 1u64 << (bits - 1);
            let all = (sign << 1) - 1;
            format!(
                "fn op(x: u32) -> u32 {{ return select(select(0u, 1u, x != 0u), 0x{all:X}u, (x & 0x{sign:X}u) != 0u); }}\n"
            )
        }
        Op::SignUnsigned { bits: 64 } => "fn op(x: vec2<u32>) -> vec2<u32> { return vec2<u32>(select(0u, 1u, (x.x | x.y) != 0u), 0u); }\n".into(),
        Op::SignUnsigned { .. } => "fn op(x: u32) -> u32 { return select(0u, 1u, x != 0u); }\n".into(),
        Op::IsInf { bits: 64, inf, mode } => {
            let hi = inf >> 32;
            let neg = hi | 0x8000_0000;
            let test = match mode {
                InfinityMode::Either => format!("(x.y & 0x7FFFFFFFu) == 0x{hi:X}u"),
                InfinityMode::Positive => format!("x.y == 0x{hi:X}u"),
                InfinityMode::Negative => format!("x.y == 0x{neg:X}u"),
                InfinityMode::Neither => "false".into(),
            };
            format!("fn op(x: vec2<u32>) -> u32 {{ return select(0u, 1u, (x.x == 0u) & ({test})); }}\n")
        }
        Op::IsInf { bits, inf, mode } => {
            let sign = 1u64 << (bits - 1);
            let neg = inf | sign;
            let test = match mode {
                InfinityMode::Either => format!("(x & 0x{:X}u) == 0x{inf:X}u", sign - 1),
                InfinityMode::Positive => format!("x == 0x{inf:X}u"),
                InfinityMode::Negative => format!("x == 0x{neg:X}u"),
                InfinityMode::Neither => "false".into(),
            };
            format!("fn op(x: u32) -> u32 {{ return select(0u, 1u, {test}); }}\n")
        }
        Op::NeverInf { .. } => "fn op(x: u32) -> u32 { return 0u; }\n".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_covers_each_walk_op_and_binding_and_each_source_has_an_entry_point() {
        let keys = every_key();
        let has = |f: &dyn Fn(&KernelKey) -> bool| keys.iter().any(f);
        assert!(has(&|k| k.walk == Walk::Contiguous && k.op == Op::Copy));
        assert!(has(&|k| k.walk == Walk::Vector && k.shared));
        assert!(has(&|k| k.walk
            == Walk::Rows {
                dims: MAX_WALK_DIMS - 1
            }));
        assert!(has(&|k| k.walk
            == Walk::Strided {
                dims: MAX_WALK_DIMS
            }
            && k.atomic()));
        assert!(has(&|k| matches!(k.walk, Walk::StridedWords { dims: 1 })));
        assert!(has(&|k| matches!(k.op, Op::NeverInf { .. })));
        for policy in NanPolicy::ALL {
            let op = Op::sign(DataType::Float16, policy).unwrap();
            assert!(has(&|k| k.op == op && k.walk == Walk::Vector));
        }
        for k in &keys {
            assert!(source(k).contains("fn main("), "{k:?}");
        }
        let sources = crate::kernel_sources();
        assert!(sources.iter().any(|(label, _)| label == "baseline read"));
        let distinct: std::collections::HashSet<_> = sources.iter().map(|(_, s)| s).collect();
        assert_eq!(distinct.len(), sources.len());
    }
}
