//! `ewise bench --device gpu`: each operator and data type timed on the GPU beside a
//! WGSL copy kernel and wgpu's `copy_buffer_to_buffer` of the same bytes and a WGSL read
//! of its input, interleaved; plus the wall time of `execute` on tiny tensors beside a
//! bare submit + wait, and the CPU time of recording one dispatch.
//!
//! Every timing is a batch of back-to-back calls between two timestamps (or the wall time
//! of its submit + wait where the adapter has no timestamps), each call on the next slot
//! of two pools of buffers (inputs and outputs) large enough that a slot is evicted from
//! the GPU's cache before it is used again.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use ewise_cpu::{DataType, FeatureLevel, NanPolicy, OperatorDesc, TensorDesc};
use ewise_gpu::{
    record_buffer_copy, BaselineKernel, BaselineKind, GpuBuffer, GpuCompiledOperator, GpuDevice,
    GpuTimer, Tuning, BASELINE_VECTOR,
};

use super::{desc, optional, output_elements, pattern_bytes, read_bytes, BenchArgs, Layout};
use crate::interrupt;
use crate::table::Table;

/// Element counts timed when `--sizes` is not given, before the 1 GiB-of-input size.
const DEFAULT_SIZES: [u32; 3] = [1 << 20, 16 << 20, 256 << 20];

/// Input bytes of the extra default size.
const GIB: u64 = 1 << 30;

/// Bytes a slot's reuse is spread over on hardware GPUs: beyond twice the largest GPU
/// caches (50 MiB on an H100, 128 MiB on the largest).
const ROTATE_HARDWARE: u64 = 256 << 20;

/// The same on software renderers, whose cache is the host CPU's.
const ROTATE_SOFTWARE: u64 = 32 << 20;

/// Bytes one timed batch moves at least, up to [`MAX_BATCH`] calls.
const BATCH_BYTES: u64 = 64 << 20;

/// Calls per timed batch at most.
const MAX_BATCH: u64 = 64;

/// Slot sizes are multiples of this, which every storage offset alignment divides.
const SLOT_ALIGN: u64 = 256;

/// Bytes of the input pattern uploaded again and again to fill a pool.
const PATTERN_CHUNK: usize = 4 << 20;

/// Calls of each kind per round in the overhead measurements.
const OVERHEAD_CALLS: u32 = 10;

/// Records per sample of the recording cost.
const RECORDS: u32 = 100;

/// One timed kind of work in a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Work {
    Operator,
    CopyKernel,
    CopyBuffer,
    Read,
}

impl Work {
    const ALL: [Work; 4] = [
        Work::Operator,
        Work::CopyKernel,
        Work::CopyBuffer,
        Work::Read,
    ];

    fn copy_name(self) -> &'static str {
        match self {
            Work::CopyKernel => "copy-kernel",
            Work::CopyBuffer => "copy-buffer-to-buffer",
            Work::Operator | Work::Read => "",
        }
    }
}

/// One measured case.
struct Row {
    op: &'static str,
    dtype: DataType,
    elements: u32,
    layout: Layout,
    policy: NanPolicy,
    /// Bytes the operator reads and writes per call.
    moved: u64,
    /// Bytes each copy copies per call.
    copied: u64,
    /// Median time per call of each [`Work`], in [`Work::ALL`]'s order.
    medians: [Duration; 4],
    batch: u64,
    rotation: u64,
    dispatches: usize,
    /// The kernels' tuning the operator was compiled with.
    tuning: Tuning,
}

impl Row {
    fn ns(&self, w: Work) -> f64 {
        let k = Work::ALL.iter().position(|&x| x == w).unwrap_or(0);
        self.medians[k].as_secs_f64() * 1e9
    }

    fn gbps(&self, w: Work) -> f64 {
        let bytes = match w {
            Work::Operator => self.moved,
            Work::CopyKernel | Work::CopyBuffer => 2 * self.copied,
            Work::Read => self.copied,
        };
        bytes as f64 / self.ns(w).max(1e-3)
    }

