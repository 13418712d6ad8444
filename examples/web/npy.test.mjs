// Tests of npy.js: `node --test examples/web/`. The comparison with numpy runs when
// $PYTHON (default python3) can import numpy, and skips with a message otherwise (a
// failure under CI=true).

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import {
  DTYPES, MAX_DATA_BYTES, NpyError, checkFileSize, descrOf, encodeNpy, formatShape, npyHeader, parseHeaderText, parseNpy,
} from "./npy.js";

const NUMERIC = Object.keys(DTYPES);

function sample(dtype, n) {
  const t = DTYPES[dtype];
  const x = new t.array(n);
  const bytes = new Uint8Array(x.buffer);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 73 + 41) & 0xff;
  if (dtype === "bool") x.forEach((_, i) => { x[i] = i % 3 === 0 ? 1 : 0; });
  return x;
}

function bytesOf(x) {
  return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
}

/** A file with a given header text and data bytes, the length field as given. */
function raw(text, data = new Uint8Array(0), { version = 1, declared } = {}) {
  const body = Buffer.from(text, version === 3 ? "utf8" : "latin1");
  const prefix = version === 1 ? 10 : 12;
  const out = Buffer.alloc(prefix + body.length + data.length);
  Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, version, 0]).copy(out);
  if (version === 1) out.writeUInt16LE(declared ?? body.length, 8);
  else out.writeUInt32LE(declared ?? body.length, 8);
  body.copy(out, prefix);
  Buffer.from(data).copy(out, prefix + body.length);
  return new Uint8Array(out);
}

function header(descr, shape, fortran = false) {
  return `{'descr': '${descr}', 'fortran_order': ${fortran ? "True" : "False"}, 'shape': ${formatShape(shape)}, }\n`;
}

function refuses(file, code, ...fragments) {
  assert.throws(() => parseNpy(file), (e) => {
    assert.ok(e instanceof NpyError, `expected an NpyError, got ${e}`);
    assert.equal(e.code, code, e.message);
    for (const f of fragments) assert.ok(e.message.includes(f), `${JSON.stringify(e.message)} should mention ${JSON.stringify(f)}`);
    return true;
  });
}

test("every dtype round-trips through every format version, C and Fortran order", () => {
  for (const dtype of NUMERIC) {
    for (const version of [1, 2, 3]) {
      for (const fortranOrder of [false, true]) {
        const data = sample(dtype, 12);
        const file = encodeNpy({ dtype, shape: [3, 4], data, fortranOrder, version });
        assert.equal(file[6], version);
        const p = parseNpy(file, dtype === "bfloat16" ? { as: "bfloat16" } : {});
        assert.equal(p.version, `${version}.0`);
        assert.equal(p.dtype, dtype);
        assert.equal(p.descr, descrOf(dtype));
        assert.equal(p.fortranOrder, fortranOrder);
        assert.deepEqual(p.shape, [3, 4]);
        assert.equal(p.count, 12);
        assert.equal(p.dataOffset % 64, 0, "data aligned to 64 bytes");
        assert.ok(p.data instanceof DTYPES[dtype].array);
        assert.deepEqual(bytesOf(p.data), bytesOf(data));
      }
    }
  }
});

test("the header is written as numpy's reader and the ewise CLI expect", () => {
  const h = npyHeader({ descr: "<f4", shape: [2, 3], fortranOrder: false });
  assert.equal(h.length, 128);
  const text = Buffer.from(h.subarray(10)).toString("latin1");
  assert.equal(text, `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }${" ".repeat(128 - 10 - 59 - 1)}\n`);
  assert.deepEqual([...h.subarray(0, 10)], [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, 118, 0]);
  assert.ok(Buffer.from(npyHeader({ descr: "|u1", shape: [5], fortranOrder: true })).toString("latin1").includes("'fortran_order': True, 'shape': (5,), }"));
  assert.ok(Buffer.from(npyHeader({ descr: "<f8", shape: [] })).toString("latin1").includes("'shape': (), }"));
  assert.equal(npyHeader({ descr: "<f4", shape: Array(64).fill(1000000000000), version: undefined })[6], 1);
});

