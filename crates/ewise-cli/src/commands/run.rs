//! `ewise run`: an ONNX model over `.npy` inputs, one `.npy` file per graph output.
//!
//! Before any input data is read, and so before anything is computed or written:
//! - the output names are checked (each must be a plain file name, each once);
//! - every output path `OUTDIR/NAME.npy` is resolved as [`crate::output`] describes
//!   (symbolic links followed to their final target) and refused, naming the file, if
//!   OUTDIR is not a directory, the target exists and is not a regular file, this
//!   process may not write it or create files beside it, it is a file this run reads
//!   (the `.onnx` file, an input, or one of the model's external data files, by any
//!   spelling, link or hard link), or two outputs resolve to one file (the same final
//!   path, or the same existing file);
//! - the inputs' names, element types and shapes are checked against the model's
//!   declarations.
//!
//! With `--device cpu` (the default) the inputs are then streamed through the model
//! ([`Model::streaming`]): each graph input or initializer that outputs derive from is
//! read in chunks of a few MiB (its chunk's input, output and intermediate buffers
//! together hold at most [`CHUNK_BYTES`] of data, or 4096 elements when it has very
//! many outputs), each chunk computed and appended to the temporary file of every
//! output derived from it. Memory is therefore bounded by the chunk size times the
//! values alive at once, plus the model's own size (its initializers), not by the
//! inputs' size; the exception is a column-major (`fortran_order`) input of more than
//! one dimension, which is read and reordered whole, then streamed from memory. A given
//! input that no output uses is not computed on (a pipe is read to its end).
//!
//! Outputs are written to temporary files beside their targets (each synced and
//! closed when complete) and committed by [`crate::output::commit_all`]: all of them
//! replace their targets, or on failure every target (in OUTDIR, or where a link in
//! OUTDIR leads) is as it was; if restoring a file fails, the error says where its
//! previous contents are. OUTDIR and its missing parents are created just before the
//! first temporary, and removed again if the run then fails and they are still empty.
//! A stop request (Ctrl-C) is honoured between chunks (with `--device gpu`: after each
//! input is read), before each output file is begun and before the commit; what was
//! written is then removed.
//!
//! Element types on disk: numeric types use numpy's type strings; bool is `|b1`; the
//! types numpy lacks are raw items, as ml_dtypes saves them. An input the model declares
//! as bfloat16 is read from a file of 2-byte items (`<V2`, `>V2`, `|V2`), one declared
//! as a float8 type from 1-byte items (`|V1`, `<f1`); outputs of those types are
//! written as `<V2` (bfloat16) and `|V1` (float8). Inputs in the other byte order are
//! swapped and column-major (`fortran_order`) inputs reordered; outputs are always
//! row-major in this machine's byte order.
//!
//! With `--device gpu` the model runs on the GPU (opened once, after the checks above
//! and before any data is read), values staying there between nodes; it is not
//! streamed: every input is read whole and every output held whole before it is
//! written. The files written are byte for byte those of `--device cpu`.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};
use ewise_cli::npy::{swap_bytes, ByteOrder, ElementType, Header, TypeStr, RAW_TYPES};
use ewise_onnx::{dtype, DataType, Model, Scratch, SourceKind, StreamOutput, Streaming, Tensor};

use crate::cli::{DeviceKind, RunArgs};
use crate::input::NpyInput;
use crate::interrupt;
use crate::output::{self, Existing, Staged, Staging, Target};
use crate::paths::{at, describe_io, file_id, same_file};
use crate::stream::CHUNK_BYTES;

