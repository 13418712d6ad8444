//! The async API on a browser's WebGPU (wasm32, run by scripts/web-rust-test.sh in
//! headless Chromium through wasm-bindgen-test): `build_async`, `execute_slices_async`,
//! `execute_in_place_slice_async`, `execute_async`, `read_range_async` and
//! `synchronize_async`, bit for bit against the CPU backend for every type, NaN policy
//! and infinity mode, packed and strided, over many dispatches and binding windows, and
//! their errors (returned, never a panic). A browser without WebGPU fails these tests.
#![cfg(target_arch = "wasm32")]

use ewise_core::{
    BufferBinding, DataType, Extensions, InfinityMode, NanPolicy, OperatorDesc, OperatorSupport,
    OperatorType, TensorDesc, TensorRole,
};
use ewise_gpu::{GpuBuffer, GpuDevice, GpuDeviceBuilder, GpuError};
use ewise_testkit::noise;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

/// An extended device from `builder` on the browser's adapter.
async fn device_from(builder: GpuDeviceBuilder) -> GpuDevice {
    builder
        .allow_software(true)
        .extensions(Extensions::Enabled)
        .build_async()
        .await
        .unwrap_or_else(|e| panic!("no WebGPU device: {e}"))
}

async fn device() -> GpuDevice {
    device_from(GpuDevice::builder()).await
}

/// Binding windows of a few hundred bytes and dispatch grids of at most 2 x 2
/// workgroups: small tensors take many dispatches.
async fn tiny_device() -> GpuDevice {
    device_from(
        GpuDevice::builder()
            .max_binding_size(0)
            .max_workgroups_per_dimension(2),
    )
    .await
}

fn sign_types() -> &'static [DataType] {
    OperatorSupport::of(OperatorType::ElementWiseSign)
        .extended
        .input_types
}

fn infinity_types() -> &'static [DataType] {
    OperatorSupport::of(OperatorType::ElementWiseIsInfinity)
        .extended
        .input_types
}

fn size(t: DataType) -> usize {
    t.size_in_bytes().unwrap() as usize
}

/// Zeros, subnormals, infinities, NaNs (quiet, signalling, with payloads), the largest
/// finite values and integer extremes of a 32- or 64-bit type, with both signs.
fn edges(bits: u32) -> Vec<u64> {
    let (exp, frac) = if bits == 64 { (11, 52) } else { (8, 23) };
    let mask = u64::MAX >> (64 - bits);
    let inf = ((1u64 << exp) - 1) << frac;
    let sign = 1u64 << (bits - 1);
    let base = [
        0,
        1,
        (1 << frac) - 1,
        inf - 1,
        inf,
        inf + 1,
        inf | (1 << (frac - 1)),
        inf | ((1 << frac) - 1),
    ];
    let mut v = base.to_vec();
    v.extend(base.iter().map(|x| x | sign));
    v.extend([
        mask,
        sign - 1,
        2,
        0x7F80,
        0xFF80,
        0x7C00,
        0xFC00,
        0x7F,
        0x80,
    ]);
    v.into_iter().map(|x| x & mask).collect()
}

/// `n` elements of `t`: for 8- and 16-bit types every bit pattern in turn from `seed`
/// (all of them once `n` reaches 2^bits), for wider ones noise with an edge pattern as
/// every third element.
fn input(t: DataType, n: usize, seed: u64) -> Vec<u8> {
    let width = size(t);
    if width <= 2 {
        let m = 1u64 << (8 * width);
        return (0..n as u64)
            .flat_map(|k| ((k * 7 + seed) % m).to_le_bytes()[..width].to_vec())
            .collect();
    }
    let mut data = noise(n * width, seed);
    let e = edges(8 * width as u32);
    for k in (0..n).step_by(3) {
        let pattern = e[(k / 3 + seed as usize) % e.len()].to_le_bytes();
        data[k * width..(k + 1) * width].copy_from_slice(&pattern[..width]);
    }
    data
}

fn cpu_device() -> ewise_cpu::Device {
    ewise_cpu::Device::builder()
        .extensions(Extensions::Enabled)
        .build()
        .unwrap()
}

