//! `ewise bench`: each operator and data type timed beside memory copies of the same
//! bytes, in the same process, interleaved, reported as GB/s and as a ratio to the best
//! copy; on the CPU here, on the GPU in [`gpu`].

mod gpu;

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use ewise_cpu::baseline::{self, CopyKind};
use ewise_cpu::cache::{self, CacheTopology, StreamOverride};
use ewise_cpu::{
    support, CompiledOperator, DataType, Device, Extensions, InfinityMode, NanPolicy, OperatorDesc,
    Parallelism, StreamThreshold, TensorDesc, STREAM_THRESHOLD_ENV,
};

use crate::cli::{DeviceKind, DEVICE_ENV};
use crate::table::Table;

const EXAMPLES: &str = "\
Examples:
  ewise bench                                every op and type, 4Ki to 16Mi elements
  ewise bench --op sign --dtype float16 --sizes 16Mi --threads 2
  ewise bench --sizes 64Ki --threads 1 --layout contiguous
  ewise bench --json > bench.json
  ewise bench --cold --sizes 64Ki 1Mi       inputs that are never in the cache
  ewise bench --device gpu                   1Mi, 16Mi, 256Mi elements and 1 GiB of input
  ewise bench --device gpu --op sign --dtype float32 --sizes 16Mi --json

GB/s counts bytes read plus bytes written per second (median of --samples rounds).
Each round times the operator and four copies of as many bytes (plain and streaming
stores, on 1 and on --threads threads), interleaved, each after one untimed call that
brings its data back into the caches as far as it fits (warm); ratio = GB/s / best
copy GB/s.
It also times a plain read of the operator's input on its threads: 'vs read' = that
read's time / the operator's, the limit of operators that read more than they write.
'stores' says whether the operator wrote with plain or streaming (non-temporal) stores:
streaming when its input plus output exceed a share of the last-level cache (the header
shows the caches read and the threshold; EWISE_STREAM_THRESHOLD=BYTES, 0 or never
overrides it, e.g. EWISE_STREAM_THRESHOLD=24Mi).
With --cold, every call (the operator's, each copy's, the read's) takes the next of
several input/output pairs that together hold more than twice the last-level cache,
so no call finds its data in the cache, as a pipeline's first touch of fresh data.

On --device gpu, each round times a batch of back-to-back calls between two timestamp
queries (wall time of submit + wait where the adapter has no timestamps: the 'timer'
column says which), on inputs rotated through enough memory that the GPU's cache does
not flatter them; the copies are a WGSL copy kernel and wgpu's copy_buffer_to_buffer,
the read a WGSL read kernel. It also reports the wall time of execute on 1 and 4096
float32 elements beside a bare wgpu submit + wait of one dispatch, and the CPU time of
recording one dispatch.";

/// Options of `ewise bench`.
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct BenchArgs {
    /// Which operator(s).
    #[arg(long, value_enum, default_value = "all")]
    op: BenchOp,
    /// One data type (e.g. float32, bfloat16), several separated by commas
    /// (float32,int8), or `all`: every DirectML type the operator takes plus bfloat16
    /// and float64.
    #[arg(long, default_value = "all")]
    dtype: String,
    /// Element counts; `Ki` and `Mi` suffixes allowed [default: 4Ki 64Ki 1Mi 16Mi on the
    /// cpu; 1Mi 16Mi 256Mi and 1 GiB of input, where the device has the memory, on the gpu].
    #[arg(long, num_args = 1.., value_parser = parse_size)]
    sizes: Vec<u32>,
    /// Threads for the operator and the threaded copies: 0 (the default) for one per
    /// core, or 1 to 4 per core (at most 256); larger counts are refused, as on `sign`
    /// (cpu only).
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = crate::cli::parse_threads)]
    threads: usize,
    /// Input layouts: a packed array, the transpose of a 2-D one, a row broadcast
    /// along a 2-D output (a stride-0 dimension), or rows: every row of a wider 2-D
    /// array (rows of --row-units 16-byte units of output, each input row one 16-byte
    /// vector of padding apart) into a packed output.
    #[arg(long, value_enum, default_value = "all")]
    layout: LayoutChoice,
    /// The rows layout's row length, in 16-byte units of output (e.g. 256: 1024 float32
    /// or 4096 int8 elements per row); several values time one rows layout each.
    #[arg(long, value_name = "N", num_args = 1.., default_values_t = [256u32], hide = true,
          value_parser = clap::value_parser!(u32).range(1..=1 << 20))]
    row_units: Vec<u32>,
    /// GPU tuning (measurements only): input vectors one invocation of the vector and
    /// row kernels keeps in flight, a power of two from 1 to 16 [default: the
    /// library's]. Several values: each case is timed under each, one after the other.
    #[arg(long, value_name = "N", num_args = 1.., hide = true)]
    gpu_loads_in_flight: Vec<u32>,
    /// GPU tuning (measurements only): 16-byte units a row needs for the row kernel;
    /// shorter rows take the strided walk [default: the library's]. Several values: as
    /// for --gpu-loads-in-flight (every combination of the two).
    #[arg(long, value_name = "N", num_args = 1.., hide = true)]
    gpu_min_row_units: Vec<u64>,
    /// SIGN's NaN policy (the CPU kernels differ: `zero` needs fewer operations).
    #[arg(long, value_enum, default_value = "propagate")]
    nan: crate::cli::Nan,
    /// Timed rounds per case; the median is reported.
    #[arg(long, default_value_t = 15, value_parser = clap::value_parser!(u32).range(3..=1001))]
    samples: u32,
    /// One JSON array on standard output instead of a table.
    #[arg(long)]
    json: bool,
    /// Rotate every timed call through distinct buffers holding more than twice the
    /// last-level cache (32 MiB when unknown), so that none finds its data in the cache
    /// (cpu only: the gpu cases always rotate).
    #[arg(long)]
    cold: bool,
    /// Where the operators run: the CPU kernels, or the GPU through wgpu (the adapter
    /// EWISE_GPU_BACKEND and EWISE_GPU_ADAPTER select; see `ewise devices`).
    #[arg(long, value_enum, env = DEVICE_ENV, default_value_t = DeviceKind::Cpu)]
    device: DeviceKind,
}

