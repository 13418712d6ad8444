//! Rows in 16-byte units: 2-D and 3-D tensors whose innermost dimension is contiguous in
//! both tensors on pitches of whole 16-byte vectors (padded rows, sliced columns and
//! rows, permuted outer dimensions, broadcast rows), with heads and tails of every
//! length from 0 to 15 bytes and bodies of 1 to 4 vectors and longer, every type and NaN
//! policy of SIGN and every type, mode and output type of IS_INFINITY, in place,
//! disjoint windows of one buffer, rows split into many dispatches, and layouts whose
//! rows cannot run in units (phases that never meet, pitches off 16 bytes, short rows).
//! The GPU's buffers equal the CPU backend's byte for byte, and every byte of the
//! output's buffer that no output element covers (the padding between rows) keeps its
//! starting value.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{both, device, input, noise, size, tiny_device, Run};
use ewise_core::{DataType, InfinityMode, NanPolicy, OperatorDesc, TensorDesc};
use ewise_gpu::GpuDevice;

use DataType::*;

/// An operator on one input type, over tensors of these sizes and strides (elements).
#[derive(Debug, Clone)]
struct Layout {
    data_type: DataType,
    sign_op: bool,
    sizes: Vec<u32>,
    in_strides: Vec<u32>,
    out_strides: Vec<u32>,
}

impl Layout {
    /// Every description of the layout: SIGN with each NaN policy that applies, or
    /// IS_INFINITY with each mode into UINT8 and BOOL; tensors aligned to their element
    /// size only.
    fn variants(&self) -> Vec<(OperatorDesc, NanPolicy)> {
        let tensor = |data_type: DataType, strides: &[u32]| {
            TensorDesc::strided(data_type, &self.sizes, strides)
                .with_alignment(size(data_type) as u32)
        };
        let input = tensor(self.data_type, &self.in_strides);
        if self.sign_op {
            let output = tensor(self.data_type, &self.out_strides);
            let desc = OperatorDesc::sign(input, output);
            let policies: &[NanPolicy] = if self.data_type.is_float() {
                &NanPolicy::ALL
            } else {
                &[NanPolicy::Zero]
            };
            return policies.iter().map(|&p| (desc.clone(), p)).collect();
        }
        InfinityMode::ALL
            .iter()
            .flat_map(|&mode| {
                [Uint8, Bool].map(|out| {
                    let output = tensor(out, &self.out_strides);
                    let desc = OperatorDesc::is_infinity(input.clone(), output, mode);
                    (desc, NanPolicy::Zero)
                })
            })
            .collect()
    }
}

/// Byte offsets of the elements of a tensor of `sizes` and `strides` from its start.
fn element_offsets(sizes: &[u32], strides: &[u64], element: u64) -> Vec<u64> {
    let mut offsets = vec![0u64];
    for (&n, &stride) in sizes.iter().zip(strides) {
        offsets = offsets
            .iter()
            .flat_map(|&o| (0..u64::from(n)).map(move |k| o + k * stride * element))
            .collect();
    }
    offsets
}

