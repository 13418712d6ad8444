//! The DirectML-style API on the GPU: binding mistakes give the CPU backend's errors
//! (one table, both backends), feature levels, caller-owned wgpu buffers, several
//! operators recorded into one encoder, recording again with the same or other buffers,
//! and transfers.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{device, noise};
use ewise_core::{
    BufferBinding, DataType, DeviceOptions, Error, Extensions, FeatureLevel, HazardKind,
    InfinityMode, NanPolicy, OperatorDesc, TensorDesc,
};
use ewise_cpu::{BufferRef, Device};
use ewise_gpu::{GpuBuffer, GpuDevice, GpuError};

use DataType::*;

fn b(buffer: usize, offset: u64, size: u64) -> BufferBinding {
    BufferBinding::new(buffer, offset, size)
}

/// A binding case: the description, buffer lengths, and the bindings.
struct Case {
    name: &'static str,
    desc: OperatorDesc,
    buffers: Vec<u64>,
    inputs: Vec<BufferBinding>,
    outputs: Vec<BufferBinding>,
}

fn cases() -> Vec<Case> {
    let f32s = TensorDesc::new(Float32, &[2, 4]);
    let sign = OperatorDesc::sign(f32s.clone(), f32s.clone());
    let inf = OperatorDesc::is_infinity(
        f32s.clone(),
        TensorDesc::new(Uint8, &[2, 4]),
        InfinityMode::Either,
    );
    let aligned = TensorDesc::new(Int16, &[6]).with_alignment(4);
    let sign16 = OperatorDesc::sign(aligned.clone(), aligned);
    let case = |name,
                desc: &OperatorDesc,
                buffers: &[u64],
                inputs: &[BufferBinding],
                outputs: &[BufferBinding]| Case {
        name,
        desc: desc.clone(),
        buffers: buffers.to_vec(),
        inputs: inputs.to_vec(),
        outputs: outputs.to_vec(),
    };
    vec![
        case(
            "two buffers",
            &sign,
            &[64, 64],
            &[b(0, 0, 32)],
            &[b(1, 32, 32)],
        ),
        case("no input binding", &sign, &[64, 64], &[], &[b(1, 0, 32)]),
        case(
            "two output bindings",
            &sign,
            &[64, 64],
            &[b(0, 0, 32)],
            &[b(1, 0, 32), b(1, 32, 32)],
        ),
        case(
            "buffer index past the end",
            &sign,
            &[64, 64],
            &[b(0, 0, 32)],
            &[b(2, 0, 32)],
        ),
        case(
            "offset off 16",
            &sign,
            &[64, 64],
            &[b(0, 8, 32)],
            &[b(1, 0, 32)],
        ),
        case(
            "offset on the guaranteed 4",
            &sign16,
            &[64, 64],
            &[b(0, 4, 12)],
            &[b(1, 36, 12)],
        ),
        case(
            "offset off the guaranteed 4",
            &sign16,
            &[64, 64],
            &[b(0, 2, 12)],
            &[b(1, 0, 12)],
        ),
        case(
            "bound size too small",
            &sign,
            &[64, 64],
            &[b(0, 0, 32)],
            &[b(1, 0, 28)],
        ),
        case(
            "range past the buffer",
            &sign,
            &[64, 40],
            &[b(0, 0, 32)],
            &[b(1, 16, 32)],
        ),
        case(
            "offset overflows",
            &sign,
            &[64, 64],
            &[b(0, u64::MAX - 15, 32)],
            &[b(1, 0, 32)],
        ),
        case(
            "disjoint in one buffer",
            &sign,
            &[96],
            &[b(0, 64, 32)],
            &[b(0, 0, 32)],
        ),
        case(
            "partial overlap",
            &sign,
            &[96],
            &[b(0, 0, 32)],
            &[b(0, 16, 32)],
        ),
        case("in place", &sign, &[64], &[b(0, 16, 32)], &[b(0, 16, 32)]),
        case(
            "in place, larger bound range",
            &sign,
            &[64],
            &[b(0, 0, 48)],
            &[b(0, 0, 48)],
        ),
        case(
            "in place refused",
            &inf,
            &[64],
            &[b(0, 0, 32)],
            &[b(0, 0, 32)],
        ),
        case(
            "is-infinity disjoint",
            &inf,
            &[64],
            &[b(0, 0, 32)],
            &[b(0, 32, 8)],
        ),
    ]
}