fn cpu(desc: &OperatorDesc, policy: NanPolicy) -> ewise_cpu::CompiledOperator {
    cpu_device()
        .create_operator(desc)
        .unwrap()
        .with_nan_policy(policy)
        .compile()
        .unwrap()
}

fn gpu(
    device: &GpuDevice,
    desc: &OperatorDesc,
    policy: NanPolicy,
) -> ewise_gpu::GpuCompiledOperator {
    device
        .create_operator(desc)
        .and_then(|op| op.with_nan_policy(policy).compile())
        .unwrap_or_else(|e| panic!("{desc:?}: {e}"))
}

fn same(what: &dyn std::fmt::Debug, got: &[u8], want: &[u8]) {
    assert_eq!(got.len(), want.len(), "{what:?}");
    if let Some(at) = got.iter().zip(want).position(|(a, b)| a != b) {
        panic!(
            "{what:?}: byte {at} is {:#04x}, the CPU gives {:#04x}",
            got[at], want[at]
        );
    }
}

/// Runs `desc` through `execute_slices_async` on `input` into a copy of `output`, and
/// checks the bytes against the CPU backend's from the same start.
async fn check(
    device: &GpuDevice,
    desc: &OperatorDesc,
    policy: NanPolicy,
    input: &[u8],
    output: &[u8],
) {
    let op = gpu(device, desc, policy);
    let mut got = output.to_vec();
    op.execute_slices_async(input, &mut got)
        .await
        .unwrap_or_else(|e| panic!("{desc:?} {policy:?}: {e}"));
    let mut want = output.to_vec();
    cpu(desc, policy).execute_slices(input, &mut want).unwrap();
    same(&(desc, policy), &got, &want);
}

/// `desc` on an input filled by [`input`] into noise, a few bytes longer than the spans.
async fn check_filled(device: &GpuDevice, desc: &OperatorDesc, policy: NanPolicy, seed: u64) {
    let t = desc.input().data_type;
    let in_span = desc.input().exact_span_in_bytes().unwrap() as usize;
    let out_span = desc.output().exact_span_in_bytes().unwrap() as usize;
    let data = input(t, in_span.div_ceil(size(t)) + 1, seed);
    check(device, desc, policy, &data, &noise(out_span + 7, seed + 1)).await;
}

/// SIGN of `t` with these layouts under both NaN policies, and IS_INFINITY into `Uint8`
/// and `Bool` of the output's shape and strides where `t` has infinities.
async fn check_layouts(device: &GpuDevice, t: DataType, sizes: &[u32], ins: &[u32], outs: &[u32]) {
    let inp = TensorDesc::strided(t, sizes, ins);
    let sign = OperatorDesc::sign(inp.clone(), TensorDesc::strided(t, sizes, outs));
    for (k, policy) in NanPolicy::ALL.into_iter().enumerate() {
        check_filled(device, &sign, policy, k as u64).await;
    }
    if infinity_types().contains(&t) {
        for (k, out) in [DataType::Uint8, DataType::Bool].into_iter().enumerate() {
            let flags = TensorDesc::strided(out, sizes, outs);
            let mode = InfinityMode::ALL[k];
            let desc = OperatorDesc::is_infinity(inp.clone(), flags, mode);
            check_filled(device, &desc, NanPolicy::Zero, 9 + k as u64).await;
        }
    }
}

#[wasm_bindgen_test]
async fn the_browser_gives_its_webgpu_adapter() {
    let device = device().await;
    let adapter = device.adapter();
    assert_eq!(adapter.backend, wgpu::Backend::BrowserWebGpu, "{adapter}");
    let list = ewise_gpu::adapters_async().await.unwrap();
    assert_eq!(list.adapters.len(), 1, "{list:?}");
    assert_eq!(list.chosen, Some(0), "{list:?}");
    let err = GpuDevice::builder()
        .adapter("no adapter has this name")
        .build_async()
        .await
        .unwrap_err();
    assert!(matches!(err, GpuError::NoAdapter { .. }), "{err}");
    let err = GpuDevice::builder()
        .backends(wgpu::Backends::VULKAN)
        .build_async()
        .await
        .unwrap_err();
    assert!(matches!(err, GpuError::NoAdapter { .. }), "{err}");
}

