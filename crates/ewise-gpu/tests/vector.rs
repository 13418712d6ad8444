//! The vectorized contiguous walk: runs whose tensors start at every 16-byte phase
//! (binding offsets below 16 through GuaranteedBaseOffsetAlignment), heads and tails of
//! 1 to 15 bytes, bodies of 0 to 4 vectors and longer, every type and NaN policy of SIGN
//! and every type, mode and output type of IS_INFINITY, in place, disjoint ranges of one
//! buffer, runs split into many dispatches, and phases that never meet (the scalar
//! fallback). The GPU's buffers equal the CPU backend's byte for byte, and bytes outside
//! the output's elements keep their starting values.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{both, device, input, noise, size, tiny_device, try_device, Run};
use ewise_core::{DataType, Extensions, InfinityMode, NanPolicy, OperatorDesc, TensorDesc};
use ewise_gpu::GpuDevice;

use DataType::*;

/// SIGN on `n` packed elements, both tensors aligned to their element size only.
fn sign(data_type: DataType, n: u64) -> OperatorDesc {
    let t = TensorDesc::new(data_type, &[n as u32]).with_alignment(size(data_type) as u32);
    OperatorDesc::sign(t.clone(), t)
}

/// IS_INFINITY on `n` packed elements into `out` (1 byte), aligned to element sizes.
fn is_inf(data_type: DataType, n: u64, mode: InfinityMode, out: DataType) -> OperatorDesc {
    let input = TensorDesc::new(data_type, &[n as u32]).with_alignment(size(data_type) as u32);
    let output = TensorDesc::new(out, &[n as u32]).with_alignment(1);
    OperatorDesc::is_infinity(input, output, mode)
}

/// Every description to try for an input type: SIGN with each NaN policy that applies,
/// or IS_INFINITY with each mode into UINT8 and BOOL.
fn variants(data_type: DataType, sign_op: bool, n: u64) -> Vec<(OperatorDesc, NanPolicy)> {
    if sign_op {
        let policies: &[NanPolicy] = if data_type.is_float() {
            &NanPolicy::ALL
        } else {
            &[NanPolicy::Zero]
        };
        return policies.iter().map(|&p| (sign(data_type, n), p)).collect();
    }
    InfinityMode::ALL
        .iter()
        .flat_map(|&mode| {
            [Uint8, Bool].map(|out| (is_inf(data_type, n, mode, out), NanPolicy::Zero))
        })
        .collect()
}

/// Runs `desc` from `start` on both backends; checks that they agree and that every
/// byte outside the output's elements (the words it shares included) kept its value
/// where the input does not live.
fn check(device: &GpuDevice, desc: &OperatorDesc, policy: NanPolicy, start: &[Vec<u8>], run: Run) {
    let (gpu, cpu) = both(device, desc, policy, start, run);
    let gpu = gpu.unwrap_or_else(|e| panic!("GPU failed on {desc:?} {run:?}: {e}"));
    let cpu = cpu.unwrap_or_else(|e| panic!("CPU failed on {desc:?} {run:?}: {e}"));
    assert!(gpu == cpu, "GPU and CPU differ: {desc:?} {run:?} {policy}");
    let out = desc.output();
    let out_bytes = out.element_count().unwrap() * size(out.data_type);
    let (lo, hi) = (
        run.out_offset as usize,
        (run.out_offset + out_bytes) as usize,
    );
    let buffer = usize::from(!run.one_buffer);
    let (before, after) = (&start[buffer], &gpu[buffer]);
    assert_eq!(
        before[..lo],
        after[..lo],
        "bytes before the output: {run:?}"
    );
    assert_eq!(before[hi..], after[hi..], "bytes after the output: {run:?}");
}

/// Two buffers: the input at `in_offset` of the first, the output at `out_offset` of
/// the second, noise around both.
fn two_buffers(
    desc: &OperatorDesc,
    (in_offset, out_offset): (u64, u64),
    seed: u64,
) -> (Vec<Vec<u8>>, Run) {
    let n = desc.input().element_count().unwrap();
    let mut inb = noise(
        (in_offset + desc.input().total_tensor_size_in_bytes + 24) as usize,
        seed,
    );
    let data = input(desc.input().data_type, n, seed);
    inb[in_offset as usize..in_offset as usize + data.len()].copy_from_slice(&data);
    let outb = noise(
        (out_offset + desc.output().total_tensor_size_in_bytes + 40) as usize,
        seed ^ 0x55,
    );
    let run = Run {
        in_offset,
        out_offset,
        one_buffer: false,
    };
    (vec![inb, outb], run)
}

/// Offsets below 16 to try for elements of `size` bytes: aligned, and a few phases.
fn phases(size: u64) -> Vec<u64> {
    match size {
        1 => vec![0, 1, 5, 12, 15],
        2 => vec![0, 2, 6, 10, 14],
        _ => (0..16).step_by(size as usize).collect(),
    }
}