/// Runs `desc` from noise, the input's whole span filled with edge patterns; checks
/// that both backends agree and that every byte of the output's buffer outside the
/// output's elements kept its value.
fn check(device: &GpuDevice, desc: &OperatorDesc, policy: NanPolicy, run: Run, seed: u64) {
    let (input_t, output_t) = (desc.input(), desc.output());
    let in_end = run.in_offset + input_t.total_tensor_size_in_bytes;
    let out_end = run.out_offset + output_t.total_tensor_size_in_bytes;
    let data = input(
        input_t.data_type,
        input_t.total_tensor_size_in_bytes / size(input_t.data_type),
        seed,
    );
    let mut start = if run.one_buffer {
        vec![noise((in_end.max(out_end) + 40) as usize, seed)]
    } else {
        vec![
            noise(in_end as usize + 24, seed),
            noise(out_end as usize + 40, seed ^ 0x55),
        ]
    };
    let at = run.in_offset as usize;
    start[0][at..at + data.len()].copy_from_slice(&data);
    let (gpu, cpu) = both(device, desc, policy, &start, run);
    let gpu = gpu.unwrap_or_else(|e| panic!("GPU failed on {desc:?} {run:?}: {e}"));
    let cpu = cpu.unwrap_or_else(|e| panic!("CPU failed on {desc:?} {run:?}: {e}"));
    assert!(gpu == cpu, "GPU and CPU differ: {desc:?} {run:?} {policy}");
    let buffer = usize::from(!run.one_buffer);
    let mut covered = vec![false; start[buffer].len()];
    let element = size(output_t.data_type);
    let strides = output_t.effective_strides().unwrap();
    for o in element_offsets(&output_t.sizes, &strides, element) {
        let o = (run.out_offset + o) as usize;
        covered[o..o + element as usize].fill(true);
    }
    for (k, (before, after)) in start[buffer].iter().zip(&gpu[buffer]).enumerate() {
        assert!(
            covered[k] || before == after,
            "byte {k} outside the output changed: {desc:?} {run:?}"
        );
    }
}

/// Runs every variant of `layout` (or only the one chosen by `pick` among them) with
/// the tensors at `offsets` of two buffers.
fn check_layout(device: &GpuDevice, layout: &Layout, offsets: (u64, u64), pick: Option<usize>) {
    let variants = layout.variants();
    let seed = offsets.0 * 31 + offsets.1 + u64::from(layout.sizes.iter().sum::<u32>());
    for (k, (desc, policy)) in variants.iter().enumerate() {
        if pick.is_some_and(|p| p % variants.len() != k) {
            continue;
        }
        let run = Run {
            in_offset: offsets.0,
            out_offset: offsets.1,
            one_buffer: false,
        };
        check(device, desc, *policy, run, seed + k as u64);
    }
}

/// Byte phases within 16 bytes at which a head of `head` elements ends both tensors
/// on 16 bytes (input element size `is`, output `os`).
fn phases(head: u64, (is, os): (u64, u64)) -> (u64, u64) {
    ((16 - head * is % 16) % 16, (16 - head * os % 16) % 16)
}

/// A 2-D layout of `rows` rows of `head` elements, `units` units and `tail` elements,
/// on pitches of the row rounded up to 16 bytes plus `extra` vectors (input) and twice
/// that (output), and the offsets (past 16 and 32 bytes) that give that head.
fn padded(
    data_type: DataType,
    sign_op: bool,
    rows: u32,
    (head, units, tail): (u64, u64, u64),
    extra: u64,
) -> (Layout, (u64, u64)) {
    let is = size(data_type);
    let os = if sign_op { is } else { 1 };
    let len = head + units * 16 / os + tail;
    let pitch = |size: u64, extra: u64| ((len * size).next_multiple_of(16) + 16 * extra) / size;
    let layout = Layout {
        data_type,
        sign_op,
        sizes: vec![rows, len as u32],
        in_strides: vec![pitch(is, extra) as u32, 1],
        out_strides: vec![pitch(os, 2 * extra) as u32, 1],
    };
    let (ip, op) = phases(head, (is, os));
    (layout, (16 + ip, 32 + op))
}

fn all_types() -> Vec<(DataType, bool)> {
    common::sign_types()
        .iter()
        .map(|&t| (t, true))
        .chain(common::infinity_types().iter().map(|&t| (t, false)))
        .collect()
}

/// Every type, NaN policy, mode and output type on padded rows: aligned, a head of one
/// element and a tail of all but one, and the other way round.
#[test]
fn every_variant_on_padded_rows() {
    let Some(device) = device() else { return };
    for (data_type, sign_op) in all_types() {
        let os = if sign_op { size(data_type) } else { 1 };
        let per = 16 / os;
        for (head, tail) in [(0, 0), (1, per - 1), (per - 1, 1)] {
            let (layout, offsets) = padded(data_type, sign_op, 5, (head, 3, tail), 1);
            check_layout(device, &layout, offsets, None);
        }
    }
}