/// Runs `ewise run`.
pub fn run(args: &RunArgs) -> Result<()> {
    let model = load(&args.model)?.with_nan_policy(args.nan.into());
    let dests = output_paths(&model, &args.output_dir)?;
    let targets = plan_outputs(&args.output_dir, &model, &dests, &files_read(args, &model))?;
    let sources = open_inputs(&model, &args.inputs)?;
    let described: Vec<(&str, DataType, &[usize])> = sources
        .iter()
        .map(|s| (s.name.as_str(), s.data_type, s.shape.as_slice()))
        .collect();
    model.check_inputs(&described).map_err(|e| anyhow!("{e}"))?;
    if args.device == DeviceKind::Cpu {
        let plan = model
            .streaming(&described)
            .map_err(|e| plan_error(&args.model, &sources, e))?;
        return stream_outputs(args, &targets, &plan, sources);
    }
    let model = model.with_gpu(crate::gpu::open(ewise_cpu::FeatureLevel::LATEST)?);
    let mut inputs = Vec::with_capacity(sources.len());
    for source in sources {
        interrupt::check()?;
        let path = source.file.path.clone();
        let name = source.name.clone();
        inputs.push((name, read_tensor(source).map_err(|e| at(&path, e))?));
    }
    interrupt::check()?;
    let outputs = model
        .run(inputs)
        .map_err(|e| at(&args.model, format!("run failed: {e}")))?;
    write_outputs(&args.output_dir, &targets, &outputs)
}

/// The error for a plan [`Model::streaming`] refused: an input too large for this
/// machine is named with its file, as when it is read whole.
fn plan_error(model: &Path, sources: &[Source], e: ewise_onnx::Error) -> anyhow::Error {
    match e {
        ewise_onnx::Error::TooLarge { what, shape, limit } => {
            match sources
                .iter()
                .find(|s| what == format!("input {:?}", s.name))
            {
                Some(s) => at(
                    &s.file.path,
                    format!(
                        "input {:?} of {} with shape {shape} is too large ({limit})",
                        s.name,
                        dtype::name(s.data_type)
                    ),
                ),
                None => at(
                    model,
                    format!("{what} with shape {shape} is too large ({limit})"),
                ),
            }
        }
        e => at(model, format!("run failed: {e}")),
    }
}

/// Every file this run reads: the model, its external data files and the inputs.
fn files_read(args: &RunArgs, model: &Model) -> Vec<(PathBuf, &'static str)> {
    let mut files = vec![(args.model.clone(), "the model")];
    files.extend(
        model
            .data_files()
            .iter()
            .map(|p| (p.clone(), "external data of the model")),
    );
    files.extend(args.inputs.iter().map(|(_, p)| (p.clone(), "an input")));
    files
}

fn load(path: &Path) -> Result<Model> {
    Model::load(path).map_err(|e| match e {
        ewise_onnx::Error::Io { .. } | ewise_onnx::Error::Decode { .. } => anyhow!("{e}"),
        e => at(path, e),
    })
}

/// Why `name` cannot be used as a file name, if it cannot.
fn unsafe_file_name(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("it is empty")
    } else if name.contains(['/', '\\']) {
        Some("it contains a path separator")
    } else if name.contains('\0') {
        Some("it contains a NUL character")
    } else if name.contains("..") {
        Some("it contains '..'")
    } else {
        None
    }
}

/// `OUTDIR/<name>.npy` for every graph output, in declaration order; refuses names
/// that are not plain file names, so nothing can be written outside OUTDIR.
fn output_paths(model: &Model, dir: &Path) -> Result<Vec<PathBuf>> {
    let mut seen = HashSet::new();
    let mut dests = Vec::with_capacity(model.outputs().len());
    for output in model.outputs() {
        let name = &output.name;
        if let Some(why) = unsafe_file_name(name) {
            bail!(
                "graph output {name:?} cannot be written as OUTDIR/<output name>.npy: {why} (output names must be plain file names without '/', '\\', '..' or NUL)"
            );
        }
        if !seen.insert(name.as_str()) {
            bail!("graph output {name:?} is listed twice; each output needs its own file");
        }
        dests.push(dir.join(format!("{name}.npy")));
    }
    Ok(dests)
}

