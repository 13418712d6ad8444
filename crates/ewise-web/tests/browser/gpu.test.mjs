// The array-style GPU functions in a browser with WebGPU: requestGpu() and GpuDevice's
// sign and isInfinity, bit for bit against the wasm CPU functions and the reference, for
// every type, NaN policy and infinity mode; out= and in place; arrays of more than one
// 32 MiB piece.

import { test } from "../../browser/harness.mjs";
import * as assert from "../../browser/assert.mjs";
import * as ewise from "../../pkg/ewise.js";
import { TYPES, allPatterns, firstMismatch, isInfinityOf, patternsOf, signOf, valuesOf, widePatterns } from "../reference.mjs";

const FLOATS = ["float32", "float64", "float16", "bfloat16"];
const MODES = ["either", "positive", "negative", "neither"];

/** The input of `type` as the array the functions take, its options' dtype, and its
 * patterns: every pattern of 8- and 16-bit types, 100 000 of the others. */
function inputOf(type) {
  const bits = TYPES[type].bits;
  const patterns = bits <= 16 ? allPatterns(bits) : widePatterns(type, 100_000);
  const dtype = type === "float16" || type === "bfloat16" ? { dtype: type } : {};
  return { x: valuesOf(type, patterns), patterns, dtype };
}

let gpu;
test("requestGpu() gives a WebGPU device", async () => {
  assert.ok(typeof navigator.gpu?.requestAdapter === "function", "this browser offers navigator.gpu");
  gpu = await ewise.requestGpu();
  assert.ok(gpu instanceof ewise.GpuDevice);
  assert.match(gpu.adapter, /webgpu/i, "the adapter names its backend");
});

for (const type of Object.keys(TYPES)) {
  for (const nan of ["zero", "propagate"]) {
    test(`sign ${type} nan=${nan}: the CPU's bits and the reference's`, async () => {
      const { x, patterns, dtype } = inputOf(type);
      const before = x.slice();
      const got = await gpu.sign(x, { ...dtype, nan });
      assert.equal(got.constructor, x.constructor, "the output has the input's type");
      assert.sameBytes(x, before, "the input is kept");
      assert.sameBytes(got, ewise.sign(x, { ...dtype, nan }), "GPU against CPU");
      const mismatch = firstMismatch(patterns, patternsOf(got), (p) => signOf(type, p, nan));
      assert.equal(mismatch, null, "GPU against the reference");
    });
  }
}

for (const type of FLOATS) {
  for (const mode of MODES) {
    test(`isInfinity ${type} mode=${mode}: the CPU's bits and the reference's`, async () => {
      const { x, patterns, dtype } = inputOf(type);
      const got = await gpu.isInfinity(x, { ...dtype, mode });
      assert.ok(got instanceof Uint8Array && got.length === x.length);
      assert.sameBytes(got, ewise.isInfinity(x, { ...dtype, mode }), "GPU against CPU");
      assert.equal(firstMismatch(patterns, got, (p) => isInfinityOf(type, p, mode)), null, "GPU against the reference");
    });
  }
}

test("out= and in place on the GPU", async () => {
  const { x, patterns } = inputOf("float32");
  const out = new Float32Array(x.length);
  assert.equal(await gpu.sign(x, { out }), out, "returns out");
  assert.sameBytes(out, ewise.sign(x));
  const data = x.slice();
  assert.equal(await gpu.sign(data, { out: data, nan: "propagate" }), data, "returns x in place");
  assert.equal(firstMismatch(patterns, patternsOf(data), (p) => signOf("float32", p, "propagate")), null);
  const flags = new Uint8Array(x.length).fill(7);
  await gpu.isInfinity(x, { out: flags, mode: "negative" });
  assert.sameBytes(flags, ewise.isInfinity(x, { mode: "negative" }));
});

test("arrays of several 32 MiB pieces: 9 Mi float32 and 40 Mi int8 elements", async () => {
  for (const [type, count] of [["float32", 9 << 20], ["int8", 40 << 20]]) {
    const wide = widePatterns(type === "int8" ? "int32" : type, count >> (type === "int8" ? 2 : 0));
    const x = new TYPES[type].array(wide.buffer, 0, count);
    const got = await gpu.sign(x, { nan: "propagate" });
    assert.sameBytes(got, ewise.sign(x, { nan: "propagate" }), `${type} × ${count}`);
  }
  const big = valuesOf("float32", widePatterns("float32", 9 << 20));
  assert.sameBytes(await gpu.isInfinity(big), ewise.isInfinity(big), "isInfinity float32 × 9 Mi");
});

