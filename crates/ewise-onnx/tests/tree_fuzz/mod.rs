//! The body of the `load_tree` fuzz target, shared with the stable test
//! `tests/load_tree.rs`: bytes decide a small directory tree (regular files, directories,
//! FIFOs, symbolic links inside and out of it, to `/dev/zero`, dangling) and a model
//! whose initializers claim locations, offsets and lengths in it; [`check`] builds both
//! in a fresh temporary directory, loads the model with `Model::load`, runs it, and
//! asserts the loader's contract against an independent model of the tree:
//!
//! - a load that succeeds gave every graph output exactly the bytes of a regular file
//!   inside the model's directory, reached through plain directories, at the claimed
//!   offset; no output holds the secret marker written only outside;
//! - a load fails only when some initializer's claim is bad by that model (for
//!   initializers no run reads, only checks that need no file count);
//! - [`ewise_onnx::Model::data_files`] lists only such files;
//! - a load that leaves the data in its files ([`ExternalData::Deferred`]) fails with
//!   the same error or succeeds with the same files, and its run and its streamed
//!   sources give the same bytes;
//! - nothing panics; a FIFO never blocks (the caller bounds the time).
//!
//! Unix only (symbolic links and FIFOs).

use std::collections::BTreeMap;
use std::path::{Component, Path};

use ewise_onnx::proto::{
    type_proto, DataLocation, GraphProto, Message, ModelProto, NodeProto, OperatorSetIdProto,
    StringStringEntryProto, TensorProto, TypeProto, ValueInfoProto,
};
use ewise_onnx::{Error, ExternalData, Model, Tensor};

/// Written only outside the model's directory. Every byte is at least 0x80; the
/// regular files inside hold bytes below 0x80.
pub const SECRET: &[u8] = b"\xF0\x9F\x94\x92EWISE\xA7SECRET\xFF";

/// The paths of the tree's entries, parents before children.
const SLOTS: [&str; 8] = ["a", "b", "d", "d/c", "d/e", "d/e/f", "g", "h"];

/// What a load did, for the stable test's coverage check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// The model loaded and ran.
    Ran,
    /// External data was refused (link, special file, outside).
    Refused,
    /// Another error (missing file, claim beyond the file, bad entries, run errors).
    Failed,
}

/// One entry of the tree, as built.
#[derive(Debug, Clone)]
enum Node {
    File(Vec<u8>),
    Dir,
    Fifo,
    #[expect(dead_code, reason = "shown only through Debug, in failure messages")]
    Link(String),
}

/// Reads the fuzzer's bytes; zeros once they run out.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn below(&mut self, n: usize) -> usize {
        usize::from(self.byte()) % n
    }
}

/// One initializer as the input decided it.
#[derive(Debug, Clone)]
struct Claim {
    location: String,
    offset: u64,
    len: u64,
    length_key: Option<u64>,
    used: bool,
}

/// What the independent model says about a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Expect {
    /// The bytes a load must give.
    Bytes(Vec<u8>),
    /// A check that needs no file fails: every load fails, read or not.
    BadEntry,
    /// Reading fails (refused, missing, out of range): a load that reads it fails.
    BadRead,
}

fn outside_targets(outside: &Path) -> Vec<String> {
    vec![
        outside.join("secret.bin").display().to_string(),
        outside.display().to_string(),
        outside.join("d").display().to_string(),
        "../outside/secret.bin".into(),
        "../outside/d".into(),
        "/dev/zero".into(),
        "missing-target".into(),
    ]
}

fn locations(outside: &Path) -> Vec<String> {
    let mut l: Vec<String> = SLOTS.iter().map(|s| s.to_string()).collect();
    l.extend(
        [
            "./a",
            "a/",
            "d/./c",
            "./d/e/./f",
            "d/../a",
            "../outside/secret.bin",
            "..",
            "",
            ".",
            "missing",
            "d/missing",
            "a/x",
            "g/c",
            "h/e/f",
            "model.onnx",
        ]
        .map(String::from),
    );
    l.push(outside.join("secret.bin").display().to_string());
    l
}

fn tensor_type(elem_type: i32) -> TypeProto {
    TypeProto {
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type,
            shape: None,
        })),
        ..Default::default()
    }
}

const UINT8: i32 = 2;