/// Resolves and checks every output path (see the module docs) before anything is read;
/// `reads` are the files this run reads, with what each is. Linear in the number of
/// outputs: each distinct directory is canonicalized and checked once, and files are
/// matched through hash maps.
fn plan_outputs(
    dir: &Path,
    model: &Model,
    dests: &[PathBuf],
    reads: &[(PathBuf, &str)],
) -> Result<Vec<Target>> {
    match fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => return Err(at(dir, "is not a directory; OUTDIR must be a directory")),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            if fs::symlink_metadata(dir).is_ok() {
                return Err(at(
                    dir,
                    "is a symbolic link to a directory that does not exist; create it first",
                ));
            }
            check_creatable(dir)?;
            return Ok(dests.iter().map(|d| Target::absent(d)).collect());
        }
        Err(e) => return Err(at(dir, describe_io("cannot use as OUTDIR", &e))),
    }
    let mut read_paths: HashMap<PathBuf, (&Path, &str)> = HashMap::new();
    let mut read_ids: HashMap<(u64, u64), (&Path, &str)> = HashMap::new();
    let mut read_meta: Vec<(&Path, &str, fs::Metadata)> = Vec::new();
    for (path, what) in reads {
        if let Ok(canonical) = fs::canonicalize(path) {
            read_paths.insert(canonical, (path, what));
        }
        if let Ok(meta) = fs::metadata(path) {
            match file_id(&meta) {
                Some(id) => {
                    read_ids.insert(id, (path, what));
                }
                None => read_meta.push((path, what, meta)),
            }
        }
    }
    let names: Vec<&str> = model.outputs().iter().map(|o| o.name.as_str()).collect();
    let mut canonical_dirs: HashMap<PathBuf, PathBuf> = HashMap::new();
    let mut by_path: HashMap<PathBuf, usize> = HashMap::new();
    let mut by_id: HashMap<(u64, u64), usize> = HashMap::new();
    let mut targets: Vec<Target> = Vec::with_capacity(dests.len());
    for (i, dest) in dests.iter().enumerate() {
        let target = Target::resolve(dest)?;
        let target_dir = target.dir();
        let canonical_dir = match canonical_dirs.get(&target_dir) {
            Some(c) => c.clone(),
            None => {
                target.check_directory_writable()?;
                let c = fs::canonicalize(&target_dir).unwrap_or_else(|_| target_dir.clone());
                canonical_dirs.insert(target_dir, c.clone());
                c
            }
        };
        let key = canonical_dir.join(target.path().file_name().unwrap_or_default());
        let name = names.get(i).copied().unwrap_or_default();
        match target.existing() {
            Existing::Absent => {}
            Existing::File(meta) => {
                let id = file_id(meta);
                let read = read_paths
                    .get(&key)
                    .or_else(|| id.and_then(|id| read_ids.get(&id)))
                    .copied()
                    .or_else(|| {
                        read_meta
                            .iter()
                            .find(|(_, _, m)| same_file(meta, m))
                            .map(|(p, what, _)| (*p, *what))
                    });
                if let Some((path, what)) = read {
                    return Err(at(
                        dest,
                        format!(
                            "is {} ({what}), which this run reads; choose another output directory",
                            path.display()
                        ),
                    ));
                }
                if let Some(&j) = id.and_then(|id| by_id.get(&id)) {
                    return Err(collision(
                        &targets[j],
                        names.get(j).copied().unwrap_or_default(),
                        &target,
                        name,
                    ));
                }
                target.check_replaceable()?;
                if let Some(id) = id {
                    by_id.insert(id, i);
                }
            }
            Existing::Directory => {
                return Err(at(
                    dest,
                    "exists and is not a regular file (a directory); ewise run writes only regular files",
                ));
            }
            Existing::Special(_) => {
                return Err(at(
                    dest,
                    "exists and is not a regular file (a FIFO, device or socket); ewise run writes only regular files",
                ));
            }
        }
        if let Some(&j) = by_path.get(&key) {
            return Err(collision(
                &targets[j],
                names.get(j).copied().unwrap_or_default(),
                &target,
                name,
            ));
        }
        by_path.insert(key, i);
        targets.push(target);
    }
    Ok(targets)
}

/// The error for two outputs that resolve to one file: `first` of graph output
/// `first_name`, and `second` of `second_name`.
fn collision(
    first: &Target,
    first_name: &str,
    second: &Target,
    second_name: &str,
) -> anyhow::Error {
    anyhow!(
        "{}: graph output {second_name:?} and graph output {first_name:?} ({}) would both be written to {}; each output needs its own file",
        second.given().display(),
        first.given().display(),
        second.path().display()
    )
}