#[wasm_bindgen_test]
async fn packed_tensors_match_the_cpu_for_every_type_policy_and_mode() {
    let device = device().await;
    for (k, &t) in sign_types().iter().enumerate() {
        let n = if size(t) <= 2 { 65_539 } else { 4099 };
        let desc = OperatorDesc::sign(TensorDesc::new(t, &[n]), TensorDesc::new(t, &[n]));
        for policy in NanPolicy::ALL {
            check_filled(&device, &desc, policy, k as u64).await;
        }
    }
    for (k, &t) in infinity_types().iter().enumerate() {
        let n = if size(t) <= 2 { 65_539 } else { 4099 };
        for out in [DataType::Uint8, DataType::Bool] {
            for mode in InfinityMode::ALL {
                let desc = OperatorDesc::is_infinity(
                    TensorDesc::new(t, &[n]),
                    TensorDesc::new(out, &[n]),
                    mode,
                );
                check_filled(&device, &desc, NanPolicy::Zero, 100 + k as u64).await;
            }
        }
    }
}

#[wasm_bindgen_test]
async fn strided_layouts_match_the_cpu_and_keep_the_gaps() {
    use DataType::*;
    let device = device().await;
    for t in [Float32, Float16, Int8, Float64, Bfloat16, Uint16, Int64] {
        // Transposed input with a gap after each column; output rows with 3 gaps each.
        check_layouts(&device, t, &[37, 29], &[1, 40], &[32, 1]).await;
        // An input broadcast along the rows (stride 0).
        check_layouts(&device, t, &[17, 23], &[0, 1], &[23, 1]).await;
        // 4-D, the input's axes reversed, the output's last axis padded from 6 to 7.
        check_layouts(&device, t, &[3, 4, 5, 6], &[1, 3, 12, 60], &[140, 35, 7, 1]).await;
    }
    for t in [Float32, Int16, Uint8, Float8E5M2] {
        // 8-D: two axes broadcast, the rest permuted; the output strided by 2.
        let sizes = [2, 3, 1, 4, 2, 3, 1, 5];
        let ins = [1, 0, 7, 2, 0, 8, 3, 24];
        let outs = [720, 240, 240, 60, 30, 10, 10, 2];
        if sign_types().contains(&t) {
            check_layouts(&device, t, &sizes, &ins, &outs).await;
        } else {
            let desc = OperatorDesc::is_infinity(
                TensorDesc::strided(t, &sizes, &ins),
                TensorDesc::strided(Uint8, &sizes, &outs),
                InfinityMode::Either,
            );
            check_filled(&device, &desc, NanPolicy::Zero, 3).await;
        }
    }
    // A scalar.
    check_layouts(&device, Float16, &[], &[], &[]).await;
}

#[wasm_bindgen_test]
async fn narrow_outputs_that_share_words_keep_their_neighbours() {
    use DataType::*;
    let device = device().await;
    // Every 2nd, 3rd and 5th byte; 16-bit elements at every 3rd half word, or every 2nd
    // with rows 65 half words apart (a word with the end of one row and the start of the
    // next); flags in columns and rows with gaps.
    for t in [Int8, Uint8] {
        for stride in [2, 3, 5] {
            check_layouts(&device, t, &[1001], &[1], &[stride]).await;
        }
    }
    for t in [Float16, Int16, Bfloat16] {
        check_layouts(&device, t, &[999], &[1], &[3]).await;
        check_layouts(&device, t, &[31, 33], &[1, 31], &[65, 2]).await;
    }
    for t in [Float32, Float64, Float8E4M3Fn] {
        for outs in [[1, 13], [39, 1], [1, 14]] {
            let desc = OperatorDesc::is_infinity(
                TensorDesc::strided(t, &[13, 11], &[11, 1]),
                TensorDesc::strided(Bool, &[13, 11], &outs),
                InfinityMode::Negative,
            );
            check_filled(&device, &desc, NanPolicy::Zero, 5).await;
        }
    }
}

