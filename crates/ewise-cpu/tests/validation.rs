//! Description validation: each rule of docs/SEMANTICS.md section 4 gives its own typed error.

use ewise_cpu::{
    DataType, Device, DeviceOptions, Error, Extensions, FeatureLevel, InfinityMode, NanPolicy,
    OperatorDesc, Parallelism, TensorDesc, TensorFlags, TensorRole,
};
use DataType::*;

fn sign(input: TensorDesc, output: TensorDesc) -> Result<(), Error> {
    Device::new()
        .create_operator(&OperatorDesc::sign(input, output))
        .map(|_| ())
}

fn f32s(sizes: &[u32]) -> TensorDesc {
    TensorDesc::new(Float32, sizes)
}

#[test]
fn zero_size_is_rejected() {
    let err = sign(f32s(&[2, 0, 3]), f32s(&[2, 0, 3])).unwrap_err();
    assert!(matches!(
        err,
        Error::ZeroSize {
            tensor: TensorRole::Input,
            dimension: 1,
            ..
        }
    ));
    assert!(err.to_string().contains("Sizes[1] is 0"), "{err}");
}

#[test]
fn too_many_elements_is_rejected() {
    let big = [65536, 65536];
    let err = sign(f32s(&big), f32s(&big)).unwrap_err();
    assert!(
        matches!(
            err,
            Error::TooManyElements {
                count: 4_294_967_296,
                max: 4_294_967_295,
                ..
            }
        ),
        "{err}"
    );
    // Exactly 2^32 - 1 elements is allowed by the count rule (it then needs its bytes,
    // which a 32-bit address space cannot hold).
    let sizes = [65535, 65537];
    let ok = sign(
        TensorDesc::new(Uint8, &sizes),
        TensorDesc::new(Uint8, &sizes),
    );
    if cfg!(target_pointer_width = "64") {
        assert!(ok.is_ok(), "{ok:?}");
    } else {
        assert!(matches!(ok, Err(Error::TensorTooLarge { .. })), "{ok:?}");
    }
}

