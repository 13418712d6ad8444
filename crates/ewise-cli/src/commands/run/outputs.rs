//! Where `ewise run` writes: output paths checked before anything is read, the output
//! directory created (and removed again on failure), and how outputs are spelled on disk.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};
use ewise_cli::file_name::{self, Rules, Unsafe};
use ewise_cli::npy::{ByteOrder, ElementType};
use ewise_cpu::text::quoted;
use ewise_onnx::{DataType, Model};

use crate::output::{Existing, Target};
use crate::paths::{at, describe_io, file_id, same_file};

/// `OUTDIR/<name>.npy` for every graph output, in declaration order. Refuses, before
/// anything is read, an output name that is `.` or `..` or whose file name is not safe
/// on this OS ([`file_name::check`]: nothing can be written outside OUTDIR or to a
/// device), and two outputs whose files a file system that ignores case would make one
/// ([`file_name::fold`]), on every OS.
pub(super) fn output_paths(model: &Model, dir: &Path) -> Result<Vec<PathBuf>> {
    let mut seen: HashMap<String, &str> = HashMap::new();
    let mut dests = Vec::with_capacity(model.outputs().len());
    for output in model.outputs() {
        let name = output.name.as_str();
        let file = format!("{name}.npy");
        let checked = match name {
            "." | ".." => Err(Unsafe::DotName),
            _ => file_name::check(&file, Rules::HOST),
        };
        if let Err(why) = checked {
            bail!(
                "graph output {} cannot be written as OUTDIR/<output name>.npy: {why} (output names must be plain file names, safe on this system)",
                quoted(name)
            );
        }
        match seen.insert(file_name::fold(&file), name) {
            Some(first) if first == name => bail!(
                "graph output {} is listed twice; each output needs its own file",
                quoted(name)
            ),
            Some(first) => bail!(
                "graph outputs {} and {} would be one file on a file system that ignores case or trailing dots and spaces (Windows, macOS by default, vfat and exFAT, casefolded ext4 folders): {} and {file}; each output needs its own file",
                quoted(first),
                quoted(name),
                format_args!("{first}.npy")
            ),
            None => {}
        }
        dests.push(dir.join(file));
    }
    Ok(dests)
}

/// Resolves and checks every output path (see the module docs) before anything is read;
/// `reads` are the files this run reads, with what each is. Linear in the number of
/// outputs: each distinct directory is canonicalized and checked once, and files are
/// matched through hash maps.
pub(super) fn plan_outputs(
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
            match file_id(path, &meta) {
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
                let id = file_id(target.path(), meta);
                let read = read_paths
                    .get(&key)
                    .or_else(|| id.and_then(|id| read_ids.get(&id)))
                    .copied()
                    .or_else(|| {
                        read_meta
                            .iter()
                            .find(|(p, _, m)| same_file(target.path(), meta, p, m))
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

/// How an output of `data_type` is spelled on disk: numpy's type string, or for the
/// types numpy lacks, raw items (`<V2` for bfloat16, `|V1` for float8).
pub(super) fn output_element(data_type: DataType) -> ElementType {
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

/// Creates `dir` and its missing parents, then runs `write`; removes those directories
/// again, where still empty, if it fails.
pub(super) fn in_created_dirs(dir: &Path, write: impl FnOnce() -> Result<()>) -> Result<()> {
    let created = create_dirs(dir)?;
    let result = write();
    if result.is_err() {
        for made in created.iter().rev() {
            let _ = fs::remove_dir(made);
        }
    }
    result
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
    fn raw_outputs_are_spelled_as_ml_dtypes_saves_them() {
        assert_eq!(output_element(DataType::Bfloat16).descr(), "<V2");
        assert_eq!(output_element(DataType::Float8E5M2).descr(), "|V1");
        assert_eq!(output_element(DataType::Bool).descr(), "|b1");
        assert_eq!(output_element(DataType::Float32).descr(), "<f4");
    }
}