#[test]
fn binding_rules_give_the_cpu_errors_and_bytes() {
    let Some(device) = device() else { return };
    let cpu_device = Device::new();
    for c in cases() {
        let starts: Vec<Vec<u8>> = c
            .buffers
            .iter()
            .enumerate()
            .map(|(k, &len)| noise(len as usize, k as u64))
            .collect();
        let mut cpu_bufs = starts.clone();
        let cpu = cpu_device
            .create_operator(&c.desc)
            .and_then(|op| op.compile())
            .and_then(|op| {
                let mut refs: Vec<BufferRef<'_>> =
                    cpu_bufs.iter_mut().map(BufferRef::from).collect();
                op.execute(&mut refs, &c.inputs, &c.outputs)
            });
        let gpu_bufs: Vec<GpuBuffer> = starts
            .iter()
            .map(|s| GpuBuffer::from_bytes(device, s).unwrap())
            .collect();
        let refs: Vec<&GpuBuffer> = gpu_bufs.iter().collect();
        let gpu = device
            .create_operator(&c.desc)
            .and_then(|op| op.compile())
            .and_then(|op| op.execute(&refs, &c.inputs, &c.outputs));
        match (&gpu, &cpu) {
            (Ok(()), Ok(())) => {
                let got: Vec<Vec<u8>> = gpu_bufs.iter().map(|b| b.read(device).unwrap()).collect();
                assert_eq!(got, cpu_bufs, "{}: bytes differ", c.name);
            }
            (Err(GpuError::Op(g)), Err(e)) => assert_eq!(g, e, "{}", c.name),
            _ => panic!("{}: GPU {gpu:?}, CPU {cpu:?}", c.name),
        }
    }
}

#[test]
fn validation_and_feature_levels_match_the_cpu() {
    let Some(_) = device() else { return };
    let level = FeatureLevel::L2_0;
    let gpu = common::try_device(GpuDevice::builder().feature_level(level)).unwrap();
    let cpu = Device::with_feature_level(level);
    let t = TensorDesc::new(Float32, &[1, 2, 3, 4]);
    let descs = [
        OperatorDesc::is_infinity(
            t.clone(),
            TensorDesc::new(Uint8, &[1, 2, 3, 4]),
            InfinityMode::Either,
        ),
        OperatorDesc::sign(
            TensorDesc::new(Int8, &[1, 1, 1, 4]),
            TensorDesc::new(Int8, &[1, 1, 1, 4]),
        ),
        OperatorDesc::sign(
            TensorDesc::new(Float32, &[4]),
            TensorDesc::new(Float32, &[4]),
        ),
        OperatorDesc::sign(
            t.clone(),
            TensorDesc::strided(Float32, &[1, 2, 3, 4], &[0, 1, 1, 1]),
        ),
    ];
    for desc in &descs {
        let want = cpu.create_operator(desc).unwrap_err();
        assert_eq!(gpu.create_operator(desc).unwrap_err(), GpuError::Op(want));
    }
    assert_eq!(
        gpu.check_feature_levels(&[FeatureLevel::L1_0, FeatureLevel::L3_0]),
        Some(FeatureLevel::L1_0)
    );
}

#[test]
fn a_minimum_level_above_the_device_is_refused() {
    let err = GpuDevice::builder()
        .feature_level(FeatureLevel::L2_0)
        .min_feature_level(FeatureLevel::L4_0)
        .build()
        .unwrap_err();
    assert_eq!(
        err,
        GpuError::Op(Error::FeatureLevelUnavailable {
            requested: FeatureLevel::L4_0,
            supported: FeatureLevel::L2_0,
        })
    );
}

