//! Property tests over layouts: random shapes (0 to 8 dimensions), strides (broadcast,
//! padding, permuted dimension orders), binding offsets, data types, NaN policies, modes
//! and placements (two buffers, disjoint ranges of one buffer, in place with the same or
//! another layout), on a device with the adapter's binding limit and on one whose limit
//! is lowered so that every tensor is split into many dispatches. The GPU's buffers
//! equal the CPU backend's byte for byte, sentinel bytes around the output included.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{both, device, noise, tiny_device, Run};
use ewise_core::{DataType, InfinityMode, NanPolicy, OperatorDesc, TensorDesc};
use proptest::prelude::*;

use DataType::*;

const SIGN_TYPES: [DataType; 12] = [
    Float32, Float16, Float64, Bfloat16, Int8, Int16, Int32, Int64, Uint8, Uint16, Uint32, Uint64,
];
const INF_TYPES: [DataType; 5] = [Float32, Float16, Float64, Bfloat16, Float8E5M2];

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Placement {
    TwoBuffers,
    Disjoint,
    InPlace,
}

#[derive(Debug, Clone)]
struct Case {
    sizes: Vec<u32>,
    input: Layout,
    output: Layout,
    packed: bool,
    offsets: (u64, u64),
    sign: bool,
    type_index: usize,
    policy: NanPolicy,
    mode: InfinityMode,
    placement: Placement,
    tiny: bool,
    seed: u64,
}

fn case() -> impl Strategy<Value = Case> {
    (0usize..=8)
        .prop_flat_map(|n| {
            let max = match n {
                6.. => 3,
                4 | 5 => 5,
                _ => 12,
            };
            (
                prop::collection::vec(prop_oneof![1 => Just(1u32), 8 => 1u32..=max], n),
                layout(n, true),
                layout(n, false),
                prop::bool::weighted(0.3),
                (0u64..4, 0u64..4),
            )
        })
        .prop_flat_map(|(sizes, input, output, packed, offsets)| {
            (
                Just((sizes, input, output, packed, offsets)),
                (any::<bool>(), 0usize..12),
                prop::sample::select(NanPolicy::ALL.to_vec()),
                prop::sample::select(InfinityMode::ALL.to_vec()),
                prop::sample::select(vec![
                    Placement::TwoBuffers,
                    Placement::Disjoint,
                    Placement::InPlace,
                ]),
                prop::bool::weighted(0.3),
                any::<u64>(),
            )
        })
        .prop_map(
            |(
                (sizes, input, output, packed, offsets),
                (sign, type_index),
                policy,
                mode,
                placement,
                tiny,
                seed,
            )| Case {
                sizes,
                input,
                output,
                packed,
                offsets: (offsets.0 * 16, offsets.1 * 16),
                sign,
                type_index,
                policy,
                mode,
                placement,
                tiny,
                seed,
            },
        )
}

/// The description, buffers and run of a case.
fn setup(case: &Case) -> (OperatorDesc, Vec<Vec<u8>>, Run) {
    let in_place = case.placement == Placement::InPlace && case.sign;
    let in_type = if case.sign {
        SIGN_TYPES[case.type_index]
    } else {
        INF_TYPES[case.type_index % INF_TYPES.len()]
    };
    let out_type = if case.sign { in_type } else { Uint8 };
    let mut input = if case.packed {
        TensorDesc::new(in_type, &case.sizes)
    } else {
        let mut layout = case.input.clone();
        if in_place {
            layout.broadcast.fill(false);
        }
        TensorDesc::strided(in_type, &case.sizes, &layout.strides(&case.sizes))
    };
    let mut output = TensorDesc::strided(out_type, &case.sizes, &case.output.strides(&case.sizes));
    let (mut in_offset, out_offset) = case.offsets;
    let one_buffer = case.placement != Placement::TwoBuffers;
    if in_place {
        let total = input
            .total_tensor_size_in_bytes
            .max(output.total_tensor_size_in_bytes);
        input.total_tensor_size_in_bytes = total;
        output.total_tensor_size_in_bytes = total;
        in_offset = out_offset;
    } else if one_buffer {
        in_offset += (out_offset + output.total_tensor_size_in_bytes).div_ceil(16) * 16;
    }
    let desc = if case.sign {
        OperatorDesc::sign(input, output)
    } else {
        OperatorDesc::is_infinity(input, output, case.mode)
    };
    let run = Run {
        in_offset,
        out_offset,
        one_buffer,
    };
    let in_end = in_offset + desc.input().total_tensor_size_in_bytes;
    let out_end = out_offset + desc.output().total_tensor_size_in_bytes;
    let buffers = if one_buffer {
        vec![noise((in_end.max(out_end) + 40) as usize, case.seed)]
    } else {
        vec![
            noise(in_end as usize + 24, case.seed),
            noise(out_end as usize + 40, case.seed ^ 1),
        ]
    };
    (desc, buffers, run)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn gpu_equals_cpu_on_every_layout(case in case()) {
        let device = if case.tiny { tiny_device() } else { device() };
        let Some(device) = device else { return Ok(()) };
        let (desc, buffers, run) = setup(&case);
        let (gpu, cpu) = both(device, &desc, case.policy, &buffers, run);
        match (gpu, cpu) {
            (Ok(g), Ok(c)) => prop_assert!(g == c, "buffers differ for {:?}", desc),
            (Err(g), Err(c)) => prop_assert_eq!(g, ewise_gpu::GpuError::Op(c)),
            (g, c) => prop_assert!(false, "GPU {:?} but CPU {:?}", g.err(), c.err()),
        }
    }
}

