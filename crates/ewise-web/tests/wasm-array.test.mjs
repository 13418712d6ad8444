// WasmArray: arrays in the module's WebAssembly memory that sign, isInfinity and a
// CompiledOperator's execute run on where they lie. Every type against the reference's
// bits, as input, output and both (in place), mixed with JavaScript arrays across the
// 1 MiB chunks; views made again after the memory grows, stale ones refused; use after
// free refused through the WasmArray and through its views, with nothing read or written.

import { test } from "node:test";
import assert from "node:assert/strict";

import { loadPackage, TYPES, patternArray, widePatterns, signOf, isInfinityOf, firstMismatch } from "./reference.mjs";

const ewise = await loadPackage();
await ewise.init();
const { alloc, sign, isInfinity, WasmArray, ArgumentError, ValidationError, EwiseError } = ewise;

const FLOATS = ["float16", "bfloat16", "float32", "float64"];

/** A WasmArray of `type` holding `patterns` (bit patterns). */
function filled(type, patterns) {
  const a = alloc(type, patterns.length);
  const P = patternArray(TYPES[type].bits);
  new P(a.array.buffer, a.array.byteOffset, patterns.length).set(patterns);
  return a;
}

/** The bit patterns of a typed array (a copy). */
function bitsOf(array) {
  const P = patternArray(array.BYTES_PER_ELEMENT * 8);
  return new P(array.buffer, array.byteOffset, array.length).slice();
}

function refused(f, Class, pattern, label) {
  assert.throws(f, (e) => e instanceof Class && e instanceof EwiseError && pattern.test(e.message), label);
}

test("alloc: every type, zeroed, with its dtype and view", () => {
  for (const type of Object.keys(TYPES)) {
    const a = alloc(type, 5);
    assert.ok(a instanceof WasmArray);
    assert.equal(a.dtype, type);
    assert.equal(a.length, 5);
    assert.ok(a.array instanceof TYPES[type].array, type);
    assert.deepEqual(Array.from(bitsOf(a.array), Number), [0, 0, 0, 0, 0], type);
    assert.equal(a.byteLength, 5 * (TYPES[type].bits / 8));
    assert.equal(a.array.byteOffset % 8, 0, `${type}: 8-byte aligned`);
    a.free();
    assert.ok(a.freed);
  }
  const f = alloc(Float32Array, 3);
  assert.equal(f.dtype, "float32");
  f.free();
  const empty = alloc(Int8Array, 0);
  assert.equal(empty.array.length, 0);
  assert.equal(sign(empty, { out: empty }), empty);
  empty.free();
  refused(() => alloc(Array, 3), ArgumentError, /type must be one of/, "a constructor that is no typed array");
  refused(() => alloc("float8", 3), ArgumentError, /type must be/, "an unknown dtype");
  for (const n of [-1, 1.5, NaN, 2 ** 40, "3", 3n]) refused(() => alloc(Float32Array, n), ArgumentError, /length must be an integer/, String(n));
  refused(() => new WasmArray(), ArgumentError, /use alloc/, "the constructor");
});

test("sign and isInfinity on WasmArrays give the reference's bits: separate, in place, a new result, mixed with JavaScript arrays", () => {
  for (const type of Object.keys(TYPES)) {
    const n = 3000;
    const patterns = widePatterns(type, n);
    const want = Array.from(patterns, (p) => signOf(type, BigInt(p), "zero"));
    const check = (got, label) => assert.equal(firstMismatch(patterns, bitsOf(got), (p) => signOf(type, p, "zero")), null, `${type}: ${label}`);
    const x = filled(type, patterns);
    const out = alloc(type, n);
    assert.equal(sign(x, { out }), out);
    check(out.array, "separate");
    const fresh = sign(x);
    assert.ok(fresh instanceof WasmArray && fresh.dtype === type, `${type}: a new WasmArray`);
    check(fresh.array, "new result");
    fresh.free();
    const js = sign(x, { out: new TYPES[type].array(n), dtype: type });
    check(js, "WasmArray into a JavaScript array");
    const fromJs = alloc(type, n);
    const xs = new TYPES[type].array(n);
    new (patternArray(TYPES[type].bits))(xs.buffer).set(patterns);
    sign(xs, { out: fromJs, dtype: type });
    check(fromJs.array, "JavaScript array into a WasmArray");
    assert.equal(sign(x, { out: x }), x);
    check(x.array, "in place");
    assert.equal(sign(x.array, { out: x.array, dtype: type }).length, n, "through the views");
    assert.deepEqual(Array.from(bitsOf(x.array), BigInt), want.map((w) => signOf(type, w, "zero")));
    for (const a of [x, out, fromJs]) a.free();
    if (FLOATS.includes(type)) {
      const y = filled(type, patterns);
      for (const mode of ["either", "positive", "negative", "neither"]) {
        const flags = isInfinity(y, { mode });
        assert.ok(flags instanceof WasmArray && flags.dtype === "uint8");
        assert.equal(firstMismatch(patterns, flags.array, (p) => isInfinityOf(type, p, mode)), null, `${type}: isInfinity ${mode}`);
        const plain = isInfinity(y, { mode, out: new Uint8Array(n) });
        assert.equal(firstMismatch(patterns, plain, (p) => isInfinityOf(type, p, mode)), null, `${type}: isInfinity ${mode} into JavaScript`);
        flags.free();
      }
      y.free();
    }
  }
});