/// Refuses an OUTDIR that cannot be created: its nearest existing ancestor must be a
/// directory this process may create entries in.
fn check_creatable(dir: &Path) -> Result<()> {
    let mut ancestor = dir;
    loop {
        ancestor = match ancestor.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        match fs::metadata(ancestor) {
            Ok(meta) if meta.is_dir() => {
                return crate::paths::check_writable(ancestor).map_err(|e| {
                    at(
                        dir,
                        describe_io(
                            &format!("cannot create OUTDIR in {}", ancestor.display()),
                            &e,
                        ),
                    )
                });
            }
            Ok(_) => {
                return Err(at(
                    dir,
                    format!(
                        "cannot create OUTDIR: {} is not a directory",
                        ancestor.display()
                    ),
                ))
            }
            Err(_) if ancestor == Path::new(".") || ancestor.parent().is_none() => {
                return Err(at(dir, "cannot create OUTDIR: no parent directory exists"))
            }
            Err(_) => {}
        }
    }
}

/// An input file, opened and matched with the graph input it is given for.
struct Source {
    name: String,
    file: NpyInput,
    data_type: DataType,
    shape: Vec<usize>,
}

/// Opens every `-i NAME=FILE`, checking names and element types against the model.
fn open_inputs(model: &Model, given: &[(String, PathBuf)]) -> Result<Vec<Source>> {
    let accepted = || {
        let names: Vec<&str> = model.inputs().iter().map(|i| i.name.as_str()).collect();
        if names.is_empty() {
            "the model takes no inputs".to_string()
        } else {
            format!("its inputs: {}", names.join(", "))
        }
    };
    for (i, (name, path)) in given.iter().enumerate() {
        if let Some((_, first)) = given[..i].iter().find(|(n, _)| n == name) {
            bail!(
                "input {name:?} is given twice (-i {name}={} and -i {name}={})",
                first.display(),
                path.display()
            );
        }
        if model.input(name).is_none() {
            bail!(
                "-i {name}={}: {name:?} is not an input of the model ({})",
                path.display(),
                accepted()
            );
        }
    }
    for input in model.inputs() {
        if !input.has_default && !given.iter().any(|(n, _)| *n == input.name) {
            let required: Vec<&str> = model
                .inputs()
                .iter()
                .filter(|i| !i.has_default)
                .map(|i| i.name.as_str())
                .collect();
            bail!(
                "input {:?} ({} {}) is required but was not given (pass -i {}=FILE.npy; required: {})",
                input.name,
                dtype::name(input.data_type),
                declared_shape(input),
                input.name,
                required.join(", ")
            );
        }
    }
    given
        .iter()
        .map(|(name, path)| {
            let declared = model.input(name).map_or(DataType::Unknown, |i| i.data_type);
            open_input(name, path, declared)
        })
        .collect()
}

fn declared_shape(input: &ewise_onnx::ValueInfo) -> String {
    match &input.shape {
        None => "of any shape".to_string(),
        Some(dims) => {
            let dims: Vec<String> = dims.iter().map(ToString::to_string).collect();
            format!("[{}]", dims.join(", "))
        }
    }
}

/// Opens the file for input `name`, which the model declares as `declared`.
fn open_input(name: &str, path: &Path, declared: DataType) -> Result<Source> {
    let requested = match peek_type(path) {
        Some(ts) if ts.kind == 'V' || (ts.kind == 'f' && ts.size == 1) => {
            if RAW_TYPES.contains(&declared) && declared.size_in_bytes() == Some(ts.size) {
                Some(declared)
            } else {
                return Err(at(
                    path,
                    format!(
                        "input {name:?} holds raw {}-byte items ('{ts}'), but the model declares it as {} (raw items are read only for inputs declared as bfloat16, 2 bytes, or float8, 1 byte)",
                        ts.size,
                        dtype::name(declared)
                    ),
                ));
            }
        }
        _ => None,
    };
    let file = NpyInput::open(path, requested, false)?;
    let data_type = file.element.data_type;
    if data_type != declared {
        return Err(at(
            path,
            format!(
                "input {name:?} is {} ('{}'), but the model declares it as {}",
                dtype::name(data_type),
                file.header.descr,
                dtype::name(declared)
            ),
        ));
    }
    let shape = file
        .header
        .shape
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<Vec<usize>, _>>()
        .map_err(|_| {
            at(
                path,
                format!(
                    "shape {} is too large for this machine",
                    file.header.shape_text()
                ),
            )
        })?;
    Ok(Source {
        name: name.to_string(),
        file,
        data_type,
        shape,
    })
}