/// The element counts `ewise bench` times on the CPU when `--sizes` is not given.
const CPU_SIZES: [u32; 4] = [4 << 10, 64 << 10, 1 << 20, 16 << 20];

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum BenchOp {
    Sign,
    IsInfinity,
    All,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LayoutChoice {
    Contiguous,
    Transposed,
    Broadcast,
    Rows,
    All,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    Contiguous,
    Transposed,
    Broadcast,
    /// Rows of this many 16-byte units of output, read from a padded (strided) 2-D view.
    Rows(u32),
}

impl Layout {
    fn name(self) -> &'static str {
        match self {
            Layout::Contiguous => "contiguous",
            Layout::Transposed => "transposed",
            Layout::Broadcast => "broadcast",
            Layout::Rows(_) => "rows",
        }
    }

    /// The name, with the row length for [`Layout::Rows`] (`rows/256u`), for tables.
    fn label(self) -> String {
        match self {
            Layout::Rows(units) => format!("rows/{units}u"),
            _ => self.name().to_string(),
        }
    }

    /// The row length in 16-byte units of output of [`Layout::Rows`], `None` otherwise.
    fn row_units(self) -> Option<u32> {
        match self {
            Layout::Rows(units) => Some(units),
            _ => None,
        }
    }
}

/// Every type SIGN takes (the extended support row: DirectML's plus bfloat16 and float64).
fn sign_types() -> Vec<DataType> {
    support::SIGN.extended.input_types.to_vec()
}

/// The IS_INFINITY inputs worth timing: the extended row's floats of 2 bytes and more
/// (the float8 formats run the same kernels as 1-byte data).
fn is_infinity_types() -> Vec<DataType> {
    support::IS_INFINITY
        .extended
        .input_types
        .iter()
        .copied()
        .filter(|t| t.size_in_bytes().is_some_and(|s| s >= 2))
        .collect()
}

fn parse_size(s: &str) -> Result<u32, String> {
    crate::cli::parse_scaled(s)
        .filter(|&n| (1..=u64::from(u32::MAX)).contains(&n))
        .map(|n| n as u32)
        .ok_or_else(|| {
            format!(
                "invalid size '{s}' (accepted: 1 to 4294967295 elements, e.g. 4096, 64Ki, 16Mi)"
            )
        })
}

/// One measured case.
struct Measured {
    op: &'static str,
    dtype: DataType,
    elements: u32,
    layout: Layout,
    threads: usize,
    /// SIGN's NaN policy (IS_INFINITY has none).
    policy: NanPolicy,
    gbps: f64,
    ns_per_call: f64,
    copies: Vec<(CopyKind, usize, f64)>,
    /// Median time of reading the operator's input alone, on its threads.
    read_ns: f64,
    /// Whether the operator wrote with streaming stores.
    streams: bool,
    /// When an execution on the operator's threads streams.
    stream_threshold: StreamThreshold,
    /// Whether timed cold (`--cold`).
    cold: bool,
    /// The input/output pairs each timed call rotated through (1: warm, or data larger
    /// than the cold span).
    pairs: usize,
}

