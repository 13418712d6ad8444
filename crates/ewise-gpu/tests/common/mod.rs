//! Shared by the GPU tests: one device per test binary, and runs of one description on
//! the GPU and on the CPU backend from the same starting bytes.
#![allow(dead_code)]

use std::sync::OnceLock;

use ewise_core::{BufferBinding, DataType, Extensions, NanPolicy, OperatorDesc};
use ewise_cpu::{BufferRef, Device};
use ewise_gpu::{GpuBuffer, GpuDevice, GpuDeviceBuilder, GpuError};

/// A device from `builder` (software adapters allowed: CI runs on lavapipe), or `None`
/// after one line saying why, when there is no adapter and none is required.
pub fn try_device(builder: GpuDeviceBuilder) -> Option<GpuDevice> {
    device_or_skip(builder.allow_software(true).build())
}

/// [`ewise_testkit::device_or_skip`] for ewise-gpu's build result (`build` or
/// `build_async`, awaited).
pub fn device_or_skip(built: Result<GpuDevice, GpuError>) -> Option<GpuDevice> {
    ewise_testkit::device_or_skip(built, |e| matches!(e, GpuError::NoAdapter { .. }))
}

/// An extended device whose binding windows span at most a few hundred bytes, so that
/// small tensors split into many dispatches (one per test binary).
pub fn tiny_device() -> Option<&'static GpuDevice> {
    static DEVICE: OnceLock<Option<GpuDevice>> = OnceLock::new();
    DEVICE
        .get_or_init(|| {
            try_device(
                GpuDevice::builder()
                    .extensions(Extensions::Enabled)
                    .max_binding_size(0),
            )
        })
        .as_ref()
}

/// The extended device every test in a binary shares (pipelines are cached on it).
pub fn device() -> Option<&'static GpuDevice> {
    static DEVICE: OnceLock<Option<GpuDevice>> = OnceLock::new();
    DEVICE
        .get_or_init(|| {
            let d = try_device(GpuDevice::builder().extensions(Extensions::Enabled));
            if let Some(d) = &d {
                eprintln!("GPU tests run on {}", d.adapter());
            }
            d
        })
        .as_ref()
}

pub use ewise_testkit::noise;

/// Where an execution's tensors live: one buffer (in place or disjoint ranges) or two.
#[derive(Debug, Clone, Copy)]
pub struct Run {
    pub in_offset: u64,
    pub out_offset: u64,
    /// Both tensors in buffer 0.
    pub one_buffer: bool,
}

/// The final buffers of one run on each backend.
pub type Outcome = (
    Result<Vec<Vec<u8>>, GpuError>,
    Result<Vec<Vec<u8>>, ewise_core::Error>,
);

/// Runs `desc` on the GPU `device` and on the CPU backend from the same starting buffers
/// (`buffers[k]` starts as `start[k]`) and returns both final buffers.
pub fn both(
    device: &GpuDevice,
    desc: &OperatorDesc,
    policy: NanPolicy,
    start: &[Vec<u8>],
    run: Run,
) -> Outcome {
    let inb = BufferBinding::new(0, run.in_offset, desc.input().total_tensor_size_in_bytes);
    let outb = BufferBinding::new(
        usize::from(!run.one_buffer),
        run.out_offset,
        desc.output().total_tensor_size_in_bytes,
    );
    let gpu = (|| {
        let op = device
            .create_operator(desc)?
            .with_nan_policy(policy)
            .compile()?;
        let bufs: Vec<GpuBuffer> = start
            .iter()
            .map(|b| GpuBuffer::from_bytes(device, b))
            .collect::<Result<_, _>>()?;
        let refs: Vec<&GpuBuffer> = bufs.iter().collect();
        op.execute(&refs, &[inb], &[outb])?;
        bufs.iter().map(|b| b.read(device)).collect()
    })();
    let cpu = (|| {
        let op = Device::builder()
            .extensions(Extensions::Enabled)
            .build()?
            .create_operator(desc)?
            .with_nan_policy(policy)
            .compile()?;
        let mut bufs: Vec<Vec<u8>> = start.to_vec();
        let mut refs: Vec<BufferRef<'_>> = bufs.iter_mut().map(BufferRef::from).collect();
        op.execute(&mut refs, &[inb], &[outb])?;
        Ok(bufs)
    })();
    (gpu, cpu)
}

/// Every input type SIGN takes (with the ewise extensions), from the support tables.
pub fn sign_types() -> &'static [ewise_core::DataType] {
    ewise_core::OperatorSupport::of(ewise_core::OperatorType::ElementWiseSign)
        .extended
        .input_types
}

/// Every input type IS_INFINITY takes (with the ewise extensions), from the support
/// tables.
pub fn infinity_types() -> &'static [ewise_core::DataType] {
    ewise_core::OperatorSupport::of(ewise_core::OperatorType::ElementWiseIsInfinity)
        .extended
        .input_types
}

/// The element size of `data_type` in bytes.
pub fn size(data_type: DataType) -> u64 {
    data_type.size_in_bytes().unwrap()
}

/// Edge bit patterns of the types of a width: zeros, subnormals, ones, the largest
/// finite, infinities, NaNs, integer extremes, with both signs.
pub fn edges(width: u32) -> Vec<u64> {
    match width {
        8 => return vec![0x7C, 0xFC, 0x7D, 0x7F, 0xFF, 0x80, 0, 1, 0x7B, 0xFB, 0x3C],
        16 => {
            return vec![
                0x7C00, 0xFC00, 0x7F80, 0xFF80, 0x7C01, 0x7F81, 0xFE00, 0xFFFF, 0x8000, 0, 1,
                0x8001, 0x7FFF, 0x3C00, 0x3F80, 0x7BFF, 0x7E00,
            ]
        }
        _ => {}
    }
    let (exp, frac) = if width == 64 { (11, 52) } else { (8, 23) };
    let mask = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    let inf = ((1u64 << exp) - 1) << frac;
    let sign = 1u64 << (width - 1);
    let base = [
        0,
        1,
        (1 << frac) - 1,
        1 << frac,
        inf - 1,
        inf,
        inf + 1,
        inf | (1 << (frac - 1)),
        inf | ((1 << frac) - 1),
        (mask >> 2) & !((1 << frac) - 1),
    ];
    let mut v: Vec<u64> = base.to_vec();
    v.extend(base.iter().map(|x| x | sign));
    v.extend([mask, sign - 1, 2, 0x3F80_0000, 0x3FF0_0000_0000_0000 & mask]);
    v
}

/// `n` input elements of `data_type`: every third element an edge pattern (odd counts
/// of them, so that each pattern visits every lane of a vector), between them patterns in turn from `seed`
/// for 8- and 16-bit types and noise for wider ones.
pub fn input(data_type: DataType, n: u64, seed: u64) -> Vec<u8> {
    let width = size(data_type) as usize;
    let mut random = noise(n as usize * width, seed);
    if width <= 2 {
        let m = 1u64 << (8 * width);
        random = (0..n)
            .flat_map(|k| ((k * 7 + seed) % m).to_le_bytes()[..width].to_vec())
            .collect();
    }
    let e = edges(width as u32 * 8);
    (0..n as usize)
        .flat_map(|k| {
            if k % 3 == 0 {
                e[(k / 3 + seed as usize) % e.len()].to_le_bytes()[..width].to_vec()
            } else {
                random[k * width..(k + 1) * width].to_vec()
            }
        })
        .collect()
}
