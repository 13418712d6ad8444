//! `ewise_gpu::stream`: every data type of SIGN and IS_INFINITY streamed through small
//! chunks, bit for bit against `ewise-core`'s reference, for counts around the chunk
//! length; runs stopped before a chunk; errors of the ends ending a run; one stream
//! reused across runs of every size.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{device, noise};
use ewise_core::reference::{is_infinity_bits, sign_bits};
use ewise_core::{DataType, InfinityMode, NanPolicy};
use ewise_gpu::stream::{ChunkEnds, GpuStream, StreamOp};
use ewise_gpu::GpuError;

use DataType::*;

/// Bytes of input per chunk in these tests: 8 to 64 elements.
const CHUNK_BYTES: usize = 64;

/// Why a test's ends refused to go on.
#[derive(Debug, PartialEq)]
enum Failure {
    Gpu(GpuError),
    Refused(&'static str, u64),
}

impl From<GpuError> for Failure {
    fn from(e: GpuError) -> Failure {
        Failure::Gpu(e)
    }
}

/// Ends over two byte vectors that record every call and can fail or stop on request.
struct Slices {
    input: Vec<u8>,
    output: Vec<u8>,
    sizes: (usize, usize),
    reads: Vec<(u64, usize)>,
    writes: Vec<(u64, usize)>,
    asked: Vec<u64>,
    stop_at: Option<u64>,
    fail: Option<(&'static str, u64)>,
}

impl Slices {
    fn new(input: Vec<u8>, sizes: (usize, usize)) -> Slices {
        let count = input.len() / sizes.0;
        Slices {
            input,
            output: vec![0xA5; count * sizes.1],
            sizes,
            reads: Vec::new(),
            writes: Vec::new(),
            asked: Vec::new(),
            stop_at: None,
            fail: None,
        }
    }

    fn check(&self, call: &'static str, start: u64) -> Result<(), Failure> {
        match self.fail {
            Some((c, at)) if c == call && at == start => Err(Failure::Refused(call, start)),
            _ => Ok(()),
        }
    }
}

impl ChunkEnds for Slices {
    type Error = Failure;

    fn read(&mut self, start: u64, bytes: &mut [u8]) -> Result<(), Failure> {
        self.check("read", start)?;
        assert_eq!(bytes.len() % self.sizes.0, 0);
        let at = start as usize * self.sizes.0;
        bytes.copy_from_slice(&self.input[at..at + bytes.len()]);
        self.reads.push((start, bytes.len() / self.sizes.0));
        Ok(())
    }

    fn write(&mut self, start: u64, outputs: &[&[u8]]) -> Result<(), Failure> {
        let [bytes] = outputs else {
            panic!("{} outputs for a one-step program", outputs.len())
        };
        self.check("write", start)?;
        assert_eq!(bytes.len() % self.sizes.1, 0);
        let at = start as usize * self.sizes.1;
        self.output[at..at + bytes.len()].copy_from_slice(bytes);
        self.writes.push((start, bytes.len() / self.sizes.1));
        Ok(())
    }

