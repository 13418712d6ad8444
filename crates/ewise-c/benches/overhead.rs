//! The cost of the C ABI, as a ratio: `ewise_sign` on 4 Ki and 16 Mi float32 elements
//! against `array::sign` on the same slices, interleaved in rounds so that both see the
//! same machine, each round's time the mean of a batch of calls, and the best round of
//! each kept (the noise of a shared host only ever adds time).
//! `cargo bench -p ewise-c --bench overhead` prints the two times, their GB/s (bytes read
//! and written) and their ratio.

use std::hint::black_box;
use std::ptr;
use std::time::Instant;

use ewise::{array, NanPolicy};
use ewise_c::types::*;
use ewise_c::*;

/// Elements, rounds, and calls per round.
const CASES: [(usize, usize, u32); 2] = [(4 << 10, 300, 200), (16 << 20, 20, 2)];

fn best(batch: u32, mut call: impl FnMut(), best: &mut f64) {
    let start = Instant::now();
    for _ in 0..batch {
        call();
    }
    *best = best.min(start.elapsed().as_secs_f64() / f64::from(batch));
}

fn main() {
    let desc = EWISE_DEVICE_DESC {
        Kind: EWISE_DEVICE_CPU,
        FeatureLevel: DML_FEATURE_LEVEL_6_4,
        Extensions: 0,
        NanPolicy: EWISE_NAN_ZERO,
    };
    let mut device = ptr::null_mut();
    // SAFETY: valid pointers to a desc and an out-handle.
    assert_eq!(unsafe { ewise_create_device(&desc, &mut device) }, EWISE_OK);
    for (elements, rounds, batch) in CASES {
        let input: Vec<f32> = (0..elements).map(|i| i as f32 - 1000.5).collect();
        let mut output = vec![0f32; elements];
        let (mut abi, mut rust) = (f64::MAX, f64::MAX);
        for _ in 0..rounds {
            let (src, dst) = (black_box(input.as_ptr()), output.as_mut_ptr());
            best(
                batch,
                // SAFETY: both pointers hold `elements` float32s.
                || unsafe {
                    let t = DML_TENSOR_DATA_TYPE_FLOAT32;
                    ewise_sign(device, t, src.cast(), dst.cast(), elements as u64);
                },
                &mut abi,
            );
            best(
                batch,
                || array::sign(black_box(&input), &mut output, NanPolicy::Zero).unwrap(),
                &mut rust,
            );
        }
        let gbs = |s: f64| (8 * elements) as f64 / s / 1e9;
        println!(
            "{elements} float32 SIGN, best of {rounds} rounds of {batch} calls: ewise_sign \
             {:.3} us ({:.1} GB/s), array::sign {:.3} us ({:.1} GB/s), ratio {:.3}",
            abi * 1e6,
            gbs(abi),
            rust * 1e6,
            gbs(rust),
            abi / rust
        );
    }
    // SAFETY: the device came from ewise_create_device.
    unsafe { ewise_release_device(device) };
}
