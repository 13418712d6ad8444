//! Fast kernels against the scalar reference, bit for bit: every pattern of the 8- and
//! 16-bit types, edge-plus-random sets of the 32- and 64-bit types, for both NaN policies
//! and every IS_INFINITY mode, through contiguous, in-place and misaligned paths.

use ewise_cpu::array;
use ewise_cpu::half::{bf16, f16};
use ewise_cpu::reference::{is_infinity_bits, sign_bits};
use ewise_cpu::{
    DataType, Device, Element, Error, Extensions, InfinityMode, NanPolicy, OperatorDesc,
    OperatorType, TensorDesc,
};

/// Values as bit patterns of a Rust element type.
trait Bits: Element {
    fn to_u64(self) -> u64;
    fn from_u64(v: u64) -> Self;
}

macro_rules! bits {
    ($($t:ty => $u:ty),*) => {$(
        impl Bits for $t {
            fn to_u64(self) -> u64 { u64::from(bytemuck::cast::<$t, $u>(self)) }
            fn from_u64(v: u64) -> Self { bytemuck::cast::<$u, $t>(v as $u) }
        }
    )*};
}
bits!(f32 => u32, f64 => u64, f16 => u16, bf16 => u16, i8 => u8, i16 => u16, i32 => u32,
      i64 => u64, u8 => u8, u16 => u16, u32 => u32, u64 => u64);

fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// Edge cases of a `width`-bit type (float and integer ones alike) plus random patterns.
fn edge_and_random(width: u32, seed: u64) -> Vec<u64> {
    let mask = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    let sign = 1u64 << (width - 1);
    let (inf, one) = match width {
        32 => (0x7F80_0000u64, 0x3F80_0000u64),
        _ => (0x7FF0_0000_0000_0000, 0x3FF0_0000_0000_0000),
    };
    let mut v = vec![
        0,
        sign,
        1,
        sign | 1,
        2,
        mask,
        mask >> 1,
        sign - 1,
        inf,
        inf | sign,
        inf + 1,
        inf | sign | 1,
        inf | (inf >> 1),
        (inf | (inf >> 1)) | sign,
        inf - 1,
        (inf - 1) | sign,
        one,
        one | sign,
        inf >> 1,
    ];
    let mut s = seed;
    for _ in 0..200_000 {
        v.push(xorshift(&mut s) & mask);
    }
    for e in 0..(width as u64) {
        v.push((1u64 << e) & mask);
        v.push(((1u64 << e) | sign) & mask);
    }
    v
}

fn all_patterns(width: u32) -> Vec<u64> {
    (0..1u64 << width).collect()
}

fn check_sign<T: Bits + array::SignElement>(patterns: &[u64]) {
    let input: Vec<T> = patterns.iter().map(|&b| T::from_u64(b)).collect();
    for policy in NanPolicy::ALL {
        let expected: Vec<u64> = patterns
            .iter()
            .map(|&b| sign_bits(T::DATA_TYPE, b, policy).unwrap())
            .collect();
        let mut out = vec![T::from_u64(0); input.len()];
        array::sign(&input, &mut out, policy).unwrap();
        let got: Vec<u64> = out.iter().map(|x| x.to_u64()).collect();
        assert_first_difference(&got, &expected, patterns, T::DATA_TYPE, policy.name());

        let mut data = input.clone();
        array::sign_in_place(&mut data, policy);
        let got: Vec<u64> = data.iter().map(|x| x.to_u64()).collect();
        assert_first_difference(&got, &expected, patterns, T::DATA_TYPE, "in place");

        let got = through_misaligned_bytes(&input, policy);
        assert_first_difference(&got, &expected, patterns, T::DATA_TYPE, "misaligned");

        let got = through_byte_api(&input, policy);
        assert_first_difference(&got, &expected, patterns, T::DATA_TYPE, "byte API");
    }
}

