//! The command line: subcommands, their options and their help texts.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use ewise_cpu::{DataType, FeatureLevel, InfinityMode, NanPolicy};

const EXAMPLES: &str = "\
Examples:
  ewise demo                                 what SIGN and IS_INFINITY do, on special values
  ewise sign x.npy signs.npy                 DirectML's results, for every type (float64 too)
  ewise sign x.npy signs.npy --feature-level 6_4
                                             refused unless DirectML at 6_4 would run it
  ewise sign x.npy signs.npy --semantics onnx
  ewise sign --in-place big.npy              rewrite a file's data in place
  ewise is-infinity x.npy inf.npy --mode positive
  ewise support --op sign --feature-level 3_0
  ewise run model.onnx -i x=x.npy -o out/    run an ONNX model on .npy inputs
  ewise onnx-test onnx/backend/test/data/node/test_sign
  ewise devices                              the GPUs --device gpu can use
  ewise completions bash > ~/.local/share/bash-completion/completions/ewise
  ewise man | man -l -                       this help for every command, as a man page";

const SIGN_EXAMPLES: &str = "\
Examples:
  ewise sign x.npy signs.npy
      DirectML's results (NaN gives 0) for every type and shape: float64, int64,
      bfloat16, 0-d and empty arrays, more than 2^32-1 elements
  ewise sign x.npy signs.npy --feature-level 6_4
      DirectML's strict rules too: refused unless DirectML at 6_4 would run it
  ewise sign x.npy signs.npy --semantics onnx
      ONNX Sign: NaN stays NaN
  ewise sign x.npy signs.npy --nan propagate --feature-level 3_0
  ewise sign bf16.npy out.npy --dtype bfloat16
      ml_dtypes saves bfloat16 as '<V2' (float8 as '<f1'); name the type
  ewise sign --in-place big.npy
      rewrites only the data, never the header; if interrupted, run it again
  ewise sign x.npy signs.npy --device gpu
      the same bytes, computed on the GPU (see ewise devices)";

const IS_INFINITY_EXAMPLES: &str = "\
Examples:
  ewise is-infinity x.npy inf.npy
      any floating-point type in (float64, bfloat16, float8 too), uint8 (0 or 1) out
  ewise is-infinity x.npy inf.npy --feature-level 6_4
      DirectML's strict rules: float32 or float16 in
  ewise is-infinity x.npy pos.npy --mode positive
  ewise is-infinity x.npy inf.npy --semantics onnx
      ONNX IsInf: bool out
  ewise is-infinity f8.npy inf.npy --dtype float8e5m2";

const SUPPORT_EXAMPLES: &str = "\
Examples:
  ewise support                              both operators, every feature level
  ewise support --op is-infinity
  ewise support --feature-level 2_1          what each operator accepts at 2_1
  ewise support --json";

const RUN_EXAMPLES: &str = "\
Examples:
  ewise run model.onnx -i x=x.npy -o out/
      writes out/<output name>.npy for every graph output
  ewise run model.onnx -i x=x.npy -i y=y.npy -o out/ --nan zero
      SIGN gives +0 for NaN (DirectML) instead of the NaN itself (ONNX)
  ewise run bf16_model.onnx -i x=bf16.npy -o out/
      an input the model declares as bfloat16 is read from raw 2-byte items ('<V2',
      as ml_dtypes saves it), float8 from 1-byte items ('<f1', '|V1'); such outputs
      are written as '<V2' (bfloat16) and '|V1' (float8), bool outputs as '|b1'
  ewise run model.onnx -i x=huge.npy -o out/ --chunk-size 64Mi
      fewer, larger chunks: memory near 64 MiB instead of 4 MiB

Memory:
  Inputs are read and outputs written chunk by chunk, so memory does not grow with
  the data's size. A chunk holds --chunk-size bytes at most: the elements of one
  graph input (or initializer) and the same elements of every output and
  intermediate value computed from it (the values alive at once between that input
  and its outputs). The process holds about one chunk (two with --device gpu: the
  chunk read and its upload buffer; the GPU holds two chunks in flight), plus the
  .onnx file's own size (initializers stored inside it are read whole), plus about
  10 MiB for the program itself. Initializers in external data files (ONNX external
  data, the usual form of large tensors) are not read whole: they are read chunk by
  chunk, like inputs, through the files the model loader opened and checked. A
  column-major (fortran_order) input adds one panel of about the chunk's input size
  (at least 4 MiB) that it is reordered through; one that is a pipe rather than a
  regular file is read whole. A source with so many outputs that 4096 elements of
  each exceed the default chunk size gets 4096-element chunks.";