/// Heads and tails of every length in elements (1 to 15 bytes for 8-bit outputs),
/// with bodies of 1 to 4 units and of 40.
#[test]
fn heads_and_tails_of_every_length() {
    let Some(device) = device() else { return };
    let cases = [
        (Int8, true),
        (Uint16, true),
        (Float16, true),
        (Float32, true),
        (Int64, true),
        (Float32, false),
        (Bfloat16, false),
        (Float64, false),
        (Float8E5M2, false),
    ];
    for (data_type, sign_op) in cases {
        let os = if sign_op { size(data_type) } else { 1 };
        let per = 16 / os;
        for head in 0..per {
            for (j, units) in [1, 2, 3, 4, 40].into_iter().enumerate() {
                let tail = (3 * head + 5 * j as u64 + 1) % per;
                let (layout, offsets) =
                    padded(data_type, sign_op, 3, (head, units, tail), j as u64);
                let pick = (head as usize) + j;
                check_layout(device, &layout, offsets, Some(pick));
            }
        }
    }
}

/// 3-D views: sliced columns and rows of a larger tensor (the view's first column
/// anywhere in a vector), and outer dimensions in either order in memory.
#[test]
fn three_dimensional_sliced_and_permuted_views() {
    let Some(device) = device() else { return };
    for (k, (data_type, sign_op)) in all_types().into_iter().enumerate() {
        let is = size(data_type);
        let os = if sign_op { is } else { 1 };
        let per = 16 / os;
        let len = 3 * per + 5;
        // Parents: rows of `len` and 64 more elements, on 16 bytes; 5 rows each.
        let width = |size: u64| ((len + 64) * size).next_multiple_of(16) / size;
        let (wi, wo) = (width(is), width(os));
        for head in [0, 1, per / 2, per - 1] {
            // The output's view starts `column` elements into a vector of its parent,
            // the input's at the column that meets it.
            let (ip, op) = phases(head, (is, os));
            let (ci, co) = (ip / is + 2 * (16 / is), op / os + (16 / os));
            let layout = Layout {
                data_type,
                sign_op,
                sizes: vec![2, 3, len as u32],
                in_strides: vec![(5 * wi) as u32, wi as u32, 1],
                out_strides: vec![(5 * wo) as u32, wo as u32, 1],
            };
            // Sliced rows too: the view starts at row 1 of its parent.
            let offsets = (16 + (wi + ci) * is, 16 + (wo + co) * os);
            check_layout(device, &layout, offsets, Some(k + head as usize));
            let permuted = Layout {
                sizes: vec![3, 2, len as u32],
                in_strides: vec![wi as u32, (4 * wi) as u32, 1],
                out_strides: vec![wo as u32, (3 * wo) as u32, 1],
                ..layout
            };
            check_layout(device, &permuted, offsets, Some(k + 1 + head as usize));
        }
    }
}

/// A row (or a plane of rows) broadcast along an outer dimension of the output.
#[test]
fn broadcast_rows() {
    let Some(device) = device() else { return };
    for (k, (data_type, sign_op)) in all_types().into_iter().enumerate() {
        let is = size(data_type);
        let os = if sign_op { is } else { 1 };
        let per = 16 / os;
        for (head, units, tail) in [(0, 2, 0), (per - 1, 1, 3 % per), (1, 4, per - 1)] {
            let len = head + units * per + tail;
            let pi = (len * is).next_multiple_of(16) / is;
            let po = (len * os).next_multiple_of(16) / os + 16 / os;
            let (ip, op) = phases(head, (is, os));
            let layouts = [
                (vec![4, len as u32], vec![0, 1], vec![po as u32, 1]),
                (
                    vec![3, 2, len as u32],
                    vec![0, pi as u32, 1],
                    vec![(2 * po) as u32, po as u32, 1],
                ),
                (
                    vec![3, 2, len as u32],
                    vec![pi as u32, 0, 1],
                    vec![(2 * po + 16 / os) as u32, po as u32, 1],
                ),
            ];
            for (j, (sizes, in_strides, out_strides)) in layouts.into_iter().enumerate() {
                let layout = Layout {
                    data_type,
                    sign_op,
                    sizes,
                    in_strides,
                    out_strides,
                };
                check_layout(device, &layout, (16 + ip, op), Some(k + j));
            }
        }
    }
}