/// The type string of a regular `.npy` file, if its header can be read; errors are left
/// to [`NpyInput::open`], which reports them. A FIFO or device is not opened here (it is
/// opened once, by [`NpyInput::open`]).
fn peek_type(path: &Path) -> Option<TypeStr> {
    if !fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let mut file = File::open(path).ok()?;
    let parsed = Header::read(&mut file).ok()?;
    TypeStr::parse(&parsed.header.descr).ok()
}

/// Reads an input's data into a row-major tensor in this machine's byte order.
fn read_tensor(mut source: Source) -> Result<Tensor> {
    let data = read_data(&mut source)?;
    let Source {
        name,
        data_type,
        shape,
        ..
    } = source;
    Tensor::new(data_type, shape, data).map_err(|e| match e {
        ewise_onnx::Error::TooLarge { shape, limit, .. } => anyhow!(
            "input {name:?} of {} with shape {shape} is too large ({limit})",
            dtype::name(data_type)
        ),
        ewise_onnx::Error::InvalidTensor { reason, .. } => anyhow!("input {name:?}: {reason}"),
        e => anyhow!("input {name:?}: {e}"),
    })
}

/// Reads an input's whole data, row-major, in this machine's byte order.
fn read_data(source: &mut Source) -> Result<Vec<u8>> {
    let file = &mut source.file;
    let size = file.element.size();
    let len = file
        .count
        .checked_mul(size as u64)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| anyhow!("the data is too large for this machine's memory"))?;
    let mut data = Vec::new();
    data.try_reserve_exact(len)
        .map_err(|_| anyhow!("cannot allocate {len} bytes for the data"))?;
    (&mut file.file)
        .take(len as u64)
        .read_to_end(&mut data)
        .map_err(|e| anyhow!(describe_io("read failed", &e)))?;
    if data.len() != len {
        bail!(
            "truncated: shape {} of '{}' needs {len} bytes of data, but only {} follow the header",
            file.header.shape_text(),
            file.header.descr,
            data.len()
        );
    }
    if file.element.needs_swap() {
        swap_bytes(&mut data, size);
    }
    if file.header.fortran_order && source.shape.len() > 1 {
        data = fortran_to_c(&data, &source.shape, size);
    }
    Ok(data)
}

/// Fills `buf` with the next bytes of an input's data, in this machine's byte order;
/// `done` bytes of it were read before. A pipe that ends early is reported as when the
/// data is read whole.
fn read_chunk(file: &mut NpyInput, buf: &mut [u8], done: u64) -> Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.file.read(&mut buf[filled..]) {
            Ok(0) => bail!(
                "truncated: shape {} of '{}' needs {} bytes of data, but only {} follow the header",
                file.header.shape_text(),
                file.header.descr,
                file.count.saturating_mul(file.element.size() as u64),
                done + filled as u64
            ),
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => bail!(describe_io("read failed", &e)),
        }
    }
    if file.element.needs_swap() {
        swap_bytes(buf, file.element.size());
    }
    Ok(())
}