const ONNX_TEST_EXAMPLES: &str = "\
Examples:
  ewise onnx-test onnx/backend/test/data/node/test_sign
  ewise onnx-test \"$data\"/node/test_isinf*  \"$data\"/simple/test_sign_model
      data=\"$(scripts/onnx-conformance.sh)\" provides ONNX's backend test data
  Prints PASS <name> or FAIL <name>: <why> per case, then \"N passed, M failed\";
  the exit status is 0 only if every case passes.";

const DEVICES_EXAMPLES: &str = "\
--device gpu tries the adapters in the order numbered (discrete, integrated, virtual,
then software renderers last): the first that opens a device and compiles ewise's
kernels runs it, and each one passed over is named on standard error with why.

Environment:
  EWISE_GPU_BACKEND   the backends searched: a comma list of vulkan, metal, dx12
  EWISE_GPU_ADAPTER   part of an adapter's name (any case): only those are tried
  wgpu's WGPU_DX12_COMPILER (fxc, dxc, auto), WGPU_VALIDATION, WGPU_DEBUG and its
  other instance flags are honoured as wgpu documents them; WGPU_BACKEND,
  WGPU_ADAPTER_NAME and WGPU_POWER_PREF are not read (use the two above).

Examples:
  ewise devices
  EWISE_GPU_BACKEND=vulkan EWISE_GPU_ADAPTER=llvmpipe ewise devices
      the adapter --device gpu tries first under these settings is marked with *";

const COMPLETIONS_EXAMPLES: &str = "\
Examples:
  ewise completions bash > ~/.local/share/bash-completion/completions/ewise
  ewise completions zsh > ~/.zfunc/_ewise
      with fpath=(~/.zfunc $fpath) before compinit in ~/.zshrc
  ewise completions fish > ~/.config/fish/completions/ewise.fish
  ewise completions powershell | Out-String | Invoke-Expression
      in PowerShell's $PROFILE
  ewise completions elvish >> ~/.config/elvish/rc.elv";

const MAN_EXAMPLES: &str = "\
Examples:
  ewise man | man -l -
  ewise man > ~/.local/share/man/man1/ewise.1
      then man ewise (where ~/.local/share/man is on the manual path)";

const DEMO_EXAMPLES: &str = "\
Examples:
  ewise demo
  cargo run --release -p ewise-cli -- demo";

/// SIGN and IS_INFINITY (DirectML's ELEMENT_WISE_SIGN and ELEMENT_WISE_IS_INFINITY,
/// ONNX Sign and IsInf) over .npy files, bit-exact.
#[derive(Debug, Parser)]
#[command(name = "ewise", version, after_help = EXAMPLES)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Apply SIGN: -1, 0 or +1 per element, in the input's type.
    #[command(after_help = SIGN_EXAMPLES)]
    Sign(SignArgs),
    /// Apply IS_INFINITY: 1 where an element is an infinity the mode detects, else 0.
    #[command(after_help = IS_INFINITY_EXAMPLES)]
    IsInfinity(IsInfinityArgs),
    /// Print the DirectML support tables: types and ranks per feature level.
    #[command(after_help = SUPPORT_EXAMPLES)]
    Support(SupportArgs),
    /// Run both operators on special values (-inf, -0, subnormals, NaN payloads ...)
    /// in several types and print what they give.
    #[command(after_help = DEMO_EXAMPLES)]
    Demo,
    /// Run an ONNX model (Sign and IsInf nodes) on .npy inputs; write one .npy per
    /// graph output.
    #[command(after_help = RUN_EXAMPLES)]
    Run(RunArgs),
    /// Run ONNX backend test case directories (model.onnx and test_data_set_*/) and
    /// compare the outputs bit for bit.
    #[command(after_help = ONNX_TEST_EXAMPLES)]
    OnnxTest(OnnxTestArgs),
    /// Time each operator and data type beside memory copies of the same bytes.
    Bench(crate::commands::bench::BenchArgs),
    /// List the GPU adapters `--device gpu` can use, and the order it tries them in.
    #[command(after_help = DEVICES_EXAMPLES)]
    Devices(DevicesArgs),
    /// Print the completion script for a shell on standard output.
    #[command(after_help = COMPLETIONS_EXAMPLES)]
    Completions(CompletionsArgs),
    /// Print the man page ewise(1), every command's options included, in roff on
    /// standard output.
    #[command(after_help = MAN_EXAMPLES)]
    Man,
}