#[test]
fn strides_must_match_dimension_count() {
    let mut input = f32s(&[2, 3]);
    input.strides = Some(vec![3]);
    let err = sign(input, f32s(&[2, 3])).unwrap_err();
    assert!(
        matches!(
            err,
            Error::StrideCount {
                given: 1,
                expected: 2,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn zero_stride_allowed_on_input_rejected_on_output() {
    let broadcast = TensorDesc::strided(Float32, &[2, 3], &[0, 1]);
    assert!(sign(broadcast.clone(), f32s(&[2, 3])).is_ok());
    let err = sign(f32s(&[2, 3]), broadcast).unwrap_err();
    assert!(
        matches!(err, Error::ZeroOutputStride { dimension: 0, .. }),
        "{err}"
    );
    assert!(
        err.to_string().contains("OutputTensor Strides[0] is 0"),
        "{err}"
    );
    // A zero stride over a size-1 dimension addresses one element only.
    let single = TensorDesc::strided(Float32, &[1, 3], &[0, 1]);
    assert!(sign(f32s(&[1, 3]), single).is_ok());
}

#[test]
fn output_elements_sharing_an_address_are_rejected() {
    let shared = TensorDesc::strided(Float32, &[3, 2], &[1, 2]);
    let err = sign(f32s(&[3, 2]), shared).unwrap_err();
    assert_eq!(
        err.to_string(),
        "ELEMENT_WISE_SIGN: OutputTensor Strides [1, 2] place more than one element of \
         Sizes [3, 2] at one address (each output element needs its own bytes; strides that \
         nest, each at least the extent of the smaller ones, always do)"
    );
    // Interleaved but disjoint (offsets 0 2 4 3 5 7), and an input that repeats.
    let interleaved = TensorDesc::strided(Float32, &[2, 3], &[3, 2]);
    assert!(sign(f32s(&[2, 3]), interleaved.clone()).is_ok());
    assert!(sign(
        TensorDesc::strided(Float32, &[3, 2], &[1, 1]),
        f32s(&[3, 2])
    )
    .is_ok());
}

#[test]
fn total_size_must_cover_the_layout() {
    let small = f32s(&[2, 3]).with_total_size(20);
    let err = sign(small, f32s(&[2, 3])).unwrap_err();
    assert!(
        matches!(
            err,
            Error::TotalSizeTooSmall {
                given: 20,
                required: 24,
                tensor: TensorRole::Input,
                ..
            }
        ),
        "{err}"
    );
    let padded = TensorDesc::strided(Float32, &[2, 3], &[8, 1]);
    assert_eq!(padded.total_tensor_size_in_bytes, 44);
    let err = sign(f32s(&[2, 3]), padded.clone().with_total_size(40)).unwrap_err();
    assert!(
        matches!(err, Error::TotalSizeTooSmall { required: 44, .. }),
        "{err}"
    );
    assert!(sign(f32s(&[2, 3]), padded.with_total_size(4096)).is_ok());
}

#[test]
fn alignment_must_be_zero_or_power_of_two_at_least_element_size() {
    for (a, ok) in [
        (0, true),
        (4, true),
        (8, true),
        (256, true),
        (2, false),
        (12, false),
        (3, false),
    ] {
        let r = sign(f32s(&[4]).with_alignment(a), f32s(&[4]));
        assert_eq!(r.is_ok(), ok, "alignment {a}: {r:?}");
        if let Err(e) = r {
            assert!(
                matches!(e, Error::InvalidAlignment { given, element_size: 4, .. } if given == a)
            );
        }
    }
}

#[test]
fn owned_by_dml_flag_is_refused_clearly() {
    let err = sign(f32s(&[4]).with_flags(TensorFlags::OWNED_BY_DML), f32s(&[4])).unwrap_err();
    assert!(matches!(err, Error::UnsupportedFlags { .. }));
    assert!(err.to_string().contains("OWNED_BY_DML"), "{err}");
}

#[test]
fn sizes_and_types_must_match() {
    let err = sign(f32s(&[2, 3]), f32s(&[3, 2])).unwrap_err();
    assert!(matches!(err, Error::SizesMismatch { .. }), "{err}");
    let err = sign(f32s(&[2, 3]), f32s(&[2, 3, 1])).unwrap_err();
    assert!(matches!(err, Error::SizesMismatch { .. }), "{err}");
    let err = sign(f32s(&[4]), TensorDesc::new(Float16, &[4])).unwrap_err();
    assert!(matches!(
        err,
        Error::DataTypeMismatch {
            input: Float32,
            output: Float16,
            ..
        }
    ));
}

#[test]
fn extension_types_need_the_opt_in() {
    let bf = TensorDesc::new(Bfloat16, &[4]);
    let strict = Device::new();
    let err = strict
        .create_operator(&OperatorDesc::sign(bf.clone(), bf.clone()))
        .unwrap_err();
    assert!(matches!(
        err,
        Error::UnsupportedDataType {
            given: Bfloat16,
            ..
        }
    ));
    let err = strict
        .create_operator(&OperatorDesc::is_infinity(
            f32s(&[4]),
            TensorDesc::new(Uint8, &[4]),
            InfinityMode::Neither,
        ))
        .unwrap_err();
    assert!(
        matches!(err, Error::UnsupportedInfinityMode { .. }),
        "{err}"
    );

    let extended = Device::builder()
        .extensions(Extensions::Enabled)
        .build()
        .unwrap();
    assert!(extended
        .create_operator(&OperatorDesc::sign(bf.clone(), bf))
        .is_ok());
    for sizes in [&[][..], &[0, 5], &[1; 9]] {
        let t = TensorDesc::new(Float64, sizes);
        let r = extended.create_operator(&OperatorDesc::sign(t.clone(), t));
        assert!(r.is_ok(), "{sizes:?}: {r:?}");
    }
    let f8 = TensorDesc::new(Float8E5M2, &[3]);
    let r = extended.create_operator(&OperatorDesc::is_infinity(
        f8,
        TensorDesc::new(Bool, &[3]),
        InfinityMode::Neither,
    ));
    assert!(r.is_ok(), "{r:?}");
    let f8 = TensorDesc::new(Float8E5M2, &[3]);
    let err = extended
        .create_operator(&OperatorDesc::sign(f8.clone(), f8))
        .unwrap_err();
    assert!(err.to_string().contains("with extensions"), "{err}");
    assert!(extended
        .create_operator(&OperatorDesc::sign(
            TensorDesc::new(Bool, &[1]),
            TensorDesc::new(Bool, &[1])
        ))
        .is_err());
}

#[test]
fn device_levels() {
    assert_eq!(Device::new().feature_level(), FeatureLevel::L6_4);
    let d = Device::builder()
        .feature_level(FeatureLevel::L3_0)
        .min_feature_level(FeatureLevel::L2_1)
        .build()
        .unwrap();
    assert_eq!(
        d.check_feature_levels(&[FeatureLevel::L1_0, FeatureLevel::L2_1, FeatureLevel::L4_0]),
        Some(FeatureLevel::L2_1)
    );
    assert_eq!(
        d.check_feature_levels(&[FeatureLevel::L3_0, FeatureLevel::L1_0]),
        Some(FeatureLevel::L3_0)
    );
    assert_eq!(d.check_feature_levels(&[FeatureLevel::L5_0]), None);
    assert_eq!(
        Device::new().check_feature_levels(&[FeatureLevel::L2_0]),
        Some(FeatureLevel::L2_0)
    );
    let err = Device::builder()
        .feature_level(FeatureLevel::L3_0)
        .min_feature_level(FeatureLevel::L4_1)
        .build()
        .unwrap_err();
    assert_eq!(
        err,
        Error::FeatureLevelUnavailable {
            requested: FeatureLevel::L4_1,
            supported: FeatureLevel::L3_0
        }
    );
    for level in FeatureLevel::ALL {
        assert_eq!(Device::with_feature_level(level).feature_level(), level);
    }
}

#[test]
fn a_device_built_from_options_matches_one_built_with_the_setters() {
    let options = DeviceOptions::default()
        .feature_level(FeatureLevel::L3_1)
        .min_feature_level(FeatureLevel::L2_0)
        .extensions(Extensions::Enabled)
        .nan_policy(NanPolicy::Propagate);
    let from_options = Device::builder()
        .options(options)
        .parallelism(Parallelism::threads(1))
        .build()
        .unwrap();
    let chained = Device::builder()
        .feature_level(FeatureLevel::L3_1)
        .min_feature_level(FeatureLevel::L2_0)
        .extensions(Extensions::Enabled)
        .nan_policy(NanPolicy::Propagate)
        .parallelism(Parallelism::threads(1))
        .build()
        .unwrap();
    assert_eq!(from_options, chained);
    let t = TensorDesc::new(Float32, &[4]);
    let desc = OperatorDesc::sign(t.clone(), t);
    for device in [from_options, chained] {
        assert_eq!(device.options(), options);
        assert_eq!(device.feature_level(), FeatureLevel::L3_1);
        assert_eq!(device.extensions(), Extensions::Enabled);
        let operator = device.create_operator(&desc).unwrap();
        assert_eq!(operator.nan_policy(), NanPolicy::Propagate);
        assert_eq!(operator.parallelism(), Parallelism::threads(1));
    }
    assert_eq!(Device::new().options(), DeviceOptions::default());
    assert_eq!(Device::builder().build().unwrap(), Device::new());
    let refused = options.min_feature_level(FeatureLevel::L4_0);
    assert_eq!(
        Device::builder().options(refused).build().unwrap_err(),
        refused.check().unwrap_err()
    );
}

#[test]
fn huge_or_empty_extended_tensors_never_panic() {
    let extended = Device::builder()
        .extensions(Extensions::Enabled)
        .build()
        .unwrap();
    let empty = TensorDesc::new(Int64, &[u32::MAX, u32::MAX, u32::MAX, 0]);
    let op = extended
        .create_operator(&OperatorDesc::sign(empty.clone(), empty))
        .unwrap()
        .compile()
        .unwrap();
    op.execute_slices(&[], &mut []).unwrap();
    let huge = TensorDesc::new(Int64, &[u32::MAX, u32::MAX, u32::MAX]);
    let err = extended
        .create_operator(&OperatorDesc::sign(huge.clone(), huge))
        .unwrap_err();
    assert!(matches!(err, Error::TensorTooLarge { .. }), "{err}");
    let t = TensorDesc::new(Int16, &[3]);
    let op = extended
        .create_operator(&OperatorDesc::sign(t.clone(), t))
        .unwrap()
        .compile()
        .unwrap();
    let err = op.execute_slices(&[0; 5], &mut [0; 6]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::BytesTooShort {
                given: 5,
                required: 6,
                tensor: TensorRole::Input,
                ..
            }
        ),
        "{err}"
    );
}