impl Measured {
    /// The input read's time over the operator's: 1 when the operator takes no longer
    /// than reading its input.
    fn vs_read(&self) -> f64 {
        self.read_ns / self.ns_per_call.max(1e-3)
    }

    fn best_copy(&self) -> (CopyKind, usize, f64) {
        self.copies
            .iter()
            .copied()
            .fold((CopyKind::Plain, 1, 0.0), |best, c| {
                if c.2 > best.2 {
                    c
                } else {
                    best
                }
            })
    }
}

/// Runs the benchmark and prints its table or JSON.
pub fn run(args: &BenchArgs) -> Result<()> {
    let cases = cases(args)?;
    let rows = args.row_units.iter().map(|&u| Layout::Rows(u));
    let layouts: Vec<Layout> = match args.layout {
        LayoutChoice::Contiguous => vec![Layout::Contiguous],
        LayoutChoice::Transposed => vec![Layout::Transposed],
        LayoutChoice::Broadcast => vec![Layout::Broadcast],
        LayoutChoice::Rows => rows.collect(),
        LayoutChoice::All => [Layout::Contiguous, Layout::Transposed, Layout::Broadcast]
            .into_iter()
            .chain(rows)
            .collect(),
    };
    let layouts = &layouts[..];
    if args.device == DeviceKind::Gpu {
        if args.cold {
            bail!("--cold is for --device cpu: the gpu cases always rotate their inputs through more memory than the GPU's cache");
        }
        return gpu::run(args, &cases, layouts);
    }
    if !args.gpu_loads_in_flight.is_empty() || !args.gpu_min_row_units.is_empty() {
        bail!("--gpu-loads-in-flight and --gpu-min-row-units tune the GPU kernels: they need --device gpu");
    }
    let threads = Parallelism::threads(args.threads).resolve();
    let sizes: &[u32] = if args.sizes.is_empty() {
        &CPU_SIZES
    } else {
        &args.sizes
    };
    let mut results = Vec::new();
    for &(op, dtype) in &cases {
        for &elements in sizes {
            for &layout in layouts {
                crate::interrupt::check()?;
                let case = (op, dtype, elements, layout);
                let rounds = Rounds {
                    samples: args.samples,
                    cold: args.cold,
                };
                results.push(measure(case, args.nan.into(), threads, rounds)?);
            }
        }
    }
    let text = if args.json {
        if let Some(warning) = invalid_override() {
            eprintln!("ewise: warning: {warning}");
        }
        json(&results)
    } else {
        table(&results, threads, args.nan.into(), args.cold)
    };
    crate::print(&text)
}

/// The caches read and the streaming threshold for 1 and `threads` threads, for the
/// table's header: e.g. `caches: L3 8 MiB shared by 2 CPUs, L2 512 KiB per CPU (sysfs);
/// streaming stores when input + output is above 6 MiB (3/4 of the L3)`.
fn cache_line(threads: usize) -> String {
    let host = CacheTopology::host();
    let mut line = format!("caches: {host}; streaming stores when input + output is ");
    let (one, all) = (
        ewise_cpu::stream_threshold(1),
        ewise_cpu::stream_threshold(threads),
    );
    match one {
        StreamThreshold::Never => line.push_str("never"),
        _ if one == all => line.push_str(&one.to_string()),
        _ => line.push_str(&format!("{one} on 1 thread, {all} on {threads}")),
    }
    match cache::stream_override() {
        StreamOverride::Set(_) => line.push_str(&format!(" (set by {STREAM_THRESHOLD_ENV})")),
        _ => match host.last_level {
            Some(_) if !host.counts_last_level() => {
                line.push_str(" (the threads' L2s; an Intel L3 does not count)");
            }
            Some(llc) => {
                let (num, den) = cache::LAST_LEVEL_SHARE;
                line.push_str(&format!(" ({num}/{den} of the L{})", llc.level));
            }
            None => line.push_str(" (no cache information: the fallback)"),
        },
    }
    if let Some(warning) = invalid_override() {
        line.push_str(&format!("\nwarning: {warning}"));
    }
    line
}

/// The message for an invalid [`STREAM_THRESHOLD_ENV`], which the library ignored.
fn invalid_override() -> Option<String> {
    match cache::stream_override() {
        StreamOverride::Invalid(value) => Some(format!(
            "{STREAM_THRESHOLD_ENV}='{}' is not a byte count (e.g. 24Mi), 0 or never; ignored",
            value.escape_debug()
        )),
        _ => None,
    }
}