/// Options of `ewise sign`.
#[derive(Debug, Args)]
pub struct SignArgs {
    /// Input .npy file.
    pub input: PathBuf,
    /// Output .npy file: written to a temporary file beside it, renamed on success. On
    /// Windows a file name that is a device (CON, LPT1.npy; NUL alone is the null
    /// device), holds ':' or ends in a dot or space is refused before the input is read.
    #[arg(required_unless_present = "in_place")]
    pub output: Option<PathBuf>,
    /// Rewrite INPUT's data in place (the header is never rewritten). Safe to
    /// interrupt: running the same command again completes the file.
    #[arg(long, conflicts_with = "output")]
    pub in_place: bool,
    /// What NaN gives [default: zero (DirectML) with --semantics dml, propagate with
    /// onnx].
    #[arg(long, value_enum, value_name = "POLICY")]
    pub nan: Option<Nan>,
    /// Shared options.
    #[command(flatten)]
    pub exec: ExecArgs,
}

/// Options of `ewise is-infinity`.
#[derive(Debug, Args)]
pub struct IsInfinityArgs {
    /// Input .npy file (floating point).
    pub input: PathBuf,
    /// Output .npy file (uint8 with --semantics dml, the default, bool with onnx): written to a
    /// temporary file beside it, renamed on success; file names refused as for `sign`.
    pub output: PathBuf,
    /// Which infinities give 1.
    #[arg(long, value_enum, default_value_t = Mode::Either)]
    pub mode: Mode,
    /// Shared options.
    #[command(flatten)]
    pub exec: ExecArgs,
}

/// Options shared by the commands that run an operator.
#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Whose results: dml gives DirectML's (NaN policy zero, IS_INFINITY writes uint8),
    /// onnx gives ONNX's (NaN policy propagate, IS_INFINITY writes bool). Both take
    /// every type and shape ewise takes (float64, int64, bfloat16, float8 for
    /// IS_INFINITY, 0-d and empty arrays, more than 2^32-1 elements, --mode neither);
    /// with --feature-level, dml takes only what DirectML takes at that level.
    #[arg(long, value_enum, default_value_t = Semantics::Dml)]
    pub semantics: Semantics,
    /// Refuse what DirectML would refuse at this feature level (1_0 ... 6_4; also 6.4 or
    /// 0x6400): with --semantics dml, DirectML's strict rules (its types, ranks and
    /// 32-bit sizes at LEVEL); with onnx, only an operator introduced after LEVEL.
    /// Without it, the extended rules at 6_4.
    #[arg(long, value_name = "LEVEL", value_parser = parse_level)]
    pub feature_level: Option<FeatureLevel>,
    /// Threads for the operator on the CPU: 0 (the default) for one per core, or 1 to 4
    /// per core (at most 256). Larger counts are refused: threads beyond the cores only
    /// share them, and slow the run. --device gpu ignores it.
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = parse_threads)]
    pub threads: usize,
    /// The element type, for the types numpy lacks: bfloat16 for ml_dtypes' bfloat16
    /// (saved as '<V2'); float8e4m3fn, float8e4m3fnuz, float8e5m2 or float8e5m2fnuz for
    /// ml_dtypes' float8 types (saved as '<f1'). With a numeric dtype it must match.
    #[arg(long, value_name = "TYPE", value_parser = parse_dtype)]
    pub dtype: Option<DataType>,
    /// Where the operator runs.
    #[arg(long, value_enum, env = DEVICE_ENV, default_value_t = DeviceKind::Cpu)]
    pub device: DeviceKind,
    /// The progress bar.
    #[command(flatten)]
    pub progress: ProgressArgs,
}

/// The progress bar's switch, for the commands that draw one.
#[derive(Debug, Args)]
pub struct ProgressArgs {
    /// Draw no progress bar. Without it, a bar (bytes done, rate, time left) is drawn on
    /// standard error while an input of 256 MiB of data or more is processed, and only
    /// when standard error is a terminal: never into a file or a pipe.
    #[arg(long)]
    pub no_progress: bool,
}

