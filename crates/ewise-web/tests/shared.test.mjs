// Shared memory: SharedArrayBuffer objects that are one memory (structuredClone,
// postMessage, a shared WebAssembly.Memory's buffer before and after grow()), which
// JavaScript cannot tell apart, give the result of reading the whole input before
// writing any output; and executions write only the output elements' bytes, so that
// workers filling interleaved strided outputs of one SharedArrayBuffer keep each
// other's elements (issue 48, items 4 and 5).

import { test } from "node:test";
import assert from "node:assert/strict";
import { Worker } from "node:worker_threads";

import { TYPES, isInfinityOf, loadPackage, patternsOf, signOf, widePatterns } from "./reference.mjs";

const ewise = await loadPackage();
await ewise.init();
const { Device, OperatorDesc, tensorDesc } = ewise;

const MIB = 1 << 20;

/** `n` elements of `type` in `buffer` from element `at`, set to `patterns` if given. */
function elements(type, buffer, at, n, patterns) {
  const a = new TYPES[type].array(buffer, at * TYPES[type].bits / 8, n);
  if (patterns) patternsOf(a).set(patterns);
  return a;
}
const SIZES = { int8: 1, int16: 2, int32: 4, int64: 8, float32: 4, float64: 8 };

/** `sab` again as another SharedArrayBuffer object over the same memory. */
const twins = {
  structuredClone: (sab) => structuredClone(sab),
  postMessage: async (sab) => {
    const { port1, port2 } = new MessageChannel();
    const back = new Promise((resolve) => port2.once("message", resolve));
    port1.postMessage(sab);
    const got = await back;
    port1.close();
    port2.close();
    return got;
  },
};

/** Shifts, in elements, of the output against the input: a neighbour on either side,
 * and starts at each side of the first 1 MiB chunk boundaries. */
function shifts(size) {
  const chunk = MIB / size;
  return [1, -1, chunk - 1, chunk, chunk + 1, -chunk, 2 * chunk + 1, -(2 * chunk - 1)];
}

async function checkSign(type, makeTwin) {
  const size = SIZES[type];
  const n = Math.ceil((2 * MIB + 3 * MIB / 4) / size) + 5; // more than 2 MiB
  const patterns = widePatterns(type, n);
  const want = patternsOf(new TYPES[type].array(n));
  for (let i = 0; i < n; i++) {
    const w = signOf(type, BigInt(patterns[i]), "propagate");
    want[i] = typeof want[0] === "bigint" ? w : Number(w);
  }
  const pad = 3 * MIB / size;
  const sab = new SharedArrayBuffer((n + 2 * pad) * size);
  const twin = await makeTwin(sab);
  assert.notEqual(twin, sab);
  for (const shift of shifts(size)) {
    const x = elements(type, sab, pad, n, patterns);
    const out = elements(type, twin, pad + shift, n);
    assert.equal(ewise.sign(x, { out, nan: "propagate" }), out);
    const got = patternsOf(out);
    const bad = got.findIndex((v, i) => v !== want[i]);
    assert.equal(bad, -1, `${type}, out ${shift} elements from x: element ${bad} is ${got[bad]}, not ${want[bad]}`);
  }
}

for (const [how, makeTwin] of Object.entries(twins)) {
  test(`sign: out in another SharedArrayBuffer object of x's memory (${how}) gives the result of reading x first`, async () => {
    for (const type of ["int8", "int16", "int32", "int64", "float32", "float64"]) {
      await checkSign(type, makeTwin);
    }
  });
}

test("sign: x and out in a shared WebAssembly.Memory's buffer before and after grow()", () => {
  const n = (3 * MIB) / 4 + 7;
  const memory = new WebAssembly.Memory({ initial: 160, maximum: 200, shared: true });
  const before = memory.buffer;
  memory.grow(1);
  const after = memory.buffer;
  assert.notEqual(before, after);
  const patterns = widePatterns("float32", n);
  const want = Array.from(patterns, (p) => signOf("float32", BigInt(p), "zero"));
  for (const shift of [1, -1, MIB / 4, MIB / 4 + 1, -(MIB / 4) - 1]) {
    const base = 2 * MIB;
    const x = new Float32Array(before, base, n);
    new Uint32Array(before, base, n).set(patterns);
    const out = new Float32Array(after, base + shift * 4, n);
    ewise.sign(x, { out });
    const got = Array.from(new Uint32Array(after, base + shift * 4, n), BigInt);
    const bad = got.findIndex((v, i) => v !== want[i]);
    assert.equal(bad, -1, `out ${shift} elements from x: element ${bad}`);
  }
});

test("isInfinity: a Uint8Array out over x's bytes in a cloned SharedArrayBuffer", () => {
  for (const type of ["float32", "float64"]) {
    const size = SIZES[type];
    const n = Math.ceil((2 * MIB + 1000) / size);
    // Every other element an infinity: input bytes overwritten before they are read
    // would not be one.
    const inf = type === "float32" ? [0x7f800000, 0xff800000] : [0x7ff0000000000000n, 0xfff0000000000000n];
    const patterns = widePatterns(type, n).map((p, i) => (i % 2 ? p : inf[(i >> 1) % 2]));
    const want = Array.from(patterns, (p) => isInfinityOf(type, BigInt(p), "either"));
    const sab = new SharedArrayBuffer(n * size + MIB);
    for (const at of [1, 2 * size - 1, MIB + 1, MIB + 7]) {
      const x = elements(type, sab, 0, n, patterns);
      const out = new Uint8Array(structuredClone(sab), at, n);
      ewise.isInfinity(x, { out });
      const bad = Array.from(out).findIndex((v, i) => v !== want[i]);
      assert.equal(bad, -1, `${type}, out at byte ${at}: element ${bad}`);
    }
  }
});

