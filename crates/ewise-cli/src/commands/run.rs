//! `ewise run`: an ONNX model over `.npy` inputs, one `.npy` file per graph output.
//!
//! Everything that can be checked without computing is checked before any data is read
//! or any file is written: the output names (each must be a plain file name), the
//! inputs' names, element types and shapes against the model's declarations. Outputs
//! are written to temporary files in OUTDIR and renamed into place only when all of
//! them are complete, so a failed run leaves no output behind.
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
//! and before any data is read), values staying there between nodes; the files written
//! are byte for byte those of `--device cpu`.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};
use ewise_cli::npy::{swap_bytes, ByteOrder, ElementType, Header, TypeStr, RAW_TYPES};
use ewise_onnx::{dtype, DataType, Model, Tensor};

use crate::cli::{DeviceKind, RunArgs};
use crate::input::NpyInput;
use crate::output::Output;
use crate::paths::{at, describe_io, same_file};

/// Runs `ewise run`.
pub fn run(args: &RunArgs) -> Result<()> {
    let model = load(&args.model)?.with_nan_policy(args.nan.into());
    let dests = output_paths(&model, &args.output_dir)?;
    let sources = open_inputs(&model, &args.inputs)?;
    let described: Vec<(&str, DataType, &[usize])> = sources
        .iter()
        .map(|s| (s.name.as_str(), s.data_type, s.shape.as_slice()))
        .collect();
    model.check_inputs(&described).map_err(|e| anyhow!("{e}"))?;
    let model = match args.device {
        DeviceKind::Cpu => model,
        DeviceKind::Gpu => model.with_gpu(crate::gpu::open(ewise_cpu::FeatureLevel::LATEST)?),
    };
    let mut inputs = Vec::with_capacity(sources.len());
    for source in sources {
        let path = source.file.path.clone();
        let name = source.name.clone();
        inputs.push((name, read_tensor(source).map_err(|e| at(&path, e))?));
    }
    let outputs = model
        .run(inputs)
        .map_err(|e| at(&args.model, format!("run failed: {e}")))?;
    let inputs: Vec<&Path> = args.inputs.iter().map(|(_, p)| p.as_path()).collect();
    write_outputs(&args.output_dir, &dests, &outputs, &args.model, &inputs)
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

/// The type string of a `.npy` file, if its header can be read; errors are left to
/// [`NpyInput::open`], which reports them.
fn peek_type(path: &Path) -> Option<TypeStr> {
    let mut file = File::open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let parsed = Header::read(&mut file).ok()?;
    TypeStr::parse(&parsed.header.descr).ok()
}

/// Reads an input's data into a row-major tensor in this machine's byte order.
fn read_tensor(source: Source) -> Result<Tensor> {
    let Source {
        mut file,
        data_type,
        shape,
        ..
    } = source;
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
    if file.header.fortran_order && shape.len() > 1 {
        data = fortran_to_c(&data, &shape, size);
    }
    Tensor::new(data_type, shape, data).map_err(|e| anyhow!("{e}"))
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

/// Writes every output to a temporary file in `dir` (created if missing), then renames
/// them all into place. Refuses, before writing anything, to replace the model or an
/// input file and destinations that exist but are not regular files. If a rename fails,
/// the outputs already renamed are removed again (files they replaced are not
/// restored), so no output of a failed run remains.
fn write_outputs(
    dir: &Path,
    dests: &[PathBuf],
    outputs: &[(String, Tensor)],
    model: &Path,
    inputs: &[&Path],
) -> Result<()> {
    if dests.len() != outputs.len() {
        bail!(
            "the model gave {} outputs but declares {}",
            outputs.len(),
            dests.len()
        );
    }
    fs::create_dir_all(dir)
        .map_err(|e| at(dir, describe_io("cannot create the output directory", &e)))?;
    let read_meta: Vec<(&Path, fs::Metadata)> = inputs
        .iter()
        .chain([&model])
        .filter_map(|p| fs::metadata(p).ok().map(|m| (*p, m)))
        .collect();
    let mut pending = Vec::with_capacity(outputs.len());
    for (dest, (_, tensor)) in dests.iter().zip(outputs) {
        if let Ok(meta) = fs::metadata(dest) {
            if let Some((input, _)) = read_meta.iter().find(|(_, m)| same_file(&meta, m)) {
                return Err(at(
                    dest,
                    format!(
                        "is {}, which this run reads; choose another output directory",
                        input.display()
                    ),
                ));
            }
            if !meta.is_file() {
                return Err(at(
                    dest,
                    "exists and is not a regular file; ewise run writes only regular files",
                ));
            }
        }
        let mut out = Output::create(dest, model)?;
        let header = Header {
            descr: output_element(tensor.data_type).descr(),
            fortran_order: false,
            shape: tensor.shape.iter().map(|&d| d as u64).collect(),
        };
        out.write_all(&header.to_bytes())?;
        out.write_all(&tensor.data)?;
        out.file()
            .sync_all()
            .map_err(|e| at(dest, describe_io("write failed", &e)))?;
        pending.push(out);
    }
    let mut done: Vec<PathBuf> = Vec::with_capacity(pending.len());
    for out in pending {
        let dest = out.dest().to_path_buf();
        if let Err(e) = out.commit() {
            for path in &done {
                let _ = fs::remove_file(path);
            }
            return Err(e);
        }
        done.push(dest);
    }
    Ok(())
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
