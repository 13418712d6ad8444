//! The C ABI's cost: `ewise_sign` on 4 Ki and 16 Mi float32 elements beside the Rust
//! array API (`array::sign`) and a memory copy of the same bytes, in one run. The entry
//! points are called as C calls them (`extern "C"`, raw pointers), so the difference is
//! the ABI layer: the guard, the checks and the device's type table.

use std::hint::black_box;
use std::ptr;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ewise::baseline::{self, CopyKind};
use ewise::{array, NanPolicy, Parallelism};
use ewise_c::types::*;
use ewise_c::*;

fn cpu_device() -> *mut ewise_device {
    let desc = EWISE_DEVICE_DESC {
        Kind: EWISE_DEVICE_CPU,
        FeatureLevel: DML_FEATURE_LEVEL_6_4,
        Extensions: 0,
        NanPolicy: EWISE_NAN_ZERO,
    };
    let mut device = ptr::null_mut();
    // SAFETY: valid pointers to a desc and an out-handle.
    let status = unsafe { ewise_create_device(&desc, &mut device) };
    assert_eq!(status, EWISE_OK);
    device
}

fn cases(c: &mut Criterion) {
    let device = cpu_device();
    let threads = Parallelism::Auto.resolve();
    for elements in [4usize << 10, 16 << 20] {
        let input: Vec<f32> = (0..elements).map(|i| i as f32 - 1000.5).collect();
        let mut output = vec![0f32; elements];
        let mut group = c.benchmark_group(format!("f32-sign-{elements}-elements"));
        group.sample_size(if elements > 1 << 20 { 10 } else { 100 });
        group.throughput(Throughput::Bytes(2 * 4 * elements as u64));
        group.bench_function("ewise_sign", |b| {
            b.iter(|| {
                // SAFETY: both pointers hold `elements` f32s.
                let s = unsafe {
                    ewise_sign(
                        device,
                        DML_TENSOR_DATA_TYPE_FLOAT32,
                        black_box(input.as_ptr()).cast(),
                        output.as_mut_ptr().cast(),
                        elements as u64,
                    )
                };
                assert_eq!(s, EWISE_OK);
            })
        });
        group.bench_function("array::sign", |b| {
            b.iter(|| array::sign(black_box(&input), &mut output, NanPolicy::Zero).unwrap())
        });
        let from: &[u8] = bytemuck_bytes(&input);
        let mut to = vec![0u8; from.len()];
        let copy_threads = if elements > 1 << 20 { threads } else { 1 };
        group.bench_function("memcpy", |b| {
            b.iter(|| baseline::copy(&mut to, black_box(from), CopyKind::Plain, copy_threads))
        });
        group.finish();
    }
    // SAFETY: the device came from ewise_create_device.
    unsafe { ewise_release_device(device) };
}

fn bytemuck_bytes(values: &[f32]) -> &[u8] {
    // SAFETY: f32 has no padding and any byte is a valid u8.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast(), std::mem::size_of_val(values)) }
}

criterion_group!(benches, cases);
criterion_main!(benches);