/// Reads and discards the data of a given input that no output derives from, when it
/// is a pipe: its writer is not left blocked, and a pipe that ends early is reported.
/// A regular file's length was checked when it was opened.
fn drain(mut source: Source) -> Result<()> {
    let file = &mut source.file;
    if file.file.metadata().is_ok_and(|m| m.is_file()) {
        return Ok(());
    }
    let total = file.count.saturating_mul(file.element.size() as u64);
    let mut buf = vec![0u8; usize::try_from(total).map_or(CHUNK_BYTES, |t| t.min(CHUNK_BYTES))];
    let mut done = 0u64;
    while done < total {
        interrupt::check()?;
        let n = usize::try_from(total - done).map_or(buf.len(), |r| r.min(buf.len()));
        let path = file.path.clone();
        read_chunk(file, &mut buf[..n], done).map_err(|e| at(&path, e))?;
        done += n as u64;
    }
    Ok(())
}

/// Bytes per element of `data_type` (1 for a type without a whole-byte size, which
/// the checks before streaming refuse).
fn element_size(data_type: DataType) -> usize {
    data_type
        .size_in_bytes()
        .and_then(|s| usize::try_from(s).ok())
        .unwrap_or(1)
}

/// The fewest elements a chunk holds, however many outputs share the buffer budget.
const MIN_CHUNK_ELEMENTS: usize = 4096;

/// The most outputs of one source whose temporaries stay open while it is streamed;
/// beyond, each chunk reopens them ([`Staging`]).
const OPEN_OUTPUTS: usize = 16;

/// Where a source's bytes come from.
enum Feed<'a> {
    /// An input file, read chunk by chunk.
    File(Source),
    /// Bytes held whole, row-major, in this machine's byte order: an initializer or
    /// input default, or a column-major input reordered.
    Memory(Cow<'a, [u8]>),
}

/// Streams every source of `plan` into temporaries for `targets` and commits them (see
/// the module docs). Creates OUTDIR and its missing parents first; removes those again,
/// where still empty, if the run fails.
fn stream_outputs(
    args: &RunArgs,
    targets: &[Target],
    plan: &Streaming,
    inputs: Vec<Source>,
) -> Result<()> {
    if targets.len() != plan.outputs().len() {
        bail!(
            "the model gave {} outputs but declares {}",
            plan.outputs().len(),
            targets.len()
        );
    }
    in_created_dirs(&args.output_dir, || {
        stream_and_commit(&args.model, targets, plan, inputs)
    })
}

/// Removes stale temporaries, streams each source into its outputs' temporaries, and
/// commits them all in declaration order.
fn stream_and_commit(
    model: &Path,
    targets: &[Target],
    plan: &Streaming,
    mut inputs: Vec<Source>,
) -> Result<()> {
    output::remove_stale_temporaries(targets);
    let mut staged: Vec<Option<Staged>> = targets.iter().map(|_| None).collect();
    let mut scratch = Scratch::new();
    for (s, source) in plan.sources().iter().enumerate() {
        let feed = match source.kind {
            SourceKind::Input => {
                let i = inputs
                    .iter()
                    .position(|f| f.name == source.name)
                    .ok_or_else(|| anyhow!("input {:?} was not opened", source.name))?;
                let mut input = inputs.swap_remove(i);
                if input.file.header.fortran_order && input.shape.len() > 1 {
                    let path = input.file.path.clone();
                    Feed::Memory(Cow::Owned(read_data(&mut input).map_err(|e| at(&path, e))?))
                } else {
                    Feed::File(input)
                }
            }
            _ => Feed::Memory(Cow::Borrowed(plan.initializer_bytes(s).unwrap_or_default())),
        };
        let written = stream_source(model, targets, plan, s, feed, &mut scratch)?;
        for (&o, done) in plan.outputs_of(s).iter().zip(written) {
            staged[o] = Some(done);
        }
    }
    for unused in inputs {
        drain(unused)?;
    }
    interrupt::check()?;
    let staged = staged
        .into_iter()
        .collect::<Option<Vec<Staged>>>()
        .ok_or_else(|| anyhow!("the model's plan leaves an output without a source"))?;
    output::commit_all(staged)
}