    fn best_copy(&self) -> (Work, f64) {
        [Work::CopyKernel, Work::CopyBuffer]
            .into_iter()
            .map(|w| (w, self.gbps(w)))
            .fold(
                (Work::CopyKernel, 0.0),
                |best, c| {
                    if c.1 > best.1 {
                        c
                    } else {
                        best
                    }
                },
            )
    }

    /// The input read's time over the operator's.
    fn vs_read(&self) -> f64 {
        self.ns(Work::Read) / self.ns(Work::Operator).max(1e-3)
    }
}

/// The wall-time and recording measurements.
struct Overheads {
    calls: u32,
    execute_1: Duration,
    execute_4096: Duration,
    bare: Duration,
    record: Duration,
}

/// Input and output pools: `len` bytes each, filled with the input pattern.
struct Pools {
    input: GpuBuffer,
    output: GpuBuffer,
    len: u64,
}

/// What a case needs: its slot size and how many slots it rotates through.
struct Plan {
    slot: u64,
    slots: u64,
    in_bind: u64,
    out_bind: u64,
    moved: u64,
    copied: u64,
    read: u64,
}

struct Bench {
    device: GpuDevice,
    timer: GpuTimer,
    copy: BaselineKernel,
    read: BaselineKernel,
    pools: Option<Pools>,
    rotate: u64,
    max_buffer: u64,
    samples: u32,
    policy: NanPolicy,
}