test("across the 1 MiB chunks, both ways between JavaScript and WebAssembly memory", () => {
  const n = (3 << 20) / 4 + 5;
  const xs = Float32Array.from({ length: n }, (_, i) => (i % 7) - 3 + (i % 11 === 0 ? -Infinity : 0));
  const wa = alloc(Float32Array, n);
  sign(xs, { out: wa });
  assert.ok(wa.array.every((v, i) => Object.is(v, Math.sign(xs[i]) || 0)));
  const back = sign(wa, { out: new Float32Array(n) });
  assert.ok(back.every((v, i) => Object.is(v, Math.sign(xs[i]) || 0)));
  const flags = alloc(Uint8Array, n);
  isInfinity(xs, { out: flags, mode: "negative" });
  assert.ok(flags.array.every((v, i) => v === (xs[i] === -Infinity ? 1 : 0)));
  wa.free();
  flags.free();
});

test("overlapping ranges of one WasmArray read the input first", () => {
  const wa = alloc(Int16Array, 100);
  wa.array.set(Int16Array.from({ length: 100 }, (_, i) => i - 50));
  const before = Array.from(wa.array);
  const view = wa.array;
  // A view that starts inside x is no view a WasmArray handed out: refused.
  refused(() => sign(wa, { out: view.subarray(1, 101) }), ArgumentError, /no WasmArray handed out/, "a subarray");
  const other = alloc(Int16Array, 100);
  sign(wa, { out: other });
  assert.deepEqual(Array.from(other.array), before.map((v) => Math.sign(v)));
  wa.free();
  other.free();
});