    fn stop_before(&mut self, start: u64) -> Result<bool, Failure> {
        self.check("stop_before", start)?;
        assert!(
            self.asked.last().is_none_or(|&last| last < start),
            "asked again at {start} after {:?}",
            self.asked
        );
        self.asked.push(start);
        Ok(self.stop_at.is_some_and(|at| start >= at))
    }
}

fn size(t: DataType) -> usize {
    t.size_in_bytes().unwrap() as usize
}

fn bits(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    if cfg!(target_endian = "little") {
        word[..bytes.len()].copy_from_slice(bytes);
        u64::from_le_bytes(word)
    } else {
        word[8 - bytes.len()..].copy_from_slice(bytes);
        u64::from_be_bytes(word)
    }
}

fn to_bytes(value: u64, size: usize) -> Vec<u8> {
    if cfg!(target_endian = "little") {
        value.to_le_bytes()[..size].to_vec()
    } else {
        value.to_be_bytes()[8 - size..].to_vec()
    }
}

/// Values that matter for a type: zeros, ones, infinities, NaNs, integer extremes.
fn specials(t: DataType) -> Vec<u64> {
    match t {
        Float32 => vec![
            0,
            0x8000_0000,
            0x3f80_0000,
            0xbf80_0000,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0001,
            0xffc0_0000,
            1,
        ],
        Float64 => vec![
            0,
            1 << 63,
            0x3ff0 << 48,
            0xbff0 << 48,
            0x7ff0 << 48,
            0xfff0 << 48,
            (0x7ff8 << 48) | 5,
            1,
        ],
        Float16 => vec![0, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e01, 0xfe00, 1],
        Bfloat16 => vec![0, 0x8000, 0x3f80, 0xbf80, 0x7f80, 0xff80, 0x7fc1, 0xffc0, 1],
        Float8E5M2 | Float8E5M2Fnuz | Float8E4M3Fn | Float8E4M3Fnuz => {
            vec![0, 0x80, 0x7c, 0xfc, 0x7f, 0xff, 0x7e, 0x01]
        }
        _ => {
            let bits = size(t) * 8;
            let max = u64::MAX >> (64 - bits);
            vec![0, 1, max, max >> 1, (max >> 1) + 1, 2]
        }
    }
}

/// `count` elements of `t`: the special values, then noise.
fn input(t: DataType, count: usize, seed: u64) -> Vec<u8> {
    let s = size(t);
    let mut bytes = noise(count * s, seed);
    for (k, v) in specials(t).into_iter().enumerate().take(count) {
        bytes[k * s..(k + 1) * s].copy_from_slice(&to_bytes(v, s));
    }
    bytes
}

/// What `op` gives for `input` under the reference.
fn expected(op: StreamOp, (t, out): (DataType, DataType), input: &[u8]) -> Vec<u8> {
    input
        .chunks_exact(size(t))
        .flat_map(|e| {
            let b = bits(e);
            let r = match op {
                StreamOp::Sign(policy) => sign_bits(t, b, policy).unwrap(),
                StreamOp::IsInfinity(mode) => u64::from(is_infinity_bits(t, b, mode).unwrap()),
            };
            to_bytes(r, size(out))
        })
        .collect()
}

/// Runs `count` elements through `stream` and checks the calls and the bits.
fn run_and_compare(stream: &mut GpuStream, count: usize, seed: u64) {
    let step = stream.stream_program().steps()[0];
    let (types, op) = ((step.input_type, step.output_type), step.op);
    let data = input(types.0, count, seed);
    let want = expected(op, types, &data);
    let mut ends = Slices::new(data, (size(types.0), size(types.1)));
    let written = stream.run(count as u64, &mut ends).unwrap();
    let label = format!("{op:?} {types:?} count {count}");
    assert_eq!(written, count as u64, "{label}");
    let chunk = stream.chunk_elements();
    let chunks: Vec<(u64, usize)> = (0..count)
        .step_by(chunk.max(1))
        .map(|s| (s as u64, chunk.min(count - s)))
        .collect();
    assert_eq!(ends.reads, chunks, "{label}");
    assert_eq!(ends.writes, chunks, "{label}");
    let asked: Vec<u64> = chunks.iter().map(|c| c.0).collect();
    assert_eq!(ends.asked, asked, "{label}");
    assert!(
        ends.output == want,
        "{label}: results differ from the reference"
    );
}

/// Runs one stream over counts around its chunk length, small and large in turn, so
/// that its buffers are reused, grown and kept.
fn around_the_chunk(stream: &mut GpuStream, seed: u64) {
    let c = stream.chunk_elements();
    assert_eq!(c, CHUNK_BYTES / size(stream.input_type()));
    for (k, count) in [0, 1, c - 1, c, c + 1, 5 * c + 3, 1, c + 1]
        .into_iter()
        .enumerate()
    {
        run_and_compare(stream, count, seed + k as u64);
    }
}

#[test]
fn sign_streams_give_the_reference_bits_for_every_type() {
    let Some(device) = device() else { return };
    for (i, &t) in common::sign_types().iter().enumerate() {
        for policy in [NanPolicy::Zero, NanPolicy::Propagate] {
            let mut stream =
                GpuStream::new(device, StreamOp::Sign(policy), t, t, CHUNK_BYTES).unwrap();
            around_the_chunk(&mut stream, 100 * i as u64);
        }
    }
}

#[test]
fn is_infinity_streams_give_the_reference_bits_for_every_type() {
    let Some(device) = device() else { return };
    for (i, &t) in common::infinity_types().iter().enumerate() {
        let mut cases: Vec<(InfinityMode, DataType)> =
            InfinityMode::ALL.iter().map(|&m| (m, Uint8)).collect();
        cases.push((InfinityMode::Either, Bool));
        for (mode, out) in cases {
            let op = StreamOp::IsInfinity(mode);
            let mut stream = GpuStream::new(device, op, t, out, CHUNK_BYTES).unwrap();
            around_the_chunk(&mut stream, 1000 + 100 * i as u64);
        }
    }
}

fn float_stream() -> Option<GpuStream> {
    let device = device()?;
    let op = StreamOp::Sign(NanPolicy::Zero);
    Some(GpuStream::new(device, op, Float32, Float32, CHUNK_BYTES).unwrap())
}

#[test]
fn a_stopped_run_writes_exactly_the_chunks_it_read() {
    let Some(mut stream) = float_stream() else {
        return;
    };
    let c = stream.chunk_elements() as u64;
    let count = 6 * c + 5;
    let data = input(Float32, count as usize, 7);
    let want = expected(
        stream.stream_program().steps()[0].op,
        (Float32, Float32),
        &data,
    );
    for stop in [0, c, 3 * c, 6 * c] {
        let mut ends = Slices::new(data.clone(), (4, 4));
        ends.stop_at = Some(stop);
        let written = stream.run(count, &mut ends).unwrap();
        assert_eq!(written, stop);
        let chunks: Vec<(u64, usize)> = (0..stop)
            .step_by(c as usize)
            .map(|s| (s, c as usize))
            .collect();
        assert_eq!(ends.reads, chunks, "stop at {stop}");
        assert_eq!(ends.writes, chunks, "stop at {stop}");
        assert_eq!(ends.asked.last(), Some(&stop), "stop at {stop}");
        let done = stop as usize * 4;
        assert!(ends.output[..done] == want[..done], "stop at {stop}");
        assert!(
            ends.output[done..].iter().all(|&b| b == 0xA5),
            "stop at {stop}"
        );
    }
    run_and_compare(&mut stream, count as usize, 8);
}

#[test]
fn errors_of_the_ends_end_the_run_and_the_stream_stays_usable() {
    let Some(mut stream) = float_stream() else {
        return;
    };
    let c = stream.chunk_elements() as u64;
    let count = 5 * c;
    for (call, at) in [
        ("read", 0),
        ("read", 2 * c),
        ("write", 0),
        ("write", 3 * c),
        ("stop_before", c),
    ] {
        let mut ends = Slices::new(input(Float32, count as usize, 3), (4, 4));
        ends.fail = Some((call, at));
        let err = stream.run(count, &mut ends).unwrap_err();
        assert_eq!(err, Failure::Refused(call, at));
        assert!(ends.reads.iter().all(|r| r.0 < at || call != "read"));
        assert!(ends.writes.iter().all(|w| w.0 < at || call != "write"));
        run_and_compare(&mut stream, count as usize + 1, 4);
    }
}

#[test]
fn streams_validate_their_operator_and_bound_their_chunks() {
    let Some(device) = device() else { return };
    let either = StreamOp::IsInfinity(InfinityMode::Either);
    let err = GpuStream::new(device, either, Int32, Uint8, CHUNK_BYTES).unwrap_err();
    assert!(matches!(err, GpuError::Op(_)), "{err}");
    let sign = StreamOp::Sign(NanPolicy::Zero);
    let err = GpuStream::new(device, sign, Float8E5M2, Float8E5M2, CHUNK_BYTES).unwrap_err();
    assert!(matches!(err, GpuError::Op(_)), "{err}");
    let err = GpuStream::new(device, sign, Float32, Int32, CHUNK_BYTES).unwrap_err();
    assert!(matches!(err, GpuError::Op(_)), "{err}");
    let chunk = |t, bytes| {
        GpuStream::new(device, sign, t, t, bytes)
            .unwrap()
            .chunk_elements()
    };
    assert_eq!(chunk(Float32, 0), 1);
    assert_eq!(chunk(Float32, 10), 2);
    assert_eq!(chunk(Float64, 8 << 20), 1 << 20);
    assert_eq!(chunk(Uint8, usize::MAX), u32::MAX as usize);
}

/// Int8 elements whose value is the low byte of their index, checked as they are
/// written rather than kept.
struct Counting {
    next_write: u64,
}

impl ChunkEnds for Counting {
    type Error = GpuError;