#[wasm_bindgen_test]
async fn many_dispatches_and_binding_windows_give_the_same_bits() {
    use DataType::*;
    let device = tiny_device().await;
    let n = 1u32 << 16;
    for t in [Float16, Int8, Float32, Float64] {
        let tensor = TensorDesc::new(t, &[n]);
        let desc = OperatorDesc::sign(tensor.clone(), tensor);
        let op = gpu(&device, &desc, NanPolicy::Zero);
        assert!(
            op.dispatches() > 64,
            "{t:?}: {} dispatches",
            op.dispatches()
        );
        for policy in NanPolicy::ALL {
            check_filled(&device, &desc, policy, 11).await;
        }
    }
    let desc = OperatorDesc::is_infinity(
        TensorDesc::new(Float32, &[n]),
        TensorDesc::new(Uint8, &[n]),
        InfinityMode::Positive,
    );
    check_filled(&device, &desc, NanPolicy::Zero, 12).await;
    for t in [Float32, Int8, Float16] {
        check_layouts(&device, t, &[61, 67], &[1, 64], &[70, 1]).await;
        check_layouts(
            &device,
            t,
            &[5, 7, 9, 11],
            &[0, 11, 77, 1],
            &[1, 5, 35, 315],
        )
        .await;
    }
}

#[wasm_bindgen_test]
async fn in_place_runs_match_the_cpu() {
    use DataType::*;
    let device = device().await;
    let tiny = tiny_device().await;
    for (k, t) in [Float32, Float16, Int8, Bfloat16, Int64]
        .into_iter()
        .enumerate()
    {
        let desc_of = |strides: &[u32]| {
            let tensor = TensorDesc::strided(t, &[33, 31], strides);
            OperatorDesc::sign(tensor.clone(), tensor)
        };
        for desc in [desc_of(&[31, 1]), desc_of(&[1, 35])] {
            let span = desc.input().exact_span_in_bytes().unwrap() as usize;
            let mut start = input(t, span / size(t), k as u64);
            start.extend([0xA5; 3]);
            for policy in NanPolicy::ALL {
                let mut want = start.clone();
                cpu(&desc, policy)
                    .execute_in_place_slice(&mut want)
                    .unwrap();
                for d in [&device, &tiny] {
                    let mut got = start.clone();
                    gpu(d, &desc, policy)
                        .execute_in_place_slice_async(&mut got)
                        .await
                        .unwrap_or_else(|e| panic!("{desc:?} {policy:?}: {e}"));
                    same(&(&desc, policy), &got, &want);
                }
            }
        }
    }
}

/// Runs `desc` through `execute_async` on GPU buffers holding `start`, with these
/// bindings, then the CPU backend's `execute` on copies, and checks every buffer's bytes
/// (read back with `read_async`).
async fn check_buffers(
    device: &GpuDevice,
    (desc, policy): (&OperatorDesc, NanPolicy),
    start: &[Vec<u8>],
    inb: BufferBinding,
    outb: BufferBinding,
) -> Vec<GpuBuffer> {
    let buffers: Vec<GpuBuffer> = start
        .iter()
        .map(|b| GpuBuffer::from_bytes(device, b).unwrap())
        .collect();
    let refs: Vec<&GpuBuffer> = buffers.iter().collect();
    gpu(device, desc, policy)
        .execute_async(&refs, &[inb], &[outb])
        .await
        .unwrap_or_else(|e| panic!("{desc:?} {inb:?} {outb:?}: {e}"));
    let mut want = start.to_vec();
    let mut cpu_refs: Vec<ewise_cpu::BufferRef<'_>> = want.iter_mut().map(Into::into).collect();
    cpu(desc, policy)
        .execute(&mut cpu_refs, &[inb], &[outb])
        .unwrap();
    for (buffer, want) in buffers.iter().zip(&want) {
        same(
            &(desc, inb, outb),
            &buffer.read_async(device).await.unwrap(),
            want,
        );
    }
    buffers
}

