//! The thread cap: any thread count runs on at most `max_threads()` threads, and no
//! thread's piece moves less than `MIN_PIECE_BYTES`, with the reference's results; and
//! the process's threads stay bounded however many distinct thread counts run.

use ewise_cpu::baseline::{self, CopyKind};
use ewise_cpu::reference;
use ewise_cpu::{
    max_threads, DataType, Device, Extensions, NanPolicy, OperatorDesc, Parallelism, TensorDesc,
    MEDIUM_THRESHOLD_BYTES, MIN_PIECE_BYTES, PARALLEL_THRESHOLD_BYTES,
};

/// The tests of this file one at a time, so that one's threads are not counted as the
/// other's.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

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
    let _serial = serial();
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

/// The process's threads (`Threads:` of /proc/self/status).
#[cfg(target_os = "linux")]
fn os_threads() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap()
}

/// The process's threads that ewise started (named `ewise-...`: pool workers and
/// helpers).
#[cfg(target_os = "linux")]
fn ewise_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .filter(|name| name.starts_with("ewise-"))
        .count()
}

#[cfg(target_os = "linux")]
#[test]
fn distinct_thread_counts_share_a_bounded_set_of_threads() {
    use ewise_cpu::available_cores;
    use std::time::{Duration, Instant};

    let _serial = serial();
    let before = os_threads();
    let pool = max_threads() - 1;
    let helpers = available_cores() - 1;
    let n = 2 * PARALLEL_THRESHOLD_BYTES / 8;
    let t = TensorDesc::new(DataType::Float32, &[n as u32]);
    let desc = OperatorDesc::sign(t.clone(), t);
    let input = bytes(n as usize * 4, 9);
    let mut expected = vec![0u8; input.len()];
    reference::run(&desc, NanPolicy::Zero, &input, &mut expected).unwrap();
    let mut got = vec![0u8; input.len()];
    let mut peak = 0;
    for threads in 2..=33 {
        let op = Device::new()
            .create_operator(&desc)
            .unwrap()
            .with_parallelism(Parallelism::threads(threads))
            .compile()
            .unwrap();
        assert_eq!(
            op.threads(),
            threads.min(max_threads()),
            "{threads} threads"
        );
        op.execute_slices(&input, &mut got).unwrap();
        assert!(got == expected, "{threads} threads");
        baseline::copy(&mut got, &input, CopyKind::Plain, threads);
        assert!(got == input, "copy on {threads} threads");
        peak = peak.max(ewise_threads());
    }
    // One pool at a time, and while it finishes, at most one it replaced.
    assert!(peak <= 2 * pool + helpers, "{peak} ewise threads at once");
    // A replaced pool's workers exit soon after its last execution.
    let deadline = Instant::now() + Duration::from_secs(10);
    let bound = before + pool + available_cores();
    while os_threads() > bound || ewise_threads() > pool + helpers {
        assert!(
            Instant::now() < deadline,
            "{} threads ({} of ewise) after thread counts 2..=33, {before} before: more than \
             {bound} ({pool} pool workers, {helpers} helpers)",
            os_threads(),
            ewise_threads(),
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The array API between `MEDIUM_THRESHOLD_BYTES` and `PARALLEL_THRESHOLD_BYTES` splits
/// the slice among the calling thread and the helpers that are awake: every length
/// around the piece boundaries (not a multiple of 64 elements, a piece short of the
/// minimum, an odd start), separate and in place, gives the reference's bytes, whether
/// the helpers take their pieces (calls back to back) or the caller runs them all
/// (after the helpers went to sleep).
#[test]
fn the_array_api_splits_medium_slices_with_the_references_results() {
    use ewise_cpu::array;
    use ewise_cpu::InfinityMode;
    let _serial = serial();
    let medium = MEDIUM_THRESHOLD_BYTES as usize;
    for (data_type, size) in [
        (DataType::Int8, 1usize),
        (DataType::Float16, 2),
        (DataType::Float32, 4),
        (DataType::Uint64, 8),
    ] {
        let lengths = [
            medium / (2 * size) - 1,
            medium / (2 * size),
            medium / (2 * size) + 1,
            medium / (2 * size) + 63,
            3 * medium / (2 * size) + 65,
            (PARALLEL_THRESHOLD_BYTES as usize) / (2 * size) - 1,
        ];
        for (k, &n) in lengths.iter().enumerate() {
            let src = bytes(n * size + 1, k as u64 + 7);
            let input = &src[1..];
            let t = TensorDesc::new(data_type, &[n as u32]);
            // The reference takes DirectML's bindings: whole 4-byte units.
            let round = |len: usize| len.next_multiple_of(4);
            let mut padded = input.to_vec();
            padded.resize(round(input.len()), 0);
            for policy in [NanPolicy::Zero, NanPolicy::Propagate] {
                let mut expected = vec![0u8; round(n * size)];
                let desc = OperatorDesc::sign(t.clone(), t.clone());
                reference::run(&desc, policy, &padded, &mut expected).unwrap();
                expected.truncate(n * size);
                for pause in [false, true] {
                    if pause {
                        std::thread::sleep(std::time::Duration::from_millis(5));
                    }
                    let mut got = vec![0u8; n * size + 1];
                    array::sign_bytes(data_type, input, &mut got[1..], policy).unwrap();
                    assert!(got[1..] == expected[..], "{data_type:?} x {n}: sign_bytes");
                    let mut data = src.clone();
                    array::sign_bytes_in_place(data_type, &mut data[1..], policy).unwrap();
                    assert!(data[1..] == expected[..], "{data_type:?} x {n}: in place");
                }
            }
            if data_type.is_float() {
                let mode = InfinityMode::Either;
                let desc = OperatorDesc::is_infinity(
                    t.clone(),
                    TensorDesc::new(DataType::Uint8, &[n as u32]),
                    mode,
                );
                let mut expected = vec![0u8; round(n)];
                reference::run(&desc, NanPolicy::Zero, &padded, &mut expected).unwrap();
                expected.truncate(n);
                let mut got = vec![0u8; n];
                array::is_infinity_bytes(data_type, mode, input, &mut got).unwrap();
                assert!(got == expected, "{data_type:?} x {n}: is_infinity_bytes");
            }
        }
    }
}
