//! Compiling takes bounded time and memory whatever the element count: far strides on
//! the innermost dimensions, broadcast inputs and huge element counts in small binding
//! windows compile at once, descriptions that no buffer of the device can hold are
//! refused at once with [`GpuError::BufferTooLarge`], and layouts of this kind that fit
//! still give the CPU backend's bits.
//!
//! Each bounded compilation runs in a child process (this test binary, run again for
//! one case), which the parent kills when it outlives [`CHILD_TIMEOUT`] and which ends
//! itself when its memory grows past [`RUNAWAY_BYTES`]: a regression fails the test
//! instead of hanging the suite or exhausting the machine.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{both, device, input, noise, tiny_device, Run};
use ewise_core::DataType::{self, *};
use ewise_core::{BufferBinding, InfinityMode, NanPolicy, OperatorDesc, TensorDesc, TensorRole};
use ewise_gpu::stream::{ChunkEnds, GpuStream, StreamOp};
use ewise_gpu::{GpuBuffer, GpuDevice, GpuError};

/// The variable that makes [`compile_bounds_child_process`] run one case.
const CASE_ENV: &str = "EWISE_COMPILE_BOUNDS_CASE";

/// How long one child may take: starting a device, compiling the case twice (the first
/// time building its pipelines on a software adapter) and checking it.
const CHILD_TIMEOUT: Duration = Duration::from_secs(120);

/// Resident memory growth at which a child gives up on a compilation still running.
const RUNAWAY_BYTES: u64 = 512 << 20;

/// Resident memory one compilation, its pipelines already built, may add.
const COMPILE_BYTES: u64 = 8 << 20;

/// How long one compilation, its pipelines already built, may take.
const COMPILE_TIME: Duration = Duration::from_secs(5);

/// One description of the class, and the device it compiles on.
struct Case {
    name: &'static str,
    desc: fn() -> OperatorDesc,
    /// On the device whose binding windows span a few hundred bytes.
    tiny: bool,
}

fn strided(data_type: DataType, sizes: &[u32], strides: &[u32]) -> TensorDesc {
    TensorDesc::strided(data_type, sizes, strides)
}

const CASES: &[Case] = &[
    Case {
        name: "float32 65535 x 65535, input rows 2^26 elements apart",
        desc: || {
            let sizes = [1, 1, 65535, 65535];
            OperatorDesc::sign(
                strided(Float32, &sizes, &[0, 0, 1, 1 << 26]),
                TensorDesc::new(Float32, &sizes),
            )
        },
        tiny: false,
    },
    Case {
        name: "float32 65535 x 8192, transposed, 2 GiB",
        desc: || {
            let sizes = [1, 1, 65535, 8192];
            OperatorDesc::sign(
                strided(Float32, &sizes, &[0, 0, 1, 65535]),
                TensorDesc::new(Float32, &sizes),
            )
        },
        tiny: false,
    },
    Case {
        name: "float16 16384 x 32768 transposed into uint8",
        desc: || {
            let sizes = [16384, 32768];
            OperatorDesc::is_infinity(
                strided(Float16, &sizes, &[1, 16384]),
                TensorDesc::new(Uint8, &sizes),
                InfinityMode::Either,
            )
        },
        tiny: false,
    },
    Case {
        name: "int8 32768 x 65535, transposed, in small windows",
        desc: || {
            let sizes = [32768, 65535];
            OperatorDesc::sign(
                strided(Int8, &sizes, &[1, 32768]),
                TensorDesc::new(Int8, &sizes),
            )
        },
        tiny: true,
    },
    Case {
        name: "one float32 broadcast to 8192 x 65535, in small windows",
        desc: || {
            let sizes = [8192, 65535];
            OperatorDesc::sign(
                strided(Float32, &sizes, &[0, 0]),
                TensorDesc::new(Float32, &sizes),
            )
        },
        tiny: true,
    },
    Case {
        name: "int8 rows broadcast, elements 32768 apart, in small windows",
        desc: || {
            let sizes = [16384, 65535];
            OperatorDesc::sign(
                strided(Int8, &sizes, &[0, 32768]),
                TensorDesc::new(Int8, &sizes),
            )
        },
        tiny: true,
    },
    Case {
        name: "2^30 packed int8 in small windows",
        desc: || {
            let t = TensorDesc::new(Int8, &[1 << 30]);
            OperatorDesc::sign(t.clone(), t)
        },
        tiny: true,
    },
    Case {
        name: "float32 65535 x 65535 from one element",
        desc: || {
            let sizes = [65535, 65535];
            OperatorDesc::sign(
                strided(Float32, &sizes, &[0, 0]),
                TensorDesc::new(Float32, &sizes),
            )
        },
        tiny: false,
    },
];

