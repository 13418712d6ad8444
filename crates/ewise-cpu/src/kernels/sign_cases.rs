//! Test cases shared by the hand-written SIGN kernels of each instruction set: edge
//! values of every type at many lengths and output offsets, checked against the
//! reference through every entry point of a kernel.

use ewise_core::reference::sign_bits;
use ewise_core::{DataType, NanPolicy};

use super::Kernel;
use crate::Buffer;

/// An instruction set's SIGN kernel for a type and NaN policy, where it has one.
pub(super) type KernelFor = fn(DataType, NanPolicy) -> Option<Kernel>;

/// Values on SIGN's edges for `t`, as bit patterns. Floats (by the bits of +infinity
/// and +1): zeros, subnormals, ±1, infinities, quiet and signalling NaNs with
/// payloads, the largest finite values. Integers: 0, ±1, 2, the extremes and an
/// alternating pattern.
fn edges(t: DataType) -> Vec<u64> {
    let w = t.size_in_bytes().expect("a sized type") as u32;
    let sign = 1u64 << (8 * w - 1);
    let all = u64::MAX >> (64 - 8 * w);
    let mut v = match t {
        DataType::Float32 | DataType::Float64 | DataType::Float16 | DataType::Bfloat16 => {
            let (inf, one) = match t {
                DataType::Float32 => (0x7F80_0000, 0x3F80_0000),
                DataType::Float16 => (0x7C00, 0x3C00),
                DataType::Bfloat16 => (0x7F80, 0x3F80),
                _ => (0x7FF0_0000_0000_0000, 0x3FF0_0000_0000_0000),
            };
            let quiet = inf | ((inf >> 1) & !inf);
            vec![0, 1, inf - 1, one, inf, inf + 1, quiet, quiet + 5, sign - 1]
        }
        _ => vec![0, 1, 2, sign - 1, sign - 2, 0x5555_5555_5555_5555 & all],
    };
    v.extend(v.clone().into_iter().map(|x| x | sign));
    v
}

/// Inputs and the reference's outputs, per policy and length. The reference is
/// computed here, before a test changes the floating-point environment: it compares
/// floats itself.
pub(super) type Cases = Vec<(NanPolicy, Vec<u8>, Vec<u8>)>;

/// The reference's SIGN of each `t` element of `input`.
fn reference(t: DataType, input: &[u8], policy: NanPolicy) -> Vec<u8> {
    let w = t.size_in_bytes().expect("a sized type") as usize;
    input
        .chunks(w)
        .flat_map(|c| {
            let mut b = [0u8; 8];
            b[..w].copy_from_slice(c);
            let bits = sign_bits(t, u64::from_ne_bytes(b), policy).unwrap();
            bits.to_ne_bytes()[..w].to_vec()
        })
        .collect()
}

fn cases(t: DataType) -> Cases {
    let w = t.size_in_bytes().expect("a sized type") as usize;
    let values = edges(t);
    let mut cases = Vec::new();
    for policy in NanPolicy::ALL {
        for len in (0..=70).chain([257, 1000]) {
            let input: Vec<u8> = (0..len)
                .flat_map(|i| values[(i * 7 + len) % values.len()].to_ne_bytes()[..w].to_vec())
                .collect();
            let want = reference(t, &input, policy);
            cases.push((policy, input, want));
        }
    }
    cases
}

/// Every case through every entry point of the kernel, at several output offsets;
/// nothing outside the output is written.
pub(super) fn check(kernel: KernelFor, t: DataType, cases: &Cases) {
    for (policy, input, want) in cases {
        let k = kernel(t, *policy).expect("a kernel for the type");
        for off in [0, 4, 8, 12, 24, 32, 1] {
            let at = format!("{t} {policy} len {} off {off}", input.len());
            for (name, map) in [("plain", k.map), ("streaming", k.map_stream)] {
                let mut out = vec![0xA5u8; input.len() + off + 64];
                map(input, &mut out[off..off + input.len()]);
                assert_eq!(out[off..off + input.len()], want[..], "{name} {at}");
                assert!(out[..off].iter().all(|&b| b == 0xA5), "{name} {at}");
                assert!(out[off + input.len()..].iter().all(|&b| b == 0xA5), "{at}");
            }
            let in_place = [k.map_in_place.unwrap(), k.map_in_place_stream.unwrap()];
            for (name, map) in ["in place", "in place streaming"].into_iter().zip(in_place) {
                let mut data = vec![0u8; input.len() + off];
                data[off..].copy_from_slice(input);
                map(&mut data[off..]);
                assert_eq!(data[off..], want[..], "{name} {at}");
            }
        }
    }
}

/// The cases of every type `kernel` has a kernel for.
pub(super) fn all_cases(kernel: KernelFor) -> Vec<(DataType, Cases)> {
    DataType::ALL
        .into_iter()
        .filter(|&t| kernel(t, NanPolicy::Zero).is_some())
        .map(|t| (t, cases(t)))
        .collect()
}

/// Inputs longer than L1 (where a kernel may walk back to front, by where the output
/// lies) through `kernel`, with the output at several distances past the input modulo
/// 4 KiB and in place.
pub(super) fn check_placements(kernel: KernelFor, t: DataType) {
    let w = t.size_in_bytes().expect("a sized type") as usize;
    let values = edges(t);
    let len = 40_003;
    let input: Vec<u8> = (0..len)
        .flat_map(|i| values[i * 7 % values.len()].to_ne_bytes()[..w].to_vec())
        .collect();
    let bytes = input.len();
    let room = bytes.div_ceil(4096) * 4096;
    for policy in NanPolicy::ALL {
        let k = kernel(t, policy).expect("a kernel for the type");
        let want = reference(t, &input, policy);
        for gap in [0, 64, 80, 1024, 2040, 2048, 4032] {
            let mut memory = Buffer::zeroed(room + gap + bytes);
            memory[..bytes].copy_from_slice(&input);
            let (src, rest) = memory.split_at_mut(room + gap);
            (k.map)(&src[..bytes], &mut rest[..bytes]);
            assert!(rest[..bytes] == want[..], "{t} {policy} gap {gap}");
        }
        let mut data = Buffer::from_bytes(&input);
        (k.map_in_place.expect("SIGN maps in place"))(&mut data);
        assert!(data[..] == want[..], "{t} {policy} in place");
    }
}
