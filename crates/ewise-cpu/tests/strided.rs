//! Property tests: random shapes (1 to 8 dimensions), strides (broadcast, padding,
//! permuted dimension orders), binding offsets, data types, NaN policies and modes.
//! Executing a compiled operator equals the scalar reference applied element by element,
//! and leaves every other byte of the output buffer as it was.

use ewise_cpu::reference;
use ewise_cpu::{
    BufferBinding, BufferRef, DataType, Device, Extensions, InfinityMode, NanPolicy, OperatorDesc,
    TensorDesc,
};
use proptest::prelude::*;

const SIGN_TYPES: [DataType; 12] = [
    DataType::Float32,
    DataType::Float16,
    DataType::Float64,
    DataType::Bfloat16,
    DataType::Int8,
    DataType::Int16,
    DataType::Int32,
    DataType::Int64,
    DataType::Uint8,
    DataType::Uint16,
    DataType::Uint32,
    DataType::Uint64,
];
const INF_TYPES: [DataType; 5] = [
    DataType::Float32,
    DataType::Float16,
    DataType::Float64,
    DataType::Bfloat16,
    DataType::Float8E5M2,
];

/// A layout: per-dimension order (position 0 = innermost in memory), padding, broadcast.
#[derive(Debug, Clone)]
struct Layout {
    order: Vec<usize>,
    padding: Vec<u32>,
    broadcast: Vec<bool>,
}

impl Layout {
    fn strides(&self, sizes: &[u32]) -> Vec<u32> {
        let mut strides = vec![0u32; sizes.len()];
        let mut acc = 1u32;
        for &d in &self.order {
            strides[d] = if self.broadcast[d] { 0 } else { acc };
            if !self.broadcast[d] {
                acc *= sizes[d] + self.padding[d];
            }
        }
        strides
    }
}

fn layout(n: usize, allow_broadcast: bool) -> impl Strategy<Value = Layout> {
    (
        Just((0..n).collect::<Vec<_>>()).prop_shuffle(),
        prop::collection::vec(prop_oneof![3 => Just(0u32), 1 => 1u32..3], n),
        prop::collection::vec(
            prop::bool::weighted(if allow_broadcast { 0.2 } else { 0.0 }),
            n,
        ),
    )
        .prop_map(|(order, padding, broadcast)| Layout {
            order,
            padding,
            broadcast,
        })
}

#[derive(Debug, Clone)]
struct Case {
    sizes: Vec<u32>,
    input: Layout,
    output: Layout,
    packed_input: bool,
    in_offset: u64,
    out_offset: u64,
    sign: bool,
    type_index: usize,
    policy: NanPolicy,
    mode: InfinityMode,
    seed: u64,
}

fn case() -> impl Strategy<Value = Case> {
    (1usize..=8)
        .prop_flat_map(|n| {
            let max = if n > 5 {
                2
            } else if n > 3 {
                4
            } else {
                9
            };
            (
                prop::collection::vec(1u32..=max, n),
                layout(n, true),
                layout(n, false),
                prop::bool::weighted(0.2),
                0u64..4,
                0u64..4,
            )
        })
        .prop_flat_map(|(sizes, input, output, packed_input, io, oo)| {
            (
                Just((sizes, input, output, packed_input, io * 16, oo * 16)),
                any::<bool>(),
                0usize..12,
                prop::sample::select(NanPolicy::ALL.to_vec()),
                prop::sample::select(InfinityMode::ALL.to_vec()),
                any::<u64>(),
            )
        })
        .prop_map(
            |(
                (sizes, input, output, packed_input, in_offset, out_offset),
                sign,
                type_index,
                policy,
                mode,
                seed,
            )| Case {
                sizes,
                input,
                output,
                packed_input,
                in_offset,
                out_offset,
                sign,
                type_index,
                policy,
                mode,
                seed,
            },
        )
}

fn random_bytes(len: usize, mut seed: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 56) as u8
        })
        .collect()
}