#[test]
fn a_device_built_from_options_matches_one_built_with_the_setters() {
    let options = DeviceOptions::default()
        .feature_level(FeatureLevel::L3_1)
        .min_feature_level(FeatureLevel::L2_0)
        .extensions(Extensions::Enabled)
        .nan_policy(NanPolicy::Propagate);
    let Some(from_options) = common::try_device(GpuDevice::builder().options(options)) else {
        return;
    };
    let chained = common::try_device(
        GpuDevice::builder()
            .feature_level(FeatureLevel::L3_1)
            .min_feature_level(FeatureLevel::L2_0)
            .extensions(Extensions::Enabled)
            .nan_policy(NanPolicy::Propagate),
    )
    .unwrap();
    let t = TensorDesc::new(Float32, &[4]);
    let desc = OperatorDesc::sign(t.clone(), t);
    for device in [from_options, chained] {
        assert_eq!(device.options(), options);
        assert_eq!(device.feature_level(), FeatureLevel::L3_1);
        assert_eq!(device.extensions(), Extensions::Enabled);
        assert_eq!(device.nan_policy(), NanPolicy::Propagate);
        let operator = device.create_operator(&desc).unwrap();
        assert_eq!(operator.nan_policy(), NanPolicy::Propagate);
    }
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn caller_buffers_run_without_copies() {
    let Some(device) = device() else { return };
    let wgpu_device = device.wgpu_device();
    let make = |usage| {
        wgpu_device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("caller's"),
            size: 64,
            usage,
            mapped_at_creation: false,
        })
    };
    let err = GpuBuffer::from_wgpu(make(
        wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
    ))
    .unwrap_err();
    assert!(matches!(err, GpuError::ForeignBuffer { .. }), "{err}");
    assert!(err.to_string().contains("lack STORAGE"), "{err}");
    let raw = make(ewise_gpu::BUFFER_USAGES);
    let values = [
        -2.0f32,
        -0.0,
        3.0,
        f32::NAN,
        f32::NEG_INFINITY,
        1e-45,
        0.0,
        -7.5,
    ];
    device
        .wgpu_queue()
        .write_buffer(&raw, 0, &f32_bytes(&values));
    let buffer = GpuBuffer::from_wgpu(raw.clone()).unwrap();
    let t = TensorDesc::new(Float32, &[8]);
    let sign = device
        .create_operator(&OperatorDesc::sign(t.clone(), t))
        .unwrap()
        .with_nan_policy(NanPolicy::Propagate)
        .compile()
        .unwrap();
    // In place, with the same wgpu buffer given as two entries of the buffer list.
    let other = GpuBuffer::from_wgpu(raw).unwrap();
    sign.execute(&[&buffer, &other], &[b(0, 0, 32)], &[b(1, 0, 32)])
        .unwrap();
    let got = buffer.read(device).unwrap();
    let want = f32_bytes(&[-1.0, 0.0, 1.0, f32::NAN, -1.0, 1.0, 0.0, -1.0]);
    assert_eq!(got[..32], want[..]);
    let err = sign
        .execute(&[&buffer, &other], &[b(0, 0, 32)], &[b(1, 16, 32)])
        .unwrap_err();
    assert!(
        matches!(
            err,
            GpuError::Op(Error::Hazard {
                kind: HazardKind::PartialOverlap,
                ..
            })
        ),
        "{err}"
    );
}

#[test]
fn operators_recorded_into_one_encoder_run_in_order() {
    let Some(device) = device() else { return };
    let t = TensorDesc::new(Float16, &[5]);
    let sign = device
        .create_operator(&OperatorDesc::sign(t.clone(), t.clone()))
        .unwrap()
        .compile()
        .unwrap();
    let inf = device
        .create_operator(&OperatorDesc::is_infinity(
            t.clone(),
            TensorDesc::new(Uint8, &[5]),
            InfinityMode::Negative,
        ))
        .unwrap()
        .compile()
        .unwrap();
    // -inf, -2, 0, +inf, NaN as float16.
    let bits: [u16; 6] = [0xFC00, 0xC000, 0x0000, 0x7C00, 0x7E00, 0x1234];
    let input = GpuBuffer::from_bytes(device, &bits.map(u16::to_le_bytes).concat()).unwrap();
    let signs = GpuBuffer::zeroed(device, 16).unwrap();
    let flags = GpuBuffer::from_bytes(device, &[0xAA; 24]).unwrap();
    let mut encoder = device
        .wgpu_device()
        .create_command_encoder(&Default::default());
    let buffers = [&input, &signs, &flags];
    sign.record(&mut encoder, &buffers, &[b(0, 0, 12)], &[b(1, 0, 12)])
        .unwrap();
    inf.record(&mut encoder, &buffers, &[b(1, 0, 12)], &[b(2, 0, 8)])
        .unwrap();
    inf.record(&mut encoder, &buffers, &[b(0, 0, 12)], &[b(2, 16, 8)])
        .unwrap();
    device.wgpu_queue().submit([encoder.finish()]);
    let signs = signs.read(device).unwrap();
    let want: [u16; 5] = [0xBC00, 0xBC00, 0, 0x3C00, 0];
    assert_eq!(signs[..10], want.map(u16::to_le_bytes).concat()[..]);
    let flags = flags.read(device).unwrap();
    let mut want = [0xAA; 24];
    want[..5].fill(0);
    want[16..21].copy_from_slice(&[1, 0, 0, 0, 0]);
    assert_eq!(flags, want);
}