/// Options of `ewise completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

/// Options of `ewise support`.
#[derive(Debug, Args)]
pub struct SupportArgs {
    /// Only this operator.
    #[arg(long, value_enum)]
    pub op: Option<Op>,
    /// Only what is accepted at this feature level.
    #[arg(long, value_name = "LEVEL", value_parser = parse_level)]
    pub feature_level: Option<FeatureLevel>,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// Options of `ewise run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The .onnx model. External tensor data is read only from regular files inside its
    /// directory, reached without following any symbolic link; a model naming anything
    /// else is refused.
    pub model: PathBuf,
    /// An input: the graph input's name, '=', and a .npy file (split at the first '=').
    /// Give every input the model requires, once each.
    #[arg(short = 'i', long = "input", value_name = "NAME=FILE", value_parser = parse_named_input)]
    pub inputs: Vec<(String, PathBuf)>,
    /// Directory for the outputs, created if missing: OUTDIR/NAME.npy for each graph
    /// output NAME (a symbolic link there is followed to the file it names). Checked
    /// before any input is read: refused if an output name is not a plain file name on
    /// this system (on Windows also no ':', none of < > " | ? *, no device name such as
    /// CON, NUL or LPT1 with any extension, no trailing dot or space), if two outputs
    /// differ only in case (one file where case is ignored: Windows, macOS, vfat),
    /// if an output would replace a file this run reads (the model, its external data,
    /// an input), if two outputs lead to one file, or if an output exists and is not a
    /// regular file you may write. Outputs are written to temporary files, then renamed
    /// into place all or none: if a rename fails, those already renamed are undone and
    /// every file is as it was; if undoing fails too, the error names each file not
    /// restored and where its previous contents are. Not covered: the process killed (kill -9) or power lost during the renames.
    #[arg(short = 'o', long = "output-dir", value_name = "OUTDIR")]
    pub output_dir: PathBuf,
    /// What SIGN gives for NaN: propagate (ONNX) returns the NaN unchanged, zero
    /// (DirectML) gives +0.
    #[arg(long, value_enum, value_name = "POLICY", default_value_t = Nan::Propagate)]
    pub nan: Nan,
    /// Where the graph runs (on gpu, values stay on the GPU between nodes).
    #[arg(long, value_enum, env = DEVICE_ENV, default_value_t = DeviceKind::Cpu)]
    pub device: DeviceKind,
    /// Bytes of data one chunk holds: a chunk of a graph input (or initializer) and the
    /// same elements of every value computed from it, intermediate values included.
    /// Memory stays near this size whatever the inputs' size (see Memory below).
    /// Default 4Mi on the cpu, 16Mi on the gpu; accepted: 4Ki to 1Gi, written as a
    /// number of bytes or with Ki, Mi or Gi; refused if it cannot hold one element of
    /// each value alive at once, or (gpu) exceeds what the GPU can bind. On the gpu
    /// every chunk is a submission with its own transfers, so small chunks run far
    /// slower than on the cpu (4Ki shared by 40 outputs, a few dozen elements a chunk,
    /// runs about 8x slower); keep 1Mi or more there.
    #[arg(long, value_name = "BYTES", value_parser = parse_chunk_size)]
    pub chunk_size: Option<usize>,
    /// The progress bar.
    #[command(flatten)]
    pub progress: ProgressArgs,
}

/// Options of `ewise onnx-test`.
#[derive(Debug, Args)]
pub struct OnnxTestArgs {
    /// Test case directories, each holding model.onnx and test_data_set_N/ directories
    /// of input_N.pb and output_N.pb tensors.
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// What SIGN gives for NaN (propagate is ONNX's behaviour, which the cases expect).
    #[arg(long, value_enum, value_name = "POLICY", default_value_t = Nan::Propagate)]
    pub nan: Nan,
    /// Where the models run.
    #[arg(long, value_enum, env = DEVICE_ENV, default_value_t = DeviceKind::Cpu)]
    pub device: DeviceKind,
}

/// Options of `ewise devices`.
#[derive(Debug, Args)]
pub struct DevicesArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// The environment variable that sets `--device` when the option is not given.
pub const DEVICE_ENV: &str = "EWISE_DEVICE";