test("0-d and empty arrays", () => {
  const scalar = parseNpy(encodeNpy({ dtype: "float64", shape: [], data: new Float64Array([-0]) }));
  assert.deepEqual(scalar.shape, []);
  assert.equal(scalar.count, 1);
  assert.ok(Object.is(scalar.data[0], -0));
  for (const shape of [[0], [2, 0, 3]]) {
    const p = parseNpy(encodeNpy({ dtype: "int16", shape, data: new Int16Array(0) }));
    assert.deepEqual(p.shape, shape);
    assert.equal(p.count, 0);
  }
});

test("big-endian files are byte-swapped on reading and written back little-endian", () => {
  for (const dtype of ["int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "float32", "float64"]) {
    const t = DTYPES[dtype];
    const data = sample(dtype, 6);
    const swapped = new Uint8Array(data.byteLength);
    const le = bytesOf(data);
    for (let i = 0; i < le.length; i += t.size) for (let j = 0; j < t.size; j++) swapped[i + j] = le[i + t.size - 1 - j];
    const descr = `>${t.kind}${t.size}`;
    const file = raw(header(descr, [2, 3]), swapped);
    const p = parseNpy(file);
    assert.equal(p.dtype, dtype);
    assert.equal(p.byteOrder, ">");
    assert.equal(p.descr, descr);
    assert.deepEqual(bytesOf(p.data), le);
    const back = encodeNpy({ dtype, shape: p.shape, data: p.data });
    assert.equal(parseNpy(back).descr, `<${t.kind}${t.size}`);
  }
  const one = parseNpy(raw(header(">i1", [2]), new Uint8Array([0xff, 1])));
  assert.deepEqual([...one.data], [-1, 1]);
  assert.equal(parseNpy(raw(header(">u2", [1]), new Uint8Array([0x3f, 0x80])), { as: "bfloat16" }).data[0], 0x3f80);
});

test("Fortran order is kept as a flag; the data is read in storage order", () => {
  const data = new Int32Array([1, 2, 3, 4, 5, 6]);
  const p = parseNpy(raw(header("<i4", [2, 3], true), bytesOf(data)));
  assert.equal(p.fortranOrder, true);
  assert.deepEqual([...p.data], [1, 2, 3, 4, 5, 6]);
  const back = parseNpy(encodeNpy({ dtype: "int32", shape: p.shape, data: p.data, fortranOrder: p.fortranOrder }));
  assert.equal(back.fortranOrder, true);
  assert.deepEqual([...back.data], [1, 2, 3, 4, 5, 6]);
});

test("bfloat16: raw 2-byte items need the choice, and are read as bit patterns with it", () => {
  const bits = new Uint16Array([0x3f80, 0xff80, 0x7fc1]);
  for (const descr of ["<V2", "|V2"]) {
    refuses(raw(header(descr, [3]), bytesOf(bits)), "raw", `'${descr}'`, "ml_dtypes", "bfloat16");
    const p = parseNpy(raw(header(descr, [3]), bytesOf(bits)), { as: "bfloat16" });
    assert.equal(p.dtype, "bfloat16");
    assert.deepEqual([...p.data], [...bits]);
  }
  const structured = `{'descr': [('', '<V2')], 'fortran_order': False, 'shape': (3,), }`;
  assert.deepEqual([...parseNpy(raw(structured, bytesOf(bits)), { as: "bfloat16" }).data], [...bits]);
  assert.equal(parseNpy(raw(header("<u2", [3]), bytesOf(bits)), { as: "bfloat16" }).dtype, "bfloat16");
  assert.throws(() => parseNpy(raw(header("<f4", [1]), new Uint8Array(4)), { as: "bfloat16" }), (e) => e.code === "as" && e.message.includes("4-byte items"));
  assert.throws(() => parseNpy(raw(header("<V4", [1]), new Uint8Array(4)), { as: "bfloat16" }), (e) => e.code === "as");
  refuses(raw(header("<V4", [1]), new Uint8Array(4)), "raw", "no type read here has that size");
  assert.equal(encodeNpy({ dtype: "bfloat16", shape: [3], data: bits })[20], "'".charCodeAt(0));
  assert.equal(descrOf("bfloat16"), "<V2");
});

test("headers in other spellings numpy and other writers produce", () => {
  const data = bytesOf(new Float32Array([1.5, -2]));
  for (const text of [
    `{"descr": "<f4", "fortran_order": False, "shape": (2,)}`,
    `{ 'shape' : ( 2 , ) ,'fortran_order':False,'descr':'<f4' }   \n`,
    `{'descr': '<f4', 'fortran_order': False, 'shape': (2L,), }`,
    `{'descr': 'f4', 'fortran_order': False, 'shape': [2], }`,
    `{'descr': '=f4', 'fortran_order': False, 'shape': (2,), }`,
  ]) {
    const p = parseNpy(raw(text, data));
    assert.deepEqual([...p.data], [1.5, -2], text);
  }
  const unaligned = parseNpy(raw(`{'descr': '<f8', 'fortran_order': False, 'shape': (1,)}`, bytesOf(new Float64Array([Math.PI]))));
  assert.equal(unaligned.data[0], Math.PI);
  assert.equal(parseNpy(raw(header("<u1", [2]), new Uint8Array([7, 9]))).dtype, "uint8");
  assert.deepEqual(parseHeaderText("{'descr': '|b1', 'fortran_order': True, 'shape': ()}"), { descr: "|b1", fortranOrder: true, shape: [] });
  assert.equal(parseNpy(raw(header("|b1", [2]), new Uint8Array([1, 0]))).dtype, "bool");
  const utf8 = raw(`{'descr': '<i2', 'fortran_order': False, 'shape': (1,), }`, new Uint8Array(2), { version: 3 });
  assert.equal(parseNpy(utf8).version, "3.0");
});

test("every malformed file is refused with a message saying what was wrong and what is accepted", () => {
  const ok = header("<f4", [2]);
  const data = new Uint8Array(8);
  refuses(new Uint8Array(0), "bad-magic", "not a .npy file", "empty");
  refuses(new Uint8Array(Buffer.from("hello, world")), "bad-magic", "\\x93NUMPY", "68 65 6c 6c");
  refuses(new Uint8Array(Buffer.from("PK\x03\x04....")), "bad-magic", ".npz");
  refuses(new Uint8Array([0x93, 0x4e, 0x55, 0x4d]), "too-short", "4 bytes");
  refuses(new Uint8Array([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 2, 0, 5]), "too-short", "9 bytes");
  refuses(raw(ok, data, { version: 1 }).map((b, i) => (i === 6 ? 4 : b)), "version", "4.0", "1.0, 2.0, 3.0");
  refuses(raw(ok, data, { version: 1 }).map((b, i) => (i === 7 ? 1 : b)), "version", "1.1");
  refuses(raw(ok, new Uint8Array(0), { declared: 200 }).subarray(0, 40), "header-truncated", "declares 200", "only 30");
  refuses(raw(ok, data, { version: 2, declared: 2 ** 21 }), "header-too-long", `${2 ** 21}`);
  const badUtf8 = raw(ok, data, { version: 3 });
  badUtf8[14] = 0xff;
  refuses(badUtf8, "header-encoding", "UTF-8");
  refuses(raw(`{'descr': '<f4', `, data), "header-syntax", "not a valid Python literal", "character 17");
  refuses(raw(`{'descr' '<f4'}`, data), "header-syntax", "':'");
  refuses(raw(`{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } x`, data), "header-syntax", "the end of the header");
  refuses(raw(`{'descr': '<f4, 'fortran_order': False}`, data), "header-syntax");
  refuses(raw(`${"[".repeat(100)}`, data), "header-syntax", "nesting");
  refuses(raw(`['descr', '<f4']`, data), "not-a-dict", "a list", "not a dict");
  refuses(raw(`'<f4'`, data), "not-a-dict", "the string '<f4'");
  refuses(raw(`(1, 2)`, data), "not-a-dict", "a tuple");
  refuses(raw(`{'descr': '<f4', 'shape': (2,)}`, data), "missing-key", "'fortran_order'");
  refuses(raw(`{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}`, data), "unexpected-key", "'extra'");
  refuses(raw(`{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}`, data), "duplicate-key", "'descr'");
  refuses(raw(`{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}`, data), "bad-value", "'fortran_order' is 0", "True or False");
  refuses(raw(`{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}`, data), "bad-value", "non-negative integers");
  refuses(raw(`{'descr': '<f4', 'fortran_order': False, 'shape': '2'}`, data), "bad-value", "'shape' is '2'");
  refuses(raw(`{'descr': 4, 'fortran_order': False, 'shape': (2,)}`, data), "bad-value", "'<f4'");
  refuses(raw(`{'descr': '<f4', 'fortran_order': False, 'shape': (${Array(65).fill(1).join(", ")})}`, data), "dimensions", "65", "at most 64");
  refuses(raw(`{'descr': [('x', '<f4'), ('y', '<i4')], 'fortran_order': False, 'shape': (1,)}`, data), "structured", "structured", "accepted");
  refuses(raw(header("<q9x", [2]), data), "bad-descr", "not a numpy type string", "accepted");
  refuses(raw(header("<f", [2]), data), "bad-descr", "no item size");
  for (const [descr, reason] of [["<c8", "complex"], ["<U4", "Unicode"], ["|S8", "byte strings"], ["<M8", "dates"], ["<f16", "float size"], ["<i3", "integer size"], ["|b2", "bool size"]]) {
    refuses(raw(header(descr, [1]), data), "unsupported-dtype", `'${descr}'`, reason, "<f4", "'<V2'");
  }
  refuses(raw(header("|O", [1]), data), "object", "object array", "never unpickled", "accepted");
  refuses(raw(header("<f4", [2, 3]), new Uint8Array(20)), "data-length", "truncated data", "(2, 3)", "24 bytes", "only 20");
  refuses(raw(header("<f4", [2]), new Uint8Array(12)), "data-length", "4 bytes more");
  refuses(raw(header("<f4", [2 ** 28, 2]), data), "too-large", "2 GiB", "1 GiB");
  refuses(raw(header("<f8", [2 ** 40, 2 ** 40]), data), "too-large");
  refuses(raw(`{'descr': '<f4', 'fortran_order': False, 'shape': (0, 9007199254740993)}`, data), "dimension-too-large",
    "shape (0, 9007199254740993): dimension 1 has 9007199254740993 elements", "2^53 - 1", "whatever the other dimensions are");
  refuses(raw(`{'descr': '<f4', 'fortran_order': False, 'shape': (9007199254740992, 0)}`, data), "dimension-too-large", "dimension 0");
  assert.deepEqual(parseNpy(raw(`{'descr': '<f4', 'fortran_order': False, 'shape': (0, 9007199254740991)}`)).shape, [0, Number.MAX_SAFE_INTEGER]);
  assert.throws(() => checkFileSize(MAX_DATA_BYTES * 2), (e) => e.code === "too-large" && e.message.includes("2 GiB"));
  checkFileSize(MAX_DATA_BYTES);
  assert.throws(() => parseNpy("not bytes"), (e) => e.code === "argument");
  assert.throws(() => parseNpy(raw(ok, data), { as: "float16" }), (e) => e.code === "option");
});

function findNumpy() {
  const python = process.env.PYTHON || "python3";
  const r = spawnSync(python, ["-c", "import numpy; print(numpy.__version__)"], { encoding: "utf8" });
  return r.status === 0 ? { python, version: r.stdout.trim() } : { python, why: (r.error?.message ?? r.stderr.trim().split("\n").at(-1)) || "failed" };
}

const NUMPY_WRITE = String.raw`
import json, os, sys
import numpy as np
out = sys.argv[1]
cases = []
rng = np.random.default_rng(7)
types = ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8", "b1"]
for t in types:
    for order in ("<", ">"):
        for fortran in (False, True):
            for version in ((1, 0), (2, 0), (3, 0)):
                dt = np.dtype(order + t)
                a = rng.integers(0, 256, size=(3, 5, 2) if fortran else (4, 3), dtype=np.uint8)
                raw = rng.integers(0, 256, size=a.size * dt.itemsize, dtype=np.uint8).tobytes()
                if t == "b1":
                    raw = bytes(b & 1 for b in raw)
                x = np.frombuffer(raw, dtype=dt).reshape(a.shape)
                if fortran:
                    x = np.asfortranarray(x)
                name = "%s%s-%s-v%d.npy" % ("le" if order == "<" else "be", t, "F" if fortran else "C", version[0])
                with open(os.path.join(out, name), "wb") as f:
                    np.lib.format.write_array(f, x, version=version)
                le = x.astype(dt.newbyteorder("<"))
                cases.append({"file": name, "descr": dt.str, "shape": list(x.shape), "fortran": fortran,
                              "version": "%d.0" % version[0], "hex": le.tobytes(order="F" if fortran else "C").hex()})
np.save(os.path.join(out, "scalar.npy"), np.float64(-0.0))
cases.append({"file": "scalar.npy", "descr": "<f8", "shape": [], "fortran": False, "version": "1.0", "hex": np.float64(-0.0).tobytes().hex()})
try:
    import ml_dtypes
    b = np.array([1.0, -2.0, np.inf, np.nan], dtype=ml_dtypes.bfloat16)
    np.save(os.path.join(out, "bf16.npy"), b)
    cases.append({"file": "bf16.npy", "descr": b.dtype.str, "shape": [4], "fortran": False, "version": "1.0", "hex": b.tobytes().hex(), "as": "bfloat16"})
except ImportError:
    pass
json.dump(cases, open(os.path.join(out, "cases.json"), "w"))
`;

const NUMPY_READ = String.raw`
import json, os, sys
import numpy as np
out = sys.argv[1]
bad = []
for c in json.load(open(os.path.join(out, "ours.json"))):
    a = np.load(os.path.join(out, c["file"]))
    le = a.astype(a.dtype.newbyteorder("<"))
    got = {"descr": a.dtype.str, "shape": list(a.shape), "fortran": bool(a.flags.f_contiguous and not a.flags.c_contiguous) or (c["fortran"] and a.ndim <= 1),
           "hex": le.tobytes(order="F" if c["fortran"] else "C").hex()}
    want = {k: c[k] for k in ("descr", "shape", "fortran", "hex")}
    if got != want:
        bad.append({"file": c["file"], "got": got, "want": want})
print(json.dumps(bad))
`;

test("files numpy writes are read as numpy reads them, and numpy reads the files written here", (t) => {
  const numpy = findNumpy();
  if (numpy.why !== undefined) {
    assert.notEqual(process.env.CI, "true", `CI=true, so numpy is required: ${numpy.python} cannot import numpy (${numpy.why})`);
    t.skip(`${numpy.python} cannot import numpy (${numpy.why}); set PYTHON to an interpreter that has numpy`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), "ewise-npy-"));
  try {
    const w = spawnSync(numpy.python, ["-c", NUMPY_WRITE, dir], { encoding: "utf8" });
    assert.equal(w.status, 0, w.stderr);
    const cases = JSON.parse(readFileSync(join(dir, "cases.json"), "utf8"));
    assert.ok(cases.length >= 145, `${cases.length} cases`);
    const ours = [];
    for (const c of cases) {
      const p = parseNpy(new Uint8Array(readFileSync(join(dir, c.file))), c.as ? { as: c.as } : {});
      assert.equal(p.descr, c.descr, c.file);
      assert.deepEqual(p.shape, c.shape, c.file);
      assert.equal(p.fortranOrder, c.fortran, c.file);
      assert.equal(p.version, c.version, c.file);
      assert.equal(Buffer.from(bytesOf(p.data)).toString("hex"), c.hex, c.file);
      if (c.as) continue;
      const file = `ours-${c.file}`;
      writeFileSync(join(dir, file), encodeNpy({ dtype: p.dtype, shape: p.shape, data: p.data, fortranOrder: p.fortranOrder }));
      ours.push({ file, descr: descrOf(p.dtype), shape: c.shape, fortran: c.fortran, hex: c.hex });
    }
    writeFileSync(join(dir, "ours.json"), JSON.stringify(ours));
    const r = spawnSync(numpy.python, ["-c", NUMPY_READ, dir], { encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), []);
    t.diagnostic(`numpy ${numpy.version}: ${cases.length} files read, ${ours.length} written and read back`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
