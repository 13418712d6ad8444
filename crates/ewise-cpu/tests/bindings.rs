//! Binding rules and hazards at execution (docs/SEMANTICS.md section 5), each with its error.

use ewise_cpu::{
    Buffer, BufferBinding, BufferRef, CompiledOperator, DataType, Device, Error, HazardKind,
    InfinityMode, OperatorDesc, TensorDesc, TensorRole,
};

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

fn f32_values(b: &[u8]) -> Vec<u32> {
    b.chunks(4)
        .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn sign_f32(n: u32) -> CompiledOperator {
    let t = TensorDesc::new(DataType::Float32, &[n]);
    Device::new()
        .create_operator(&OperatorDesc::sign(t.clone(), t))
        .unwrap()
        .compile()
        .unwrap()
}

fn is_inf_f32(n: u32) -> CompiledOperator {
    Device::new()
        .create_operator(&OperatorDesc::is_infinity(
            TensorDesc::new(DataType::Float32, &[n]),
            TensorDesc::new(DataType::Uint8, &[n]),
            InfinityMode::Either,
        ))
        .unwrap()
        .compile()
        .unwrap()
}

const B: fn(usize, u64, u64) -> BufferBinding = BufferBinding::new;

#[test]
fn separate_buffers_run() {
    let op = sign_f32(4);
    let input = f32_bytes(&[-2.0, -0.0, 3.0, f32::NAN]);
    let mut out = Buffer::zeroed(16);
    op.execute(
        &mut [BufferRef::from(&input[..]), BufferRef::from(&mut out)],
        &[B(0, 0, 16)],
        &[B(1, 0, 16)],
    )
    .unwrap();
    assert_eq!(f32_values(&out), [0xBF80_0000, 0, 0x3F80_0000, 0]);
}

#[test]
fn in_place_sign_runs_and_is_in_place_is_inf_is_refused() {
    let op = sign_f32(4);
    let mut data = Buffer::from_bytes(&f32_bytes(&[0.0, 0.0, 5.0, -1e-45, -7.0, 0.0, 3.0, -0.0]));
    let range = B(0, 16, 16);
    op.execute(&mut [(&mut data).into()], &[range], &[range])
        .unwrap();
    assert_eq!(
        f32_values(&data),
        [
            0,
            0,
            0x40A0_0000,
            0x8000_0001,
            0xBF80_0000,
            0,
            0x3F80_0000,
            0
        ],
        "the bound range changes, nothing else"
    );

    let op = is_inf_f32(4);
    let mut data = vec![0u8; 16];
    let err = op
        .execute(&mut [(&mut data).into()], &[B(0, 0, 16)], &[B(0, 0, 16)])
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Hazard {
                kind: HazardKind::InPlaceNotSupported,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn overlaps_are_refused_and_disjoint_ranges_of_one_buffer_run() {
    let op = sign_f32(4);
    let mut data = Buffer::from_bytes(&f32_bytes(&[1.0, -1.0, 2.0, -2.0, 9.0, 9.0, 9.0, 9.0]));
    let err = op
        .execute(&mut [(&mut data).into()], &[B(0, 0, 32)], &[B(0, 16, 16)])
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Hazard {
                kind: HazardKind::PartialOverlap,
                ..
            }
        ),
        "{err}"
    );
    let err = op
        .execute(&mut [(&mut data).into()], &[B(0, 16, 16)], &[B(0, 0, 32)])
        .unwrap_err();
    assert!(err.to_string().contains("partially overlap"), "{err}");

    op.execute(&mut [(&mut data).into()], &[B(0, 0, 16)], &[B(0, 16, 16)])
        .unwrap();
    assert_eq!(
        f32_values(&data)[4..],
        [0x3F80_0000, 0xBF80_0000, 0x3F80_0000, 0xBF80_0000]
    );
    let mut data = Buffer::from_bytes(&f32_bytes(&[0.0, 0.0, 0.0, 0.0, -3.0, 0.0, 4.0, -0.0]));
    op.execute(&mut [(&mut data).into()], &[B(0, 16, 16)], &[B(0, 0, 16)])
        .unwrap();
    assert_eq!(f32_values(&data)[..4], [0xBF80_0000, 0, 0x3F80_0000, 0]);
}

#[test]
fn binding_counts_must_be_exact() {
    let op = sign_f32(4);
    let input = [0u8; 16];
    let mut out = vec![0u8; 16];
    let mut bufs = [BufferRef::from(&input[..]), BufferRef::from(&mut out)];
    let err = op.execute(&mut bufs, &[], &[B(1, 0, 16)]).unwrap_err();
    assert!(matches!(
        err,
        Error::BindingCount {
            role: TensorRole::Input,
            given: 0,
            expected: 1,
            ..
        }
    ));
    let err = op
        .execute(&mut bufs, &[B(0, 0, 16)], &[B(1, 0, 16), B(1, 0, 16)])
        .unwrap_err();
    assert!(matches!(
        err,
        Error::BindingCount {
            role: TensorRole::Output,
            given: 2,
            ..
        }
    ));
    assert!(
        err.to_string()
            .contains("2 output binding(s) given (exactly 1 required)"),
        "{err}"
    );
    let err = op
        .execute(&mut bufs, &[B(2, 0, 16)], &[B(1, 0, 16)])
        .unwrap_err();
    assert!(matches!(
        err,
        Error::BindingBufferIndex {
            buffer: 2,
            count: 2,
            ..
        }
    ));
}

#[test]
fn offsets_sizes_and_ranges_are_checked() {
    let op = sign_f32(4);
    let input = [0u8; 64];
    let mut out = vec![0u8; 64];
    let mut bufs = [BufferRef::from(&input[..]), BufferRef::from(&mut out)];
    let err = op
        .execute(&mut bufs, &[B(0, 8, 16)], &[B(1, 0, 16)])
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::BindingOffsetAlignment {
                offset: 8,
                alignment: 16,
                ..
            }
        ),
        "{err}"
    );
    let err = op
        .execute(&mut bufs, &[B(0, 0, 12)], &[B(1, 0, 16)])
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::BindingTooSmall {
                given: 12,
                required: 16,
                ..
            }
        ),
        "{err}"
    );
    let err = op
        .execute(&mut bufs, &[B(0, 0, 16)], &[B(1, 64, 16)])
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::BindingOutOfRange {
                offset: 64,
                size: 16,
                buffer_len: 64,
                ..
            }
        ),
        "{err}"
    );
    let err = op
        .execute(&mut bufs, &[B(0, 0, 16)], &[B(1, u64::MAX - 15, 16)])
        .unwrap_err();
    assert!(matches!(err, Error::BindingOutOfRange { .. }), "{err}");
    op.execute(&mut bufs, &[B(0, 48, 16)], &[B(1, 32, 32)])
        .unwrap();

    let aligned4 = TensorDesc::new(DataType::Float32, &[4]).with_alignment(4);
    let op = Device::new()
        .create_operator(&OperatorDesc::sign(aligned4.clone(), aligned4))
        .unwrap()
        .compile()
        .unwrap();
    op.execute(&mut bufs, &[B(0, 4, 16)], &[B(1, 12, 16)])
        .unwrap();
    let err = op
        .execute(&mut bufs, &[B(0, 2, 16)], &[B(1, 12, 16)])
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::BindingOffsetAlignment {
                offset: 2,
                alignment: 4,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn outputs_need_writable_buffers() {
    let op = sign_f32(4);
    let input = [0u8; 16];
    let out = [0u8; 16];
    let err = op
        .execute(
            &mut [BufferRef::from(&input[..]), BufferRef::from(&out[..])],
            &[B(0, 0, 16)],
            &[B(1, 0, 16)],
        )
        .unwrap_err();
    assert!(
        matches!(err, Error::ReadOnlyOutput { buffer: 1, .. }),
        "{err}"
    );
    let err = op
        .execute(
            &mut [BufferRef::from(&input[..])],
            &[B(0, 0, 16)],
            &[B(0, 0, 16)],
        )
        .unwrap_err();
    assert!(
        matches!(err, Error::ReadOnlyOutput { buffer: 0, .. }),
        "{err}"
    );
}

#[test]
fn output_bytes_outside_elements_are_untouched() {
    // Output rows padded to 4 elements; the padding keeps its bytes.
    let input = TensorDesc::new(DataType::Int16, &[2, 3]);
    let output = TensorDesc::strided(DataType::Int16, &[2, 3], &[4, 1]);
    let op = Device::new()
        .create_operator(&OperatorDesc::sign(input, output))
        .unwrap()
        .compile()
        .unwrap();
    let src: Vec<u8> = [-5i16, 0, 7, i16::MIN, 1, 0]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    let mut src_buf = Buffer::zeroed(16);
    src_buf[..12].copy_from_slice(&src);
    let mut dst = Buffer::from_bytes(&[0xAA; 16]);
    op.execute(
        &mut [(&src_buf).into(), (&mut dst).into()],
        &[B(0, 0, 16)],
        &[B(1, 0, 16)],
    )
    .unwrap();
    let got: Vec<i16> = dst
        .chunks(2)
        .map(|c| i16::from_ne_bytes([c[0], c[1]]))
        .collect();
    let pad = i16::from_ne_bytes([0xAA, 0xAA]);
    assert_eq!(got, [-1, 0, 1, pad, -1, 1, 0, pad]);
}