fn desc_of(case: &Case) -> OperatorDesc {
    let in_strides = case.input.strides(&case.sizes);
    let out_strides = case.output.strides(&case.sizes);
    let input_type = if case.sign {
        SIGN_TYPES[case.type_index % SIGN_TYPES.len()]
    } else {
        INF_TYPES[case.type_index % INF_TYPES.len()]
    };
    let input = if case.packed_input {
        TensorDesc::new(input_type, &case.sizes)
    } else {
        TensorDesc::strided(input_type, &case.sizes, &in_strides)
    };
    if case.sign {
        OperatorDesc::sign(
            input,
            TensorDesc::strided(input_type, &case.sizes, &out_strides),
        )
    } else {
        let out_type = if case.seed.is_multiple_of(2) {
            DataType::Uint8
        } else {
            DataType::Bool
        };
        OperatorDesc::is_infinity(
            input,
            TensorDesc::strided(out_type, &case.sizes, &out_strides),
            case.mode,
        )
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn strided_execution_equals_reference(case in case()) {
        let desc = desc_of(&case);
        let device = Device::builder().extensions(Extensions::Enabled).build().unwrap();
        let op = device
            .create_operator(&desc)
            .unwrap()
            .with_nan_policy(case.policy)
            .compile()
            .unwrap();
        let in_total = desc.input().total_tensor_size_in_bytes;
        let out_total = desc.output().total_tensor_size_in_bytes;
        let input = random_bytes((case.in_offset + in_total + 7) as usize, case.seed);
        let original_out = random_bytes((case.out_offset + out_total + 5) as usize, !case.seed);

        let mut expected = original_out.clone();
        reference::run(
            &desc,
            case.policy,
            &input[case.in_offset as usize..],
            &mut expected[case.out_offset as usize..],
        )
        .unwrap();

        let mut out = original_out.clone();
        op.execute(
            &mut [BufferRef::from(&input[..]), BufferRef::from(&mut out[..])],
            &[BufferBinding::new(0, case.in_offset, in_total)],
            &[BufferBinding::new(1, case.out_offset, out_total)],
        )
        .unwrap();
        prop_assert_eq!(&out, &expected);

        let mut out = original_out.clone();
        op.execute_slices(&input[case.in_offset as usize..], &mut out[case.out_offset as usize..])
            .unwrap();
        prop_assert_eq!(&out, &expected);
    }

    #[test]
    fn in_place_equals_reference(case in case()) {
        let mut case = case;
        case.sign = true;
        case.packed_input = false;
        case.input = case.output.clone();
        let desc = desc_of(&case);
        let device = Device::builder().extensions(Extensions::Enabled).build().unwrap();
        let op = device.create_operator(&desc).unwrap().with_nan_policy(case.policy).compile().unwrap();
        let total = desc.output().total_tensor_size_in_bytes;
        let original = random_bytes((case.out_offset + total + 3) as usize, case.seed);

        let mut expected = original.clone();
        let snapshot = original[case.out_offset as usize..].to_vec();
        reference::run(&desc, case.policy, &snapshot, &mut expected[case.out_offset as usize..]).unwrap();

        let mut data = original.clone();
        let range = BufferBinding::new(0, case.out_offset, total);
        op.execute(&mut [BufferRef::from(&mut data[..])], &[range], &[range]).unwrap();
        prop_assert_eq!(&data, &expected);
    }

    #[test]
    fn in_place_with_different_layouts_reads_the_input_first(case in case()) {
        // Same bytes bound to input and output, but the input is read through another
        // (transposed or broadcast) layout: the result must be as if the input were copied.
        let mut case = case;
        case.sign = true;
        let desc = desc_of(&case);
        let device = Device::builder().extensions(Extensions::Enabled).build().unwrap();
        let op = device.create_operator(&desc).unwrap().with_nan_policy(case.policy).compile().unwrap();
        let total = desc.input().total_tensor_size_in_bytes.max(desc.output().total_tensor_size_in_bytes);
        let original = random_bytes(total as usize, case.seed);
        let mut expected = original.clone();
        reference::run(&desc, case.policy, &original, &mut expected).unwrap();
        let mut data = original.clone();
        let range = BufferBinding::new(0, 0, total);
        op.execute(&mut [BufferRef::from(&mut data[..])], &[range], &[range]).unwrap();
        prop_assert_eq!(&data, &expected);
    }
}