/// Runs SIGN through `array::sign_bytes` and `array::sign_bytes_in_place` on byte slices
/// one byte past an aligned address, with the type known only at run time.
fn through_byte_api<T: Bits>(input: &[T], policy: NanPolicy) -> Vec<u64> {
    let size = std::mem::size_of::<T>();
    let mut src = vec![0u8; std::mem::size_of_val(input) + 1];
    src[1..].copy_from_slice(bytemuck::cast_slice(input));
    let mut dst = vec![0u8; src.len()];
    array::sign_bytes(T::DATA_TYPE, &src[1..], &mut dst[1..], policy).unwrap();
    array::sign_bytes_in_place(T::DATA_TYPE, &mut src[1..], policy).unwrap();
    assert_eq!(src[1..], dst[1..], "{} byte API in place", T::DATA_TYPE);
    dst[1..].chunks(size).map(ne_bits).collect()
}

/// Runs SIGN through the DirectML-style compiled operator on a byte slice that starts one
/// byte past an aligned address, so the kernel must take its copying path.
fn through_misaligned_bytes<T: Bits>(input: &[T], policy: NanPolicy) -> Vec<u64> {
    let size = std::mem::size_of::<T>();
    let device = Device::builder()
        .extensions(Extensions::Enabled)
        .build()
        .unwrap();
    let t = TensorDesc::new(T::DATA_TYPE, &[input.len() as u32]);
    let op = device
        .create_operator(&OperatorDesc::sign(t.clone(), t))
        .unwrap()
        .with_nan_policy(policy)
        .compile()
        .unwrap();
    let mut src = vec![0u8; std::mem::size_of_val(input) + 1];
    src[1..].copy_from_slice(bytemuck::cast_slice(input));
    let mut dst = vec![0u8; std::mem::size_of_val(input) + 1];
    op.execute_slices(&src[1..], &mut dst[1..]).unwrap();
    let mut in_place = src.clone();
    op.execute_in_place_slice(&mut in_place[1..]).unwrap();
    assert_eq!(
        in_place[1..],
        dst[1..],
        "{} misaligned in place",
        T::DATA_TYPE
    );
    dst[1..].chunks(size).map(ne_bits).collect()
}

fn ne_bits(c: &[u8]) -> u64 {
    match c.len() {
        1 => u64::from(c[0]),
        2 => u64::from(u16::from_ne_bytes([c[0], c[1]])),
        4 => u64::from(u32::from_ne_bytes([c[0], c[1], c[2], c[3]])),
        _ => u64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]),
    }
}

fn assert_first_difference(got: &[u64], expected: &[u64], input: &[u64], t: DataType, what: &str) {
    if let Some(i) = (0..got.len()).find(|&i| got[i] != expected[i]) {
        panic!(
            "{t} {what}: input {:#x} gave {:#x}, reference says {:#x}",
            input[i], got[i], expected[i]
        );
    }
    assert_eq!(got.len(), expected.len());
}

fn check_is_infinity<T: Bits + array::FloatElement>(patterns: &[u64]) {
    let input: Vec<T> = patterns.iter().map(|&b| T::from_u64(b)).collect();
    for mode in InfinityMode::ALL {
        let expected: Vec<u64> = patterns
            .iter()
            .map(|&b| u64::from(is_infinity_bits(T::DATA_TYPE, b, mode).unwrap()))
            .collect();
        let mut out = vec![7u8; input.len()];
        array::is_infinity(&input, mode, &mut out).unwrap();
        let got: Vec<u64> = out.iter().map(|&x| u64::from(x)).collect();
        assert_first_difference(&got, &expected, patterns, T::DATA_TYPE, mode.name());

        let mut src = vec![0u8; std::mem::size_of_val(input.as_slice()) + 1];
        src[1..].copy_from_slice(bytemuck::cast_slice(&input));
        let mut out = vec![7u8; input.len()];
        array::is_infinity_bytes(T::DATA_TYPE, mode, &src[1..], &mut out).unwrap();
        let got: Vec<u64> = out.iter().map(|&x| u64::from(x)).collect();
        assert_first_difference(&got, &expected, patterns, T::DATA_TYPE, "byte API");
    }
}

#[test]
fn f16_every_pattern() {
    let p = all_patterns(16);
    check_sign::<f16>(&p);
    check_is_infinity::<f16>(&p);
}

#[test]
fn bf16_every_pattern() {
    let p = all_patterns(16);
    check_sign::<bf16>(&p);
    check_is_infinity::<bf16>(&p);
}

#[test]
fn small_integers_every_value() {
    check_sign::<i8>(&all_patterns(8));
    check_sign::<u8>(&all_patterns(8));
    check_sign::<i16>(&all_patterns(16));
    check_sign::<u16>(&all_patterns(16));
}

