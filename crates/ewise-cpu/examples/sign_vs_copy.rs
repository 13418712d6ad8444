//! Times SIGN through `ewise_cpu::array::sign` (or IS_INFINITY through
//! `ewise_cpu::array::is_infinity`) against a plain copy of the input's bytes to a
//! distinct buffer (`copy_from_slice`: `memory.copy` on wasm32), interleaved in one run,
//! and prints each one's best and median time per call and the operator's speed as a
//! fraction of the copy's. Meant for wasm32, where it runs under Node
//! (scripts/wasi-run.mjs) in a SIMD128 build and a scalar one; it runs natively too.
//!
//! ```sh
//! RUSTFLAGS="-C target-feature=+simd128" \
//! CARGO_TARGET_WASM32_WASIP1_RUNNER="node scripts/wasi-run.mjs" \
//!     cargo run --release -p ewise-cpu --example sign_vs_copy --target wasm32-wasip1 -- \
//!     [DTYPE] [zero|propagate|either|positive|negative] [ELEMENTS] [CALLS]
//! ```
//!
//! Defaults: float32, zero, 1 Mi elements, 200 calls. A NaN policy times SIGN; an
//! IS_INFINITY mode (float types only) times IS_INFINITY, whose copy is still of the
//! input's bytes. Both run untimed for [`WARM_UP`] first, so that an engine that
//! compiles in tiers (V8: Liftoff, then TurboFan) is timed in its optimized code. The
//! input holds pseudo-random bit patterns (for floats, values of both signs with a few
//! NaNs), with every 61st element 0.

use std::time::{Duration, Instant};

use ewise_cpu::half::{bf16, f16};
use ewise_cpu::{array, InfinityMode, NanPolicy};

/// How long each operation runs before the timed calls.
const WARM_UP: Duration = Duration::from_millis(300);

/// The operator timed.
#[derive(Clone, Copy)]
enum Op {
    Sign(NanPolicy),
    IsInfinity(InfinityMode),
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Op::Sign(policy) => write!(f, "SIGN ({policy})"),
            Op::IsInfinity(mode) => write!(f, "IS_INFINITY ({mode})"),
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or_else(|| default.into());
    let op = match arg(1, "zero").as_str() {
        "zero" => Op::Sign(NanPolicy::Zero),
        "propagate" => Op::Sign(NanPolicy::Propagate),
        "either" => Op::IsInfinity(InfinityMode::Either),
        "positive" => Op::IsInfinity(InfinityMode::Positive),
        "negative" => Op::IsInfinity(InfinityMode::Negative),
        other => fail(&format!(
            "{other}: a NaN policy (zero, propagate) or an IS_INFINITY mode (either, positive, negative)"
        )),
    };
    let count = |i: usize, default: &str| {
        arg(i, default)
            .parse::<usize>()
            .unwrap_or_else(|_| fail("ELEMENTS and CALLS are counts"))
    };
    let (elements, calls) = (count(2, "1048576"), count(3, "200").max(1));
    let dtype = arg(0, "float32");
    let t = &dtype;
    match dtype.as_str() {
        "float32" => time::<f32>(t, op, elements, calls, Some(array::is_infinity::<f32>)),
        "float64" => time::<f64>(t, op, elements, calls, Some(array::is_infinity::<f64>)),
        "float16" => time::<f16>(t, op, elements, calls, Some(array::is_infinity::<f16>)),
        "bfloat16" => time::<bf16>(t, op, elements, calls, Some(array::is_infinity::<bf16>)),
        "int8" => time::<i8>(t, op, elements, calls, None),
        "int16" => time::<i16>(t, op, elements, calls, None),
        "int32" => time::<i32>(t, op, elements, calls, None),
        "int64" => time::<i64>(t, op, elements, calls, None),
        "uint8" => time::<u8>(t, op, elements, calls, None),
        "uint16" => time::<u16>(t, op, elements, calls, None),
        "uint32" => time::<u32>(t, op, elements, calls, None),
        "uint64" => time::<u64>(t, op, elements, calls, None),
        other => fail(&format!(
            "data type {other}: float32, int8, ... (SIGN's types)"
        )),
    }
}

fn fail(message: &str) -> ! {
    eprintln!("sign_vs_copy: {message}");
    std::process::exit(2);
}

/// IS_INFINITY of a float type: `array::is_infinity`.
type IsInfinity<T> = fn(&[T], InfinityMode, &mut [u8]) -> ewise_cpu::Result<()>;

fn time<T: array::SignElement>(
    name: &str,
    op: Op,
    elements: usize,
    calls: usize,
    is_infinity: Option<IsInfinity<T>>,
) {
    let size = std::mem::size_of::<T>();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut input = vec![T::zeroed(); elements];
    for (i, e) in bytemuck::cast_slice_mut::<T, u8>(&mut input)
        .chunks_exact_mut(size)
        .enumerate()
    {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        // Clearing the second-highest bit keeps most float exponents below all ones.
        let bits = if i % 61 == 0 {
            0
        } else {
            state & !(1 << (8 * size - 2))
        };
        e.copy_from_slice(&bits.to_ne_bytes()[..size]);
    }
    let mut output = vec![T::zeroed(); elements];
    let (mut flags, out_size) = match op {
        Op::Sign(_) => (Vec::new(), size),
        Op::IsInfinity(_) => (vec![0u8; elements], 1),
    };
    let apply = |output: &mut [T], flags: &mut [u8]| match op {
        Op::Sign(policy) => array::sign(&input, output, policy).expect("same lengths"),
        Op::IsInfinity(mode) => {
            let f = is_infinity
                .unwrap_or_else(|| fail(&format!("IS_INFINITY takes float types, not {name}")));
            f(&input, mode, flags).expect("same lengths")
        }
    };

    let mut times = (Vec::with_capacity(calls), Vec::with_capacity(calls));
    let warm_up = Instant::now();
    let mut timed = 0;
    while timed < calls {
        let start = Instant::now();
        apply(&mut output, &mut flags);
        let op_time = start.elapsed();
        std::hint::black_box((&mut output, &mut flags));
        let start = Instant::now();
        output.copy_from_slice(&input);
        let copy_time = start.elapsed();
        std::hint::black_box(&mut output);
        if warm_up.elapsed() >= WARM_UP {
            times.0.push(op_time);
            times.1.push(copy_time);
            timed += 1;
        }
    }

    let stats = |times: &mut Vec<Duration>| {
        times.sort();
        (times[0], times[times.len() / 2])
    };
    let (op_best, op_median) = stats(&mut times.0);
    let (copy_best, copy_median) = stats(&mut times.1);
    let gbs = |bytes: usize, t: Duration| (bytes * elements) as f64 / t.as_secs_f64() / 1e9;
    println!(
        "{name} {op} of {elements} elements, {calls} calls, instruction set {}",
        ewise_cpu::instruction_set().name()
    );
    for (what, bytes, best, median) in [
        ("op  ", size + out_size, op_best, op_median),
        ("copy", 2 * size, copy_best, copy_median),
    ] {
        println!(
            "{what}: best {:>8.1} us ({:5.1} GB/s), median {:>8.1} us ({:5.1} GB/s)",
            best.as_secs_f64() * 1e6,
            gbs(bytes, best),
            median.as_secs_f64() * 1e6,
            gbs(bytes, median)
        );
    }
    println!(
        "op / copy speed: best {:.2}, median {:.2}",
        copy_best.as_secs_f64() / op_best.as_secs_f64(),
        copy_median.as_secs_f64() / op_median.as_secs_f64()
    );
}
