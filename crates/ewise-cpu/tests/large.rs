//! Tensors large enough to take the threaded and streaming-store paths, or the helper
//! threads of medium sizes, against the reference, contiguous, strided and in place.

use ewise_cpu::reference;
use ewise_cpu::{
    stream_threshold, DataType, Device, Extensions, InfinityMode, NanPolicy, OperatorDesc,
    Parallelism, TensorDesc, MEDIUM_THRESHOLD_BYTES, PARALLEL_THRESHOLD_BYTES,
};

/// Input plus output bytes above which executions on up to `threads` threads stream on
/// this host (the cache-aware rule, or `EWISE_STREAM_THRESHOLD`; when that says `never`,
/// the rule's fallback, for sizes like those of other hosts), and at least the thread
/// threshold, so that the sizes made from it are threaded too.
fn streaming_bytes(threads: usize) -> u64 {
    (1..=threads)
        .filter_map(|t| stream_threshold(t).bytes())
        .max()
        .unwrap_or(ewise_cpu::cache::FALLBACK_STREAM_THRESHOLD_BYTES)
        .max(PARALLEL_THRESHOLD_BYTES)
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

fn check(desc: &OperatorDesc, threads: usize, policy: NanPolicy) {
    let device = Device::builder()
        .extensions(Extensions::Enabled)
        .parallelism(Parallelism::threads(threads))
        .build()
        .unwrap();
    let op = device
        .create_operator(desc)
        .unwrap()
        .with_nan_policy(policy)
        .compile()
        .unwrap();
    // Targets without threads (wasm32) run every execution on the caller's.
    let used = if cfg!(target_family = "wasm") {
        1
    } else {
        threads
    };
    assert_eq!(op.threads(), used, "{desc:?}");
    let (in_span, out_span) = (
        desc.input().exact_span_in_bytes().unwrap(),
        desc.output().exact_span_in_bytes().unwrap(),
    );
    let threshold = stream_threshold(used);
    assert_eq!(op.streams(), threshold.streams(in_span + out_span));
    assert_eq!(op.streams_in_place(), threshold.streams(out_span));
    let input = bytes(desc.input().total_tensor_size_in_bytes as usize, 7);
    let out_len = desc.output().total_tensor_size_in_bytes as usize;
    let mut expected = bytes(out_len, 11);
    let mut got = expected.clone();
    reference::run(desc, policy, &input, &mut expected).unwrap();
    op.execute_slices(&input, &mut got).unwrap();
    assert!(got == expected, "{desc:?} with {threads} threads");
    if matches!(desc, OperatorDesc::Sign(_)) && desc.input() == desc.output() {
        let mut data = input.clone();
        op.execute_in_place_slice(&mut data).unwrap();
        assert!(data == expected, "in place, {threads} threads");
    }
}

#[test]
fn contiguous_streaming_and_threaded() {
    // Float32: 4 bytes per element, so that the output alone (in place) streams too.
    let n = u32::try_from(streaming_bytes(3) / 4 + 1000).unwrap();
    let t = TensorDesc::new(DataType::Float32, &[n]);
    for threads in [1, 2, 3] {
        check(
            &OperatorDesc::sign(t.clone(), t.clone()),
            threads,
            NanPolicy::Propagate,
        );
    }
    let h = TensorDesc::new(DataType::Float16, &[n]);
    let out = TensorDesc::new(DataType::Uint8, &[n]);
    check(
        &OperatorDesc::is_infinity(h, out, InfinityMode::Negative),
        2,
        NanPolicy::Zero,
    );
}

#[test]
fn medium_sizes_on_helper_threads() {
    // Between the two thresholds: parts go to the spinning helpers when they are awake,
    // which calls in quick succession (and a pause, after which they sleep) both meet.
    let n = ((MEDIUM_THRESHOLD_BYTES + PARALLEL_THRESHOLD_BYTES) / 16) as u32;
    let t = TensorDesc::new(DataType::Float32, &[n]);
    let (rows, cols) = (600u32, 200u32);
    assert!(u64::from(rows * cols) * 4 >= MEDIUM_THRESHOLD_BYTES);
    let transposed = TensorDesc::strided(DataType::Int16, &[rows, cols], &[1, rows]);
    let packed = TensorDesc::new(DataType::Int16, &[rows, cols]);
    for round in 0..20 {
        for threads in [2, 3] {
            check(
                &OperatorDesc::sign(t.clone(), t.clone()),
                threads,
                NanPolicy::Propagate,
            );
            check(
                &OperatorDesc::sign(transposed.clone(), packed.clone()),
                threads,
                NanPolicy::Zero,
            );
        }
        if round % 5 == 4 {
            std::thread::sleep(std::time::Duration::from_millis(3));
        }
    }
}

#[test]
fn strided_threaded() {
    // A transposed 1200x1000 int16 input into a padded output: above the thread threshold.
    let (rows, cols) = (1200u32, 1000u32);
    assert!(u64::from(rows * cols) * 4 > PARALLEL_THRESHOLD_BYTES);
    let input = TensorDesc::strided(DataType::Int16, &[rows, cols], &[1, rows]);
    let output = TensorDesc::strided(DataType::Int16, &[rows, cols], &[cols + 3, 1]);
    for threads in [2, 5] {
        check(
            &OperatorDesc::sign(input.clone(), output.clone()),
            threads,
            NanPolicy::Zero,
        );
    }
    let broadcast = TensorDesc::strided(DataType::Float64, &[rows, cols], &[1, 0]);
    let packed = TensorDesc::new(DataType::Float64, &[rows, cols]);
    check(
        &OperatorDesc::sign(broadcast, packed.clone()),
        2,
        NanPolicy::Zero,
    );
    check(
        &OperatorDesc::sign(packed.clone(), packed),
        2,
        NanPolicy::Zero,
    );
}

/// Transposed 2-D inputs of every element size, through the tiled path: shapes whose
/// sides are not multiples of the tiles or register blocks, padded outputs, one and two
/// threads, and outputs large enough for streaming stores.
#[test]
fn transposed_every_type() {
    let shapes = [
        (37u32, 300u32, 0u32),
        (300, 37, 5),
        (257, 130, 16),
        (64, 64, 0),
    ];
    let sign_types = [
        DataType::Float64,
        DataType::Float32,
        DataType::Float16,
        DataType::Bfloat16,
        DataType::Int8,
        DataType::Uint16,
        DataType::Int32,
        DataType::Uint64,
    ];
    for (rows, cols, pad) in shapes {
        for t in sign_types {
            let input = TensorDesc::strided(t, &[rows, cols], &[1, rows]);
            let output = TensorDesc::strided(t, &[rows, cols], &[cols + pad, 1]);
            check(&OperatorDesc::sign(input, output), 1, NanPolicy::Propagate);
        }
        for t in [
            DataType::Float64,
            DataType::Float32,
            DataType::Float16,
            DataType::Bfloat16,
        ] {
            let input = TensorDesc::strided(t, &[rows, cols], &[1, rows]);
            let output = TensorDesc::strided(DataType::Uint8, &[rows, cols], &[cols + pad, 1]);
            check(
                &OperatorDesc::is_infinity(input, output, InfinityMode::Either),
                1,
                NanPolicy::Zero,
            );
        }
    }
    // Float32 in and out, 8 bytes per element: a 1030-row transpose with enough columns.
    let rows = 1030u32;
    let cols = u32::try_from(streaming_bytes(2) / 8 / u64::from(rows) + 7).unwrap();
    assert!(u64::from(rows) * u64::from(cols) * 8 > streaming_bytes(2));
    let input = TensorDesc::strided(DataType::Float32, &[rows, cols], &[1, rows]);
    let output = TensorDesc::new(DataType::Float32, &[rows, cols]);
    for threads in [1, 2] {
        check(
            &OperatorDesc::sign(input.clone(), output.clone()),
            threads,
            NanPolicy::Zero,
        );
    }
    let input = TensorDesc::strided(DataType::Float64, &[rows * 4, cols], &[1, rows * 4]);
    let output = TensorDesc::new(DataType::Uint8, &[rows * 4, cols]);
    check(
        &OperatorDesc::is_infinity(input, output, InfinityMode::Positive),
        2,
        NanPolicy::Zero,
    );
}

/// Streaming transposes into outputs at every offset from a 64-byte line that their
/// element size allows (a narrower first column of tiles lines the others up): each
/// equal to the reference, and the bytes around the output untouched.
#[test]
fn streaming_transposes_at_every_output_offset() {
    for (t, offsets) in [
        (DataType::Int8, &[0usize, 1, 3, 16, 63][..]),
        (DataType::Int16, &[0, 2, 30, 48][..]),
        (DataType::Float32, &[0, 4, 16, 36][..]),
        (DataType::Float64, &[0, 8, 24, 56][..]),
    ] {
        let size = t.size_in_bytes().unwrap() as usize;
        // A power-of-two pitch (the case where streaming pays) and enough rows to stream.
        let cols = 1024u32;
        let rows = u32::try_from(streaming_bytes(1) / (2 * size as u64 * 1024) + 3).unwrap();
        let input = TensorDesc::strided(t, &[rows, cols], &[1, rows]);
        let output = TensorDesc::new(t, &[rows, cols]);
        let desc = OperatorDesc::sign(input.clone(), output.clone());
        let op = Device::builder()
            .extensions(Extensions::Enabled)
            .parallelism(Parallelism::threads(1))
            .build()
            .unwrap()
            .create_operator(&desc)
            .unwrap()
            .compile()
            .unwrap();
        assert!(op.streams(), "{t:?} {rows}x{cols}");
        let source = bytes(input.total_tensor_size_in_bytes as usize, 5);
        let len = output.total_tensor_size_in_bytes as usize;
        let mut expected = vec![0u8; len];
        reference::run(&desc, NanPolicy::Zero, &source, &mut expected).unwrap();
        let mut buffer = vec![0xA5u8; len + 128];
        let start = buffer.as_ptr().align_offset(64);
        for &offset in offsets {
            buffer.fill(0xA5);
            let at = start + offset;
            op.execute_slices(&source, &mut buffer[at..at + len])
                .unwrap();
            assert!(buffer[at..at + len] == expected[..], "{t:?} at +{offset}");
            assert!(buffer[..at]
                .iter()
                .chain(&buffer[at + len..])
                .all(|&b| b == 0xA5));
        }
    }
}
