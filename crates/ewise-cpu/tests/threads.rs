//! The thread cap: any thread count runs on at most `max_threads()` threads, and no
//! thread's piece moves less than `MIN_PIECE_BYTES`, with the reference's results.

use ewise_cpu::baseline::{self, CopyKind};
use ewise_cpu::reference;
use ewise_cpu::{
    max_threads, DataType, Device, Extensions, NanPolicy, OperatorDesc, Parallelism, TensorDesc,
    MEDIUM_THRESHOLD_BYTES, MIN_PIECE_BYTES, PARALLEL_THRESHOLD_BYTES,
};

fn bytes(len: usize, mut seed: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 56) as u8
        })
        .collect()
}

#[test]
fn huge_thread_counts_use_the_cap_and_pieces_of_the_minimum() {
    let elements = [
        MEDIUM_THRESHOLD_BYTES / 8,
        PARALLEL_THRESHOLD_BYTES / 8,
        3 * PARALLEL_THRESHOLD_BYTES / 8 + 17,
    ];
    for threads in [100_000, usize::MAX, max_threads() + 1] {
        let device = Device::builder()
            .extensions(Extensions::Enabled)
            .parallelism(Parallelism::threads(threads))
            .build()
            .unwrap();
        for &n in &elements {
            let t = TensorDesc::new(DataType::Float32, &[n as u32]);
            let desc = OperatorDesc::sign(t.clone(), t);
            let op = device
                .create_operator(&desc)
                .unwrap()
                .with_nan_policy(NanPolicy::Propagate)
                .compile()
                .unwrap();
            let used = op.threads();
            assert!(used <= max_threads(), "{threads} threads: {used} used");
            let moved = n * 8;
            assert!(
                used == 1 || moved / used as u64 >= MIN_PIECE_BYTES,
                "{n} elements on {used} threads"
            );
            let input = bytes(n as usize * 4, n);
            let mut expected = vec![0u8; input.len()];
            let mut got = vec![0u8; input.len()];
            reference::run(&desc, NanPolicy::Propagate, &input, &mut expected).unwrap();
            op.execute_slices(&input, &mut got).unwrap();
            assert!(got == expected, "{n} elements, {threads} threads asked");
        }
    }
    let src = bytes(3 << 20, 5);
    let mut dst = vec![0u8; src.len()];
    baseline::copy(&mut dst, &src, CopyKind::Plain, 100_000);
    assert!(dst == src);
    assert_eq!(
        baseline::read(&src, usize::MAX),
        baseline::read(&src, 1),
        "a read on any thread count sees the same bytes"
    );
}