/// `--device`: where operators run. Both give the same bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DeviceKind {
    /// The CPU kernels.
    Cpu,
    /// The GPU through wgpu: the best hardware adapter, or the one EWISE_GPU_BACKEND and
    /// EWISE_GPU_ADAPTER select (`ewise devices` lists them); a software adapter only
    /// when it is the only one or is named.
    Gpu,
}

/// Whose rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Semantics {
    /// DirectML's results: NaN policy zero, IS_INFINITY writes uint8.
    Dml,
    /// ONNX's results (Sign-13, IsInf-20): NaN policy propagate, IS_INFINITY writes
    /// bool.
    Onnx,
}

/// `--nan`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Nan {
    /// NaN gives +0 (DirectML).
    Zero,
    /// NaN gives the input NaN, bit for bit (ONNX, numpy).
    Propagate,
}

impl From<Nan> for NanPolicy {
    fn from(n: Nan) -> NanPolicy {
        match n {
            Nan::Zero => NanPolicy::Zero,
            Nan::Propagate => NanPolicy::Propagate,
        }
    }
}

/// `--mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// +inf and -inf.
    Either,
    /// +inf only.
    Positive,
    /// -inf only.
    Negative,
    /// Nothing: always 0 (ONNX detect_positive=0, detect_negative=0; refused with
    /// --feature-level under --semantics dml, as DirectML has no such mode).
    Neither,
}

impl From<Mode> for InfinityMode {
    fn from(m: Mode) -> InfinityMode {
        match m {
            Mode::Either => InfinityMode::Either,
            Mode::Positive => InfinityMode::Positive,
            Mode::Negative => InfinityMode::Negative,
            Mode::Neither => InfinityMode::Neither,
        }
    }
}

/// `--op`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Op {
    /// ELEMENT_WISE_SIGN.
    Sign,
    /// ELEMENT_WISE_IS_INFINITY.
    IsInfinity,
}

fn parse_level(s: &str) -> Result<FeatureLevel, String> {
    s.parse()
        .map_err(|e: ewise_cpu::ParseFeatureLevelError| e.to_string())
}

fn parse_named_input(s: &str) -> Result<(String, PathBuf), String> {
    match s.split_once('=') {
        Some((name, file)) if !name.is_empty() && !file.is_empty() => {
            Ok((name.to_string(), PathBuf::from(file)))
        }
        _ => Err(format!(
            "'{s}' is not NAME=FILE (the graph input's name, '=', and a .npy file)"
        )),
    }
}

/// A size written as a number of units, or with the suffix Ki, Mi or Gi (2^10, 2^20,
/// 2^30 units); `None` for anything else or a value beyond `u64`.
pub fn parse_scaled(s: &str) -> Option<u64> {
    let t = s.trim();
    let (digits, scale) = [("Gi", 1u64 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)]
        .into_iter()
        .find_map(|(suffix, scale)| t.strip_suffix(suffix).map(|d| (d, scale)))
        .unwrap_or((t, 1));
    digits.parse::<u64>().ok()?.checked_mul(scale)
}

/// The smallest `--chunk-size` of `ewise run`.
pub const MIN_CHUNK_SIZE: u64 = 4 << 10;

/// The largest `--chunk-size` of `ewise run`.
pub const MAX_CHUNK_SIZE: u64 = 1 << 30;

/// Parses a `--chunk-size` value: [`MIN_CHUNK_SIZE`] to [`MAX_CHUNK_SIZE`] bytes.
fn parse_chunk_size(s: &str) -> Result<usize, String> {
    parse_scaled(s)
        .filter(|n| (MIN_CHUNK_SIZE..=MAX_CHUNK_SIZE).contains(n))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| {
            format!("invalid chunk size '{s}' (accepted: 4Ki to 1Gi bytes, e.g. 65536, 256Ki, 4Mi, 1Gi)")
        })
}

/// Parses a `--threads` value: 0 (one per core) or 1 to [`ewise_cpu::max_threads`], the
/// cap every execution applies. A larger count is refused with the accepted range.
pub fn parse_threads(s: &str) -> Result<usize, String> {
    let cap = ewise_cpu::max_threads();
    let accepted = format!(
        "accepted: 0 for one per core, or 1 to {cap}: {} per core on {} cores, at most {}",
        ewise_cpu::THREADS_PER_CORE,
        ewise_cpu::available_cores(),
        ewise_cpu::MAX_THREADS
    );
    match s.trim().parse::<u128>() {
        Ok(n) if n <= cap as u128 => Ok(n as usize),
        Ok(n) => Err(format!(
            "{n} threads is more than this machine can use ({accepted})"
        )),
        Err(_) => Err(format!("'{s}' is not a thread count ({accepted})")),
    }
}