/// Element counts whose outputs are 0 to 4 vectors and a part of one, and a few
/// thousand vectors (several workgroup blocks of the unrolled walk, the last partial).
fn counts(out_size: u64) -> Vec<u64> {
    let per = 16 / out_size;
    let mut v = vec![
        1,
        per - 1,
        per,
        per + 1,
        2 * per + per / 2,
        3 * per,
        4 * per + per - 1,
    ];
    v.retain(|&n| n > 0);
    v.dedup();
    v
}

fn phases_and_counts(sign_op: bool, types: &[DataType]) {
    let Some(device) = device() else { return };
    for (t, &data_type) in types.iter().enumerate() {
        let (is, os) = if sign_op {
            (size(data_type), size(data_type))
        } else {
            (size(data_type), 1)
        };
        for &ip in &phases(is) {
            for &op in &phases(os) {
                for (c, &n) in counts(os).iter().enumerate() {
                    let variants = variants(data_type, sign_op, n);
                    let k = (ip + op + c as u64) as usize % variants.len();
                    let (desc, policy) = &variants[k];
                    let seed = (t * 1000 + c) as u64 + ip * 16 + op;
                    let (start, run) = two_buffers(desc, (16 + ip, 32 + op), seed);
                    check(device, desc, *policy, &start, run);
                }
            }
        }
    }
}

#[test]
fn sign_heads_and_tails_at_every_phase() {
    phases_and_counts(true, common::sign_types());
}

#[test]
fn is_infinity_heads_and_tails_at_every_phase() {
    phases_and_counts(false, common::infinity_types());
}

/// Every policy, mode and output type on long runs: aligned, both tensors past 16 by
/// the same phase, and phases that never meet.
#[test]
fn every_variant_on_long_runs() {
    let Some(device) = device() else { return };
    let cases = common::sign_types()
        .iter()
        .map(|&t| (t, true))
        .chain(common::infinity_types().iter().map(|&t| (t, false)));
    for (k, (data_type, sign_op)) in cases.enumerate() {
        let is = size(data_type);
        let os = if sign_op { is } else { 1 };
        let n = if is <= 2 {
            (1 << (8 * is)) + 37
        } else {
            16 * 1024 + 3
        };
        let offsets = [(0, 0), (is, os), (is * 3 % 16, 0)];
        for (desc, policy) in variants(data_type, sign_op, n) {
            for (j, &offsets) in offsets.iter().enumerate() {
                let (start, run) = two_buffers(&desc, offsets, (k * 10 + j) as u64);
                check(device, &desc, policy, &start, run);
            }
        }
    }
}

/// SIGN in place: the input and the output the same range of one buffer.
#[test]
fn sign_in_place() {
    let Some(device) = device() else { return };
    for (t, &data_type) in common::sign_types().iter().enumerate() {
        let is = size(data_type);
        for &offset in &phases(is) {
            for &n in &[1, 16 / is + 1, 1000 / is + 3] {
                for (desc, policy) in variants(data_type, true, n) {
                    let seed = t as u64 * 100 + offset + n;
                    let mut buffer = noise(
                        (16 + offset + desc.input().total_tensor_size_in_bytes + 24) as usize,
                        seed,
                    );
                    let data = input(data_type, n, seed);
                    let at = (16 + offset) as usize;
                    buffer[at..at + data.len()].copy_from_slice(&data);
                    let run = Run {
                        in_offset: 16 + offset,
                        out_offset: 16 + offset,
                        one_buffer: true,
                    };
                    check(device, &desc, policy, &[buffer], run);
                }
            }
        }
    }
}

/// Disjoint ranges of one buffer: the output first, the input after it at another
/// phase, and the other way round.
#[test]
fn disjoint_ranges_of_one_buffer() {
    let Some(device) = device() else { return };
    let cases = [
        (Int8, true),
        (Float16, true),
        (Float32, true),
        (Uint64, true),
        (Float32, false),
        (Float16, false),
        (Float64, false),
        (Float8E5M2, false),
    ];
    for (k, &(data_type, sign_op)) in cases.iter().enumerate() {
        let is = size(data_type);
        let os = if sign_op { is } else { 1 };
        for &n in &[3, 16 / os * 2 + 1, 777] {
            for (desc, policy) in variants(data_type, sign_op, n).into_iter().take(2) {
                let in_len = desc.input().total_tensor_size_in_bytes;
                let out_len = desc.output().total_tensor_size_in_bytes;
                for &(ip, op) in &[(0, 0), (is, os), (is * 2 % 16, 0), (0, 3 * os % 16)] {
                    for output_first in [true, false] {
                        let (in_offset, out_offset) = if output_first {
                            ((op + out_len + 16).next_multiple_of(16) + ip, op)
                        } else {
                            (ip, (ip + in_len + 16 + op).next_multiple_of(16) + op)
                        };
                        let end = (in_offset + in_len).max(out_offset + out_len);
                        let seed = k as u64 * 31 + n + ip + op;
                        let mut buffer = noise(end as usize + 40, seed);
                        let data = input(data_type, n, seed);
                        let at = in_offset as usize;
                        buffer[at..at + data.len()].copy_from_slice(&data);
                        let run = Run {
                            in_offset,
                            out_offset,
                            one_buffer: true,
                        };
                        check(device, &desc, policy, &[buffer], run);
                    }
                }
            }
        }
    }
}

