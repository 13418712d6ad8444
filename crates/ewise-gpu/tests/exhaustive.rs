//! Every 8- and 16-bit pattern (float16, bfloat16, float8, 8/16-bit integers) and edge
//! values plus random words of the 32- and 64-bit types, for every operator, NaN policy,
//! mode and output type, bit for bit against `ewise-core`'s reference and the CPU backend.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{both, device, noise, Run};
use ewise_core::reference::{is_infinity_bits, sign_bits};
use ewise_core::{DataType, InfinityMode, NanPolicy, OperatorDesc, TensorDesc};

use DataType::*;

/// Bit patterns to try for a type: all of them up to 16 bits; otherwise the edges of
/// every float layout (zeros, subnormals, ones, max finite, infinities, NaNs with
/// payloads, both signs), integer extremes, and random words.
fn patterns(data_type: DataType) -> Vec<u64> {
    let width = data_type.size_in_bytes().unwrap() as u32 * 8;
    if width <= 16 {
        return (0..1u64 << width).collect();
    }
    let mask = if width == 64 {
        u64::MAX
    } else {
        (1 << width) - 1
    };
    let sign = 1u64 << (width - 1);
    let mut v = common::edges(width);
    v.extend([
        2 | sign,
        mask >> 1,
        mask - 1,
        0x8000_0000,
        0x7FFF_FFFF,
        0xFFFF_FFFF,
    ]);
    let random = noise(8 * 4096, u64::from(width));
    v.extend(
        random
            .chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()) & mask),
    );
    v
}

fn to_bytes(values: &[u64], width: usize) -> Vec<u8> {
    values
        .iter()
        .flat_map(|v| v.to_le_bytes()[..width].to_vec())
        .collect()
}

fn from_bytes(bytes: &[u8], width: usize) -> Vec<u64> {
    bytes
        .chunks(width)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..width].copy_from_slice(c);
            u64::from_le_bytes(b)
        })
        .collect()
}

/// Runs `desc` on `values` (contiguous, output at offset 16 of its own buffer) on both
/// backends; checks they agree byte for byte, and returns the output elements.
fn run(desc: &OperatorDesc, policy: NanPolicy, input: &[u8]) -> Vec<u8> {
    let device = device().expect("checked by the caller");
    let out_len = desc.output().total_tensor_size_in_bytes as usize;
    let start = vec![input.to_vec(), noise(out_len + 32, 7)];
    let run = Run {
        in_offset: 0,
        out_offset: 16,
        one_buffer: false,
    };
    let (gpu, cpu) = both(device, desc, policy, &start, run);
    let (gpu, cpu) = (gpu.unwrap(), cpu.unwrap());
    assert_eq!(gpu, cpu, "GPU and CPU differ for {desc:?}");
    let width = desc.output().data_type.size_in_bytes().unwrap() as usize;
    let n = desc.output().element_count().unwrap() as usize;
    gpu[1][16..16 + n * width].to_vec()
}

#[test]
fn sign_matches_the_reference_on_every_pattern() {
    if device().is_none() {
        return;
    }
    for data_type in common::sign_types().iter().copied() {
        let values = patterns(data_type);
        let width = data_type.size_in_bytes().unwrap() as usize;
        let t = TensorDesc::new(data_type, &[values.len() as u32]);
        let desc = OperatorDesc::sign(t.clone(), t);
        let policies: &[NanPolicy] = if data_type.is_float() {
            &NanPolicy::ALL
        } else {
            &[NanPolicy::Zero]
        };
        for &policy in policies {
            let got = from_bytes(&run(&desc, policy, &to_bytes(&values, width)), width);
            for (x, y) in values.iter().zip(got) {
                let want = sign_bits(data_type, *x, policy).unwrap();
                assert_eq!(y, want, "{data_type} {policy} sign({x:#x})");
            }
        }
    }
}

#[test]
fn is_infinity_matches_the_reference_on_every_pattern() {
    if device().is_none() {
        return;
    }
    for data_type in common::infinity_types().iter().copied() {
        let values = patterns(data_type);
        let width = data_type.size_in_bytes().unwrap() as usize;
        let input = TensorDesc::new(data_type, &[values.len() as u32]);
        for mode in InfinityMode::ALL {
            for out_type in [Uint8, Bool] {
                let output = TensorDesc::new(out_type, &[values.len() as u32]);
                let desc = OperatorDesc::is_infinity(input.clone(), output, mode);
                let got = run(&desc, NanPolicy::Zero, &to_bytes(&values, width));
                for (x, y) in values.iter().zip(got) {
                    let want = is_infinity_bits(data_type, *x, mode).unwrap();
                    assert_eq!(y, u8::from(want), "{data_type} {mode} is_infinity({x:#x})");
                }
            }
        }
    }
}