test("growth: views are made again; a view from before the memory grew is refused, never read", () => {
  const a = alloc(Float64Array, 4);
  a.array.set([-1.5, 0, 2, -0]);
  const stale = a.array;
  // Grows the memory (detaching stale) by more than any pool of free memory holds.
  const big = alloc(Uint8Array, 64 << 20);
  assert.equal(stale.length, 0, "the old view was detached by the growth");
  refused(() => sign(stale, { out: new Float64Array(4) }), ArgumentError, /stale view of a WasmArray.*take the WasmArray's array again/, "stale x");
  refused(() => sign(new Float64Array(4), { out: stale }), ArgumentError, /stale view/, "stale out");
  assert.notEqual(a.array, stale);
  assert.deepEqual(Array.from(a.array), [-1.5, 0, 2, -0]);
  assert.deepEqual(Array.from(sign(a, { out: a }).array), [-1, 0, 1, 0]);
  assert.ok(Object.is(a.array[3], 0), "-0 gives +0");
  big.free();
  a.free();
});

test("use after free is refused through the WasmArray and through its views, with nothing written", () => {
  const a = alloc(Float32Array, 8);
  const view = a.array;
  const out = new Float32Array(8).fill(7);
  a.free();
  a.free();
  for (const x of [a, view]) {
    refused(() => sign(x), ArgumentError, /freed \(use after free\)/, "sign");
    refused(() => isInfinity(x, { out: new Uint8Array(8) }), ArgumentError, /freed/, "isInfinity");
    refused(() => sign(out, { out: x }), ArgumentError, /freed/, "as out");
  }
  assert.deepEqual(Array.from(out), new Array(8).fill(7));
  refused(() => a.array, ArgumentError, /freed/, "array");
  // A new array may take the freed one's memory: the old view still names the old one.
  const b = alloc(Float32Array, 8);
  b.array.fill(-3);
  refused(() => sign(view, { out }), ArgumentError, /freed/, "the old view after the memory was reused");
  assert.deepEqual(Array.from(out), new Array(8).fill(7));
  b.free();
});

test("views of the module's memory that no WasmArray handed out are refused", () => {
  const a = alloc(Float32Array, 16);
  const buffer = a.array.buffer;
  const cases = [
    new Float32Array(buffer, a.array.byteOffset, 16),
    a.array.subarray(4),
    new Float32Array(buffer, 0, 16),
  ];
  for (const x of cases) refused(() => sign(x), ArgumentError, /no WasmArray handed out/, "x");
  refused(() => sign(new Float32Array(16), { out: cases[0] }), ArgumentError, /no WasmArray handed out/, "out");
  const op = new ewise.Device().createOperator(ewise.OperatorDesc.sign(ewise.tensorDesc("FLOAT32", [4]), ewise.tensorDesc("FLOAT32", [4]))).compile();
  refused(() => op.execute([buffer], [{ buffer: 0, offset: 0, sizeInBytes: 16 }], [{ buffer: 0, offset: 0, sizeInBytes: 16 }]), ArgumentError, /no WasmArray handed out/, "execute on the memory's buffer");
  refused(() => op.executeInPlace(a), ArgumentError, /only the CPU's CompiledOperator.execute takes/, "executeInPlace");
  a.free();
});

test("wrong types and lengths: the copying calls' errors", () => {
  const a = alloc(Float32Array, 4);
  refused(() => sign(a, { out: alloc(Float32Array, 5) }), ValidationError, /./, "a longer out");
  refused(() => sign(a, { out: alloc(Int32Array, 4) }), ArgumentError, /options.out must be a Float32Array \(or a WasmArray of one\)/, "another type");
  refused(() => isInfinity(alloc(Int32Array, 4)), ArgumentError, /x must be/, "isInfinity of integers");
  const h = alloc("float16", 2);
  h.array.set([0x7c00, 0xfc00]);
  assert.deepEqual(Array.from(isInfinity(h).array), [1, 1], "float16 by its dtype");
  assert.deepEqual(Array.from(isInfinity(h, { dtype: "bfloat16" }).array), [0, 0], "as bfloat16 by options.dtype");
  a.free();
  h.free();
});

test("CompiledOperator.execute on WasmArrays: bindings checked as for JavaScript buffers, run where they lie", () => {
  const { Device, OperatorDesc, tensorDesc } = ewise;
  const device = new Device();
  const bind = (buffer, offset, sizeInBytes) => ({ buffer, offset, sizeInBytes });
  const desc = tensorDesc("FLOAT32", [2, 3], [1, 2]);
  const dense = tensorDesc("FLOAT32", [2, 3]);
  const op = device.createOperator(OperatorDesc.sign(desc, dense)).compile();
  const x = alloc(Float32Array, 8);
  x.array.set([-1, 2, -3, 4, 0, -0, 7, 8]);
  const outArray = alloc(Float32Array, 12);
  outArray.array.fill(9);
  op.execute([x, outArray], [bind(0, 0, 32)], [bind(1, 16, 24)]);
  assert.deepEqual(Array.from(outArray.array), [9, 9, 9, 9, -1, -1, 0, 1, 1, 0, 9, 9]);
  // The same computed from JavaScript buffers.
  const js = new Float32Array(12).fill(9);
  op.execute([new Float32Array([-1, 2, -3, 4, 0, -0, 7, 8]), js], [bind(0, 0, 32)], [bind(1, 16, 24)]);
  assert.deepEqual(Array.from(js), Array.from(outArray.array));
  refused(() => op.execute([x, outArray], [bind(0, 0, 32)], [bind(1, 4, 24)]), ValidationError, /./, "a misaligned offset");
  refused(() => op.execute([x, js], [bind(0, 0, 32)], [bind(1, 16, 24)]), ArgumentError, /all WasmArrays .* or all JavaScript memory/, "a mix");
  // In place on one WasmArray named twice, and a hazard.
  const inPlace = device.createOperator(OperatorDesc.sign(dense, dense)).compile();
  const d = alloc(Float32Array, 12);
  d.array.set([-5, 5, 0, -0, NaN, 3]);
  inPlace.execute([d, d], [bind(0, 0, 24)], [bind(1, 0, 24)]);
  assert.deepEqual(Array.from(d.array.subarray(0, 6)), [-1, 1, 0, 0, 0, 1]);
  refused(() => inPlace.execute([d], [bind(0, 0, 24)], [bind(0, 16, 24)]), ValidationError, /./, "overlapping ranges");
  const freed = alloc(Float32Array, 6);
  freed.free();
  refused(() => inPlace.execute([freed, d], [bind(0, 0, 24)], [bind(1, 0, 24)]), ArgumentError, /freed/, "a freed buffer");
  for (const a of [x, outArray, d]) a.free();
});

/** A function that runs the garbage collector: Node's, exposed here; undefined
 * elsewhere (Deno). */
async function collector() {
  if (typeof globalThis.gc === "function") return globalThis.gc;
  if (typeof globalThis.Deno !== "undefined" || typeof process !== "object") return undefined;
  const [v8, vm] = [await import("node:v8"), await import("node:vm")];
  v8.setFlagsFromString("--expose-gc");
  return vm.runInNewContext("gc");
}
const gc = await collector();

test("the FinalizationRegistry frees what is collected unfreed, never what a view still shows", { skip: gc === undefined && "no way to run the garbage collector here" }, async () => {
  const dir = typeof process === "object" && process.env.EWISE_WEB_PKG;
  const glue = await import(dir ? new URL(`file://${dir.replace(/\/$/, "")}/ewise_web.js`).href : new URL("../pkg/ewise_web.js", import.meta.url).href);
  const settle = async (floor) => {
    for (let i = 0; i < 100 && glue.blockCount() > floor; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  // Arrays earlier tests left unfreed are collected first.
  await settle(0);
  const before = glue.blockCount();
  let kept = alloc(Float32Array, 1024).array;
  kept.fill(-2);
  for (let i = 0; i < 50; i++) alloc(Float32Array, 1024);
  assert.equal(glue.blockCount(), before + 51);
  await settle(before + 1);
  assert.equal(glue.blockCount(), before + 1, "the 50 arrays nothing holds were freed; the one a view holds was not");
  assert.deepEqual(Array.from(sign(kept, { out: new Float32Array(1024) }).subarray(0, 2)), [-1, -1]);
  kept = null;
});