/// Runs split into many dispatches by a small binding limit: chunks start anywhere, so
/// each has its own head and tail.
#[test]
fn runs_split_into_many_dispatches() {
    let Some(device) = tiny_device() else { return };
    let cases = [
        (Int8, true),
        (Bfloat16, true),
        (Float32, true),
        (Int64, true),
        (Float32, false),
        (Float16, false),
        (Float64, false),
        (Float8E4M3Fn, false),
        (Float8E5M2, false),
    ];
    for (k, &(data_type, sign_op)) in cases.iter().enumerate() {
        let is = size(data_type);
        let os = if sign_op { is } else { 1 };
        let n = 2000 / is + 5;
        for (desc, policy) in variants(data_type, sign_op, n).into_iter().take(2) {
            let op = device.create_operator(&desc).unwrap().compile().unwrap();
            assert!(op.dispatches() > 4, "{} dispatches", op.dispatches());
            for &offsets in &[(0, 0), (is, os), (is * 3 % 16, os * 7 % 16)] {
                let (start, run) = two_buffers(&desc, offsets, k as u64);
                check(device, &desc, policy, &start, run);
                if sign_op {
                    let at = 16 + offsets.0;
                    let mut buffer = noise(
                        (at + desc.input().total_tensor_size_in_bytes + 8) as usize,
                        9,
                    );
                    let data = input(data_type, n, 9);
                    buffer[at as usize..at as usize + data.len()].copy_from_slice(&data);
                    let run = Run {
                        in_offset: at,
                        out_offset: at,
                        one_buffer: true,
                    };
                    check(device, &desc, policy, &[buffer], run);
                }
            }
        }
    }
}

/// Phases that never meet run the scalar walk over the whole run, long ones included.
#[test]
fn phases_that_never_meet_run_scalar() {
    let Some(device) = device() else { return };
    let cases = [
        (Float32, true, (4, 0)),
        (Float16, true, (0, 2)),
        (Int8, true, (3, 1)),
        (Float64, true, (8, 0)),
        (Float32, false, (0, 1)),
        (Float16, false, (0, 1)),
        (Float64, false, (8, 2)),
        (Float8E5M2, false, (1, 2)),
    ];
    for (k, &(data_type, sign_op, offsets)) in cases.iter().enumerate() {
        for &n in &[5u64, 999, 4096 + 3] {
            for (desc, policy) in variants(data_type, sign_op, n).into_iter().take(2) {
                let (start, run) = two_buffers(&desc, offsets, k as u64 + n);
                check(device, &desc, policy, &start, run);
            }
        }
    }
}

/// Runs longer than a row of workgroups: with 256 workgroups per grid dimension, long
/// contiguous runs (vector and scalar walks), a transposed tensor and padded rows all
/// need a second grid dimension, and still give the CPU's bytes.
#[test]
fn long_runs_on_grids_of_two_dimensions() {
    let builder = GpuDevice::builder()
        .extensions(Extensions::Enabled)
        .max_workgroups_per_dimension(256);
    let Some(device) = try_device(builder) else {
        return;
    };
    let n = (5 << 20) + 7;
    let cases = [
        (sign(Float32, n / 4), (0, 0)),
        (sign(Float32, n / 4), (4, 0)),
        (sign(Int8, n), (1, 1)),
        (sign(Float16, n / 2), (0, 2)),
        (is_inf(Float64, n / 8, InfinityMode::Either, Uint8), (8, 3)),
        (
            OperatorDesc::sign(
                TensorDesc::strided(Float32, &[1024, 1280], &[1, 1024]),
                TensorDesc::new(Float32, &[1024, 1280]),
            ),
            (0, 0),
        ),
        (
            OperatorDesc::sign(
                TensorDesc::strided(Float32, &[1024, 1200], &[1280, 1]),
                TensorDesc::new(Float32, &[1024, 1200]),
            ),
            (16, 32),
        ),
    ];
    for (k, (desc, offsets)) in cases.iter().enumerate() {
        let (start, run) = two_buffers(desc, *offsets, 40 + k as u64);
        let policy = if desc.input().data_type.is_float() {
            NanPolicy::Propagate
        } else {
            NanPolicy::Zero
        };
        check(&device, desc, policy, &start, run);
    }
}