/// Streams source `s` of `plan`, read from `feed`, into new temporaries for its
/// outputs ([`Streaming::outputs_of`]), each a `.npy` header then the data; returns
/// them complete, in that order. Each chunk's input and output buffers and scratch
/// total at most [`CHUNK_BYTES`], or [`MIN_CHUNK_ELEMENTS`] elements when a source has
/// so many outputs that fewer would fit.
fn stream_source(
    model: &Path,
    targets: &[Target],
    plan: &Streaming,
    s: usize,
    mut feed: Feed<'_>,
    scratch: &mut Scratch,
) -> Result<Vec<Staged>> {
    let source = &plan.sources()[s];
    let outputs: Vec<&StreamOutput> = plan
        .outputs_of(s)
        .iter()
        .map(|&o| &plan.outputs()[o])
        .collect();
    let in_size = element_size(source.data_type);
    let out_sizes: Vec<usize> = outputs.iter().map(|o| element_size(o.data_type)).collect();
    let per_element = in_size
        .saturating_add(out_sizes.iter().sum())
        .saturating_add(plan.scratch_bytes(1));
    let chunk = (CHUNK_BYTES / per_element.max(1))
        .max(MIN_CHUNK_ELEMENTS)
        .min(source.elements);
    let keep_open = outputs.len() <= OPEN_OUTPUTS;
    let mut files = Vec::with_capacity(outputs.len());
    for (&o, out) in plan.outputs_of(s).iter().zip(&outputs) {
        interrupt::check()?;
        let header = Header {
            descr: output_element(out.data_type).descr(),
            fortran_order: false,
            shape: out.shape.iter().map(|&d| d as u64).collect(),
        };
        let mut file = Staging::create(&targets[o], keep_open)?;
        file.append(&header.to_bytes())?;
        files.push(file);
    }
    let mut input = match feed {
        Feed::File(_) => vec![0u8; chunk * in_size],
        Feed::Memory(_) => Vec::new(),
    };
    let mut buffers: Vec<Vec<u8>> = out_sizes
        .iter()
        .map(|&size| vec![0u8; chunk * size])
        .collect();
    let mut done = 0;
    while done < source.elements {
        let n = chunk.min(source.elements - done);
        let (start, end) = (done * in_size, (done + n) * in_size);
        let bytes: &[u8] = match &mut feed {
            Feed::File(file) => {
                let buf = &mut input[..n * in_size];
                read_chunk(&mut file.file, buf, start as u64)
                    .map_err(|e| at(&file.file.path, e))?;
                buf
            }
            Feed::Memory(data) => data.get(start..end).ok_or_else(|| {
                at(
                    model,
                    format!(
                        "the data of {:?} holds {} bytes, but its shape needs {}",
                        source.name,
                        data.len(),
                        source.elements * in_size
                    ),
                )
            })?,
        };
        interrupt::check()?;
        let mut slices: Vec<&mut [u8]> = buffers
            .iter_mut()
            .zip(&out_sizes)
            .map(|(buf, &size)| &mut buf[..n * size])
            .collect();
        plan.run_chunk(s, bytes, &mut slices, scratch)
            .map_err(|e| at(model, format!("run failed: {e}")))?;
        for (file, slice) in files.iter_mut().zip(&slices) {
            file.append(slice)?;
        }
        done += n;
    }
    files.into_iter().map(Staging::finish).collect()
}

/// Reorders the elements of a column-major array of `shape` into row-major order.
fn fortran_to_c(data: &[u8], shape: &[usize], size: usize) -> Vec<u8> {
    let mut strides = Vec::with_capacity(shape.len());
    let mut stride = 1;
    for &d in shape {
        strides.push(stride);
        stride *= d;
    }
    let count = data.len() / size;
    let mut index = vec![0usize; shape.len()];
    let mut out = Vec::with_capacity(data.len());
    for _ in 0..count {
        let at: usize = index.iter().zip(&strides).map(|(i, s)| i * s).sum();
        out.extend_from_slice(&data[at * size..(at + 1) * size]);
        for (i, &d) in index.iter_mut().zip(shape).rev() {
            *i += 1;
            if *i < d {
                break;
            }
            *i = 0;
        }
    }
    out
}