/// SIGN in place on padded rows (the input and the output the same range, the same
/// layout), and on disjoint windows of one buffer, the output first or the input first.
#[test]
fn in_place_and_disjoint_windows_of_one_buffer() {
    let Some(device) = device() else { return };
    for (k, (data_type, sign_op)) in all_types().into_iter().enumerate() {
        let is = size(data_type);
        let os = if sign_op { is } else { 1 };
        let per = 16 / os;
        for (j, &(head, units, tail)) in [(0, 2, 0), (per - 1, 1, 1), (1, 3, per - 1)]
            .iter()
            .enumerate()
        {
            let (mut layout, (ip, op)) = padded(data_type, sign_op, 4, (head, units, tail), 1);
            let variants = layout.variants();
            let (desc, policy) = &variants[(k + j) % variants.len()];
            let seed = (k * 10 + j) as u64;
            let (in_len, out_len) = (
                desc.input().total_tensor_size_in_bytes,
                desc.output().total_tensor_size_in_bytes,
            );
            for output_first in [true, false] {
                let (in_offset, out_offset) = if output_first {
                    ((op + out_len + 16).next_multiple_of(16) + ip % 16, op)
                } else {
                    (ip, (ip + in_len + 16).next_multiple_of(16) + op % 16)
                };
                let run = Run {
                    in_offset,
                    out_offset,
                    one_buffer: true,
                };
                check(device, desc, *policy, run, seed);
            }
            if sign_op {
                layout.out_strides = layout.in_strides.clone();
                for (desc, policy) in layout.variants() {
                    let run = Run {
                        in_offset: ip,
                        out_offset: ip,
                        one_buffer: true,
                    };
                    check(device, &desc, policy, run, seed);
                }
            }
        }
    }
}

/// Layouts whose rows cannot run in units stay strided and stay right: phases that
/// never meet, an input pitch off 16 bytes, rows with no whole unit after the head.
#[test]
fn rows_that_cannot_run_in_units() {
    let Some(device) = device() else { return };
    for (k, (data_type, sign_op)) in all_types().into_iter().enumerate() {
        let is = size(data_type);
        let os = if sign_op { is } else { 1 };
        let per = 16 / os;
        let (layout, (ip, op)) = padded(data_type, sign_op, 4, (per - 1, 2, 1), 1);
        // The input one element further on: its phase never meets the output's.
        check_layout(device, &layout, (ip + is, op), Some(k));
        let mut odd = layout.clone();
        odd.in_strides[0] += 1;
        check_layout(device, &odd, (ip, op), Some(k + 1));
        let (short, offsets) = padded(data_type, sign_op, 4, (per - 1, 0, per / 2), 0);
        check_layout(device, &short, offsets, Some(k + 2));
    }
}