/// The (operator, data type) pairs that `--op` and `--dtype` select.
fn cases(args: &BenchArgs) -> Result<Vec<(&'static str, DataType)>> {
    let types = |all: &[DataType]| -> Result<Vec<DataType>> {
        if args.dtype.eq_ignore_ascii_case("all") {
            return Ok(all.to_vec());
        }
        let mut wanted = Vec::new();
        for name in args.dtype.split(',').map(str::trim) {
            let t = DataType::from_name(name).with_context(|| {
                format!(
                    "unknown --dtype '{name}' (accepted: all, or one or more of {}, separated by commas)",
                    names(&sign_types())
                )
            })?;
            wanted.push(t);
        }
        Ok(wanted.into_iter().filter(|t| all.contains(t)).collect())
    };
    let mut cases: Vec<(&'static str, DataType)> = Vec::new();
    if args.op != BenchOp::IsInfinity {
        cases.extend(types(&sign_types())?.into_iter().map(|t| ("sign", t)));
    }
    if args.op != BenchOp::Sign {
        cases.extend(
            types(&is_infinity_types())?
                .into_iter()
                .map(|t| ("is-infinity", t)),
        );
    }
    if cases.is_empty() {
        bail!(
            "--dtype {} is not benchmarked for the chosen --op (sign: {}; is-infinity: {})",
            args.dtype,
            names(&sign_types()),
            names(&is_infinity_types())
        );
    }
    Ok(cases)
}

fn names(types: &[DataType]) -> String {
    types
        .iter()
        .map(|t| t.name().to_lowercase())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Rows x columns of the 2-D array whose transpose is read: as square as `n` allows.
fn transposed_shape(n: u32) -> (u32, u32) {
    let mut rows = (f64::from(n).sqrt() as u32).max(1);
    while !n.is_multiple_of(rows) {
        rows -= 1;
    }
    (rows, n / rows)
}

/// Rows x columns of [`Layout::Rows`] for about `n` elements: rows of `units` 16-byte
/// units of output (`out_size` bytes per element), as many as fit in `n` (at least one;
/// one shorter row where `n` is below one row).
fn rows_shape(n: u32, units: u32, out_size: u32) -> (u32, u32) {
    let cols = (u64::from(units) * 16 / u64::from(out_size.max(1))).max(1);
    let cols = cols.min(u64::from(n)) as u32;
    ((n / cols).max(1), cols)
}

fn desc(op: &str, dtype: DataType, elements: u32, layout: Layout) -> OperatorDesc {
    let (input, sizes) = match layout {
        Layout::Contiguous => (TensorDesc::new(dtype, &[elements]), vec![elements]),
        Layout::Transposed => {
            let (rows, cols) = transposed_shape(elements);
            (
                TensorDesc::strided(dtype, &[rows, cols], &[1, rows]),
                vec![rows, cols],
            )
        }
        Layout::Broadcast => {
            let (rows, cols) = transposed_shape(elements);
            (
                TensorDesc::strided(dtype, &[rows, cols], &[0, 1]),
                vec![rows, cols],
            )
        }
        Layout::Rows(units) => {
            // Each input row is followed by one 16-byte vector of padding: the rows of a
            // wider array. Both pitches are then whole 16-byte vectors (a row of output
            // is `units` vectors, and its input at least as many), as the GPU's row
            // kernel needs.
            let in_size = dtype.size_in_bytes().unwrap_or(1) as u32;
            let out_size = if op == "sign" { in_size } else { 1 };
            let (rows, cols) = rows_shape(elements, units, out_size);
            let pitch = cols + (16 / in_size).max(1);
            (
                TensorDesc::strided(dtype, &[rows, cols], &[pitch, 1]),
                vec![rows, cols],
            )
        }
    };
    if op == "sign" {
        OperatorDesc::sign(input, TensorDesc::new(dtype, &sizes))
    } else {
        let output = TensorDesc::new(DataType::Uint8, &sizes);
        OperatorDesc::is_infinity(input, output, InfinityMode::Either)
    }
}

/// Bytes one call reads: the input's span, except in [`Layout::Rows`], whose padding
/// between rows is never read (the elements' bytes alone).
fn read_bytes(desc: &OperatorDesc, layout: Layout) -> Option<u64> {
    let input = desc.input();
    match layout {
        Layout::Rows(_) => Some(input.element_count()? * input.data_type.size_in_bytes()?),
        _ => input.exact_span_in_bytes(),
    }
}

/// The elements a case's output holds (`elements` asked for, except where the rows
/// layout rounds it to whole rows).
fn output_elements(desc: &OperatorDesc) -> u32 {
    desc.output()
        .element_count()
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(0)
}

/// The generator of the input bytes: random patterns, so that every kind of value
/// (NaNs, infinities, negatives, subnormals, zeros) occurs.
struct Pattern(u64);

impl Pattern {
    fn new() -> Pattern {
        Pattern(0x9E37_79B9_7F4A_7C15)
    }

    /// Writes the next `bytes.len()` bytes of the pattern.
    fn fill(&mut self, bytes: &mut [u8]) {
        for b in bytes {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            *b = (self.0 >> 24) as u8;
        }
    }
}

/// The first `len` bytes of the input pattern, for buffers small enough to make at once.
fn pattern_bytes(len: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; len];
    Pattern::new().fill(&mut bytes);
    bytes
}

/// Bytes filled between two looks for a stop request while buffers are made.
const FILL_CHUNK: usize = 64 << 20;

/// A buffer for the CPU cases: `len` bytes starting on a 64-byte boundary where the
/// allocator allows (as [`ewise_cpu::Buffer`] gives them), made without aborting when
/// memory runs out.
struct Aligned {
    storage: Vec<u8>,
    start: usize,
    len: usize,
}

impl Aligned {
    /// `len` bytes of the input pattern (`pattern`) or zeros. Fails, with `what` in the
    /// message, when the memory cannot be had, and stops between chunks of the filling
    /// when a stop was requested.
    fn new(len: usize, pattern: bool, what: &dyn Fn() -> String) -> Result<Aligned> {
        let mut storage = Vec::<u8>::new();
        let reserved = len
            .checked_add(63)
            .ok_or(())
            .and_then(|total| storage.try_reserve_exact(total).map_err(|_| ()));
        if reserved.is_err() {
            bail!(
                "cannot allocate {len} bytes ({:.1} GiB) for {}: not enough memory; choose a smaller --sizes",
                len as f64 / f64::from(1u32 << 30),
                what()
            );
        }
        let start = match storage.as_ptr().align_offset(64) {
            at if at < 64 => at,
            _ => 0,
        };
        storage.resize(start, 0);
        let mut generator = Pattern::new();
        while storage.len() < start + len {
            crate::interrupt::check()?;
            let from = storage.len();
            let step = FILL_CHUNK.min(start + len - from);
            storage.resize(from + step, 0);
            if pattern {
                generator.fill(&mut storage[from..]);
            }
        }
        Ok(Aligned {
            storage,
            start,
            len,
        })
    }
}

impl std::ops::Deref for Aligned {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.storage[self.start..self.start + self.len]
    }
}