test("execute: bindings in two SharedArrayBuffer objects of one memory give the result of reading the input first", () => {
  const n = 3 * MIB / 4 + 9;
  const op = new Device().createOperator(OperatorDesc.sign(tensorDesc("FLOAT32", [n]), tensorDesc("FLOAT32", [n]))).compile();
  const sab = new SharedArrayBuffer(4 * n + 64);
  const patterns = widePatterns("float32", n);
  const want = Array.from(patterns, (p) => signOf("float32", BigInt(p), "zero"));
  for (const offset of [0, 32]) {
    new Uint32Array(sab, 16, n).set(patterns);
    const bytes = 4 * n;
    op.execute([sab, structuredClone(sab)], [{ buffer: 0, offset: 16, sizeInBytes: bytes }], [{ buffer: 1, offset, sizeInBytes: bytes }]);
    const got = Array.from(new Uint32Array(sab, offset, n), BigInt);
    const bad = got.findIndex((v, i) => v !== want[i]);
    assert.equal(bad, -1, `output at byte ${offset}: element ${bad}`);
  }
});

test("execute, executeSlices, executeInPlace: the bytes between strided output elements are never written", () => {
  const device = new Device();
  const n = 100_003;
  const input = tensorDesc("FLOAT32", [n]);
  const output = tensorDesc("FLOAT32", [n], [3]);
  const op = device.createOperator(OperatorDesc.sign(input, output)).compile();
  const x = new Float32Array(n).map((_, i) => (i % 5) - 2);
  const sentinel = (i) => (i * 37 + 11) & 0xff;
  const fresh = () => Uint8Array.from({ length: output.totalTensorSizeInBytes + 8 }, (_, i) => sentinel(i));
  const check = (bytes, from, label) => {
    const f = new Float32Array(bytes.buffer, bytes.byteOffset + from, (bytes.length - from) >> 2);
    for (let i = 0; i < bytes.length - from; i++) {
      if (i % 12 < 4 && i / 12 < n) continue;
      if (bytes[from + i] !== sentinel(from + i)) assert.fail(`${label}: gap byte ${i} was written`);
    }
    for (let i = 0; i < n; i++) assert.equal(f[3 * i], Math.sign(x[i]) + 0, `${label}: element ${i}`);
  };
  const a = fresh();
  op.execute([x, a], [{ buffer: 0, offset: 0, sizeInBytes: 4 * n }], [{ buffer: 1, offset: 0, sizeInBytes: output.totalTensorSizeInBytes }]);
  check(a, 0, "execute");
  const b = fresh();
  op.executeSlices(x, b);
  check(b, 0, "executeSlices");
  const strided = device.createOperator(OperatorDesc.sign(output, output)).compile();
  const c = fresh();
  for (let i = 0; i < n; i++) new DataView(c.buffer).setFloat32(12 * i, x[i], true);
  strided.executeInPlace(c);
  check(c, 0, "executeInPlace");
  const d = fresh();
  for (let i = 0; i < n; i++) new DataView(d.buffer).setFloat32(12 * i, x[i], true);
  strided.execute([d], [{ buffer: 0, offset: 0, sizeInBytes: output.totalTensorSizeInBytes }], [{ buffer: 0, offset: 0, sizeInBytes: output.totalTensorSizeInBytes }]);
  check(d, 0, "execute in place");
});

test("two workers filling interleaved strided outputs of one SharedArrayBuffer keep each other's elements", async () => {
  const n = 1 << 20;
  const workers = 2;
  const memory = new SharedArrayBuffer(8 * n);
  const control = new SharedArrayBuffer(4);
  const url = new URL("./shared-worker.mjs", import.meta.url);
  const pool = Array.from({ length: workers }, (_, lane) => new Worker(url, { workerData: { memory, control, n, stride: 2, lane, workers } }));
  try {
    const waiting = new Map();
    for (const w of pool) {
      w.on("message", () => waiting.get(w)?.resolve());
      w.on("error", (e) => waiting.get(w)?.reject(e));
    }
    const next = (w) => new Promise((resolve, reject) => waiting.set(w, { resolve, reject }));
    await Promise.all(pool.map(next));
    const out = new Float32Array(memory);
    for (let trial = 0; trial < 10; trial++) {
      out.fill(42);
      await Promise.all(pool.map((w) => {
        const done = next(w);
        w.postMessage(trial);
        return done;
      }));
      for (let i = 0; i < 2 * n; i++) {
        const lane = i & 1;
        const want = (((i >> 1) + lane) % 3) - 1;
        if (out[i] !== want) assert.fail(`trial ${trial}: element ${i >> 1} of worker ${lane} is ${out[i]}, not ${want}`);
      }
    }
  } finally {
    await Promise.all(pool.map((w) => w.terminate()));
  }
});