/// SIGN of int32 elements in native byte order.
fn int32_signs(bytes: &[u8]) -> Vec<u8> {
    bytes
        .chunks_exact(4)
        .flat_map(|w| {
            i32::from_ne_bytes([w[0], w[1], w[2], w[3]])
                .signum()
                .to_ne_bytes()
        })
        .collect()
}

#[test]
fn recording_again_with_kept_or_new_bindings_gives_the_right_bits() {
    let Some(device) = device() else { return };
    let t = TensorDesc::new(Int32, &[64]);
    let sign = device
        .create_operator(&OperatorDesc::sign(t.clone(), t))
        .unwrap()
        .compile()
        .unwrap();
    let buffers: Vec<GpuBuffer> = (0..3)
        .map(|k| GpuBuffer::from_bytes(device, &noise(512, k)).unwrap())
        .collect();
    // Three pairs, more than the operator keeps, visited in turn, each with new data in
    // its input, then the same input and output swapped, and an offset output.
    let pairs = [
        (0, 1, 0),
        (1, 2, 0),
        (2, 0, 0),
        (0, 1, 256),
        (0, 1, 0),
        (1, 0, 0),
    ];
    for round in 0..3u64 {
        for (k, &(i, o, out_offset)) in pairs.iter().enumerate() {
            let data = noise(256, 100 + round * 10 + k as u64);
            buffers[i].write(device, 0, &data).unwrap();
            let list = [&buffers[i], &buffers[o]];
            let mut encoder = device
                .wgpu_device()
                .create_command_encoder(&Default::default());
            sign.record(
                &mut encoder,
                &list,
                &[b(0, 0, 256)],
                &[b(1, out_offset, 256)],
            )
            .unwrap();
            device.wgpu_queue().submit([encoder.finish()]);
            let out = buffers[o].read_range(device, out_offset, 256).unwrap();
            assert_eq!(out, int32_signs(&data), "round {round}, pair {k}");
        }
    }
    // In place, then out of place again on the same buffer's halves.
    let data = noise(512, 7);
    buffers[0].write(device, 0, &data).unwrap();
    for _ in 0..2 {
        sign.execute(&[&buffers[0]], &[b(0, 0, 256)], &[b(0, 0, 256)])
            .unwrap();
    }
    sign.execute(&[&buffers[0]], &[b(0, 256, 256)], &[b(0, 0, 256)])
        .unwrap();
    assert_eq!(
        buffers[0].read_range(device, 0, 256).unwrap(),
        int32_signs(&data[256..])
    );
}

#[test]
fn transfers_must_keep_to_whole_words() {
    let Some(device) = device() else { return };
    let buffer = GpuBuffer::from_bytes(device, &[1, 2, 3, 4, 5, 6, 7]).unwrap();
    assert_eq!(buffer.len(), 7);
    assert_eq!(buffer.read(device).unwrap(), [1, 2, 3, 4, 5, 6, 7]);
    buffer.write(device, 4, &[9, 9, 9]).unwrap();
    assert_eq!(buffer.read_range(device, 4, 3).unwrap(), [9, 9, 9]);
    for (offset, len) in [(2u64, 4u64), (0, 3), (4, 8)] {
        let err = buffer
            .write(device, offset, &vec![0; len as usize])
            .unwrap_err();
        assert!(matches!(err, GpuError::Transfer { .. }), "{err}");
        let err = buffer.read_range(device, offset, len).unwrap_err();
        assert!(matches!(err, GpuError::Transfer { .. }), "{err}");
    }
    assert!(GpuBuffer::zeroed(device, 0)
        .unwrap()
        .read(device)
        .unwrap()
        .is_empty());
}