fn build_model(claims: &[Claim], signs: &[bool]) -> ModelProto {
    let mut graph = GraphProto {
        name: "tree".into(),
        ..Default::default()
    };
    for (i, c) in claims.iter().enumerate() {
        let name = format!("w{i}");
        let mut external_data = vec![
            StringStringEntryProto {
                key: "location".into(),
                value: c.location.clone(),
            },
            StringStringEntryProto {
                key: "offset".into(),
                value: c.offset.to_string(),
            },
        ];
        if let Some(length) = c.length_key {
            external_data.push(StringStringEntryProto {
                key: "length".into(),
                value: length.to_string(),
            });
        }
        graph.initializer.push(TensorProto {
            name: name.clone(),
            data_type: UINT8,
            dims: vec![i64::try_from(c.len).unwrap_or(i64::MAX)],
            data_location: DataLocation::External as i32,
            external_data,
            ..Default::default()
        });
        if c.used {
            let output = if signs[i] {
                let y = format!("s{i}");
                graph.node.push(NodeProto {
                    input: vec![name],
                    output: vec![y.clone()],
                    op_type: "Sign".into(),
                    ..Default::default()
                });
                y
            } else {
                name
            };
            graph.output.push(ValueInfoProto {
                name: output,
                r#type: Some(tensor_type(UINT8)),
                ..Default::default()
            });
        }
    }
    ModelProto {
        ir_version: 9,
        opset_import: vec![OperatorSetIdProto {
            domain: String::new(),
            version: 13,
        }],
        graph: Some(graph),
        ..Default::default()
    }
}

/// The location's components, or `None` when it leaves the directory.
fn components(location: &str) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    for c in Path::new(location).components() {
        match c {
            Component::Normal(n) => parts.push(n.to_str()?.to_string()),
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(parts)
}

fn expect(tree: &BTreeMap<String, Node>, c: &Claim) -> Expect {
    if c.location.is_empty() {
        return Expect::BadEntry;
    }
    let Some(parts) = components(&c.location) else {
        return Expect::BadEntry;
    };
    if c.length_key.is_some_and(|l| l != c.len) {
        return Expect::BadEntry;
    }
    let Some((last, dirs)) = parts.split_last() else {
        return Expect::BadRead;
    };
    let mut path = String::new();
    for d in dirs {
        path = if path.is_empty() {
            d.clone()
        } else {
            format!("{path}/{d}")
        };
        if !matches!(tree.get(&path), Some(Node::Dir)) {
            return Expect::BadRead;
        }
    }
    let path = if path.is_empty() {
        last.clone()
    } else {
        format!("{path}/{last}")
    };
    let Some(Node::File(bytes)) = tree.get(&path) else {
        return Expect::BadRead;
    };
    let end = c.offset.checked_add(c.len);
    match end {
        Some(end) if end <= bytes.len() as u64 => {
            Expect::Bytes(bytes[c.offset as usize..end as usize].to_vec())
        }
        _ => Expect::BadRead,
    }
}

#[cfg(not(target_vendor = "apple"))]
fn make_fifo(path: &Path) {
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        path,
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
    )
    .expect("mkfifo");
}

#[cfg(target_vendor = "apple")]
fn make_fifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo");
    assert!(status.success());
}