#[wasm_bindgen_test]
async fn gpu_buffers_execute_and_read_back_asynchronously() {
    use DataType::*;
    for device in [device().await, tiny_device().await] {
        let t = TensorDesc::new(Float16, &[12_289]).with_alignment(4);
        let total = t.total_tensor_size_in_bytes;
        let desc = OperatorDesc::sign(t.clone(), t);
        let op = (&desc, NanPolicy::Propagate);
        let mut data = input(Float16, 12_289, 5);
        data.resize(total as usize, 0x7E);
        let start = noise(total as usize + 24, 6);
        let bind = BufferBinding::new;
        let two = [data.clone(), start.clone()];
        let buffers = check_buffers(&device, op, &two, bind(0, 0, total), bind(1, 8, total)).await;
        device.synchronize_async().await.unwrap();
        let b = &buffers[1];
        let whole = b.read_async(&device).await.unwrap();
        let middle = b.read_range_async(&device, 12, 400).await.unwrap();
        same(&desc, &middle, &whole[12..412]);
        let tail = b.read_range_async(&device, 8, total + 16).await.unwrap();
        same(&desc, &tail, &whole[8..]);
        assert!(b.read_range_async(&device, 4, 0).await.unwrap().is_empty());

        // Disjoint ranges of one buffer, and in place.
        let second = total.next_multiple_of(16);
        let one = [[data.clone(), noise(total as usize + 16, 7)].concat()];
        check_buffers(&device, op, &one, bind(0, 0, total), bind(0, second, total)).await;
        let one = [data.clone()];
        check_buffers(&device, op, &one, bind(0, 0, total), bind(0, 0, total)).await;

        for (offset, len) in [(2, 4), (0, 6), (0, 2 * total), (4, u64::MAX)] {
            let err = b.read_range_async(&device, offset, len).await.unwrap_err();
            assert!(matches!(err, GpuError::Transfer { .. }), "{err}");
        }
        let err = b.write(&device, 3, &[0; 4]).unwrap_err();
        assert!(matches!(err, GpuError::Transfer { .. }), "{err}");
    }
}