/// Runs `ewise bench --device gpu` over `cases` x sizes x `layouts` and prints the table
/// or JSON.
pub(super) fn run(
    args: &BenchArgs,
    cases: &[(&'static str, DataType)],
    layouts: &[Layout],
) -> Result<()> {
    if args.threads != 0 {
        bail!("--threads applies to --device cpu only (the GPU runs one queue)");
    }
    let tunings = tunings(args)?;
    let device = crate::gpu::open(FeatureLevel::LATEST)?;
    let timer = GpuTimer::new(&device).context("--device gpu: creating the timer")?;
    let rotate = if device.adapter().is_software() {
        ROTATE_SOFTWARE
    } else {
        ROTATE_HARDWARE
    };
    let mut bench = Bench {
        copy: BaselineKernel::new(&device, BaselineKind::Copy)?,
        read: BaselineKernel::new(&device, BaselineKind::Read)?,
        max_buffer: device.wgpu_device().limits().max_buffer_size,
        device,
        timer,
        pools: None,
        rotate,
        samples: args.samples,
        policy: args.nan.into(),
    };
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for &(op, dtype) in cases {
        for (elements, optional) in sizes(args, dtype) {
            for &layout in layouts {
                for &tuning in &tunings {
                    interrupt::check()?;
                    bench.device.set_tuning(tuning)?;
                    let case = (op, dtype, elements, layout);
                    match bench.measure(case, optional)? {
                        Ok(row) => {
                            // JSON rows go out as they are measured (one per line), so
                            // that a run stopped part way has given what it measured.
                            if args.json {
                                let sep = if rows.is_empty() { "[\n" } else { ",\n" };
                                crate::print(&format!("{sep}{}", case_json(&bench, &row)))?;
                            }
                            rows.push(row);
                        }
                        Err(note) => {
                            if args.json {
                                eprintln!("ewise: {note}");
                            }
                            notes.push(note);
                            // The same case under another tuning does not fit either.
                            break;
                        }
                    }
                }
            }
        }
    }
    bench.pools = None;
    // The overheads are measured under the last tuning (the only one, unless swept).
    if rows.is_empty() {
        bail!("no case could be measured: {}", notes.join("; "));
    }
    interrupt::check()?;
    let overheads = bench.overheads()?;
    let tuning = bench.device.tuning();
    let text = if args.json {
        format!(",\n{}\n]\n", overhead_json(&bench, &overheads, tuning))
    } else {
        table(&bench, &rows, &overheads, &notes, tunings.len() > 1)
    };
    crate::print(&text)
}

/// Every combination of the `--gpu-loads-in-flight` and `--gpu-min-row-units` values
/// (the library's default for an option not given), each validated.
fn tunings(args: &BenchArgs) -> Result<Vec<Tuning>> {
    let default = Tuning::default();
    let loads = if args.gpu_loads_in_flight.is_empty() {
        vec![default.loads_in_flight]
    } else {
        args.gpu_loads_in_flight.clone()
    };
    let mins = if args.gpu_min_row_units.is_empty() {
        vec![default.min_row_units]
    } else {
        args.gpu_min_row_units.clone()
    };
    let mut all = Vec::new();
    for &loads_in_flight in &loads {
        for &min_row_units in &mins {
            let t = Tuning {
                loads_in_flight,
                min_row_units,
            };
            all.push(
                t.validated()
                    .context("--gpu-loads-in-flight / --gpu-min-row-units")?,
            );
        }
    }
    Ok(all)
}

/// The element counts to time for `dtype`, each with whether it is the optional 1 GiB
/// size (skipped with a note where it does not fit).
fn sizes(args: &BenchArgs, dtype: DataType) -> Vec<(u32, bool)> {
    if !args.sizes.is_empty() {
        return args.sizes.iter().map(|&n| (n, false)).collect();
    }
    let mut sizes: Vec<(u32, bool)> = DEFAULT_SIZES.iter().map(|&n| (n, false)).collect();
    let size = dtype.size_in_bytes().unwrap_or(1).max(1);
    let gib = u32::try_from(GIB / size).unwrap_or(u32::MAX);
    if !DEFAULT_SIZES.contains(&gib) {
        sizes.push((gib, true));
    }
    sizes
}

fn round_up(n: u64, to: u64) -> u64 {
    n.div_ceil(to) * to
}

/// Bytes of memory the host has available, for software adapters, whose buffers live
/// there.
fn host_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn mib(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / f64::from(1 << 20))
}

impl Bench {
    fn plan(&self, desc: &OperatorDesc, layout: Layout) -> Plan {
        let in_span = read_bytes(desc, layout).unwrap_or(0);
        let out_span = desc.output().exact_span_in_bytes().unwrap_or(0);
        let in_bind = desc.input().total_tensor_size_in_bytes;
        let out_bind = desc.output().total_tensor_size_in_bytes;
        let moved = in_span + out_span;
        let copied = round_up(moved / 2, BASELINE_VECTOR).max(BASELINE_VECTOR);
        let read = round_up(in_span, BASELINE_VECTOR).max(BASELINE_VECTOR);
        let slot = round_up(in_bind.max(out_bind).max(copied).max(read), SLOT_ALIGN);
        let wanted = self.rotate.div_ceil(moved.max(1)).max(1);
        let slots = wanted.min(self.max_buffer / slot).max(1);
        Plan {
            slot,
            slots,
            in_bind,
            out_bind,
            moved,
            copied,
            read,
        }
    }

    /// Pools of at least `len` bytes each, made (and filled) when the current ones are
    /// smaller; `Err` holds why they cannot be.
    fn pools(&mut self, len: u64) -> Result<Result<(), String>> {
        if self.pools.as_ref().is_some_and(|p| p.len >= len) {
            return Ok(Ok(()));
        }
        self.pools = None;
        if len > self.max_buffer {
            return Ok(Err(format!(
                "needs buffers of {}, the adapter allows {}",
                mib(len),
                mib(self.max_buffer)
            )));
        }
        if self.device.adapter().is_software() {
            if let Some(available) = host_available() {
                if 4 * len > available {
                    return Ok(Err(format!(
                        "needs {} of buffers on a software renderer, the host has {} available",
                        mib(2 * len),
                        mib(available)
                    )));
                }
            }
        }
        let made = GpuBuffer::zeroed(&self.device, len).and_then(|input| {
            let output = GpuBuffer::zeroed(&self.device, len)?;
            Ok((input, output))
        });
        let (input, output) = match made {
            Ok(p) => p,
            Err(e) => return Ok(Err(format!("cannot allocate 2 x {}: {e}", mib(len)))),
        };
        let chunk = pattern_bytes(PATTERN_CHUNK);
        let mut since_wait = 0;
        let mut at = 0;
        while at < len {
            interrupt::check()?;
            let n = (len - at).min(chunk.len() as u64);
            for buffer in [&input, &output] {
                buffer.write(&self.device, at, &chunk[..n as usize])?;
            }
            at += n;
            since_wait += 2 * n;
            if since_wait >= 256 << 20 {
                self.device.synchronize()?;
                since_wait = 0;
            }
        }
        self.device.synchronize()?;
        self.pools = Some(Pools { input, output, len });
        Ok(Ok(()))
    }

    /// Measures one case; `Ok(Err(note))` when it does not fit the device.
    fn measure(
        &mut self,
        (op, dtype, elements, layout): (&'static str, DataType, u32, Layout),
        optional: bool,
    ) -> Result<Result<Row, String>> {
        let name = format!("{op} {} x {elements} {}", dtype.name(), layout.name());
        let desc = desc(op, dtype, elements, layout);
        let elements = output_elements(&desc);
        let plan = self.plan(&desc, layout);
        let fitted = self.pools(plan.slot * plan.slots)?;
        if let Err(why) = fitted {
            let what = if optional {
                "the 1 GiB-of-input size"
            } else {
                "size"
            };
            return Ok(Err(format!("skipped {name} ({what}): {why}")));
        }
        let compiled = self
            .device
            .create_operator(&desc)
            .map(|o| o.with_nan_policy(self.policy))
            .and_then(|o| o.compile())
            .with_context(|| name.clone())?;
        let pools = self.pools.as_ref().context("pools")?;
        let slots = pools.len / plan.slot;
        let batch = BATCH_BYTES
            .div_ceil(plan.moved.max(1))
            .clamp(1, MAX_BATCH.min(slots));
        let mut next = 0u64;
        let mut times: [Vec<Duration>; 4] = Default::default();
        for round in 0..self.samples + 2 {
            interrupt::check()?;
            for (k, &work) in Work::ALL.iter().enumerate() {
                let first = next;
                next = (next + batch) % slots;
                let t = self
                    .time_batch(work, &compiled, &plan, (first, batch, slots))
                    .with_context(|| name.clone())?;
                if round >= 2 {
                    times[k].push(t / batch as u32);
                }
            }
        }
        let medians = times.map(|mut v| {
            v.sort();
            v[v.len() / 2]
        });
        Ok(Ok(Row {
            op,
            dtype,
            elements,
            layout,
            policy: self.policy,
            moved: plan.moved,
            copied: plan.copied,
            medians,
            batch,
            rotation: slots * plan.moved,
            dispatches: compiled.dispatches(),
            tuning: self.device.tuning(),
        }))
    }

    /// Times `batch` calls of `work`, on slots `first`, `first + 1`, ... (modulo `slots`).
    fn time_batch(
        &mut self,
        work: Work,
        compiled: &GpuCompiledOperator,
        plan: &Plan,
        (first, batch, slots): (u64, u64, u64),
    ) -> Result<Duration> {
        let Some(pools) = &self.pools else {
            bail!("no buffers");
        };
        let offsets: Vec<u64> = (0..batch)
            .map(|k| (first + k) % slots * plan.slot)
            .collect();
        let (input, output) = (&pools.input, &pools.output);
        let bound = match work {
            Work::CopyKernel => offsets
                .iter()
                .map(|&at| self.copy.bind((input, at), (output, at), plan.copied))
                .collect::<Result<Vec<_>, _>>()?,
            Work::Read => offsets
                .iter()
                .map(|&at| self.read.bind((input, at), (output, at), plan.read))
                .collect::<Result<Vec<_>, _>>()?,
            Work::Operator | Work::CopyBuffer => Vec::new(),
        };
        let time = self.timer.time(|encoder| {
            for (k, &at) in offsets.iter().enumerate() {
                match work {
                    Work::Operator => compiled.record(
                        encoder,
                        &[input, output],
                        &[ewise_cpu::BufferBinding::new(0, at, plan.in_bind)],
                        &[ewise_cpu::BufferBinding::new(1, at, plan.out_bind)],
                    )?,
                    Work::CopyBuffer => {
                        record_buffer_copy(encoder, (input, at), (output, at), plan.copied)?
                    }
                    Work::CopyKernel | Work::Read => bound[k].record(encoder),
                }
            }
            Ok(())
        })?;
        Ok(time)
    }

    /// Wall time of `execute` on 1 and 4096 float32 elements and of a bare submit + wait
    /// of one dispatch, interleaved; CPU time of recording one dispatch.
    fn overheads(&self) -> Result<Overheads> {
        let device = &self.device;
        let operator = |n: u32| -> Result<(GpuCompiledOperator, u64)> {
            let t = TensorDesc::new(DataType::Float32, &[n]);
            let size = t.total_tensor_size_in_bytes;
            let compiled = device
                .create_operator(&OperatorDesc::sign(t.clone(), t))
                .map(|o| o.with_nan_policy(self.policy))
                .and_then(|o| o.compile())?;
            Ok((compiled, size))
        };
        let (one, one_len) = operator(1)?;
        let (many, many_len) = operator(4096)?;
        let input = GpuBuffer::from_bytes(device, &pattern_bytes(many_len as usize))?;
        let output = GpuBuffer::zeroed(device, many_len)?;
        let bare = self.copy.bind((&input, 0), (&output, 0), BASELINE_VECTOR)?;
        let execute = |op: &GpuCompiledOperator, len: u64| -> Result<Duration> {
            let binding = ewise_cpu::BufferBinding::new(0, 0, len);
            let out = ewise_cpu::BufferBinding {
                buffer: 1,
                ..binding
            };
            let start = Instant::now();
            op.execute(&[&input, &output], &[binding], &[out])?;
            Ok(start.elapsed())
        };
        let calls = self.samples * OVERHEAD_CALLS;
        let mut times: [Vec<Duration>; 3] = Default::default();
        for k in 0..calls + 2 {
            interrupt::check()?;
            let t = [execute(&one, one_len)?, execute(&many, many_len)?, {
                let start = Instant::now();
                bare.submit_and_wait()?;
                start.elapsed()
            }];
            if k >= 2 {
                for (v, t) in times.iter_mut().zip(t) {
                    v.push(t);
                }
            }
        }
        let mut records = Vec::new();
        let binding = ewise_cpu::BufferBinding::new(0, 0, many_len);
        let out = ewise_cpu::BufferBinding {
            buffer: 1,
            ..binding
        };
        for _ in 0..self.samples {
            interrupt::check()?;
            let mut encoder = device
                .wgpu_device()
                .create_command_encoder(&Default::default());
            let start = Instant::now();
            for _ in 0..RECORDS {
                many.record(&mut encoder, &[&input, &output], &[binding], &[out])?;
            }
            records.push(start.elapsed() / RECORDS);
        }
        let median = |mut v: Vec<Duration>| {
            v.sort();
            v[v.len() / 2]
        };
        let [e1, e4096, b] = times;
        Ok(Overheads {
            calls,
            execute_1: median(e1),
            execute_4096: median(e4096),
            bare: median(b),
            record: median(records),
        })
    }
}

fn micros(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e6)
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-12)
}