fn build_outside(outside: &Path) {
    std::fs::create_dir_all(outside.join("d/e")).unwrap();
    for p in ["secret.bin", "a", "b", "d/c", "d/e/f", "c", "f"] {
        std::fs::write(outside.join(p), SECRET.repeat(4)).unwrap();
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Builds the tree and model `data` decides, loads and runs the model, and panics if
/// the loader broke its contract (see the module's description).
pub fn check(data: &[u8]) -> Outcome {
    let mut input = Bytes(data);
    let root = tempfile::tempdir().expect("temporary directory");
    let model_dir = root.path().join("model");
    let outside = root.path().join("outside");
    std::fs::create_dir(&model_dir).unwrap();
    build_outside(&outside);

    let mut tree: BTreeMap<String, Node> = BTreeMap::new();
    let targets = outside_targets(&outside);
    for slot in SLOTS {
        if let Some((parent, _)) = slot.rsplit_once('/') {
            if !matches!(tree.get(parent), Some(Node::Dir)) {
                continue;
            }
        }
        let path = model_dir.join(slot);
        let node = match input.below(8) {
            0 | 1 => {
                let len = input.below(40);
                let bytes: Vec<u8> = (0..len).map(|_| input.byte() & 0x7F).collect();
                std::fs::write(&path, &bytes).unwrap();
                Node::File(bytes)
            }
            2 | 3 => {
                std::fs::create_dir(&path).unwrap();
                Node::Dir
            }
            4 => {
                make_fifo(&path);
                Node::Fifo
            }
            5 => {
                let target = SLOTS[input.below(SLOTS.len())].to_string();
                let target = if input.byte() % 2 == 0 {
                    model_dir.join(target).display().to_string()
                } else {
                    target
                };
                std::os::unix::fs::symlink(&target, &path).unwrap();
                Node::Link(target)
            }
            6 => {
                let target = targets[input.below(targets.len())].clone();
                std::os::unix::fs::symlink(&target, &path).unwrap();
                Node::Link(target)
            }
            _ => continue,
        };
        tree.insert(slot.to_string(), node);
    }

    let locations = locations(&outside);
    let count = 1 + input.below(5);
    let mut claims = Vec::with_capacity(count);
    let mut signs = Vec::with_capacity(count);
    for _ in 0..count {
        let location = locations[input.below(locations.len())].clone();
        let offset = match input.below(8) {
            0 => u64::MAX - u64::from(input.byte()),
            _ => u64::from(input.byte() % 48),
        };
        let len = match input.below(10) {
            0 => 1 << 40,
            _ => u64::from(input.byte() % 48),
        };
        let length_key = match input.below(4) {
            0 => Some(len),
            1 => Some(u64::from(input.byte() % 48)),
            _ => None,
        };
        let used = input.below(4) != 0;
        signs.push(input.byte() % 2 == 0);
        claims.push(Claim {
            location,
            offset,
            len,
            length_key,
            used,
        });
    }

    let model = build_model(&claims, &signs);
    let model_bytes = model.encode_to_vec();
    std::fs::write(model_dir.join("model.onnx"), &model_bytes).unwrap();
    tree.insert("model.onnx".into(), Node::File(model_bytes));

    let expected: Vec<Expect> = claims.iter().map(|c| expect(&tree, c)).collect();
    let may_fail = claims.iter().zip(&expected).any(|(c, e)| match e {
        Expect::BadEntry => true,
        Expect::BadRead => c.used,
        Expect::Bytes(_) => false,
    });

    let bad_entry = expected.contains(&Expect::BadEntry);

    let loaded = Model::load(model_dir.join("model.onnx"));
    let deferred = Model::load_with(model_dir.join("model.onnx"), ExternalData::Deferred);
    match (&loaded, &deferred) {
        (Ok(_), Ok(_)) => {}
        (Err(read), Err(left)) => assert_eq!(read.to_string(), left.to_string()),
        (read, left) => panic!(
            "a reading load gave {:?}, a deferred one {:?}: {claims:?}",
            read.as_ref().err(),
            left.as_ref().err()
        ),
    }
    assert!(
        !(bad_entry && loaded.is_ok()),
        "loaded although a claim is malformed: {claims:?}"
    );
    let model = match loaded {
        Ok(model) => model,
        Err(e) => {
            let text = e.to_string();
            assert!(
                may_fail,
                "a model whose every claim is sound failed to load: {text}\n{claims:?}\n{tree:?}"
            );
            assert!(!contains(text.as_bytes(), SECRET), "{text}");
            return match e {
                Error::ExternalDataRefused { .. } => Outcome::Refused,
                _ => Outcome::Failed,
            };
        }
    };
    for (c, e) in claims.iter().zip(&expected) {
        assert!(
            !c.used || matches!(e, Expect::Bytes(_)),
            "loaded although {c:?} is {e:?}\n{tree:?}"
        );
    }
    for file in model.data_files() {
        let inside = file.strip_prefix(&model_dir).unwrap_or_else(|_| {
            panic!(
                "data file {} is outside the model's directory",
                file.display()
            )
        });
        let inside = inside.to_str().unwrap().to_string();
        assert!(
            matches!(tree.get(&inside), Some(Node::File(_))),
            "data file {inside} is not a regular file of the tree: {tree:?}"
        );
        assert!(
            claims
                .iter()
                .any(|c| c.used
                    && components(&c.location).map(|p| p.join("/")) == Some(inside.clone())),
            "data file {inside} was read for no used initializer: {claims:?}"
        );
    }
    let outputs = match model.run(Vec::<(String, Tensor)>::new()) {
        Ok(outputs) => outputs,
        Err(e) => panic!("a loaded model failed to run: {e}"),
    };
    if let Ok(deferred) = deferred {
        assert_eq!(deferred.data_files(), model.data_files());
        let ran = deferred.run(Vec::<(String, Tensor)>::new());
        assert_eq!(
            ran.ok().as_ref(),
            Some(&outputs),
            "a deferred load ran otherwise"
        );
        let (read, left) = (
            model.streaming(&[]).unwrap(),
            deferred.streaming(&[]).unwrap(),
        );
        for s in 0..left.sources().len() {
            let held = read
                .initializer_bytes(s)
                .expect("a reading load holds its data");
            let mut streamed = vec![0u8; held.len()];
            left.read_initializer(s, 0, &mut streamed).unwrap();
            assert_eq!(streamed, held, "source {s} streamed otherwise");
        }
    }
    let mut outputs = outputs.into_iter();
    for (i, (c, e)) in claims.iter().zip(&expected).enumerate() {
        if !c.used {
            continue;
        }
        let Expect::Bytes(bytes) = e else {
            unreachable!("checked above")
        };
        let (name, tensor) = outputs.next().expect("one output per used initializer");
        assert!(!contains(&tensor.data, SECRET), "{name} holds the secret");
        let want: Vec<u8> = if signs[i] {
            bytes.iter().map(|&b| u8::from(b != 0)).collect()
        } else {
            bytes.clone()
        };
        assert_eq!(tensor.data, want, "output {name} of {c:?}");
    }
    Outcome::Ran
}