/// Bytes resident in this process, where `/proc` says.
fn resident() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// The first tensor of `desc` that no buffer of `device` can hold, with the bytes it
/// needs.
fn too_large(device: &GpuDevice, desc: &OperatorDesc) -> Option<(TensorRole, u64)> {
    let limit = device.wgpu_device().limits().max_buffer_size;
    [TensorRole::Input, TensorRole::Output]
        .into_iter()
        .map(|t| (t, desc.tensor(t).total_tensor_size_in_bytes.div_ceil(4) * 4))
        .find(|&(_, bytes)| bytes > limit)
}

/// Creates and compiles `desc` on `device`, on a thread, ending the process when memory
/// runs away before it returns; the outcome and how long it took.
fn watched(
    device: &GpuDevice,
    desc: &OperatorDesc,
) -> (Result<ewise_gpu::GpuCompiledOperator, GpuError>, Duration) {
    let start = (Instant::now(), resident());
    let worker = {
        let (device, desc) = (device.clone(), desc.clone());
        std::thread::spawn(move || device.create_operator(&desc)?.compile())
    };
    while !worker.is_finished() {
        if let (Some(before), Some(now)) = (start.1, resident()) {
            if now.saturating_sub(before) > RUNAWAY_BYTES {
                println!(
                    "RUNAWAY: {} MiB after {:?}",
                    (now - before) >> 20,
                    start.0.elapsed()
                );
                std::process::exit(3);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let outcome = worker.join().expect("the compiling thread panicked");
    (outcome, start.0.elapsed())
}

/// Runs case `k` (see [`CASES`]): the first compilation builds the pipelines, the second
/// is measured. Panics when the outcome or a bound is wrong.
fn run_case(k: usize) {
    let case = &CASES[k];
    let device = if case.tiny { tiny_device() } else { device() };
    let Some(device) = device else { return };
    let desc = (case.desc)();
    let expected = too_large(device, &desc);
    let (first, _) = watched(device, &desc);
    drop(first);
    let before = resident();
    let (outcome, took) = watched(device, &desc);
    let grew = resident().zip(before).map(|(a, b)| a.saturating_sub(b));
    println!(
        "{}: {:?} in {took:?}, {} KiB more resident",
        case.name,
        outcome.as_ref().map(|op| op.dispatches()),
        grew.map_or(0, |g| g >> 10)
    );
    match (outcome, expected) {
        (Ok(op), None) => {
            // At least one dispatch per binding's worth of the larger tensor: lavapipe
            // binds 128 MiB, an H100 2 GiB, so one dispatch may cover a whole case.
            let binding = device
                .wgpu_device()
                .limits()
                .max_storage_buffer_binding_size;
            let largest = [TensorRole::Input, TensorRole::Output]
                .map(|t| desc.tensor(t).total_tensor_size_in_bytes)
                .into_iter()
                .max()
                .unwrap_or(0);
            let needed = largest.div_ceil(binding).max(1);
            assert!(
                op.dispatches() as u64 >= needed,
                "{} dispatches for {largest} bytes in bindings of {binding}",
                op.dispatches()
            );
        }
        (
            Err(GpuError::BufferTooLarge {
                tensor,
                bytes,
                limit,
                ..
            }),
            Some(want),
        ) => {
            assert_eq!((tensor, bytes), want);
            assert_eq!(limit, device.wgpu_device().limits().max_buffer_size);
        }
        (outcome, expected) => panic!("{:?}, expected {expected:?}", outcome.err()),
    }
    assert!(took < COMPILE_TIME, "{took:?}");
    if let Some(grew) = grew {
        assert!(grew < COMPILE_BYTES, "{} KiB", grew >> 10);
    }
}

/// In a child process started by [`compilations_take_bounded_time_and_memory`], runs
/// the case [`CASE_ENV`] names; in any other run it does nothing.
#[test]
fn compile_bounds_child_process() {
    if let Ok(k) = std::env::var(CASE_ENV) {
        run_case(k.parse().expect("a case number"));
        println!("CASE PASSED");
    }
}

/// Runs this binary again for case `k`: its output, and whether it passed in time.
fn child(k: usize) -> (bool, String) {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut process = Command::new(exe)
        .args([
            "compile_bounds_child_process",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CASE_ENV, k.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the test binary starts");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = process.try_wait().expect("the child can be waited for") {
            break Some(status);
        }
        if start.elapsed() > CHILD_TIMEOUT {
            let _ = process.kill();
            let _ = process.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut text = String::new();
    for pipe in [
        process.stdout.take().map(|p| Box::new(p) as Box<dyn Read>),
        process.stderr.take().map(|p| Box::new(p) as Box<dyn Read>),
    ]
    .into_iter()
    .flatten()
    {
        let mut pipe = pipe;
        let _ = pipe.read_to_string(&mut text);
    }
    match status {
        None => (false, format!("timed out after {CHILD_TIMEOUT:?}\n{text}")),
        Some(s) => (s.success() && text.contains("CASE PASSED"), text),
    }
}

#[test]
fn compilations_take_bounded_time_and_memory() {
    if device().is_none() {
        return;
    }
    let failures: Vec<String> = (0..CASES.len())
        .filter_map(|k| {
            let (passed, text) = child(k);
            eprintln!("case {k} ({}): passed={passed}", CASES[k].name);
            (!passed).then(|| format!("case {k} ({}):\n{text}", CASES[k].name))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn descriptions_no_buffer_can_hold_are_refused_with_the_sizes() {
    let Some(device) = device() else { return };
    let limit = device.wgpu_device().limits().max_buffer_size;
    let small = TensorDesc::new(Float32, &[4]);
    let huge_total = small.clone().with_total_size(limit + 1);
    let cases = [
        (
            OperatorDesc::sign(huge_total.clone(), small.clone()),
            TensorRole::Input,
            (limit + 1).div_ceil(4) * 4,
        ),
        (
            OperatorDesc::sign(small.clone(), huge_total),
            TensorRole::Output,
            (limit + 1).div_ceil(4) * 4,
        ),
    ];
    for (desc, tensor, bytes) in cases {
        let err = device.create_operator(&desc).unwrap_err();
        assert_eq!(
            err,
            GpuError::BufferTooLarge {
                operator: desc.operator_type(),
                tensor,
                bytes,
                limit,
            }
        );
        assert!(err.to_string().contains(&limit.to_string()), "{err}");
    }
}

/// Ends of a stream that must never be reached.
struct Unreached;

impl ChunkEnds for Unreached {
    type Error = GpuError;
    fn read(&mut self, _: u64, _: &mut [u8]) -> Result<(), GpuError> {
        panic!("a chunk was read")
    }
    fn write(&mut self, _: u64, _: &[&[u8]]) -> Result<(), GpuError> {
        panic!("a chunk was written")
    }
    fn stop_before(&mut self, _: u64) -> Result<bool, GpuError> {
        Ok(false)
    }
}

#[test]
fn streams_refuse_chunks_no_buffer_can_hold_before_allocating() {
    let Some(device) = device() else { return };
    let limit = device.wgpu_device().limits().max_buffer_size;
    let chunk = u64::from(u32::MAX);
    if chunk.div_ceil(4) * 4 <= limit {
        return;
    }
    let op = StreamOp::Sign(NanPolicy::Zero);
    let mut stream = GpuStream::new(device, op, Uint8, Uint8, usize::MAX).unwrap();
    let err = stream.run(chunk, &mut Unreached).unwrap_err();
    assert!(
        matches!(err, GpuError::BufferTooLarge { limit: l, .. } if l == limit),
        "{err}"
    );
}

/// Descriptions of the class small enough to run, on the device of small windows: far
/// strides, transposes, broadcasts, sub-word outputs.
fn runnable() -> Vec<OperatorDesc> {
    let sign = |input: TensorDesc, out: DataType| {
        let output = TensorDesc::new(out, &input.sizes);
        OperatorDesc::sign(input, output)
    };
    vec![
        sign(strided(Float32, &[1, 1, 24, 40], &[0, 0, 1, 64]), Float32),
        sign(strided(Float32, &[64, 80], &[1, 64]), Float32),
        sign(strided(Int8, &[30, 70], &[0, 37]), Int8),
        sign(strided(Float16, &[9, 7, 11], &[0, 100, 1000]), Float16),
        sign(strided(Float64, &[6, 13], &[1, 40]), Float64),
        sign(strided(Uint16, &[50, 60], &[0, 0]), Uint16),
        OperatorDesc::is_infinity(
            strided(Float16, &[33, 45], &[1, 33]),
            TensorDesc::new(Uint8, &[33, 45]),
            InfinityMode::Either,
        ),
        OperatorDesc::is_infinity(
            strided(Float32, &[17, 3, 29], &[3, 1, 51]),
            TensorDesc::new(Bool, &[17, 3, 29]),
            InfinityMode::Negative,
        ),
    ]
}

#[test]
fn far_strided_layouts_in_small_windows_give_the_cpu_bits() {
    let Some(device) = tiny_device() else { return };
    let runs = [
        Run {
            in_offset: 16,
            out_offset: 0,
            one_buffer: false,
        },
        Run {
            in_offset: 0,
            out_offset: 48,
            one_buffer: false,
        },
    ];
    let mut most = 0;
    for (k, desc) in runnable().into_iter().enumerate() {
        most = most.max(
            device
                .create_operator(&desc)
                .unwrap()
                .compile()
                .unwrap()
                .dispatches(),
        );
        let (input_bytes, output_bytes) = (
            desc.input().total_tensor_size_in_bytes as usize,
            desc.output().total_tensor_size_in_bytes as usize,
        );
        let in_type = desc.input().data_type;
        let elements = (input_bytes as u64).div_ceil(common::size(in_type));
        for run in runs {
            let mut data = vec![0u8; run.in_offset as usize];
            data.extend(input(in_type, elements, k as u64));
            data.truncate(run.in_offset as usize + input_bytes);
            let start = vec![
                data,
                noise(run.out_offset as usize + output_bytes, k as u64),
            ];
            let (gpu, cpu) = both(device, &desc, NanPolicy::Propagate, &start, run);
            assert_eq!(gpu.unwrap(), cpu.unwrap(), "{desc:?} {run:?}");
        }
    }
    assert!(most > 1024, "{most} dispatches at most");
}

#[test]
fn disjoint_ranges_of_one_buffer_in_small_windows_give_the_cpu_bits() {
    let Some(device) = tiny_device() else { return };
    for (k, desc) in runnable().into_iter().enumerate() {
        let input_bytes = desc.input().total_tensor_size_in_bytes;
        let out_offset = (input_bytes + 16).div_ceil(16) * 16;
        let len = out_offset + desc.output().total_tensor_size_in_bytes;
        let run = Run {
            in_offset: 0,
            out_offset,
            one_buffer: true,
        };
        let start = vec![noise(len as usize, 10 + k as u64)];
        let (gpu, cpu) = both(device, &desc, NanPolicy::Zero, &start, run);
        assert_eq!(gpu.unwrap(), cpu.unwrap(), "{desc:?}");
    }
}

#[test]
fn recordings_of_many_batches_match_executions() {
    let Some(device) = tiny_device() else { return };
    let sizes = [64u32, 80];
    let desc = OperatorDesc::sign(
        strided(Float32, &sizes, &[1, 64]),
        TensorDesc::new(Float32, &sizes),
    );
    let op = device
        .create_operator(&desc)
        .unwrap()
        .with_nan_policy(NanPolicy::Zero)
        .compile()
        .unwrap();
    assert!(op.dispatches() > 1024, "{}", op.dispatches());
    let bytes = desc.input().total_tensor_size_in_bytes;
    let input = GpuBuffer::from_bytes(device, &noise(bytes as usize, 5)).unwrap();
    let outputs = [
        GpuBuffer::zeroed(device, bytes).unwrap(),
        GpuBuffer::zeroed(device, bytes).unwrap(),
    ];
    let inb = BufferBinding::new(0, 0, bytes);
    let outb = BufferBinding::new(1, 0, bytes);
    op.execute(&[&input, &outputs[0]], &[inb], &[outb]).unwrap();
    let mut encoder = device
        .wgpu_device()
        .create_command_encoder(&Default::default());
    op.record(&mut encoder, &[&input, &outputs[1]], &[inb], &[outb])
        .unwrap();
    device.wgpu_queue().submit([encoder.finish()]);
    let read = |b: &GpuBuffer| b.read(device).unwrap();
    assert_eq!(read(&outputs[0]), read(&outputs[1]));
    let start = vec![read(&input), vec![0u8; bytes as usize]];
    let run = Run {
        in_offset: 0,
        out_offset: 0,
        one_buffer: false,
    };
    let (_, cpu) = both(device, &desc, NanPolicy::Zero, &start, run);
    assert_eq!(read(&outputs[1]), cpu.unwrap()[1]);
}