impl std::ops::DerefMut for Aligned {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.storage[self.start..self.start + self.len]
    }
}

/// Times `f` repeated enough times to last about 200 microseconds, per call. Warm, each
/// sample first calls `f` once untimed, so that what the timers interleaved with it
/// evicted is back in the caches; cold, `f` rotates through buffers itself.
struct Timed<'a> {
    f: Box<dyn FnMut() + 'a>,
    batch: u32,
    samples: Vec<Duration>,
    warm: bool,
}

impl<'a> Timed<'a> {
    fn new(mut f: Box<dyn FnMut() + 'a>, warm: bool) -> Timed<'a> {
        f();
        let start = Instant::now();
        f();
        let once = start.elapsed().max(Duration::from_nanos(20));
        let batch = (Duration::from_micros(200).as_nanos() / once.as_nanos()).clamp(1, 100_000);
        Timed {
            f,
            batch: batch as u32,
            samples: Vec::new(),
            warm,
        }
    }

    fn sample(&mut self) {
        if self.warm {
            (self.f)();
        }
        let start = Instant::now();
        for _ in 0..self.batch {
            (self.f)();
        }
        self.samples.push(start.elapsed() / self.batch);
    }

    fn median(&mut self) -> Duration {
        self.samples.sort();
        self.samples[self.samples.len() / 2]
    }
}

/// How a case is timed: its rounds, and whether warm or cold.
#[derive(Debug, Clone, Copy)]
struct Rounds {
    samples: u32,
    cold: bool,
}

/// The bytes that `--cold` rotates through at least: twice the last-level cache, or
/// twice 16 MiB where the caches are unknown.
fn cold_span() -> u64 {
    let llc = CacheTopology::host()
        .last_level
        .map_or(16 << 20, |c| c.size_bytes);
    2 * llc
}

/// The distinct buffer pairs of `moved` bytes each that a call rotates through: 1 when
/// warm; when cold, enough that together they exceed [`cold_span`].
fn pair_count(moved: usize, cold: bool) -> usize {
    if !cold {
        return 1;
    }
    let span = usize::try_from(cold_span()).unwrap_or(usize::MAX);
    span / moved.max(1) + 1
}

/// `n` buffers of `len` bytes, as [`Aligned::new`] makes them.
fn buffers(n: usize, len: usize, pattern: bool, what: &dyn Fn() -> String) -> Result<Vec<Aligned>> {
    (0..n).map(|_| Aligned::new(len, pattern, what)).collect()
}

fn measure(
    (op, dtype, elements, layout): (&'static str, DataType, u32, Layout),
    policy: NanPolicy,
    threads: usize,
    rounds: Rounds,
) -> Result<Measured> {
    let desc = desc(op, dtype, elements, layout);
    let compiled: CompiledOperator = Device::builder()
        .extensions(Extensions::Enabled)
        .parallelism(Parallelism::threads(threads))
        .build()
        .and_then(|d| d.create_operator(&desc))
        .and_then(|o| o.with_nan_policy(policy).compile())
        .with_context(|| format!("{op} {dtype} x {elements}"))?;
    let case = || {
        format!(
            "{op} {} x {elements} ({})",
            dtype.name().to_lowercase(),
            layout.name()
        )
    };
    let span = |t: &TensorDesc| {
        t.exact_span_in_bytes()
            .and_then(|n| usize::try_from(n).ok())
            .with_context(|| format!("{}: too large for this machine's memory", case()))
    };
    let (in_len, out_len) = (span(desc.input())?, span(desc.output())?);
    let elements = output_elements(&desc);
    let read = read_bytes(&desc, layout).map_or(in_len, |n| n as usize);
    let moved = (read + out_len) as f64;
    let pairs = pair_count(in_len + out_len, rounds.cold);
    let inputs = buffers(pairs, in_len, true, &|| format!("the inputs of {}", case()))?;
    let mut outputs = buffers(pairs, out_len, false, &|| {
        format!("the outputs of {}", case())
    })?;
    let copy_len = (read + out_len) / 2;
    let kinds = [
        (CopyKind::Plain, 1),
        (CopyKind::Plain, threads),
        (CopyKind::Streaming, 1),
        (CopyKind::Streaming, threads),
    ];
    let mut copy_buffers: Vec<(Vec<Aligned>, Vec<Aligned>)> = Vec::new();
    for _ in kinds {
        let what = || format!("the baseline copies of {}", case());
        copy_buffers.push((
            buffers(pairs, copy_len, true, &what)?,
            buffers(pairs, copy_len, false, &what)?,
        ));
    }
    let mut failure = None;
    let read_threads = compiled.threads();
    let (mut next, mut next_read) = (0, 0);
    let mut timers: Vec<Timed<'_>> = Vec::with_capacity(1 + kinds.len());
    crate::interrupt::check()?;
    let warm = !rounds.cold;
    timers.push(Timed::new(
        Box::new(|| {
            next = (next + 1) % pairs;
            if let Err(e) = compiled.execute_slices(&inputs[next], &mut outputs[next]) {
                failure.get_or_insert(e);
            }
        }),
        warm,
    ));
    for (&(kind, t), (from, to)) in kinds.iter().zip(copy_buffers.iter_mut()) {
        crate::interrupt::check()?;
        let mut next = 0;
        timers.push(Timed::new(
            Box::new(move || {
                next = (next + 1) % pairs;
                baseline::copy(&mut to[next], &from[next], kind, t)
            }),
            warm,
        ));
    }
    crate::interrupt::check()?;
    timers.push(Timed::new(
        Box::new(|| {
            next_read = (next_read + 1) % pairs;
            std::hint::black_box(baseline::read(&inputs[next_read][..read], read_threads));
        }),
        warm,
    ));
    for _ in 0..rounds.samples {
        for timer in &mut timers {
            crate::interrupt::check()?;
            timer.sample();
        }
    }
    let medians: Vec<Duration> = timers.iter_mut().map(Timed::median).collect();
    drop(timers);
    if let Some(e) = failure {
        bail!("{op} {dtype} x {elements}: {e}");
    }
    let gbps = |d: Duration| moved / d.as_secs_f64().max(1e-12) / 1e9;
    Ok(Measured {
        op,
        dtype,
        elements,
        layout,
        threads: compiled.threads(),
        policy,
        gbps: gbps(medians[0]),
        ns_per_call: medians[0].as_secs_f64() * 1e9,
        copies: kinds
            .iter()
            .zip(&medians[1..])
            .map(|(&(kind, t), &d)| (kind, t, gbps(d)))
            .collect(),
        read_ns: medians[1 + kinds.len()].as_secs_f64() * 1e9,
        streams: compiled.streams(),
        stream_threshold: ewise_cpu::stream_threshold(compiled.threads()),
        cold: rounds.cold,
        pairs,
    })
}

fn table(results: &[Measured], threads: usize, policy: NanPolicy, cold: bool) -> String {
    let mut t = Table::new(&[
        "op",
        "dtype",
        "elements",
        "layout",
        "threads",
        "GB/s",
        "best copy",
        "GB/s",
        "ratio",
        "ns/call",
        "vs read",
        "stores",
    ]);
    for r in results {
        let (kind, copy_threads, best) = r.best_copy();
        t.row(vec![
            r.op.to_string(),
            r.dtype.name().to_lowercase(),
            r.elements.to_string(),
            r.layout.label(),
            r.threads.to_string(),
            format!("{:.1}", r.gbps),
            format!("{} x{}", kind.name(), copy_threads),
            format!("{best:.1}"),
            format!("{:.2}", r.gbps / best),
            format!("{:.0}", r.ns_per_call),
            format!("{:.2}", r.vs_read()),
            if r.streams { "streaming" } else { "plain" }.to_string(),
        ]);
    }
    let mut out = format!(
        "ewise bench: {} kernels, up to {threads} threads, SIGN with NaN policy {policy}; \
         GB/s = bytes read + written per second\n{}\n\n",
        ewise_cpu::instruction_set().name(),
        cache_line(threads)
    );
    if cold {
        let _ = writeln!(
            out,
            "cold: each call takes the next of several buffer pairs holding more than {} MiB in all\n",
            cold_span() >> 20
        );
    }
    out.push_str(&t.render(""));
    out
}

/// A JSON number, or `null`.
fn optional<T: std::fmt::Display>(value: Option<T>) -> String {
    value.map_or_else(|| "null".to_string(), |v| v.to_string())
}

fn json(results: &[Measured]) -> String {
    let host = CacheTopology::host();
    let llc = host.last_level;
    let mut out = String::from("[\n");
    for (i, r) in results.iter().enumerate() {
        let (kind, copy_threads, best) = r.best_copy();
        let copies: Vec<String> = r
            .copies
            .iter()
            .map(|(k, t, g)| {
                format!(
                    "{{\"kind\": \"{}\", \"threads\": {t}, \"gbps\": {g:.3}}}",
                    k.name()
                )
            })
            .collect();
        let _ = write!(
            out,
            "  {{\"op\": \"{}\", \"dtype\": \"{}\", \"elements\": {}, \"layout\": \"{}\", \"threads\": {}, \
             \"gbps\": {:.3}, \"best_copy_gbps\": {best:.3}, \"best_copy\": \"{}\", \"best_copy_threads\": {copy_threads}, \
             \"ratio\": {:.4}, \"ns_per_call\": {:.1}, \"input_read_ns\": {:.1}, \"vs_read\": {:.4}, \
             \"instruction_set\": \"{}\", \"nan\": \"{}\", \"streams\": {}, \"stream_threshold\": {}, \
             \"llc_bytes\": {}, \"llc_level\": {}, \"llc_shared_by\": {}, \"l2_bytes\": {}, \"cache_source\": \"{}\", \
             \"cold\": {}, \"pairs\": {}, \"row_units\": {}, \"copies\": [{}]}}",
            r.op,
            r.dtype.name(),
            r.elements,
            r.layout.name(),
            r.threads,
            r.gbps,
            kind.name(),
            r.gbps / best,
            r.ns_per_call,
            r.read_ns,
            r.vs_read(),
            ewise_cpu::instruction_set().name(),
            r.policy,
            r.streams,
            optional(r.stream_threshold.bytes()),
            optional(llc.map(|c| c.size_bytes)),
            optional(llc.map(|c| c.level)),
            optional(llc.map(|c| c.shared_by).filter(|&n| n > 0)),
            optional(host.l2.map(|c| c.size_bytes)),
            host.source.name(),
            r.cold,
            r.pairs,
            optional(r.layout.row_units()),
            copies.join(", ")
        );
        out.push_str(if i + 1 < results.len() { ",\n" } else { "\n" });
    }
    out.push_str("]\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const WARM: Rounds = Rounds {
        samples: 3,
        cold: false,
    };

    #[test]
    fn cold_cases_rotate_through_more_than_twice_the_cache() {
        assert_eq!(pair_count(4096, false), 1);
        let span = usize::try_from(cold_span()).unwrap();
        assert!(pair_count(4096, true) * 4096 > span);
        assert_eq!(pair_count(span + 1, true), 1);
        let m = measure(
            ("sign", DataType::Float32, 4096, Layout::Contiguous),
            NanPolicy::Propagate,
            1,
            Rounds {
                samples: 3,
                cold: true,
            },
        )
        .unwrap();
        assert!(m.cold && m.pairs * 8 * 4096 > span, "{} pairs", m.pairs);
        assert!(m.gbps > 0.0);
        let j = json(&[m]);
        assert!(j.contains("\"cold\": true"), "{j}");
    }

    #[test]
    fn sizes_parse_with_suffixes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64Ki"), Ok(65536));
        assert_eq!(parse_size("16Mi"), Ok(16 << 20));
        assert!(parse_size("0").is_err());
        assert!(parse_size("4096Mi").is_err());
        assert!(parse_size("x").is_err());
    }

    #[test]
    fn transposed_shapes_are_near_square() {
        assert_eq!(transposed_shape(16 << 20), (4096, 4096));
        assert_eq!(transposed_shape(4096), (64, 64));
        assert_eq!(transposed_shape(1 << 17), (256, 512));
        assert_eq!(transposed_shape(7), (1, 7));
    }

    #[test]
    fn broadcast_inputs_are_one_row_read_again() {
        let d = desc("sign", DataType::Float32, 4096, Layout::Broadcast);
        assert_eq!(d.input().exact_span_in_bytes(), Some(64 * 4));
        assert_eq!(d.output().exact_span_in_bytes(), Some(4096 * 4));
        let m = measure(
            ("is-infinity", DataType::Float16, 4096, Layout::Broadcast),
            NanPolicy::Propagate,
            1,
            WARM,
        )
        .unwrap();
        assert!(m.gbps > 0.0);
    }

    #[test]
    fn rows_are_whole_units_of_output_on_16_byte_pitches_and_count_their_elements() {
        assert_eq!(rows_shape(16 << 20, 256, 4), (16 << 10, 1024));
        assert_eq!(rows_shape(16 << 20, 1, 1), (1 << 20, 16));
        assert_eq!(rows_shape(100, 256, 4), (1, 100));
        for (op, dtype) in [
            ("sign", DataType::Int8),
            ("sign", DataType::Float16),
            ("sign", DataType::Float32),
            ("sign", DataType::Float64),
            ("is-infinity", DataType::Float32),
            ("is-infinity", DataType::Float16),
        ] {
            for units in [1, 2, 32, 256] {
                let d = desc(op, dtype, 1 << 16, Layout::Rows(units));
                let (input, output) = (d.input(), d.output());
                let (is, os) = (
                    input.data_type.size_in_bytes().unwrap(),
                    output.data_type.size_in_bytes().unwrap(),
                );
                let (in_strides, out_strides) = (
                    input.effective_strides().unwrap(),
                    output.effective_strides().unwrap(),
                );
                let cols = u64::from(input.sizes[1]);
                assert_eq!(cols * os, 16 * u64::from(units), "{d:?}");
                assert_eq!(in_strides, [cols + 16 / is, 1], "{d:?}");
                assert_eq!(out_strides, [cols, 1], "{d:?}");
                assert_eq!((in_strides[0] * is) % 16, 0, "{d:?}");
                assert_eq!((out_strides[0] * os) % 16, 0, "{d:?}");
                assert_eq!(output_elements(&d), 1 << 16);
                assert_eq!(read_bytes(&d, Layout::Rows(units)), Some(is << 16));
            }
        }
        let m = measure(
            ("sign", DataType::Float32, 4096, Layout::Rows(4)),
            NanPolicy::Propagate,
            1,
            WARM,
        )
        .unwrap();
        assert!(m.gbps > 0.0);
        let j = json(&[m]);
        assert!(
            j.contains("\"layout\": \"rows\"") && j.contains("\"row_units\": 4"),
            "{j}"
        );
    }

    #[test]
    fn a_small_case_measures_and_serializes() {
        let m = measure(
            ("sign", DataType::Int16, 4096, Layout::Transposed),
            NanPolicy::Propagate,
            1,
            WARM,
        )
        .unwrap();
        assert!(m.gbps > 0.0 && m.copies.len() == 4);
        let j = json(&[m]);
        for key in [
            "\"op\": \"sign\"",
            "\"dtype\": \"INT16\"",
            "\"elements\": 4096",
            "\"layout\": \"transposed\"",
            "\"threads\": 1",
            "\"gbps\"",
            "\"best_copy_gbps\"",
            "\"ratio\"",
            "\"ns_per_call\"",
            "\"streams\": false",
            "\"stream_threshold\"",
            "\"cache_source\"",
        ] {
            assert!(j.contains(key), "{key} missing from {j}");
        }
    }
}