#[test]
fn large_tensors_split_into_many_dispatches() {
    let Some(device) = tiny_device() else { return };
    let limit = device.max_binding_size();
    let sizes = [37u32, 5, 41];
    let cases = [
        TensorDesc::new(Float64, &sizes),
        TensorDesc::strided(Float32, &sizes, &[1, 37 * 41, 37]),
        TensorDesc::strided(Int8, &sizes, &[0, 41, 1]),
    ];
    for input in cases {
        let out_type = input.data_type;
        let output = TensorDesc::new(out_type, &sizes);
        let desc = OperatorDesc::sign(input, output);
        let op = device.create_operator(&desc).unwrap().compile().unwrap();
        assert!(
            op.dispatches() > 4,
            "{} dispatches under a {limit}-byte limit",
            op.dispatches()
        );
        let start = vec![
            noise(desc.input().total_tensor_size_in_bytes as usize + 16, 3),
            noise(desc.output().total_tensor_size_in_bytes as usize, 4),
        ];
        let run = Run {
            in_offset: 16,
            out_offset: 0,
            one_buffer: false,
        };
        let (gpu, cpu) = both(device, &desc, NanPolicy::Propagate, &start, run);
        assert_eq!(gpu.unwrap(), cpu.unwrap(), "{desc:?}");
    }
}

#[test]
fn grids_longer_than_one_dimension_and_odd_shapes() {
    let Some(device) = device() else { return };
    // 4100 x 4097 int8, transposed: one invocation per element, past 65535 x 256 of
    // them, so the grid needs a second dimension.
    let sizes = [4100u32, 4097];
    let input = TensorDesc::strided(Int8, &sizes, &[1, 4100]);
    let scalar = TensorDesc::new(Float64, &[]);
    let empty = TensorDesc::new(Float16, &[3, 0, 2]);
    let deep = TensorDesc::new(Uint16, &[1; 64]);
    let descs = [
        OperatorDesc::sign(input, TensorDesc::new(Int8, &sizes)),
        OperatorDesc::sign(scalar.clone(), scalar),
        OperatorDesc::sign(empty.clone(), empty.clone()),
        OperatorDesc::is_infinity(
            empty.clone(),
            TensorDesc::new(Bool, &[3, 0, 2]),
            InfinityMode::Neither,
        ),
        OperatorDesc::sign(deep.clone(), deep),
    ];
    for desc in descs {
        let start = vec![
            noise(desc.input().total_tensor_size_in_bytes as usize + 16, 5),
            noise(desc.output().total_tensor_size_in_bytes as usize + 16, 6),
        ];
        let run = Run {
            in_offset: 0,
            out_offset: 16,
            one_buffer: false,
        };
        let (gpu, cpu) = both(device, &desc, NanPolicy::Zero, &start, run);
        assert!(gpu.unwrap() == cpu.unwrap(), "{:?}", desc.input().sizes);
    }
}
