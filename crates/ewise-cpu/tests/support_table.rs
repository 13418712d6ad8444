//! One table-driven test over every (operator, feature level, input type, output type,
//! dimension count 1..8): creation accepts or rejects exactly as docs/SEMANTICS.md section 3
//! says. The expectations below are restated from the spec's text, not read from the
//! library's tables, so the two are checked against each other.

use ewise_cpu::{
    DataType, Device, Error, FeatureLevel, InfinityMode, OperatorDesc, OperatorType, TensorDesc,
};
use DataType::*;
use FeatureLevel::*;

/// (dimension counts, input types, output types) allowed at `level`, per
/// docs/SEMANTICS.md section 3.
fn spec(
    op: OperatorType,
    level: FeatureLevel,
) -> Option<(Vec<usize>, Vec<DataType>, Vec<DataType>)> {
    let four = vec![4];
    let one_to_eight: Vec<usize> = (1..=8).collect();
    match op {
        OperatorType::ElementWiseSign => {
            let floats = vec![Float32, Float16];
            let mut ints = floats.clone();
            ints.extend([Int32, Int16, Int8, Uint32, Uint16, Uint8]);
            let mut wide = ints.clone();
            wide.extend([Int64, Uint64]);
            if level < L2_0 {
                None
            } else if level < L2_1 {
                Some((four, floats.clone(), floats))
            } else if level < L3_0 {
                Some((four, ints.clone(), ints))
            } else if level < L4_1 {
                Some((one_to_eight, ints.clone(), ints))
            } else {
                Some((one_to_eight, wide.clone(), wide))
            }
        }
        OperatorType::ElementWiseIsInfinity => {
            if level < L2_1 {
                None
            } else if level < L3_0 {
                Some((four, vec![Float32, Float16], vec![Uint8]))
            } else {
                Some((one_to_eight, vec![Float32, Float16], vec![Uint8]))
            }
        }
    }
}

fn desc(op: OperatorType, input: DataType, output: DataType, dims: usize) -> OperatorDesc {
    let sizes: Vec<u32> = (0..dims as u32).map(|i| 1 + i % 3).collect();
    let i = TensorDesc::new(input, &sizes);
    let o = TensorDesc::new(output, &sizes);
    match op {
        OperatorType::ElementWiseSign => OperatorDesc::sign(i, o),
        OperatorType::ElementWiseIsInfinity => {
            OperatorDesc::is_infinity(i, o, InfinityMode::Positive)
        }
    }
}

#[test]
fn every_combination_matches_the_spec() {
    let types: Vec<DataType> = DataType::ALL.to_vec();
    let mut accepted = 0usize;
    let mut checked = 0usize;
    for op in OperatorType::ALL {
        for level in FeatureLevel::ALL {
            let device = Device::with_feature_level(level);
            let allowed = spec(op, level);
            for &input in &types {
                for &output in &types {
                    for dims in 1..=8 {
                        checked += 1;
                        let result = device.create_operator(&desc(op, input, output, dims));
                        let Some((counts, ins, outs)) = &allowed else {
                            assert!(
                                matches!(result, Err(Error::OperatorNotAvailable { .. })),
                                "{op} at {level}: {result:?}"
                            );
                            continue;
                        };
                        let same_type_rule = op != OperatorType::ElementWiseSign || input == output;
                        let want = counts.contains(&dims)
                            && ins.contains(&input)
                            && outs.contains(&output)
                            && same_type_rule;
                        assert_eq!(
                            result.is_ok(),
                            want,
                            "{op} at {level}, {input} -> {output}, {dims} dims: {result:?}"
                        );
                        if want {
                            accepted += 1;
                            continue;
                        }
                        let err = result.unwrap_err();
                        let fitting = match err {
                            Error::UnsupportedDataType { .. } => {
                                !ins.contains(&input) || !outs.contains(&output)
                            }
                            Error::UnsupportedDimensionCount { .. } => !counts.contains(&dims),
                            Error::DataTypeMismatch { .. } => !same_type_rule,
                            _ => false,
                        };
                        assert!(
                            fitting,
                            "{op} at {level}, {input} -> {output}, {dims}: {err}"
                        );
                    }
                }
            }
        }
    }
    assert_eq!(checked, 2 * 15 * 20 * 20 * 8);
    // SIGN: 2_0 2 types x 1 count; 2_1 8 x 1; 3_0..4_0 (3 levels) 8 x 8; 4_1..6_4 (9) 10 x 8.
    // IS_INFINITY: 2_1 2 x 1; 3_0..6_4 (12 levels) 2 x 8.
    assert_eq!(accepted, 2 + 8 + 3 * 64 + 9 * 80 + 2 + 12 * 16);
}

#[test]
fn messages_name_operator_tensor_field_value_and_accepted() {
    let device = Device::with_feature_level(L3_0);
    let err = device
        .create_operator(&desc(
            OperatorType::ElementWiseIsInfinity,
            Float32,
            Float32,
            2,
        ))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "ELEMENT_WISE_IS_INFINITY: OutputTensor data type FLOAT32 is not supported at feature level 3_0 (supported: UINT8)"
    );
    let err = Device::with_feature_level(L1_0)
        .create_operator(&desc(OperatorType::ElementWiseSign, Float32, Float32, 4))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "ELEMENT_WISE_SIGN is not supported at feature level 1_0 (introduced at feature level 2_0)"
    );
    let err = Device::with_feature_level(L2_1)
        .create_operator(&desc(OperatorType::ElementWiseSign, Int8, Int8, 5))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "ELEMENT_WISE_SIGN: InputTensor DimensionCount 5 is not supported at feature level 2_1 (supported: 4)"
    );
    let err = Device::new()
        .create_operator(&desc(OperatorType::ElementWiseSign, Float64, Float64, 1))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "ELEMENT_WISE_SIGN: InputTensor data type FLOAT64 is not supported at feature level 6_4 (supported: FLOAT32, FLOAT16, INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16, UINT8)"
    );
}
