//! Measurement support: the baseline copy and read kernels move exactly the bytes asked
//! for (split or not), wgpu's buffer copy is checked before it is recorded, and the timer
//! gives durations for operators and copies, with timestamps where the device has them.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{device, noise, try_device};
use ewise_core::{BufferBinding, DataType, OperatorDesc, TensorDesc};
use ewise_gpu::{
    record_buffer_copy, BaselineKernel, BaselineKind, GpuBuffer, GpuDevice, GpuError, GpuTimer,
    TimerKind, READ_SENTINEL,
};

fn copy_and_check(device: &GpuDevice, len: usize, src_offset: u64, dst_offset: u64) {
    let src_bytes = noise(len + 512, 7);
    let src = GpuBuffer::from_bytes(device, &src_bytes).unwrap();
    let dst = GpuBuffer::zeroed(device, len as u64 + 512).unwrap();
    let copy = BaselineKernel::new(device, BaselineKind::Copy).unwrap();
    let bound = copy
        .bind((&src, src_offset), (&dst, dst_offset), len as u64)
        .unwrap();
    bound.submit_and_wait().unwrap();
    let got = dst.read(device).unwrap();
    let (s, d) = (src_offset as usize, dst_offset as usize);
    assert_eq!(&got[d..d + len], &src_bytes[s..s + len]);
    assert!(got[..d].iter().all(|&b| b == 0), "bytes before the range");
    assert!(
        got[d + len..].iter().all(|&b| b == 0),
        "bytes after the range"
    );
}

#[test]
fn the_copy_kernel_copies_exactly_the_range() {
    let Some(device) = device() else { return };
    for (len, src_offset, dst_offset) in [(16, 0, 0), (4096, 48, 16), (65536 + 32, 256, 400)] {
        copy_and_check(device, len, src_offset, dst_offset);
    }
}

#[test]
fn copies_larger_than_a_binding_window_are_split() {
    let Some(device) = try_device(GpuDevice::builder().max_binding_size(1024)) else {
        return;
    };
    let copy = BaselineKernel::new(&device, BaselineKind::Copy).unwrap();
    let src = GpuBuffer::zeroed(&device, 8192).unwrap();
    let dst = GpuBuffer::zeroed(&device, 8192).unwrap();
    let bound = copy.bind((&src, 32), (&dst, 64), 8000).unwrap();
    assert!(bound.dispatches() > 1, "{}", bound.dispatches());
    copy_and_check(&device, 8000, 32, 64);
}

#[test]
fn the_read_kernel_writes_only_for_its_sentinel() {
    let Some(device) = device() else { return };
    let read = BaselineKernel::new(device, BaselineKind::Read).unwrap();
    let mut bytes = noise(4096, 3);
    let src = GpuBuffer::from_bytes(device, &bytes).unwrap();
    let sink = GpuBuffer::zeroed(device, 32).unwrap();
    read.bind((&src, 0), (&sink, 16), 4096)
        .unwrap()
        .submit_and_wait()
        .unwrap();
    assert_eq!(sink.read(device).unwrap(), vec![0; 32]);
    bytes[1024..1040].copy_from_slice(bytemuck::cast_slice(&READ_SENTINEL));
    let src = GpuBuffer::from_bytes(device, &bytes).unwrap();
    read.bind((&src, 0), (&sink, 16), 4096)
        .unwrap()
        .submit_and_wait()
        .unwrap();
    let got = sink.read(device).unwrap();
    assert_eq!(&got[16..], bytemuck::cast_slice::<u32, u8>(&READ_SENTINEL));
    assert_eq!(&got[..16], &[0; 16]);
}

