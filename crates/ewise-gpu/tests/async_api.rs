//! The async entry points, driven by a minimal executor (park the thread until woken):
//! `build_async`, bytes in and bytes out (`execute_slices_async`,
//! `execute_in_place_slice_async`) bit for bit against the CPU backend for every type,
//! NaN policy and infinity mode, packed and strided, their errors, and
//! `execute_async` / `read_range_async` / `synchronize_async` on GPU buffers, over several
//! batches of dispatches too.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;

use common::{infinity_types, input, noise, sign_types, size};
use ewise_core::{
    BufferBinding, DataType, Extensions, InfinityMode, NanPolicy, OperatorDesc, TensorDesc,
};
use ewise_gpu::{GpuBuffer, GpuDevice, GpuError};

/// Wakes a parked thread.
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `future` on this thread, parked while it is pending.
fn run<F: Future>(future: F) -> F::Output {
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return value;
        }
        std::thread::park();
    }
}

/// An extended device opened through `build_async` (software adapters allowed), or
/// `None` after one line when there is no adapter and none is required.
fn device() -> Option<GpuDevice> {
    common::device_or_skip(run(GpuDevice::builder()
        .allow_software(true)
        .extensions(Extensions::Enabled)
        .build_async()))
}

/// The CPU backend's compiled `desc`.
fn cpu(desc: &OperatorDesc, policy: NanPolicy) -> ewise_cpu::CompiledOperator {
    ewise_cpu::Device::builder()
        .extensions(Extensions::Enabled)
        .build()
        .unwrap()
        .create_operator(desc)
        .unwrap()
        .with_nan_policy(policy)
        .compile()
        .unwrap()
}

/// Runs `desc` on `input` into a copy of `output` on both backends, through
/// `execute_slices_async` on the GPU, and checks that the bytes agree.
fn check(device: &GpuDevice, desc: &OperatorDesc, policy: NanPolicy, input: &[u8], output: &[u8]) {
    let op = device
        .create_operator(desc)
        .unwrap()
        .with_nan_policy(policy)
        .compile()
        .unwrap();
    let mut gpu = output.to_vec();
    run(op.execute_slices_async(input, &mut gpu)).unwrap();
    let mut want = output.to_vec();
    cpu(desc, policy).execute_slices(input, &mut want).unwrap();
    if gpu != want {
        let at = gpu.iter().zip(&want).position(|(a, b)| a != b).unwrap();
        panic!(
            "{desc:?} {policy:?}: byte {at} is {:#04x}, the CPU gives {:#04x}",
            gpu[at], want[at]
        );
    }
}

const N: u32 = 4099;

#[test]
fn bytes_in_and_out_match_the_cpu_for_every_type_policy_and_mode() {
    let Some(device) = device() else { return };
    for (k, &t) in sign_types().iter().enumerate() {
        let desc = OperatorDesc::sign(TensorDesc::new(t, &[N]), TensorDesc::new(t, &[N]));
        let data = input(t, u64::from(N), k as u64);
        let span = (u64::from(N) * size(t)) as usize;
        for policy in NanPolicy::ALL {
            check(&device, &desc, policy, &data, &noise(span, 7));
        }
    }
    for (k, &t) in infinity_types().iter().enumerate() {
        let data = input(t, u64::from(N), 100 + k as u64);
        for &out in [DataType::Uint8, DataType::Bool].iter() {
            for mode in InfinityMode::ALL {
                let desc = OperatorDesc::is_infinity(
                    TensorDesc::new(t, &[N]),
                    TensorDesc::new(out, &[N]),
                    mode,
                );
                check(
                    &device,
                    &desc,
                    NanPolicy::Zero,
                    &data,
                    &noise(N as usize, 9),
                );
            }
        }
    }
}

#[test]
fn strided_descriptions_leave_the_bytes_between_elements_as_they_were() {
    let Some(device) = device() else { return };
    use DataType::*;
    let sizes = [37u32, 29];
    for (k, t) in [Float32, Float16, Int8, Float64, Bfloat16]
        .into_iter()
        .enumerate()
    {
        // Transposed input with a gap after each column; output rows with 3 gaps each.
        let inp = TensorDesc::strided(t, &sizes, &[1, 40]);
        let out = TensorDesc::strided(t, &sizes, &[32, 1]);
        let in_span = inp.exact_span_in_bytes().unwrap() as usize;
        let out_span = out.exact_span_in_bytes().unwrap() as usize;
        let data = input(t, in_span as u64 / size(t), 3 + k as u64);
        let desc = OperatorDesc::sign(inp.clone(), out.clone());
        for policy in NanPolicy::ALL {
            check(
                &device,
                &desc,
                policy,
                &data,
                &noise(out_span + 5, k as u64),
            );
        }
        let flags = TensorDesc::strided(Uint8, &sizes, &[32, 1]);
        if infinity_types().contains(&t) {
            let desc = OperatorDesc::is_infinity(inp, flags, InfinityMode::Either);
            check(&device, &desc, NanPolicy::Zero, &data, &noise(out_span, 1));
        }
    }
}