fn table(bench: &Bench, rows: &[Row], o: &Overheads, notes: &[String], swept: bool) -> String {
    let mut header = vec![
        "op",
        "dtype",
        "elements",
        "layout",
        "GB/s",
        "best copy",
        "GB/s",
        "ratio",
        "ns/call",
        "vs read",
        "batch",
        "rotated",
    ];
    if swept {
        header.extend(["loads", "min row units"]);
    }
    let mut t = Table::new(&header);
    for r in rows {
        let (copy, best) = r.best_copy();
        let mut cells = vec![
            r.op.to_string(),
            r.dtype.name().to_lowercase(),
            r.elements.to_string(),
            r.layout.label(),
            format!("{:.1}", r.gbps(Work::Operator)),
            copy.copy_name().to_string(),
            format!("{best:.1}"),
            format!("{:.2}", r.gbps(Work::Operator) / best.max(1e-9)),
            format!("{:.0}", r.ns(Work::Operator)),
            format!("{:.2}", r.vs_read()),
            r.batch.to_string(),
            mib(r.rotation),
        ];
        if swept {
            cells.extend([
                r.tuning.loads_in_flight.to_string(),
                r.tuning.min_row_units.to_string(),
            ]);
        }
        t.row(cells);
    }
    let timer = bench.timer.kind();
    let how = match timer {
        ewise_gpu::TimerKind::Timestamps => "GPU time between two timestamp queries",
        ewise_gpu::TimerKind::Wall => {
            "wall time of submit + wait: the adapter has no timestamp queries"
        }
    };
    let mut out = format!(
        "ewise bench --device gpu: {}\ntimer: {timer} ({how}), per call of a batch of \
         back-to-back calls; median of {} rounds; SIGN with NaN policy {}; GB/s = bytes read \
         + written per second; ratio = GB/s / best copy of the same bytes\n\
         tuning: {}\n\n",
        bench.device.adapter(),
        bench.samples,
        bench.policy,
        if swept {
            "per row (loads in flight, the row kernel's minimum units per row)".to_string()
        } else {
            let t = rows.first().map_or(Tuning::default(), |r| r.tuning);
            format!(
                "{} loads in flight, the row kernel from {} units per row",
                t.loads_in_flight, t.min_row_units
            )
        },
    );
    out.push_str(&t.render(""));
    let mut w = Table::new(&["overhead (wall time)", "us", "vs bare"]);
    w.row(vec![
        "execute, 1 float32 element".into(),
        micros(o.execute_1),
        format!("{:.2}", ratio(o.execute_1, o.bare)),
    ]);
    w.row(vec![
        "execute, 4096 float32 elements".into(),
        micros(o.execute_4096),
        format!("{:.2}", ratio(o.execute_4096, o.bare)),
    ]);
    w.row(vec![
        "bare wgpu submit + wait of one dispatch".into(),
        micros(o.bare),
        "1.00".into(),
    ]);
    w.row(vec![
        "record one dispatch (CPU time)".into(),
        micros(o.record),
        "-".into(),
    ]);
    let _ = write!(
        out,
        "\n{}\n(medians of {} calls each, interleaved; recording: {} samples of {RECORDS} \
         records of 4096 elements)\n",
        w.render("").trim_end(),
        o.calls,
        bench.samples
    );
    for note in notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

/// A JSON string literal.
fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The fields every JSON row ends with: the device, the adapter and the timer.
fn common_json(bench: &Bench) -> String {
    let adapter = quoted(&bench.device.adapter().name);
    let timer = bench.timer.kind().name();
    format!("\"device\": \"gpu\", \"adapter\": {adapter}, \"timer\": \"{timer}\"")
}

/// The tuning fields of a JSON row.
fn tuned(t: Tuning) -> String {
    format!(
        "\"loads_in_flight\": {}, \"min_row_units\": {}",
        t.loads_in_flight, t.min_row_units
    )
}

/// One case's JSON row (one line, indented, no separator).
fn case_json(bench: &Bench, r: &Row) -> String {
    let common = common_json(bench);
    {
        let (copy, best) = r.best_copy();
        let copies: Vec<String> = [Work::CopyKernel, Work::CopyBuffer]
            .iter()
            .map(|&w| {
                format!(
                    "{{\"kind\": \"{}\", \"threads\": 1, \"gbps\": {:.3}}}",
                    w.copy_name(),
                    r.gbps(w)
                )
            })
            .collect();
        format!(
            "  {{\"kind\": \"case\", \"op\": \"{}\", \"dtype\": \"{}\", \"elements\": {}, \"layout\": \"{}\", \"threads\": 1, \
             \"gbps\": {:.3}, \"best_copy_gbps\": {best:.3}, \"best_copy\": \"{}\", \"best_copy_threads\": 1, \
             \"ratio\": {:.4}, \"ratio_copy_kernel\": {:.4}, \"ns_per_call\": {:.1}, \"input_read_ns\": {:.1}, \"vs_read\": {:.4}, \
             \"instruction_set\": \"wgsl\", \"nan\": \"{}\", \"copies\": [{}], {common}, \
             \"batch\": {}, \"rotation_bytes\": {}, \"dispatches\": {}, \"row_units\": {}, {}}}",
            r.op,
            r.dtype.name(),
            r.elements,
            r.layout.name(),
            r.gbps(Work::Operator),
            copy.copy_name(),
            r.gbps(Work::Operator) / best.max(1e-9),
            r.gbps(Work::Operator) / r.gbps(Work::CopyKernel).max(1e-9),
            r.ns(Work::Operator),
            r.ns(Work::Read),
            r.vs_read(),
            r.policy,
            copies.join(", "),
            r.batch,
            r.rotation,
            r.dispatches,
            optional(r.layout.row_units()),
            tuned(r.tuning),
        )
    }
}

/// The overheads' JSON rows, joined by `,\n`.
fn overhead_json(bench: &Bench, o: &Overheads, overhead_tuning: Tuning) -> String {
    let common = common_json(bench);
    let mut items = Vec::new();
    let ns = |d: Duration| d.as_secs_f64() * 1e9;
    for (what, elements, d, vs_bare) in [
        ("execute", 1, o.execute_1, Some(ratio(o.execute_1, o.bare))),
        (
            "execute",
            4096,
            o.execute_4096,
            Some(ratio(o.execute_4096, o.bare)),
        ),
        ("bare-submit-wait", 4, o.bare, Some(1.0)),
        ("record", 4096, o.record, None),
    ] {
        let vs = vs_bare.map_or("null".to_string(), |v| format!("{v:.4}"));
        items.push(format!(
            "  {{\"kind\": \"overhead\", \"what\": \"{what}\", \"dtype\": \"FLOAT32\", \"elements\": {elements}, \
             \"ns\": {:.1}, \"vs_bare\": {vs}, \"clock\": \"{}\", {common}, {}}}",
            ns(d),
            if what == "record" { "cpu" } else { "wall" },
            tuned(overhead_tuning),
        ));
    }
    items.join(",\n")
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Command {
        #[command(flatten)]
        bench: BenchArgs,
    }

    fn args(words: &[&str]) -> BenchArgs {
        let words = std::iter::once("bench").chain(words.iter().copied());
        Command::try_parse_from(words).unwrap().bench
    }

    #[test]
    fn default_sizes_add_one_gib_of_input_where_it_is_new() {
        let none = args(&[]);
        let mib = |n: u32| (n << 20, false);
        assert_eq!(sizes(&none, DataType::Float32), [mib(1), mib(16), mib(256)]);
        assert_eq!(
            sizes(&none, DataType::Int8),
            [mib(1), mib(16), mib(256), (1 << 30, true)]
        );
        assert_eq!(
            sizes(&none, DataType::Float64),
            [mib(1), mib(16), mib(256), (128 << 20, true)]
        );
        let given = args(&["--sizes", "4Ki", "2Mi"]);
        assert_eq!(
            sizes(&given, DataType::Int8),
            [(4096, false), (2 << 20, false)]
        );
    }

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(quoted("a \"b\" \\ c\n"), "\"a \\\"b\\\" \\\\ c\\u000a\"");
    }
}