#[wasm_bindgen_test]
async fn descriptions_and_bindings_give_the_cpus_errors() {
    use DataType::*;
    let device = device().await;
    let cpu_device = cpu_device();
    let f16 = TensorDesc::new(Float16, &[3, 5]);
    let wrong = [
        OperatorDesc::sign(f16.clone(), TensorDesc::new(Float16, &[5, 3])),
        OperatorDesc::sign(f16.clone(), TensorDesc::new(Float32, &[3, 5])),
        OperatorDesc::sign(TensorDesc::new(Bool, &[4]), TensorDesc::new(Bool, &[4])),
        OperatorDesc::sign(
            TensorDesc::new(Int8, &[1; 65]),
            TensorDesc::new(Int8, &[1; 65]),
        ),
        OperatorDesc::sign(f16.clone(), f16.clone().with_total_size(4)),
        OperatorDesc::is_infinity(f16.clone(), f16.clone(), InfinityMode::Either),
        OperatorDesc::is_infinity(
            TensorDesc::new(Int32, &[4]),
            TensorDesc::new(Uint8, &[4]),
            InfinityMode::Either,
        ),
    ];
    for desc in &wrong {
        let want = cpu_device.create_operator(desc).unwrap_err();
        let got = device.create_operator(desc).unwrap_err();
        assert_eq!(got, GpuError::Op(want.clone()), "{desc:?}");
        assert_eq!(got.to_string(), want.to_string());
    }
    let limit = device.wgpu_device().limits().max_buffer_size;
    let huge = OperatorDesc::sign(f16.clone(), f16.clone().with_total_size(limit + 4));
    let err = device.create_operator(&huge).unwrap_err();
    assert!(
        matches!(
            err,
            GpuError::BufferTooLarge {
                tensor: TensorRole::Output,
                ..
            }
        ),
        "{err}"
    );

    let sign = OperatorDesc::sign(f16.clone(), f16.clone());
    let op = gpu(&device, &sign, NanPolicy::Zero);
    let cpu_op = cpu(&sign, NanPolicy::Zero);
    let (input, mut output) = (vec![0u8; 30], vec![0u8; 30]);
    for (i, o) in [(29, 30), (30, 29), (0, 0)] {
        let got = op
            .execute_slices_async(&input[..i], &mut output[..o])
            .await
            .unwrap_err();
        let want = cpu_op
            .execute_slices(&input[..i], &mut vec![0u8; o])
            .unwrap_err();
        assert_eq!(got, GpuError::Op(want));
    }
    let transposed =
        OperatorDesc::sign(f16.clone(), TensorDesc::strided(Float16, &[3, 5], &[1, 3]));
    let flags = OperatorDesc::is_infinity(
        TensorDesc::new(Float32, &[8]),
        TensorDesc::new(Uint8, &[8]),
        InfinityMode::Either,
    );
    for desc in [transposed, flags] {
        let mut data = vec![0u8; 64];
        let got = gpu(&device, &desc, NanPolicy::Zero)
            .execute_in_place_slice_async(&mut data)
            .await
            .unwrap_err();
        let want = cpu(&desc, NanPolicy::Zero)
            .execute_in_place_slice(&mut data)
            .unwrap_err();
        assert_eq!(got, GpuError::Op(want));
    }

    // Bindings: counts, indices, alignment, sizes, ranges and overlaps.
    let (a, b) = (
        GpuBuffer::zeroed(&device, 64).unwrap(),
        GpuBuffer::zeroed(&device, 64).unwrap(),
    );
    let bind = BufferBinding::new;
    let n = f16.total_tensor_size_in_bytes;
    let cases: [(&[BufferBinding], &[BufferBinding]); 7] = [
        (&[], &[bind(1, 0, n)]),
        (&[bind(0, 0, n)], &[bind(2, 0, n)]),
        (&[bind(0, 2, n)], &[bind(1, 0, n)]),
        (&[bind(0, 0, n - 4)], &[bind(1, 0, n)]),
        (&[bind(0, 48, n)], &[bind(1, 0, n)]),
        (&[bind(0, 0, n)], &[bind(0, 16, n)]),
        (&[bind(0, 0, n)], &[bind(1, 0, n), bind(1, 32, n)]),
    ];
    for (inputs, outputs) in cases {
        let got = op
            .execute_async(&[&a, &b], inputs, outputs)
            .await
            .unwrap_err();
        let (mut x, mut y) = (vec![0u8; 64], vec![0u8; 64]);
        let want = cpu_op
            .execute(&mut [(&mut x).into(), (&mut y).into()], inputs, outputs)
            .unwrap_err();
        assert_eq!(got, GpuError::Op(want), "{inputs:?} {outputs:?}");
    }
}

#[wasm_bindgen_test]
async fn webgpu_errors_come_back_as_errors_and_the_device_goes_on() {
    use DataType::*;
    let options_err = GpuDevice::builder()
        .feature_level(ewise_core::FeatureLevel::L3_0)
        .min_feature_level(ewise_core::FeatureLevel::L6_4)
        .build_async()
        .await
        .unwrap_err();
    assert!(
        matches!(
            options_err,
            GpuError::Op(ewise_core::Error::FeatureLevelUnavailable { .. })
        ),
        "{options_err}"
    );

    let device = device().await;
    let limit = device.wgpu_device().limits().max_buffer_size;
    let _invalid = GpuBuffer::zeroed(&device, limit + 4).unwrap();
    let err = device.synchronize_async().await.unwrap_err();
    assert!(matches!(err, GpuError::Wgpu { .. }), "{err}");
    device.synchronize_async().await.unwrap();

    let unusable = device.wgpu_device().create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 16,
        usage: wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let err = GpuBuffer::from_wgpu(unusable).unwrap_err();
    assert!(matches!(err, GpuError::ForeignBuffer { .. }), "{err}");

    let t = TensorDesc::new(Float32, &[1000]);
    let desc = OperatorDesc::sign(t.clone(), t);
    check_filled(&device, &desc, NanPolicy::Zero, 1).await;
}
