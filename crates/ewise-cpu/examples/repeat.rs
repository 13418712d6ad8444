//! Runs one compiled operator on the same buffers again and again and prints the time of
//! each call: a steadier measure than `ewise bench` (which interleaves memory copies) for
//! comparing two builds or settings of one case.
//!
//! ```sh
//! cargo run --release -p ewise-cpu --example repeat -- [sign|is-infinity] [DTYPE] \
//!     [contiguous|transposed] [ELEMENTS] [THREADS] [CALLS] [zero|propagate] [PAUSE_US]
//! cargo run --release -p ewise-cpu --example repeat -- sign float32 transposed 16777216 2 8
//! ```
//!
//! With `PAUSE_US` (default 0), the process sleeps that many microseconds before each
//! call, which is timed without the sleep: sporadic calls, each finding the helper threads
//! asleep once the pause is longer than they spin after a call (1 ms).
//!
//! Transposed inputs are the transpose of a square (or nearly square) 2-D array, as in
//! `ewise bench`, and hold the same kind of pseudo-random bytes. GB/s counts bytes read
//! plus bytes written.

use std::time::Instant;

use ewise_cpu::{
    Buffer, DataType, Device, Extensions, InfinityMode, NanPolicy, OperatorDesc, Parallelism,
    TensorDesc,
};

fn main() {
    if let Err(e) = run() {
        eprintln!("repeat: {e}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or_else(|| default.into());
    let op = arg(0, "sign");
    let dtype_name = arg(1, "float32");
    let dtype = DataType::from_name(&dtype_name)
        .ok_or_else(|| format!("unknown data type {dtype_name}"))?;
    let transposed = match arg(2, "transposed").as_str() {
        "transposed" => true,
        "contiguous" => false,
        other => return Err(format!("layout {other}: contiguous or transposed")),
    };
    let number = |i: usize, default: &str| {
        let text = arg(i, default);
        text.parse::<u32>()
            .map_err(|_| format!("argument {}: {text} is not a count", i + 1))
    };
    let elements = number(3, "16777216")?;
    let threads = number(4, "1")? as usize;
    let calls = number(5, "8")?;
    let policy = match arg(6, "zero").as_str() {
        "zero" => NanPolicy::Zero,
        "propagate" => NanPolicy::Propagate,
        other => return Err(format!("NaN policy {other}: zero or propagate")),
    };
    let pause = std::time::Duration::from_micros(number(7, "0")?.into());

    let (rows, cols) = near_square(elements);
    let (input, sizes) = if transposed {
        (
            TensorDesc::strided(dtype, &[rows, cols], &[1, rows]),
            vec![rows, cols],
        )
    } else {
        (TensorDesc::new(dtype, &[elements]), vec![elements])
    };
    let desc = match op.as_str() {
        "sign" => OperatorDesc::sign(input, TensorDesc::new(dtype, &sizes)),
        "is-infinity" => OperatorDesc::is_infinity(
            input,
            TensorDesc::new(DataType::Uint8, &sizes),
            InfinityMode::Either,
        ),
        other => return Err(format!("operator {other}: sign or is-infinity")),
    };
    let device = Device::builder()
        .extensions(Extensions::Enabled)
        .nan_policy(policy)
        .parallelism(Parallelism::threads(threads))
        .build()
        .map_err(|e| e.to_string())?;
    let compiled = device
        .create_operator(&desc)
        .and_then(|o| o.compile())
        .map_err(|e| e.to_string())?;
    let src = Buffer::from_bytes(&pattern(desc.input().total_tensor_size_in_bytes as usize));
    let mut dst = Buffer::zeroed(desc.output().total_tensor_size_in_bytes as usize);
    let element_bytes = |t: DataType| t.size_in_bytes().unwrap_or(0) as f64;
    let moved = f64::from(elements)
        * (element_bytes(desc.input().data_type) + element_bytes(desc.output().data_type));
    for _ in 0..calls {
        if !pause.is_zero() {
            std::thread::sleep(pause);
        }
        let start = Instant::now();
        compiled
            .execute_slices(&src, &mut dst)
            .map_err(|e| e.to_string())?;
        let seconds = start.elapsed().as_secs_f64();
        println!(
            "{:9.3} ms  {:6.1} GB/s",
            seconds * 1e3,
            moved / seconds / 1e9
        );
    }
    Ok(())
}

/// Bytes of every kind of value, written out so that every page of the input is its own
/// (a zeroed buffer that is never written reads from one shared zero page, which stays
/// in cache and hides the cost of reading).
fn pattern(len: usize) -> Vec<u8> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

/// Rows x columns of a 2-D array of `n` elements, as square as `n` allows.
fn near_square(n: u32) -> (u32, u32) {
    let mut rows = (f64::from(n).sqrt() as u32).max(1);
    while !n.is_multiple_of(rows) {
        rows -= 1;
    }
    (rows, n / rows)
}