#[test]
fn baselines_refuse_bad_ranges_with_typed_errors() {
    let Some(device) = device() else { return };
    let copy = BaselineKernel::new(device, BaselineKind::Copy).unwrap();
    let a = GpuBuffer::zeroed(device, 256).unwrap();
    let b = GpuBuffer::zeroed(device, 256).unwrap();
    let refused = |r: Result<(), GpuError>, fragment: &str| match r {
        Err(e @ GpuError::Baseline { .. }) => {
            assert!(e.to_string().contains(fragment), "{e}")
        }
        other => panic!("expected a Baseline error with {fragment:?}, got {other:?}"),
    };
    refused(copy.bind((&a, 8), (&b, 0), 16).map(drop), "multiples of 16");
    refused(copy.bind((&a, 0), (&b, 0), 272).map(drop), "does not fit");
    refused(
        copy.bind((&a, 0), (&a, 128), 64).map(drop),
        "different buffers",
    );
    let mut encoder = device
        .wgpu_device()
        .create_command_encoder(&Default::default());
    refused(
        record_buffer_copy(&mut encoder, (&a, 2), (&b, 0), 4),
        "multiples of 4",
    );
    refused(
        record_buffer_copy(&mut encoder, (&a, 0), (&b, 128), 160),
        "does not fit",
    );
    refused(
        record_buffer_copy(&mut encoder, (&a, 0), (&a, 128), 64),
        "different buffers",
    );
}

#[test]
fn the_timer_times_copies_and_operators() {
    let Some(device) = device() else { return };
    let len = 1 << 20;
    let bytes = noise(len, 11);
    let src = GpuBuffer::from_bytes(device, &bytes).unwrap();
    let dst = GpuBuffer::zeroed(device, len as u64).unwrap();
    let copy = BaselineKernel::new(device, BaselineKind::Copy)
        .unwrap()
        .bind((&src, 0), (&dst, 0), len as u64)
        .unwrap();
    let mut timers = vec![GpuTimer::new(device).unwrap(), GpuTimer::wall(device)];
    let expected = if device.has_timestamps() {
        TimerKind::Timestamps
    } else {
        TimerKind::Wall
    };
    assert_eq!(timers[0].kind(), expected);
    assert_eq!(timers[1].kind(), TimerKind::Wall);
    eprintln!("timer on {}: {}", device.adapter(), timers[0].kind());

    let t = TensorDesc::new(DataType::Float32, &[(len / 4) as u32]);
    let sign = device
        .create_operator(&OperatorDesc::sign(t.clone(), t))
        .unwrap()
        .compile()
        .unwrap();
    let whole = BufferBinding::new(0, 0, len as u64);
    let out = BufferBinding { buffer: 1, ..whole };
    for timer in &mut timers {
        let d = timer
            .time(|encoder| {
                copy.record(encoder);
                Ok(())
            })
            .unwrap();
        assert!(!d.is_zero(), "{:?}: {d:?}", timer.kind());
        let d = timer
            .time(|encoder| record_buffer_copy(encoder, (&src, 0), (&dst, 0), len as u64))
            .unwrap();
        assert!(!d.is_zero(), "{:?}: {d:?}", timer.kind());
        let d = timer
            .time_operator(&sign, &[&src, &dst], &[whole], &[out])
            .unwrap();
        assert!(!d.is_zero(), "{:?}: {d:?}", timer.kind());
    }
    let want: Vec<u8> = bytes
        .chunks_exact(4)
        .flat_map(|w| {
            let x = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            let mag = x & 0x7FFF_FFFF;
            let y = if mag == 0 || mag > 0x7F80_0000 {
                0
            } else {
                (x & 0x8000_0000) | 0x3F80_0000
            };
            y.to_le_bytes()
        })
        .collect();
    assert!(dst.read(device).unwrap() == want, "SIGN under the timer");
}

#[test]
fn the_timer_returns_errors_and_stays_usable() {
    let Some(device) = device() else { return };
    let mut timer = GpuTimer::new(device).unwrap();
    let a = GpuBuffer::zeroed(device, 64).unwrap();
    let err = timer
        .time(|encoder| record_buffer_copy(encoder, (&a, 0), (&a, 32), 32))
        .unwrap_err();
    assert!(matches!(err, GpuError::Baseline { .. }), "{err}");
    let b = GpuBuffer::zeroed(device, 64).unwrap();
    timer
        .time(|encoder| record_buffer_copy(encoder, (&a, 0), (&b, 0), 64))
        .unwrap();
    device.synchronize().unwrap();
}
