//! The per-call cost of the C ABI on a small input, as a ratio: `ewise_sign` on 4 Ki
//! float32 elements against `array::sign` on the same slices, interleaved in rounds so
//! that both see the same machine, each round's time the mean of a batch of calls, and
//! the best round of each kept (the noise of a shared host only ever adds time).
//! `cargo bench -p ewise-c --bench overhead` prints the two times and their ratio.

use std::hint::black_box;
use std::ptr;
use std::time::Instant;

use ewise::{array, NanPolicy};
use ewise_c::types::*;
use ewise_c::*;

const ELEMENTS: usize = 4096;
const ROUNDS: usize = 300;
const BATCH: u32 = 200;

fn best(mut call: impl FnMut(), best: &mut f64) {
    let start = Instant::now();
    for _ in 0..BATCH {
        call();
    }
    *best = best.min(start.elapsed().as_secs_f64() / f64::from(BATCH));
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
    let input: Vec<f32> = (0..ELEMENTS).map(|i| i as f32 - 1000.5).collect();
    let mut output = vec![0f32; ELEMENTS];
    let (mut abi, mut rust) = (f64::MAX, f64::MAX);
    for _ in 0..ROUNDS {
        let (src, dst) = (black_box(input.as_ptr()), output.as_mut_ptr());
        best(
            // SAFETY: both pointers hold ELEMENTS float32s.
            || unsafe {
                ewise_sign(
                    device,
                    DML_TENSOR_DATA_TYPE_FLOAT32,
                    src.cast(),
                    dst.cast(),
                    ELEMENTS as u64,
                );
            },
            &mut abi,
        );
        best(
            || array::sign(black_box(&input), &mut output, NanPolicy::Zero).unwrap(),
            &mut rust,
        );
    }
    // SAFETY: the device came from ewise_create_device.
    unsafe { ewise_release_device(device) };
    println!(
        "{ELEMENTS} float32 SIGN, best of {ROUNDS} rounds of {BATCH} calls: ewise_sign {:.1} ns, \
         array::sign {:.1} ns, ratio {:.3}",
        abi * 1e9,
        rust * 1e9,
        abi / rust
    );
}