/// Long rows and many short rows, split into many dispatches by a small binding limit:
/// rows whole and rows cut into parts, each part with its own head and tail.
#[test]
fn rows_split_into_many_dispatches() {
    let Some(device) = tiny_device() else { return };
    let cases = [
        (Int8, true),
        (Bfloat16, true),
        (Float32, true),
        (Uint64, true),
        (Float32, false),
        (Float16, false),
        (Float64, false),
        (Float8E5M2, false),
    ];
    for (k, (data_type, sign_op)) in cases.into_iter().enumerate() {
        let os = if sign_op { size(data_type) } else { 1 };
        let per = 16 / os;
        for (rows, units) in [(40, 1), (6, 30)] {
            let (layout, offsets) = padded(data_type, sign_op, rows, (per / 2, units, 1), 1);
            let (desc, _) = &layout.variants()[0];
            let op = device.create_operator(desc).unwrap().compile().unwrap();
            assert!(op.dispatches() > 4, "{} dispatches", op.dispatches());
            check_layout(device, &layout, offsets, Some(k));
        }
    }
}

/// Devices with other tunings (loads in flight, the row kernel's minimum) give the same
/// bits on contiguous runs (the vector kernel, unaligned ends), padded rows (long, short,
/// below the minimum) and broadcast rows; out-of-range tunings are refused.
#[test]
fn tuned_devices_give_the_same_bits() {
    use ewise_gpu::{GpuError, Tuning};
    let Some(shared) = device() else { return };
    // A device of its own: tuning it must not change the shared device's operators.
    let Some(tuned) = common::try_device(
        GpuDevice::builder()
            .adapter(shared.adapter().name.clone())
            .extensions(ewise_core::Extensions::Enabled),
    ) else {
        return;
    };
    for bad in [
        Tuning {
            loads_in_flight: 3,
            ..Tuning::default()
        },
        Tuning {
            loads_in_flight: 32,
            ..Tuning::default()
        },
        Tuning {
            min_row_units: 0,
            ..Tuning::default()
        },
    ] {
        let e = tuned.set_tuning(bad).unwrap_err();
        assert!(matches!(e, GpuError::InvalidTuning { .. }), "{bad:?}: {e}");
    }
    assert_eq!(tuned.tuning(), Tuning::default());
    let cases = [
        (Int8, true),
        (Float16, true),
        (Float32, true),
        (Float64, true),
        (Float32, false),
        (Float16, false),
    ];
    let tunings = [(1, 1), (16, 3), (2, 1 << 40), (8, 2)];
    for (t, &(loads_in_flight, min_row_units)) in tunings.iter().enumerate() {
        let tuning = Tuning {
            loads_in_flight,
            min_row_units,
        };
        tuned.set_tuning(tuning).unwrap();
        assert_eq!(tuned.tuning(), tuning);
        for (k, &(data_type, sign_op)) in cases.iter().enumerate() {
            let is = size(data_type);
            let os = if sign_op { is } else { 1 };
            let per = 16 / os;
            let pick = Some(k + t);
            // Contiguous: 37 units and some, at the start of a vector and past it.
            let n = (37 * per + 3) as u32;
            let contiguous = Layout {
                data_type,
                sign_op,
                sizes: vec![n],
                in_strides: vec![1],
                out_strides: vec![1],
            };
            check_layout(&tuned, &contiguous, (0, 0), pick);
            let (ip, op) = phases(1, (is, os));
            check_layout(&tuned, &contiguous, (16 + ip, 32 + op), pick);
            // Padded rows of 1, 2 and 5 units, with a head and a tail or without.
            for (units, head, tail) in [(1, 0, 0), (2, 1, per - 1), (5, per - 1, 1)] {
                let (layout, offsets) = padded(data_type, sign_op, 6, (head, units, tail), 1);
                check_layout(&tuned, &layout, offsets, pick);
            }
            // A broadcast row.
            let len = 3 * per;
            let po = (len * os).next_multiple_of(16) / os + 16 / os;
            let broadcast = Layout {
                data_type,
                sign_op,
                sizes: vec![4, len as u32],
                in_strides: vec![0, 1],
                out_strides: vec![po as u32, 1],
            };
            check_layout(&tuned, &broadcast, (0, 0), pick);
        }
    }
    assert_eq!(shared.tuning(), Tuning::default());
}
