//! Times SIGN through `ewise_cpu::array::sign` against a plain copy of the same bytes
//! (`copy_from_slice`), interleaved in one run, and prints each one's best and median
//! time per call and SIGN's speed as a fraction of the copy's. Meant for wasm32, where it
//! runs under Node (scripts/wasi-run.mjs) in a SIMD128 build and a scalar one; it runs
//! natively too.
//!
//! ```sh
//! RUSTFLAGS="-C target-feature=+simd128" \
//! CARGO_TARGET_WASM32_WASIP1_RUNNER="node scripts/wasi-run.mjs" \
//!     cargo run --release -p ewise-cpu --example sign_vs_copy --target wasm32-wasip1 -- \
//!     [DTYPE] [zero|propagate] [ELEMENTS] [CALLS]
//! ```
//!
//! Defaults: float32, zero, 1 Mi elements, 200 calls. The input holds pseudo-random bit
//! patterns (for floats, values of both signs with a few NaNs), with every 61st element 0.

use std::time::{Duration, Instant};

use ewise_cpu::half::{bf16, f16};
use ewise_cpu::{array, NanPolicy};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or_else(|| default.into());
    let policy = match arg(1, "zero").as_str() {
        "zero" => NanPolicy::Zero,
        "propagate" => NanPolicy::Propagate,
        other => fail(&format!("NaN policy {other}: zero or propagate")),
    };
    let count = |i: usize, default: &str| {
        arg(i, default)
            .parse::<usize>()
            .unwrap_or_else(|_| fail("ELEMENTS and CALLS are counts"))
    };
    let (elements, calls) = (count(2, "1048576"), count(3, "200").max(1));
    let dtype = arg(0, "float32");
    match dtype.as_str() {
        "float32" => time::<f32>(&dtype, policy, elements, calls),
        "float64" => time::<f64>(&dtype, policy, elements, calls),
        "float16" => time::<f16>(&dtype, policy, elements, calls),
        "bfloat16" => time::<bf16>(&dtype, policy, elements, calls),
        "int8" => time::<i8>(&dtype, policy, elements, calls),
        "int16" => time::<i16>(&dtype, policy, elements, calls),
        "int32" => time::<i32>(&dtype, policy, elements, calls),
        "int64" => time::<i64>(&dtype, policy, elements, calls),
        "uint8" => time::<u8>(&dtype, policy, elements, calls),
        "uint16" => time::<u16>(&dtype, policy, elements, calls),
        "uint32" => time::<u32>(&dtype, policy, elements, calls),
        "uint64" => time::<u64>(&dtype, policy, elements, calls),
        other => fail(&format!(
            "data type {other}: float32, int8, ... (SIGN's types)"
        )),
    }
}

fn fail(message: &str) -> ! {
    eprintln!("sign_vs_copy: {message}");
    std::process::exit(2);
}

fn time<T: array::SignElement + bytemuck::Pod>(
    name: &str,
    policy: NanPolicy,
    elements: usize,
    calls: usize,
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

    let mut sign = Vec::with_capacity(calls);
    let mut copy = Vec::with_capacity(calls);
    for _ in 0..calls {
        let start = Instant::now();
        array::sign(&input, &mut output, policy).expect("same lengths");
        sign.push(start.elapsed());
        std::hint::black_box(&mut output);
        let start = Instant::now();
        output.copy_from_slice(&input);
        copy.push(start.elapsed());
        std::hint::black_box(&mut output);
    }

    let stats = |times: &mut Vec<Duration>| {
        times.sort();
        (times[0], times[times.len() / 2])
    };
    let (sign_best, sign_median) = stats(&mut sign);
    let (copy_best, copy_median) = stats(&mut copy);
    let gbs = |t: Duration| (2 * size * elements) as f64 / t.as_secs_f64() / 1e9;
    println!(
        "{name} SIGN ({policy}) of {elements} elements, {calls} calls, instruction set {}",
        ewise_cpu::instruction_set().name()
    );
    for (what, best, median) in [
        ("sign", sign_best, sign_median),
        ("copy", copy_best, copy_median),
    ] {
        println!(
            "{what}: best {:>8.1} us ({:5.1} GB/s), median {:>8.1} us ({:5.1} GB/s)",
            best.as_secs_f64() * 1e6,
            gbs(best),
            median.as_secs_f64() * 1e6,
            gbs(median)
        );
    }
    println!(
        "sign / copy speed: best {:.2}, median {:.2}",
        copy_best.as_secs_f64() / sign_best.as_secs_f64(),
        copy_median.as_secs_f64() / sign_median.as_secs_f64()
    );
}