test("bad arguments on the GPU: the CPU's typed errors, and the device keeps working", async () => {
  let cpuError;
  assert.throws(() => ewise.isInfinity(new Int32Array(4)), (e) => (cpuError = e) instanceof ewise.ArgumentError);
  await assert.rejects(() => gpu.isInfinity(new Int32Array(4)), (e) => e instanceof ewise.ArgumentError && e.message === cpuError.message.replace(/^isInfinity/, "GpuDevice.isInfinity"));
  await assert.rejects(() => gpu.isInfinity(new Uint16Array(4), { dtype: "int16" }), ewise.ArgumentError);
  for (const [x, out, call] of [
    [new Float32Array(4), new Float32Array(3), "sign"],
    [new Int8Array(2), new Int8Array(5), "sign"],
    [new Float64Array(4), new Uint8Array(3), "isInfinity"],
  ]) {
    const kept = out.slice();
    let cpu;
    assert.throws(() => ewise[call](x, { out }), (e) => (cpu = e) instanceof ewise.ValidationError);
    await assert.rejects(() => gpu[call](x, { out }), (e) => e instanceof ewise.ValidationError && e.message === cpu.message, `${call} into a shorter or longer out=`);
    assert.sameBytes(out, kept, "out= is untouched");
  }
  await assert.rejects(() => gpu.sign(new Uint16Array(4), { dtype: "float8" }), ewise.ArgumentError);
  await assert.rejects(() => gpu.sign([1, 2, 3]), ewise.ArgumentError);
  assert.sameBytes(await gpu.sign(new Float32Array([-2, 0, 3])), new Float32Array([-1, 0, 1]));
});

test("memory that shrinks or is transferred while the GPU runs: an ArgumentError, nothing written", async () => {
  const x = new Float32Array([-2, 0, 3, NaN]);
  const memory = new ArrayBuffer(16, { maxByteLength: 32 });
  const out = new Float32Array(memory);
  out.fill(7);
  const shrunk = gpu.sign(x, { out });
  memory.resize(8);
  await assert.rejects(() => shrunk, (e) => e instanceof ewise.ArgumentError && e.kind === "options.out" && /shrank or was detached \(transferred\) while the GPU ran: it holds 0 of the 16 bytes/.test(e.message), "a length-tracking out shrunk");
  assert.sameBytes(out, new Float32Array([7, 7]), "nothing written");
  const flags = new Uint8Array(4);
  const transferred = gpu.isInfinity(x, { out: flags });
  structuredClone(flags.buffer, { transfer: [flags.buffer] });
  await assert.rejects(() => transferred, (e) => e instanceof ewise.ArgumentError && e.kind === "options.out", "a transferred out");
  const t = ewise.tensorDesc("FLOAT32", [4]);
  const op = gpu.createOperator(ewise.OperatorDesc.sign(t, t)).compile();
  const bound = new ArrayBuffer(32, { maxByteLength: 32 });
  const execution = op.execute([bound], [{ buffer: 0, offset: 0, sizeInBytes: 16 }], [{ buffer: 0, offset: 16, sizeInBytes: 16 }]);
  bound.resize(16);
  await assert.rejects(() => execution, (e) => e instanceof ewise.EwiseError, "a bound buffer shrunk");
  assert.sameBytes(await gpu.sign(new Float32Array([-2, 0, 3])), new Float32Array([-1, 0, 1]), "the device keeps working");
});

test("WasmArrays on the GPU: x and out copied across, a new WasmArray without out, freed ones refused", async () => {
  const { patterns } = inputOf("float32");
  const x = ewise.alloc(Float32Array, patterns.length);
  new Uint32Array(x.array.buffer, x.array.byteOffset, patterns.length).set(patterns);
  const fresh = await gpu.sign(x);
  assert.ok(fresh instanceof ewise.WasmArray && fresh.dtype === "float32", "a new WasmArray");
  assert.equal(firstMismatch(patterns, patternsOf(fresh.array), (p) => signOf("float32", p, "zero")), null, "sign into a new WasmArray");
  const flags = ewise.alloc(Uint8Array, patterns.length);
  assert.equal(await gpu.isInfinity(x, { out: flags }), flags);
  assert.equal(firstMismatch(patterns, flags.array, (p) => isInfinityOf("float32", p, "either")), null, "isInfinity into a WasmArray");
  assert.equal(await gpu.sign(x, { out: x }), x);
  assert.equal(firstMismatch(patterns, patternsOf(x.array), (p) => signOf("float32", p, "zero")), null, "in place");
  const pending = gpu.sign(x, { out: fresh });
  fresh.free();
  await assert.rejects(pending, (e) => e instanceof ewise.ArgumentError && /freed/.test(e.message), "out freed while the GPU ran: nothing written");
  await assert.rejects(gpu.sign(fresh), (e) => e instanceof ewise.ArgumentError && /freed/.test(e.message), "a freed x");
  x.free();
  flags.free();
});