    fn read(&mut self, start: u64, bytes: &mut [u8]) -> Result<(), GpuError> {
        for (k, b) in bytes.iter_mut().enumerate() {
            *b = (start + k as u64) as u8;
        }
        Ok(())
    }

    fn write(&mut self, start: u64, outputs: &[&[u8]]) -> Result<(), GpuError> {
        let [bytes] = outputs else {
            panic!("{} outputs for a one-step program", outputs.len())
        };
        assert_eq!(start, self.next_write);
        for (k, &b) in bytes.iter().enumerate() {
            let x = (start + k as u64) as u8 as i8;
            assert_eq!(b as i8, x.signum(), "element {}", start + k as u64);
        }
        self.next_write += bytes.len() as u64;
        Ok(())
    }

    fn stop_before(&mut self, _: u64) -> Result<bool, GpuError> {
        Ok(false)
    }
}

/// More elements than 32 bits count (4 GiB through the GPU: about 40 s on lavapipe);
/// run with `cargo test -p ewise-gpu --test stream -- --ignored`.
#[test]
#[ignore]
fn counts_beyond_32_bits_stream_through() {
    let Some(device) = device() else { return };
    let op = StreamOp::Sign(NanPolicy::Zero);
    let chunk = ewise_gpu::stream::DEFAULT_CHUNK_BYTES;
    let mut stream = GpuStream::new(device, op, Int8, Int8, chunk).unwrap();
    let count = (1u64 << 32) + 3;
    let mut ends = Counting { next_write: 0 };
    assert_eq!(stream.run(count, &mut ends).unwrap(), count);
    assert_eq!(ends.next_write, count);
}

/// Ends over one input and any number of outputs, collected in order.
struct Outputs {
    input: Vec<u8>,
    size: usize,
    outputs: Vec<Vec<u8>>,
}

impl ChunkEnds for Outputs {
    type Error = GpuError;