/// How an output of `data_type` is spelled on disk: numpy's type string, or for the
/// types numpy lacks, raw items (`<V2` for bfloat16, `|V1` for float8).
fn output_element(data_type: DataType) -> ElementType {
    ElementType::native(data_type).unwrap_or(ElementType {
        data_type,
        order: if data_type.size_in_bytes() == Some(1) {
            ByteOrder::NotApplicable
        } else {
            ByteOrder::NATIVE
        },
        kind: 'V',
    })
}

/// Writes every output to a temporary file beside its target, then commits them all
/// (see the module docs). Creates `dir` and its missing parents first; removes those
/// again, where still empty, if the run fails.
fn write_outputs(dir: &Path, targets: &[Target], outputs: &[(String, Tensor)]) -> Result<()> {
    if targets.len() != outputs.len() {
        bail!(
            "the model gave {} outputs but declares {}",
            outputs.len(),
            targets.len()
        );
    }
    in_created_dirs(dir, || stage_and_commit(targets, outputs))
}

/// Creates `dir` and its missing parents, then runs `write`; removes those directories
/// again, where still empty, if it fails.
fn in_created_dirs(dir: &Path, write: impl FnOnce() -> Result<()>) -> Result<()> {
    let created = create_dirs(dir)?;
    let result = write();
    if result.is_err() {
        for made in created.iter().rev() {
            let _ = fs::remove_dir(made);
        }
    }
    result
}

/// Removes stale temporaries, writes each output to its temporary file, and commits.
fn stage_and_commit(targets: &[Target], outputs: &[(String, Tensor)]) -> Result<()> {
    output::remove_stale_temporaries(targets);
    let mut staged = Vec::with_capacity(outputs.len());
    for (target, (_, tensor)) in targets.iter().zip(outputs) {
        interrupt::check()?;
        let header = Header {
            descr: output_element(tensor.data_type).descr(),
            fortran_order: false,
            shape: tensor.shape.iter().map(|&d| d as u64).collect(),
        };
        staged.push(Staged::write(target, &[&header.to_bytes(), &tensor.data])?);
    }
    interrupt::check()?;
    output::commit_all(staged)
}

/// Creates `dir` and its missing parents; returns those it created, outermost first.
fn create_dirs(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut missing = Vec::new();
    let mut next = Some(dir);
    while let Some(d) = next.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
        missing.push(d.to_path_buf());
        next = d.parent();
    }
    missing.reverse();
    let mut created = Vec::with_capacity(missing.len());
    for d in missing {
        match fs::create_dir(&d) {
            Ok(()) => created.push(d),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && d.is_dir() => {}
            Err(e) => {
                for made in created.iter().rev() {
                    let _ = fs::remove_dir(made);
                }
                return Err(at(
                    &d,
                    describe_io("cannot create the output directory", &e),
                ));
            }
        }
    }
    Ok(created)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fortran_order_is_reordered_to_row_major() {
        let data: Vec<u8> = (0..6).collect();
        assert_eq!(fortran_to_c(&data, &[2, 3], 1), [0, 2, 4, 1, 3, 5]);
        let wide: Vec<u8> = (0..12).collect();
        assert_eq!(
            fortran_to_c(&wide, &[3, 2], 2),
            [0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11]
        );
        assert_eq!(fortran_to_c(&[], &[0, 4], 4), Vec::<u8>::new());
    }

    #[test]
    fn unsafe_names_are_recognized() {
        for name in ["", "a/b", "..", "../x", "a\\b", "x\0"] {
            assert!(unsafe_file_name(name).is_some(), "{name:?}");
        }
        for name in ["y", "out.1", "Sign output", "."] {
            assert!(unsafe_file_name(name).is_none(), "{name:?}");
        }
    }

    #[test]
    fn raw_outputs_are_spelled_as_ml_dtypes_saves_them() {
        assert_eq!(output_element(DataType::Bfloat16).descr(), "<V2");
        assert_eq!(output_element(DataType::Float8E5M2).descr(), "|V1");
        assert_eq!(output_element(DataType::Bool).descr(), "|b1");
        assert_eq!(output_element(DataType::Float32).descr(), "<f4");
    }
}
