//! Criterion benches: each operator and data type beside memory copies of the same bytes,
//! in cache (64 Ki elements, one thread) and out of cache (16 Mi elements, all threads),
//! the transpose of a 4096 x 4096 array as input, plus the per-call cost of a tiny
//! execute. `ewise bench` reports the same comparisons
//! as ratios; these give criterion's statistics.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ewise_cpu::baseline::{self, CopyKind};
use ewise_cpu::{
    Buffer, BufferBinding, BufferRef, CompiledOperator, DataType, Device, Extensions, InfinityMode,
    NanPolicy, OperatorDesc, Parallelism, TensorDesc,
};

const SIGN_TYPES: [DataType; 5] = [
    DataType::Float32,
    DataType::Float16,
    DataType::Bfloat16,
    DataType::Int8,
    DataType::Int64,
];

fn compile(desc: &OperatorDesc, threads: usize) -> CompiledOperator {
    Device::builder()
        .extensions(Extensions::Enabled)
        .parallelism(Parallelism::threads(threads))
        .build()
        .and_then(|d| d.create_operator(desc))
        .and_then(|op| op.with_nan_policy(NanPolicy::Propagate).compile())
        .expect("benchmark descriptions are valid")
}

fn cases(c: &mut Criterion) {
    let threads = Parallelism::Auto.resolve();
    for (elements, threads) in [(64usize << 10, 1usize), (16 << 20, threads)] {
        let mut group = c.benchmark_group(format!("{elements}-elements-{threads}-threads"));
        group.sample_size(if elements > 1 << 20 { 10 } else { 50 });
        let n = elements as u32;
        let mut descs: Vec<(String, OperatorDesc)> = SIGN_TYPES
            .iter()
            .map(|&t| {
                let d = TensorDesc::new(t, &[n]);
                (format!("sign-{t}"), OperatorDesc::sign(d.clone(), d))
            })
            .collect();
        for t in [DataType::Float32, DataType::Float16] {
            descs.push((
                format!("is-infinity-{t}"),
                OperatorDesc::is_infinity(
                    TensorDesc::new(t, &[n]),
                    TensorDesc::new(DataType::Uint8, &[n]),
                    InfinityMode::Either,
                ),
            ));
        }
        for (name, desc) in &descs {
            let in_bytes = desc.input().total_tensor_size_in_bytes;
            let out_bytes = desc.output().total_tensor_size_in_bytes;
            let op = compile(desc, threads);
            let input = Buffer::zeroed(in_bytes as usize);
            let mut output = Buffer::zeroed(out_bytes as usize);
            group.throughput(Throughput::Bytes(in_bytes + out_bytes));
            group.bench_function(BenchmarkId::new("op", name), |b| {
                b.iter(|| {
                    op.execute(
                        &mut [(&input).into(), (&mut output).into()],
                        &[BufferBinding::new(0, 0, in_bytes)],
                        &[BufferBinding::new(1, 0, out_bytes)],
                    )
                    .expect("bindings are valid")
                })
            });
            // A copy of half the bytes moved reads and writes as many bytes as the op.
            let copy_len = ((in_bytes + out_bytes) / 2) as usize;
            let from = Buffer::zeroed(copy_len);
            let mut to = Buffer::zeroed(copy_len);
            for kind in [CopyKind::Plain, CopyKind::Streaming] {
                let id = BenchmarkId::new(format!("copy-{}", kind.name()), name);
                group.bench_function(id, |b| {
                    b.iter(|| baseline::copy(&mut to, &from, kind, threads))
                });
            }
        }
        group.finish();
    }
}

fn transposed(c: &mut Criterion) {
    let threads = Parallelism::Auto.resolve();
    let mut group = c.benchmark_group(format!("transposed-4096x4096-{threads}-threads"));
    group.sample_size(10);
    let n = 4096u32;
    for (name, out_type, t) in [
        ("sign", DataType::Float32, DataType::Float32),
        ("sign", DataType::Int8, DataType::Int8),
        ("is-infinity", DataType::Uint8, DataType::Float32),
    ] {
        let input = TensorDesc::strided(t, &[n, n], &[1, n]);
        let output = TensorDesc::new(out_type, &[n, n]);
        let desc = if name == "sign" {
            OperatorDesc::sign(input, output)
        } else {
            OperatorDesc::is_infinity(input, output, InfinityMode::Either)
        };
        let (in_bytes, out_bytes) = (
            desc.input().total_tensor_size_in_bytes,
            desc.output().total_tensor_size_in_bytes,
        );
        let op = compile(&desc, threads);
        let src = Buffer::zeroed(in_bytes as usize);
        let mut dst = Buffer::zeroed(out_bytes as usize);
        group.throughput(Throughput::Bytes(in_bytes + out_bytes));
        group.bench_function(BenchmarkId::new("op", format!("{name}-{t}")), |b| {
            b.iter(|| op.execute_slices(&src, &mut dst).expect("slices fit"))
        });
    }
    group.finish();
}

fn tiny(c: &mut Criterion) {
    let mut group = c.benchmark_group("per-call");
    for n in [1u32, 4096] {
        let t = TensorDesc::new(DataType::Float32, &[n]);
        let op = compile(&OperatorDesc::sign(t.clone(), t), 1);
        let bytes = u64::from(n.max(4) * 4);
        let input = Buffer::zeroed(bytes as usize);
        let mut output = Buffer::zeroed(bytes as usize);
        group.bench_function(BenchmarkId::new("execute-f32", n), |b| {
            b.iter(|| {
                let mut buffers = [BufferRef::from(&input), BufferRef::from(&mut output)];
                op.execute(
                    black_box(&mut buffers),
                    &[BufferBinding::new(0, 0, bytes)],
                    &[BufferBinding::new(1, 0, bytes)],
                )
                .expect("bindings are valid")
            })
        });
    }
    group.finish();
}

criterion_group!(benches, cases, transposed, tiny);
criterion_main!(benches);
