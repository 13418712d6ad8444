// `out`: a separate array, `x` itself (in place), views of x's memory that overlap it
// ahead of or behind x (the result is as if x were read first), offsets inside larger
// buffers, and chunked copies (arrays of several MiB).

import { test } from "node:test";
import assert from "node:assert/strict";

import { isInfinityOf, loadPackage, patternsOf, signOf, widePatterns, valuesOf } from "./reference.mjs";

const ewise = await loadPackage();
await ewise.init();

const wantSign = (type, patterns, nan = "zero") => Array.from(patterns, (p) => signOf(type, BigInt(p), nan));
const asBig = (a) => Array.from(a, BigInt);

test("out receives the result and is returned; x is unchanged", () => {
  const x = new Int32Array([-7, 0, 9, -2147483648]);
  const out = new Int32Array(4).fill(55);
  assert.equal(ewise.sign(x, { out }), out);
  assert.deepEqual(Array.from(out), [-1, 0, 1, -1]);
  assert.deepEqual(Array.from(x), [-7, 0, 9, -2147483648]);
  const inf = new Uint8Array(4).fill(9);
  assert.equal(ewise.isInfinity(new Float32Array([Infinity, 1, -Infinity, NaN]), { out: inf }), inf);
  assert.deepEqual(Array.from(inf), [1, 0, 1, 0]);
});

test("in place: out is x, for every sign type and both policies", () => {
  for (const type of ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "bfloat16", "float32", "float64"]) {
    for (const nan of ["zero", "propagate"]) {
      const patterns = widePatterns(type === "float16" || type === "bfloat16" ? "float32" : type, 5000);
      const bits = type.endsWith("16") || type === "float16" || type === "bfloat16" ? 16 : null;
      const src = bits ? Uint16Array.from(patterns, (p) => Number(BigInt(p) & 0xffffn)) : patterns;
      const x = valuesOf(type, src.slice());
      const dtype = type === "float16" || type === "bfloat16" ? { dtype: type } : {};
      assert.equal(ewise.sign(x, { out: x, nan, ...dtype }), x);
      assert.deepEqual(asBig(patternsOf(x)), wantSign(type, src, nan), `${type} ${nan}`);
    }
  }
});

test("several MiB, in place and not, across the 1 MiB chunks", () => {
  const patterns = widePatterns("float64", (3 << 20) / 8 + 5);
  const x = valuesOf("float64", patterns.slice());
  const want = wantSign("float64", patterns, "propagate");
  assert.deepEqual(asBig(patternsOf(ewise.sign(x, { nan: "propagate" }))), want);
  ewise.sign(x, { out: x, nan: "propagate" });
  assert.deepEqual(asBig(patternsOf(x)), want);
  const f32 = widePatterns("float32", (5 << 20) / 4 + 3);
  const inf = ewise.isInfinity(valuesOf("float32", f32), { mode: "negative" });
  assert.deepEqual(Array.from(inf), Array.from(f32, (p) => isInfinityOf("float32", BigInt(p), "negative")));
});

test("the staging memory kept between calls never carries one call's data into another's result", () => {
  // A large call fills the staging memory with infinities and their results; smaller
  // calls of other types and operators after it see only their own elements.
  const big = new Float32Array((2 << 20) / 4 + 7).fill(-Infinity);
  assert.ok(ewise.isInfinity(big).every((v) => v === 1));
  assert.deepEqual(Array.from(ewise.sign(big)), Array.from(big, () => -1));
  for (const n of [0, 1, 3, 4096, 300_001]) {
    assert.deepEqual(Array.from(ewise.isInfinity(new Float64Array(n).fill(2.5))), new Array(n).fill(0), `isInfinity, n ${n}`);
    const ints = Int8Array.from({ length: n }, (_, i) => (i % 3) - 1);
    assert.deepEqual(Array.from(ewise.sign(ints)), Array.from(ints), `sign, n ${n}`);
    const nans = new Float32Array(n).fill(NaN);
    assert.ok(ewise.sign(nans).every((v) => Object.is(v, 0)), `sign of NaN, n ${n}`);
  }
});

test("out overlapping x ahead or behind gives the result of reading x first", () => {
  for (const shift of [-3, -1, 1, 2, 1000, -1000]) {
    for (const n of [10, 300_000]) {
      const buffer = new ArrayBuffer((n + 2000) * 4);
      const base = 1000;
      const x = new Int32Array(buffer, base * 4, n);
      for (let i = 0; i < n; i++) x[i] = (i % 7) - 3;
      const want = Array.from(x, (v) => Math.sign(v) + 0);
      const out = new Int32Array(buffer, (base + shift) * 4, n);
      ewise.sign(x, { out });
      assert.deepEqual(Array.from(out), want, `shift ${shift}, n ${n}`);
    }
  }
});

test("isInfinity's out overlapping x's memory gives the result of reading x first", () => {
  for (const at of [0, 3, 8, 4000, 16000]) {
    const n = 10_000;
    const buffer = new ArrayBuffer(8 * n + 8);
    const x = new Float64Array(buffer, 8, n);
    for (let i = 0; i < n; i++) x[i] = i % 3 === 0 ? Infinity : i % 3 === 1 ? -Infinity : i;
    const want = Array.from(x, (v) => (v === Infinity ? 1 : 0));
    const out = new Uint8Array(buffer, at, n);
    ewise.isInfinity(x, { mode: "positive", out });
    assert.deepEqual(Array.from(out), want, `out at byte ${at}`);
  }
});

test("arrays at offsets inside larger buffers touch only their own bytes", () => {
  const buffer = new ArrayBuffer(64);
  const all = new Uint8Array(buffer).fill(0xee);
  const x = new Int16Array(buffer, 2, 4);
  x.set([-5, 0, 5, -32768]);
  const out = new Int16Array(buffer, 20, 4);
  ewise.sign(x, { out });
  assert.deepEqual(Array.from(out), [-1, 0, 1, -1]);
  assert.ok(all.subarray(0, 2).every((b) => b === 0xee));
  assert.ok(all.subarray(10, 20).every((b) => b === 0xee));
  assert.ok(all.subarray(28).every((b) => b === 0xee));
});

test("a Node Buffer is a Uint8Array; the result is a Uint8Array", () => {
  const out = ewise.sign(Buffer.from([0, 1, 255]));
  assert.equal(Object.getPrototypeOf(out), Uint8Array.prototype);
  assert.deepEqual(Array.from(out), [0, 1, 1]);
});

test("a SharedArrayBuffer's arrays work too", () => {
  const x = new Float32Array(new SharedArrayBuffer(16));
  x.set([-1.5, NaN, 0, 2]);
  ewise.sign(x, { out: x, nan: "zero" });
  assert.deepEqual(Array.from(x), [-1, 0, 0, 1]);
});