/// Reads reuse the device's staging buffers: many reads of lengths that fit kept
/// buffers, or outgrow them, or exceed what is kept, each give exactly their range,
/// interleaved with writes and from several threads at once.
#[test]
fn repeated_reads_of_any_length_give_their_ranges() {
    let Some(device) = device() else { return };
    let len = 3 << 20;
    let data = noise(len, 11);
    let buffer = GpuBuffer::from_bytes(device, &data).unwrap();
    let mut expected = data.clone();
    let ranges = [
        (0, 4),
        (4, 100 << 10),
        (8, 8),
        (1 << 20, 2 << 20),
        (64, 1 << 16),
        (0, len as u64),
        (len as u64 - 4, 4),
    ];
    for round in 0..3u8 {
        for &(offset, n) in &ranges {
            let (at, end) = (offset as usize, (offset + n) as usize);
            assert_eq!(
                buffer.read_range(device, offset, n).unwrap(),
                expected[at..end],
                "round {round}: {n} bytes at {offset}"
            );
        }
        let patch = vec![round + 1; 4096];
        buffer.write(device, 8192, &patch).unwrap();
        expected[8192..8192 + 4096].copy_from_slice(&patch);
    }
    std::thread::scope(|s| {
        for t in 0..3u64 {
            let (buffer, expected) = (&buffer, &expected);
            s.spawn(move || {
                for k in 0..8u64 {
                    let (offset, n) = ((t * 4096 + k * 64) * 4, (1 + k * 7919) * 4);
                    let (at, end) = (offset as usize, (offset + n) as usize);
                    assert_eq!(
                        buffer.read_range(device, offset, n).unwrap(),
                        expected[at..end]
                    );
                }
            });
        }
    });
}

/// Writes of 64 KiB and more go through kept upload buffers and are submitted at once,
/// smaller ones are staged by wgpu until the next submission: mixed on overlapping
/// ranges, with odd ends at the buffer's end, around operators and from several
/// threads, every write lands in call order and before the work submitted after it.
#[test]
fn writes_of_any_length_land_in_call_order() {
    let Some(device) = device() else { return };
    let len = (3 << 20) + 3;
    let buffer = GpuBuffer::zeroed(device, len as u64).unwrap();
    let mut expected = vec![0u8; len];
    let writes = [
        (0, 4),
        (4, (64 << 10) - 4),
        (0, 64 << 10),
        (8, (64 << 10) + 4),
        (60 << 10, 4096),
        (1 << 20, 2 << 20),
        (1 << 20, 12),
        (0, len),
        ((1 << 20) + 8, 64 << 10),
        (len - 3, 3),
        (len - (100 << 10) - 3, (100 << 10) + 3),
        (4, 8),
    ];
    for round in 0..3u64 {
        for (k, &(at, n)) in writes.iter().enumerate() {
            let data = noise(n, round * 100 + k as u64);
            buffer.write(device, at as u64, &data).unwrap();
            expected[at..at + n].copy_from_slice(&data);
        }
        assert!(buffer.read(device).unwrap() == expected, "round {round}");
    }

    let sign = device
        .create_operator(&OperatorDesc::sign(
            TensorDesc::new(Int32, &[1, 1, 1, 1 << 16]),
            TensorDesc::new(Int32, &[1, 1, 1, 1 << 16]),
        ))
        .unwrap()
        .compile()
        .unwrap();
    let output = GpuBuffer::zeroed(device, 1 << 18).unwrap();
    for n in [256 << 10, 4096] {
        let (first, second) = (noise(n, 1), noise(n, 2));
        buffer.write(device, 0, &first).unwrap();
        sign.execute(
            &[&buffer, &output],
            &[b(0, 0, 1 << 18)],
            &[b(1, 0, 1 << 18)],
        )
        .unwrap();
        buffer.write(device, 0, &second).unwrap();
        let out = output.read_range(device, 0, n as u64).unwrap();
        assert!(
            out == int32_signs(&first),
            "{n}-byte writes around an execution"
        );
        assert!(buffer.read_range(device, 0, n as u64).unwrap() == second);
    }

    std::thread::scope(|s| {
        for t in 0..3usize {
            let buffer = &buffer;
            s.spawn(move || {
                let at = t << 20;
                for k in 0..4u64 {
                    let data = noise(512 << 10, t as u64 * 10 + k);
                    buffer.write(device, at as u64, &data).unwrap();
                    let back = buffer.read_range(device, at as u64, 512 << 10).unwrap();
                    assert!(back == data, "thread {t}, write {k}");
                }
            });
        }
    });
}