#[test]
fn f32_edges_and_random() {
    let p = edge_and_random(32, 0x9E37_79B9_7F4A_7C15);
    check_sign::<f32>(&p);
    check_is_infinity::<f32>(&p);
}

#[test]
fn f64_edges_and_random() {
    let p = edge_and_random(64, 0xD1B5_4A32_D192_ED03);
    check_sign::<f64>(&p);
    check_is_infinity::<f64>(&p);
}

#[test]
fn wide_integers_edges_and_random() {
    let p32 = edge_and_random(32, 0x2545_F491_4F6C_DD1D);
    check_sign::<i32>(&p32);
    check_sign::<u32>(&p32);
    let p64 = edge_and_random(64, 0x1234_5678_9ABC_DEF1);
    check_sign::<i64>(&p64);
    check_sign::<u64>(&p64);
}

#[test]
fn float8_is_infinity_every_pattern() {
    let device = Device::builder()
        .extensions(Extensions::Enabled)
        .build()
        .unwrap();
    let input: Vec<u8> = (0..=255).collect();
    for t in [
        DataType::Float8E4M3Fn,
        DataType::Float8E4M3Fnuz,
        DataType::Float8E5M2,
        DataType::Float8E5M2Fnuz,
    ] {
        for out_type in [DataType::Uint8, DataType::Bool] {
            for mode in InfinityMode::ALL {
                let desc = OperatorDesc::is_infinity(
                    TensorDesc::new(t, &[256]),
                    TensorDesc::new(out_type, &[256]),
                    mode,
                );
                let op = device.create_operator(&desc).unwrap().compile().unwrap();
                let mut out = vec![9u8; 256];
                op.execute_slices(&input, &mut out).unwrap();
                for (b, o) in input.iter().zip(&out) {
                    let want = is_infinity_bits(t, u64::from(*b), mode).unwrap();
                    assert_eq!(*o, u8::from(want), "{t} {mode} {b:#x}");
                }
            }
        }
        let hits = input
            .iter()
            .filter(|&&b| is_infinity_bits(t, u64::from(b), InfinityMode::Either).unwrap())
            .count();
        assert_eq!(hits, if t == DataType::Float8E5M2 { 2 } else { 0 }, "{t}");
    }
}

#[test]
fn byte_api_refuses_partial_elements_and_types_without_kernels() {
    let sign = OperatorType::ElementWiseSign;
    let mut out = [0u8; 6];
    let err = array::sign_bytes(DataType::Float32, &[0u8; 6], &mut out, NanPolicy::Zero);
    assert!(
        matches!(err, Err(Error::PartialElement { operator, bytes: 6, element_size: 4, .. }) if operator == sign),
        "{err:?}"
    );
    let err = array::sign_bytes(DataType::Float32, &[0u8; 8], &mut out, NanPolicy::Zero);
    assert!(
        matches!(err, Err(Error::PartialElement { bytes: 6, .. })),
        "{err:?}"
    );
    let mut four = [0u8; 4];
    let err = array::sign_bytes(DataType::Float32, &[0u8; 8], &mut four, NanPolicy::Zero);
    assert!(
        matches!(
            err,
            Err(Error::SliceLength {
                given: 1,
                required: 2,
                ..
            })
        ),
        "{err:?}"
    );
    let err = array::sign_bytes_in_place(DataType::Uint4, &mut four, NanPolicy::Zero);
    assert!(
        matches!(
            err,
            Err(Error::UnsupportedDataType {
                given: DataType::Uint4,
                ..
            })
        ),
        "{err:?}"
    );
    let err = array::is_infinity_bytes(
        DataType::Int32,
        InfinityMode::Either,
        &[0u8; 8],
        &mut out[..2],
    );
    assert!(
        matches!(
            err,
            Err(Error::UnsupportedDataType {
                given: DataType::Int32,
                ..
            })
        ),
        "{err:?}"
    );
    let err = array::is_infinity_bytes(
        DataType::Float16,
        InfinityMode::Either,
        &[0u8; 8],
        &mut out[..3],
    );
    assert!(
        matches!(
            err,
            Err(Error::SliceLength {
                given: 3,
                required: 4,
                ..
            })
        ),
        "{err:?}"
    );
}