    fn read(&mut self, start: u64, bytes: &mut [u8]) -> Result<(), GpuError> {
        let at = start as usize * self.size;
        bytes.copy_from_slice(&self.input[at..at + bytes.len()]);
        Ok(())
    }

    fn write(&mut self, _: u64, outputs: &[&[u8]]) -> Result<(), GpuError> {
        assert_eq!(outputs.len(), self.outputs.len());
        for (all, chunk) in self.outputs.iter_mut().zip(outputs) {
            all.extend_from_slice(chunk);
        }
        Ok(())
    }

    fn stop_before(&mut self, _: u64) -> Result<bool, GpuError> {
        Ok(false)
    }
}

#[test]
fn programs_chain_steps_through_scratch_in_place_and_copy_the_input() {
    use ewise_gpu::stream::{Place, ProgramStep, StreamProgram};

    let Some(device) = device() else { return };
    let zero = StreamOp::Sign(NanPolicy::Zero);
    let keep = StreamOp::Sign(NanPolicy::Propagate);
    let negative = StreamOp::IsInfinity(InfinityMode::Negative);
    for t in [Float32, Float16, Bfloat16, Float64] {
        let step = |op, from, to| ProgramStep {
            op,
            input_type: t,
            output_type: if matches!(op, StreamOp::IsInfinity(_)) {
                Uint8
            } else {
                t
            },
            from,
            to,
        };
        let program = StreamProgram::new(
            t,
            vec![Uint8, t, t, Uint8],
            vec![
                step(keep, Place::Input, Place::Scratch(0)),
                step(zero, Place::Scratch(0), Place::Scratch(0)),
                step(negative, Place::Input, Place::Output(0)),
                step(keep, Place::Scratch(0), Place::Output(2)),
                step(negative, Place::Output(2), Place::Output(3)),
            ],
        )
        .unwrap();
        let mut stream = GpuStream::program(device, program, CHUNK_BYTES).unwrap();
        let count = 5 * stream.chunk_elements() + 3;
        let data = input(t, count, 11);
        let mut ends = Outputs {
            input: data.clone(),
            size: size(t),
            outputs: vec![Vec::new(); 4],
        };
        assert_eq!(stream.run(count as u64, &mut ends).unwrap(), count as u64);
        let signs = expected(zero, (t, t), &expected(keep, (t, t), &data));
        let want = [
            expected(negative, (t, Uint8), &data),
            data.clone(),
            expected(keep, (t, t), &signs),
            expected(negative, (t, Uint8), &signs),
        ];
        for (k, (got, want)) in ends.outputs.iter().zip(&want).enumerate() {
            assert!(got == want, "{t:?}: output {k} differs from the reference");
        }
    }
}

#[test]
fn programs_a_device_cannot_run_are_refused_before_running() {
    use ewise_gpu::stream::{Place, ProgramStep, StreamProgram};

    let Some(device) = device() else { return };
    let program = StreamProgram::new(
        Int8,
        vec![Uint8],
        vec![ProgramStep {
            op: StreamOp::IsInfinity(InfinityMode::Either),
            input_type: Int8,
            output_type: Uint8,
            from: Place::Input,
            to: Place::Output(0),
        }],
    )
    .unwrap();
    let err = GpuStream::program(device, program, CHUNK_BYTES).unwrap_err();
    assert!(matches!(err, GpuError::Op(_)), "{err}");
}