/// A caller's buffer without `COPY_DST` cannot be written: small and staged writes are
/// both a `GpuError::Wgpu`, and the device's later transfers still work.
#[test]
fn writes_to_a_buffer_without_copy_dst_are_errors() {
    let Some(device) = device() else { return };
    let raw = device.wgpu_device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("caller's, not writable"),
        size: 256 << 10,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let buffer = GpuBuffer::from_wgpu(raw).unwrap();
    for n in [4, 256 << 10] {
        let err = buffer.write(device, 0, &vec![1; n]).unwrap_err();
        assert!(matches!(err, GpuError::Wgpu { .. }), "{n} bytes: {err}");
        assert!(buffer.read(device).unwrap().iter().all(|&b| b == 0));
    }
    let writable = GpuBuffer::zeroed(device, 256 << 10).unwrap();
    let data = noise(256 << 10, 5);
    writable.write(device, 0, &data).unwrap();
    assert!(writable.read(device).unwrap() == data);
}

#[test]
fn a_callers_wgpu_device_runs_the_operators() {
    let Some(ours) = device() else { return };
    let wanted = ours.adapter().name.clone();
    let instance = ewise_gpu::compute_instance(wgpu::Backends::all());
    let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
    let adapter = adapters
        .into_iter()
        .find(|a| a.get_info().name == wanted)
        .expect("the adapter the shared device uses");
    let (wgpu_device, queue) =
        pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor::default())).unwrap();
    let device = GpuDevice::builder()
        .from_wgpu(wgpu_device.clone(), queue, &adapter.get_info())
        .unwrap();
    assert_eq!(device.adapter().name, wanted);
    let raw = wgpu_device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("caller's"),
        size: 16,
        usage: ewise_gpu::BUFFER_USAGES,
        mapped_at_creation: false,
    });
    let buffer = GpuBuffer::from_wgpu(raw).unwrap();
    buffer
        .write(
            &device,
            0,
            &[0x80, 0, 5, 0xFF, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8],
        )
        .unwrap();
    let t = TensorDesc::new(Int8, &[4]);
    let sign = device
        .create_operator(&OperatorDesc::sign(t.clone(), t))
        .unwrap()
        .compile()
        .unwrap();
    sign.execute(&[&buffer], &[b(0, 0, 4)], &[b(0, 0, 4)])
        .unwrap();
    assert_eq!(
        buffer.read_range(&device, 0, 4).unwrap(),
        [0xFF, 0, 1, 0xFF]
    );
}

/// A process that makes devices one after another, each used and dropped, keeps finding
/// its adapter and getting the right bits: dropping a device gives its resources back.
#[test]
fn devices_made_and_dropped_in_turn_keep_working() {
    if device().is_none() {
        return;
    }
    let t = TensorDesc::new(Float32, &[1024]);
    let desc = OperatorDesc::sign(t.clone(), t);
    let values: Vec<f32> = (0..1024).map(|i| i as f32 - 512.0).collect();
    let expected: Vec<u8> = values
        .iter()
        .flat_map(|v| {
            (if *v < 0.0 {
                -1.0f32
            } else if *v > 0.0 {
                1.0
            } else {
                0.0
            })
            .to_ne_bytes()
        })
        .collect();
    for round in 0..96 {
        let device = common::try_device(GpuDevice::builder())
            .unwrap_or_else(|| panic!("round {round}: the adapter is no longer found"));
        let op = device.create_operator(&desc).unwrap().compile().unwrap();
        let input = GpuBuffer::from_bytes(&device, &f32_bytes(&values)).unwrap();
        let output = GpuBuffer::zeroed(&device, 4096).unwrap();
        op.execute(&[&input, &output], &[b(0, 0, 4096)], &[b(1, 0, 4096)])
            .unwrap();
        assert_eq!(output.read(&device).unwrap(), expected, "round {round}");
    }
}