#[test]
fn in_place_bytes_match_the_cpu() {
    let Some(device) = device() else { return };
    use DataType::*;
    for (k, t) in [Float32, Float16, Int8, Bfloat16].into_iter().enumerate() {
        let desc_of = |strides: &[u32]| {
            let tensor = TensorDesc::strided(t, &[33, 31], strides);
            OperatorDesc::sign(tensor.clone(), tensor)
        };
        for desc in [desc_of(&[31, 1]), desc_of(&[1, 35])] {
            let span = desc.input().exact_span_in_bytes().unwrap() as usize;
            let start = input(t, span as u64 / size(t), k as u64);
            for policy in NanPolicy::ALL {
                let op = device
                    .create_operator(&desc)
                    .unwrap()
                    .with_nan_policy(policy)
                    .compile()
                    .unwrap();
                let mut gpu = start.clone();
                gpu.extend([0xA5; 3]);
                run(op.execute_in_place_slice_async(&mut gpu)).unwrap();
                let mut want = start.clone();
                want.extend([0xA5; 3]);
                cpu(&desc, policy)
                    .execute_in_place_slice(&mut want)
                    .unwrap();
                assert!(gpu == want, "{desc:?} {policy:?}");
            }
        }
    }
}

#[test]
fn short_slices_and_impossible_in_place_runs_give_the_cpu_errors() {
    let Some(device) = device() else { return };
    use DataType::*;
    let t = TensorDesc::new(Float16, &[3, 5]);
    let sign = OperatorDesc::sign(t.clone(), t.clone());
    let op = device.create_operator(&sign).unwrap().compile().unwrap();
    let cpu_op = cpu(&sign, NanPolicy::Zero);
    let (input, mut output) = (vec![0u8; 30], vec![0u8; 30]);
    for (i, o) in [(29, 30), (30, 29)] {
        let gpu = run(op.execute_slices_async(&input[..i], &mut output[..o])).unwrap_err();
        let want = cpu_op
            .execute_slices(&input[..i], &mut vec![0u8; o])
            .unwrap_err();
        assert_eq!(gpu, GpuError::Op(want.clone()));
        assert_eq!(gpu.to_string(), want.to_string());
    }
    let transposed = OperatorDesc::sign(t, TensorDesc::strided(Float16, &[3, 5], &[1, 3]));
    let flags = OperatorDesc::is_infinity(
        TensorDesc::new(Float32, &[8]),
        TensorDesc::new(Uint8, &[8]),
        InfinityMode::Either,
    );
    for desc in [transposed, flags] {
        let op = device.create_operator(&desc).unwrap().compile().unwrap();
        let mut data = vec![0u8; 64];
        let gpu = run(op.execute_in_place_slice_async(&mut data)).unwrap_err();
        let want = cpu(&desc, NanPolicy::Zero)
            .execute_in_place_slice(&mut data)
            .unwrap_err();
        assert_eq!(gpu, GpuError::Op(want));
    }
}

#[test]
fn buffers_execute_and_read_asynchronously_over_several_batches() {
    let Some(plain) = device() else { return };
    // Binding windows of a few hundred bytes: 512 Ki float16 take thousands of
    // dispatches, submitted in several batches that are waited for in turn.
    let device = run(GpuDevice::builder()
        .allow_software(true)
        .adapter(plain.adapter().name.clone())
        .max_binding_size(0)
        .build_async())
    .unwrap();
    let n = 1u32 << 19;
    let t = TensorDesc::new(DataType::Float16, &[n]).with_alignment(2);
    let desc = OperatorDesc::sign(t.clone(), t);
    let op = device.create_operator(&desc).unwrap().compile().unwrap();
    assert!(op.dispatches() > 2048, "{}", op.dispatches());
    let bytes = u64::from(n) * 2;
    let data = input(DataType::Float16, u64::from(n), 5);
    let (a, b) = (
        GpuBuffer::from_bytes(&device, &data).unwrap(),
        GpuBuffer::zeroed(&device, bytes + 8).unwrap(),
    );
    let (inb, outb) = (
        BufferBinding::new(0, 0, bytes),
        BufferBinding::new(1, 8, bytes),
    );
    run(op.execute_async(&[&a, &b], &[inb], &[outb])).unwrap();
    run(device.synchronize_async()).unwrap();
    let got = run(b.read_range_async(&device, 8, bytes)).unwrap();
    let mut want = vec![0u8; bytes as usize];
    cpu(&desc, NanPolicy::Zero)
        .execute_slices(&data, &mut want)
        .unwrap();
    assert!(got == want);
    assert_eq!(run(b.read_async(&device)).unwrap()[..8], [0; 8]);
    let err = run(b.read_range_async(&device, 2, 4)).unwrap_err();
    assert!(matches!(err, GpuError::Transfer { .. }), "{err}");
}

#[test]
fn async_and_blocking_adapter_lists_agree() {
    assert_eq!(
        run(ewise_gpu::adapters_async()).unwrap(),
        ewise_gpu::adapters().unwrap()
    );
}

#[test]
fn native_futures_can_move_between_threads() {
    fn sendable<T: Send>(_: &T) {}
    let Some(device) = device() else { return };
    let t = TensorDesc::new(DataType::Float32, &[4]);
    let op = device
        .create_operator(&OperatorDesc::sign(t.clone(), t))
        .unwrap()
        .compile()
        .unwrap();
    let buffer = GpuBuffer::zeroed(&device, 16).unwrap();
    let (input, mut output) = ([0u8; 16], [0u8; 16]);
    let b = BufferBinding::new(0, 0, 16);
    sendable(&GpuDevice::builder().build_async());
    sendable(&device.synchronize_async());
    sendable(&buffer.read_range_async(&device, 0, 16));
    sendable(&op.execute_async(&[&buffer], &[b], &[b]));
    sendable(&op.execute_slices_async(&input, &mut output));
    let spawned = std::thread::spawn(move || {
        let mut output = [0xFFu8; 16];
        run(op.execute_slices_async(&[0; 16], &mut output)).map(|()| output)
    });
    assert_eq!(spawned.join().unwrap().unwrap(), [0; 16]);
}
