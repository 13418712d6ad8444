//! A GPU device in a forked child: every use of the parent's device fails at once with
//! `GpuError::Forked`, dropping its objects neither hangs nor crashes, and a device the
//! child creates itself works. One test, so that the parent has not touched the GPU
//! before the first fork.
#![cfg(unix)]

mod common;

use std::time::{Duration, Instant};

use ewise_core::{BufferBinding, DataType, Extensions, NanPolicy, OperatorDesc, TensorDesc};
use ewise_gpu::stream::{ChunkEnds, GpuStream, StreamOp};
use ewise_gpu::{GpuBuffer, GpuDevice, GpuError};

/// Exit status of a child that found no adapter.
const NO_ADAPTER: i32 = 77;

/// How long the child may take for all its calls on the parent's device.
const PROMPT: Duration = Duration::from_secs(5);

fn device() -> Result<GpuDevice, GpuError> {
    GpuDevice::builder()
        .allow_software(true)
        .extensions(Extensions::Enabled)
        .build()
}

fn values() -> Vec<u8> {
    [-2.5f32, -0.0, 0.0, 3.0, f32::NAN, f32::NEG_INFINITY]
        .iter()
        .flat_map(|x| x.to_ne_bytes())
        .collect()
}

fn signs() -> Vec<u8> {
    [-1.0f32, 0.0, 0.0, 1.0, 0.0, -1.0]
        .iter()
        .flat_map(|x| x.to_ne_bytes())
        .collect()
}

fn desc() -> OperatorDesc {
    let t = TensorDesc::new(DataType::Float32, &[6]);
    OperatorDesc::sign(t.clone(), t)
}

/// SIGN of six floats on `device`, read back.
fn sign(device: &GpuDevice) -> Result<Vec<u8>, GpuError> {
    let op = device.create_operator(&desc())?.compile()?;
    let input = GpuBuffer::from_bytes(device, &values())?;
    let output = GpuBuffer::zeroed(device, 24)?;
    let whole = BufferBinding::new(0, 0, 24);
    op.execute(
        &[&input, &output],
        &[whole],
        &[BufferBinding { buffer: 1, ..whole }],
    )?;
    output.read(device)
}

/// Runs `child` in a forked process and returns its exit status; fails the test when
/// it has not exited within a minute (after killing it).
fn in_child(child: impl FnOnce() -> i32) -> i32 {
    // SAFETY: the child only runs `child` and leaves with `_exit`, never returning into
    // the test harness; a panic is caught and becomes exit status 101.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)).unwrap_or(101);
        // SAFETY: ends the child at once, without running the parent's exit handlers.
        unsafe { libc::_exit(code) };
    }
    let start = Instant::now();
    let mut status = 0;
    loop {
        // SAFETY: waits for our own child, without blocking.
        let done = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        assert!(done >= 0, "waitpid failed");
        if done == pid {
            break;
        }
        if start.elapsed() > Duration::from_secs(60) {
            // SAFETY: kills and reaps our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            panic!("the forked child hung for 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        libc::WIFEXITED(status),
        "the forked child died of signal {}",
        libc::WTERMSIG(status)
    );
    libc::WEXITSTATUS(status)
}

/// Ends over zeros whose results are checked and dropped.
struct Zeros;

impl ChunkEnds for Zeros {
    type Error = GpuError;

    fn read(&mut self, _: u64, bytes: &mut [u8]) -> Result<(), GpuError> {
        bytes.fill(0);
        Ok(())
    }

    fn write(&mut self, _: u64, outputs: &[&[u8]]) -> Result<(), GpuError> {
        assert!(outputs.iter().all(|bytes| bytes.iter().all(|&b| b == 0)));
        Ok(())
    }

    fn stop_before(&mut self, _: u64) -> Result<bool, GpuError> {
        Ok(false)
    }
}

/// Ends that never see a chunk: the run must fail before reading.
struct Never;

impl ChunkEnds for Never {
    type Error = GpuError;

    fn read(&mut self, _: u64, _: &mut [u8]) -> Result<(), GpuError> {
        panic!("a forked stream read a chunk")
    }

    fn write(&mut self, _: u64, _: &[&[u8]]) -> Result<(), GpuError> {
        panic!("a forked stream wrote a chunk")
    }

    fn stop_before(&mut self, _: u64) -> Result<bool, GpuError> {
        panic!("a forked stream asked to stop")
    }
}

/// Asserts `result` is `GpuError::Forked` naming both processes.
fn forked<T: std::fmt::Debug>(what: &str, parent: u32, result: Result<T, GpuError>) {
    match result {
        Err(GpuError::Forked { created, current }) => {
            assert_eq!(created, parent, "{what}");
            assert_eq!(current, std::process::id(), "{what}");
        }
        other => panic!("{what} in a forked child gave {other:?}, not GpuError::Forked"),
    }
}

#[test]
fn forked_children_refuse_the_parents_device_and_can_make_their_own() {
    let fresh = in_child(|| match device() {
        Ok(d) => {
            assert_eq!(sign(&d).unwrap(), signs());
            0
        }
        Err(GpuError::NoAdapter { .. }) => NO_ADAPTER,
        Err(e) => panic!("a device created in a forked child failed: {e}"),
    });
    if fresh == NO_ADAPTER {
        ewise_testkit::skip_without_gpu("no GPU adapter in a forked child");
        return;
    }
    assert_eq!(fresh, 0, "a device created in a forked child did not work");

    let device = device().unwrap();
    assert_eq!(sign(&device).unwrap(), signs());
    let parent = std::process::id();
    let operator = device.create_operator(&desc()).unwrap();
    let compiled = operator.compile().unwrap();
    let buffer = GpuBuffer::from_bytes(&device, &values()).unwrap();
    let output = GpuBuffer::zeroed(&device, 24).unwrap();
    let op = StreamOp::Sign(NanPolicy::Zero);
    let mut stream = GpuStream::new(&device, op, DataType::Float32, DataType::Float32, 64).unwrap();
    assert_eq!(stream.run(40, &mut Zeros).unwrap(), 40);
    let status = in_child(move || {
        let start = Instant::now();
        forked("sign", parent, sign(&device));
        forked("create_operator", parent, device.create_operator(&desc()));
        forked("compile", parent, operator.compile());
        let whole = BufferBinding::new(0, 0, 24);
        let out = BufferBinding { buffer: 1, ..whole };
        forked(
            "execute",
            parent,
            compiled.execute(&[&buffer, &output], &[whole], &[out]),
        );
        forked("write", parent, buffer.write(&device, 0, &[0; 4]));
        forked("read", parent, buffer.read(&device));
        forked("zeroed", parent, GpuBuffer::zeroed(&device, 4));
        forked(
            "from_bytes",
            parent,
            GpuBuffer::from_bytes(&device, &[0; 4]),
        );
        forked("synchronize", parent, device.synchronize());
        forked("GpuStream::run", parent, stream.run(10, &mut Never));
        forked(
            "GpuStream::new",
            parent,
            GpuStream::new(&device, op, DataType::Float32, DataType::Float32, 64),
        );
        let text = device.synchronize().unwrap_err().to_string();
        assert!(
            text.contains(&format!("created in process {parent}"))
                && text.contains("do not survive fork()")
                && text.contains("spawn or forkserver"),
            "{text}"
        );
        drop((stream, compiled, operator, buffer, output, device));
        assert!(
            start.elapsed() < PROMPT,
            "the forked child took {:?}",
            start.elapsed()
        );
        0
    });
    assert_eq!(status, 0, "the forked child failed");
}