/// A command-line error as one line, without clap's `error: ` prefix: its lines joined
/// (continuation lines such as `[possible values: ...]` after the line they continue,
/// the usage line as `usage: ...`), without the "For more information" line.
pub fn one_line_error(err: &clap::Error) -> String {
    let text = err.render().to_string();
    let mut out = String::new();
    let mut under_heading = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with("For more information") {
            continue;
        }
        let indented = line.starts_with(char::is_whitespace);
        let part = trimmed.strip_prefix("error: ").unwrap_or(trimmed);
        let part = match part.strip_prefix("Usage: ") {
            Some(usage) => format!("usage: {usage}"),
            None => part.to_string(),
        };
        if !out.is_empty() {
            out.push_str(
                if out.ends_with(':') || (indented && part.starts_with('[')) {
                    " "
                } else if indented && under_heading {
                    ", "
                } else {
                    "; "
                },
            );
        }
        if !indented {
            under_heading = part.ends_with(':');
        }
        out.push_str(&part);
    }
    out
}

fn parse_dtype(s: &str) -> Result<DataType, String> {
    DataType::from_name(s)
        .filter(|t| t.size_in_bytes().is_some() && *t != DataType::Unknown)
        .ok_or_else(|| {
            format!(
                "unknown type '{s}' (accepted: bfloat16, float8e4m3fn, float8e4m3fnuz, float8e5m2, float8e5m2fnuz, or a numeric type such as float32)"
            )
        })
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn in_place_excludes_an_output() {
        assert!(Cli::try_parse_from(["ewise", "sign", "--in-place", "a.npy"]).is_ok());
        assert!(Cli::try_parse_from(["ewise", "sign", "--in-place", "a.npy", "b.npy"]).is_err());
        assert!(Cli::try_parse_from(["ewise", "sign", "a.npy"]).is_err());
    }

    #[test]
    fn levels_and_types_parse() {
        let cli = Cli::try_parse_from([
            "ewise",
            "is-infinity",
            "a.npy",
            "b.npy",
            "--feature-level",
            "2.1",
            "--dtype",
            "BFloat16",
        ])
        .unwrap();
        let Command::IsInfinity(args) = cli.command else {
            panic!("parsed as another command");
        };
        assert_eq!(args.exec.feature_level, Some(FeatureLevel::L2_1));
        assert_eq!(args.exec.dtype, Some(DataType::Bfloat16));
        assert!(Cli::try_parse_from(["ewise", "support", "--feature-level", "7_0"]).is_err());
    }

    #[test]
    fn thread_counts_above_the_cap_are_refused_with_the_range() {
        let cap = ewise_cpu::max_threads();
        assert_eq!(parse_threads("0"), Ok(0));
        assert_eq!(parse_threads(&cap.to_string()), Ok(cap));
        for bad in [cap as u128 + 1, 100_000, u128::from(u64::MAX) + 1] {
            let err = parse_threads(&bad.to_string()).unwrap_err();
            assert!(err.contains(&format!("or 1 to {cap}")), "{err}");
        }
        assert!(parse_threads("-1").is_err());
    }

    #[test]
    fn usage_errors_are_one_line_naming_the_option_and_what_it_accepts() {
        let line = |args: &[&str]| one_line_error(&Cli::try_parse_from(args).unwrap_err());
        let nan = line(&["ewise", "sign", "a", "b", "--nan", "one"]);
        assert_eq!(
            nan,
            "invalid value 'one' for '--nan <POLICY>' [possible values: zero, propagate]"
        );
        let threads = line(&["ewise", "sign", "a", "b", "--threads", "100000"]);
        assert!(threads.starts_with("invalid value '100000' for '--threads <N>': "));
        let missing = line(&["ewise", "sign", "a"]);
        assert!(
            missing.starts_with(
                "the following required arguments were not provided: <OUTPUT>; usage: ewise sign"
            ),
            "{missing}"
        );
        for text in [nan, threads, missing, line(&["ewise", "frobnicate"])] {
            assert!(!text.contains('\n') && !text.starts_with("error"), "{text}");
            assert!(!text.contains("For more information"), "{text}");
        }
    }
}
