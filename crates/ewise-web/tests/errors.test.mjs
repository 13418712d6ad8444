// Every refusal: a typed error naming what was wrong and what is accepted, and the
// WebAssembly module still working after each (nothing traps).

import { test } from "node:test";
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";

import { loadPackage } from "./reference.mjs";

const ewise = await loadPackage();
const { ArgumentError, EwiseError, ValidationError, GpuError, WebGpuUnavailableError, OutOfMemoryError } = ewise;

/** Asserts that `f` throws an instance of `cls` with `kind` whose message matches every
 * one of `parts` (strings are found as they are). */
function throwsLike(f, cls, kind, ...parts) {
  let caught;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught !== undefined, `no error; expected ${cls.name}`);
  assert.ok(caught instanceof cls, `${caught?.name}: ${caught?.message} is not a ${cls.name}`);
  assert.ok(caught instanceof EwiseError && caught instanceof Error);
  assert.equal(caught.name, cls.name);
  if (kind !== null) assert.equal(caught.kind, kind, caught.message);
  for (const part of parts) {
    if (typeof part === "string") assert.ok(caught.message.includes(part), `"${caught.message}" lacks "${part}"`);
    else assert.match(caught.message, part);
  }
  return caught;
}

test("before init: every call says to await init() first", async () => {
  for (const f of [
    () => ewise.sign(new Float32Array(1)),
    () => ewise.isInfinity(new Float32Array(1)),
    () => new ewise.Device(),
    () => ewise.tensorDesc("FLOAT32", [1]),
  ]) {
    throwsLike(f, EwiseError, "NotInitialized", "await init() first");
  }
  await assert.rejects(ewise.requestGpu(), (e) => e.kind === "NotInitialized");
  await ewise.init();
  assert.equal(ewise.init(), ewise.init(), "init() again gives the same promise");
});

// A runtime with Float16Array (Deno 2.9; not Node 20) has it named last in the lists.
const FLOATS_LIST = typeof Float16Array === "function" ? "Float32Array, Float64Array or Float16Array" : "Float32Array or Float64Array";
const SIGN_LIST = `Int8Array, Uint8Array, Int16Array, Uint16Array, Int32Array, Uint32Array, BigInt64Array, BigUint64Array, ${FLOATS_LIST}`;

test("x that is no accepted array", () => {
  const cases = [
    [null, "got null"],
    [undefined, "got undefined"],
    [3, "got number 3"],
    ["abc", 'got the string "abc"'],
    [[1, 2], "got an Array (convert it first, e.g. Float32Array.from(x))"],
    [new ArrayBuffer(4), "got an ArrayBuffer"],
    [new DataView(new ArrayBuffer(4)), "got a DataView"],
    [new Uint8ClampedArray(2), "got a Uint8ClampedArray"],
    [{ length: 2, 0: 1, 1: 2 }, "got an object ([object Object])"],
  ];
  for (const [x, got] of cases) {
    throwsLike(() => ewise.sign(x), ArgumentError, "x", `sign: x must be an ${SIGN_LIST}`, got);
    throwsLike(() => ewise.isInfinity(x), ArgumentError, "x", `isInfinity: x must be a ${FLOATS_LIST}`, got);
  }
  for (const A of [Int8Array, Uint8Array, Int16Array, Int32Array, Uint32Array, BigInt64Array, BigUint64Array]) {
    throwsLike(() => ewise.isInfinity(new A(2)), ArgumentError, "x", "floating-point elements", `got a${A.name.startsWith("I") ? "n" : ""} ${A.name}`);
  }
});

test("options that are no object, unknown keys, unknown values", () => {
  const x = new Float32Array(2);
  throwsLike(() => ewise.sign(x, "zero"), ArgumentError, "options", "options must be an object", 'got the string "zero"');
  throwsLike(() => ewise.sign(x, ["zero"]), ArgumentError, "options", "options must be an object");
  throwsLike(() => ewise.sign(x, { nna: "zero" }), ArgumentError, "options", 'unknown option "nna" (accepted: nan, out, dtype)');
  throwsLike(() => ewise.sign(x, { mode: "either" }), ArgumentError, "options", 'unknown option "mode" (accepted: nan, out, dtype)');
  throwsLike(() => ewise.isInfinity(x, { nan: "zero" }), ArgumentError, "options", 'unknown option "nan" (accepted: mode, out, dtype)');
  throwsLike(() => ewise.sign(x, { nan: "Zero" }), ArgumentError, "options.nan", 'options.nan must be "zero" or "propagate"; got "Zero"');
  throwsLike(() => ewise.sign(x, { nan: 0 }), ArgumentError, "options.nan", "got number 0");
  throwsLike(() => ewise.isInfinity(x, { mode: "EITHER" }), ArgumentError, "options.mode", 'options.mode must be "either", "positive", "negative" or "neither"; got "EITHER"');
  throwsLike(() => ewise.isInfinity(x, { mode: null }), ArgumentError, "options.mode", "got null");
  throwsLike(() => ewise.sign(x, { dtype: "half" }), ArgumentError, "options.dtype", 'options.dtype must be "int8"', '"bfloat16", "float32" or "float64"; got "half"');
  ewise.sign(x, {});
  ewise.sign(x, null);
  ewise.sign(x, { nan: undefined, out: undefined, dtype: undefined });
});

test("dtype that does not fit the array", () => {
  throwsLike(() => ewise.sign(new Float32Array(2), { dtype: "float16" }), ArgumentError, "options.dtype", 'options.dtype "float16" does not fit a Float32Array (its dtype is "float32"');
  throwsLike(() => ewise.sign(new Int16Array(2), { dtype: "bfloat16" }), ArgumentError, "options.dtype", "does not fit an Int16Array");
  throwsLike(() => ewise.isInfinity(new Uint16Array(2)), ArgumentError, "options.dtype", 'a Uint16Array needs options.dtype "float16" or "bfloat16"');
  throwsLike(() => ewise.isInfinity(new Uint16Array(2), { dtype: "uint16" }), ArgumentError, "options.dtype", "a Uint16Array needs options.dtype");
  assert.deepEqual(Array.from(ewise.sign(new Uint16Array([5]), { dtype: "uint16" })), [1]);
  assert.deepEqual(Array.from(ewise.sign(new Float64Array([-5]), { dtype: "float64" })), [-1]);
});

test("out of another type or length", () => {
  const x = new Float32Array(3);
  throwsLike(() => ewise.sign(x, { out: new Float64Array(3) }), ArgumentError, "options.out", "options.out must be a Float32Array (like x); got a Float64Array");
  throwsLike(() => ewise.sign(x, { out: [0, 0, 0] }), ArgumentError, "options.out", "got an Array");
  throwsLike(() => ewise.sign(new Uint16Array(3), { dtype: "float16", out: new Int16Array(3) }), ArgumentError, "options.out", "must be a Uint16Array");
  throwsLike(() => ewise.isInfinity(x, { out: new Int8Array(3) }), ArgumentError, "options.out", "options.out must be a Uint8Array (like the result); got an Int8Array");
  throwsLike(() => ewise.sign(x, { out: new Float32Array(4) }), ValidationError, "SliceLength",
    "ELEMENT_WISE_SIGN: OutputTensor slice has 4 elements, but its shape and strides need 3");
  throwsLike(() => ewise.isInfinity(x, { out: new Uint8Array(2) }), ValidationError, "SliceLength",
    "ELEMENT_WISE_IS_INFINITY: OutputTensor slice has 2 elements, but its shape and strides need 3");
});

test("detached (transferred) memory", () => {
  const x = new Float32Array(4);
  structuredClone(x.buffer, { transfer: [x.buffer] });
  throwsLike(() => ewise.sign(x), ArgumentError, "x", "sign: x's memory is detached (transferred)");
  const out = new Float32Array(4);
  structuredClone(out.buffer, { transfer: [out.buffer] });
  throwsLike(() => ewise.sign(new Float32Array(4), { out }), ArgumentError, "options.out", "options.out's memory is detached");
});

test("error classes", () => {
  for (const cls of [ValidationError, ArgumentError, GpuError, OutOfMemoryError]) {
    assert.ok(cls.prototype instanceof EwiseError);
  }
  assert.ok(WebGpuUnavailableError.prototype instanceof GpuError);
  assert.ok(EwiseError.prototype instanceof Error);
});

test("the module's own exports refuse what the entry module never passes, without trapping", async () => {
  const dir = process.env.EWISE_WEB_PKG;
  const raw = await import(dir ? pathToFileURL(`${dir}/ewise_web.js`).href : new URL("../pkg/ewise_web.js", import.meta.url).href);
  const b = (n) => new Uint8Array(n);
  const cases = [
    [() => raw.signBytes(999, 0, b(4), b(4)), "ArgumentError", "dataType", "data type 999 is not a DML_TENSOR_DATA_TYPE value"],
    [() => raw.signBytes(1, 7, b(4), b(4)), "ArgumentError", "nan", "NaN policy 7 is not 0 (zero) or 1 (propagate)"],
    [() => raw.signBytes(1001, 0, b(0), b(0)), "ValidationError", "UnsupportedDataType", "BOOL"],
    [() => raw.signBytes(1, 0, b(6), b(6)), "ValidationError", "PartialElement", "ELEMENT_WISE_SIGN: InputTensor holds 6 bytes, which is not a whole number of 4-byte elements"],
    [() => raw.signBytes(1, 0, b(8), b(6)), "ValidationError", "PartialElement", "OutputTensor holds 6 bytes"],
    [() => raw.signBytes(1, 0, b(8), b(4)), "ValidationError", "SliceLength", "OutputTensor slice has 1 elements, but its shape and strides need 2"],
    [() => raw.signBytes(1, 0, [1, 2, 3, 4], b(4)), "ArgumentError", "input", "input must be a Uint8Array"],
    [() => raw.signBytes(1, 0, b(4), null), "ArgumentError", "output", "output must be a Uint8Array"],
    [() => raw.isInfinityBytes(5, 0, b(0), b(0)), "ValidationError", "UnsupportedDataType", "ELEMENT_WISE_IS_INFINITY"],
    [() => raw.isInfinityBytes(1, 3, b(4), b(1)), "ArgumentError", "mode", "infinity mode 3 is not 0 (EITHER), 1 (POSITIVE), 2 (NEGATIVE) or 1000 (NEITHER)"],
    [() => raw.isInfinityBytes(1, 0, b(8), b(3)), "ValidationError", "SliceLength", "OutputTensor slice has 3 elements, but its shape and strides need 2"],
    [() => raw.isInfinityBytes(1, 0, {}, b(3)), "ArgumentError", "input", "input must be a Uint8Array"],
  ];
  for (const [f, name, kind, text] of cases) {
    let caught;
    try {
      f();
    } catch (e) {
      caught = e;
    }
    assert.ok(caught instanceof Error, `${text}: no Error`);
    assert.equal(caught.name, name, caught.message);
    assert.equal(caught.kind, kind, caught.message);
    assert.ok(caught.message.includes(text), `"${caught.message}" lacks "${text}"`);
  }
  assert.deepEqual(Array.from(ewise.sign(new Int8Array([-3, 3]))), [-1, 1], "still working");
});

test("many refusals in a row leave the module working", () => {
  for (let i = 0; i < 10_000; i++) {
    try {
      ewise.sign(new Float32Array(3), { out: new Float32Array(2) });
    } catch {
      // refused, as every time
    }
  }
  assert.deepEqual(Array.from(ewise.sign(new Float32Array([-2, 2]))), [-1, 1]);
});

test("transferred buffers, holes and revoked Proxies are ArgumentErrors naming the argument", async () => {
  await ewise.init();
  const device = new ewise.Device();
  const t = ewise.tensorDesc("FLOAT32", [2]);
  const op = device.createOperator(ewise.OperatorDesc.sign(t, t)).compile();
  const binding = [{ buffer: 0, offset: 0, sizeInBytes: 8 }];
  const gone = new ArrayBuffer(8);
  structuredClone(gone, { transfer: [gone] });
  throwsLike(() => op.execute([gone], binding, binding), ArgumentError, "buffers[0]", "CompiledOperator.execute: buffers[0]'s memory is detached (transferred)");
  throwsLike(() => op.executeInPlace(gone), ArgumentError, "data", "CompiledOperator.executeInPlace: data's memory is detached");
  throwsLike(() => op.executeSlices(new ArrayBuffer(8), gone), ArgumentError, "output", "output's memory is detached");
  const view = new DataView(new ArrayBuffer(8));
  structuredClone(view.buffer, { transfer: [view.buffer] });
  throwsLike(() => op.executeInPlace(view), ArgumentError, "data", "data's memory is detached");

  // eslint-disable-next-line no-sparse-arrays
  throwsLike(() => op.execute([new ArrayBuffer(8), , new ArrayBuffer(8)], binding, [{ buffer: 2, offset: 0, sizeInBytes: 8 }]),
    ArgumentError, "buffers[1]", "buffers[1] must be an ArrayBuffer, a typed array or a DataView; got undefined");
  // eslint-disable-next-line no-sparse-arrays
  throwsLike(() => op.execute([new ArrayBuffer(8)], [, binding[0]], binding), ArgumentError, "inputs[0]", "inputs[0] must be a binding");

  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  throwsLike(() => ewise.sign(proxy), ArgumentError, "x", "sign: x must be", "got an object that throws when inspected (a revoked Proxy?)");
  throwsLike(() => ewise.isInfinity(proxy), ArgumentError, "x", "got an object that throws when inspected");
  const e = throwsLike(() => ewise.sign(new Float32Array(1), proxy), ArgumentError, "options", "sign: inspecting options threw TypeError");
  assert.ok(e.cause instanceof TypeError);
  throwsLike(() => op.execute(proxy, binding, binding), ArgumentError, "arguments", "CompiledOperator.execute: inspecting its arguments threw TypeError");
  throwsLike(() => op.execute([proxy], binding, binding), ArgumentError, "buffers[0]", "got an object that throws when inspected");
  throwsLike(() => op.executeInPlace(proxy), ArgumentError, "data", "got an object that throws when inspected");
  throwsLike(() => new ewise.Device(proxy), ArgumentError, "options", "new Device: inspecting options threw TypeError");
  throwsLike(() => device.createOperator(proxy), ArgumentError, "desc");
  throwsLike(() => device.createOperator(ewise.OperatorDesc.sign(proxy, t)), ArgumentError, "desc.input");
  throwsLike(() => ewise.tensorDesc("FLOAT32", proxy), ArgumentError, "arguments", "tensorDesc: inspecting its arguments threw TypeError");
  throwsLike(() => device.checkFeatureLevels(proxy), ArgumentError, "arguments");
  assert.deepEqual(Array.from(ewise.sign(new Int8Array([-3, 3]))), [-1, 1], "still working");
});

test("getters that throw and Proxies that trap: ArgumentErrors with the original as cause", async () => {
  await ewise.init();
  const boom = new RangeError("boom");
  const options = { get nan() { throw boom; } };
  const e = throwsLike(() => ewise.sign(new Float32Array(1), options), ArgumentError, "options.nan", "sign: reading options.nan threw RangeError: boom");
  assert.equal(e.cause, boom);
  const trap = new Proxy({}, { ownKeys() { throw boom; } });
  assert.equal(throwsLike(() => ewise.isInfinity(new Float32Array(1), trap), ArgumentError, "options").cause, boom);
  const sizes = new Proxy([1, 2], { get(target, key) { if (key === "1") throw boom; return Reflect.get(target, key); } });
  assert.equal(throwsLike(() => ewise.tensorDesc("FLOAT32", sizes), ArgumentError, "desc.sizes", "reading desc.sizes threw RangeError: boom").cause, boom);
  const lying = new Float32Array([-2, 2]);
  Object.defineProperty(lying, "length", { get() { throw boom; } });
  Object.defineProperty(lying, "buffer", { get() { throw boom; } });
  assert.deepEqual(Array.from(ewise.sign(lying)), [-1, 1], "own properties that lie are not read");
  const bindings = [{ buffer: 0, get offset() { throw boom; }, sizeInBytes: 4 }];
  const op = new ewise.Device().createOperator(ewise.OperatorDesc.sign(ewise.tensorDesc("FLOAT32", [1]), ewise.tensorDesc("FLOAT32", [1]))).compile();
  assert.equal(throwsLike(() => op.execute([new ArrayBuffer(4)], bindings, bindings), ArgumentError, "inputs[0].offset").cause, boom);
  throwsLike(() => ewise.sign(new Float32Array(1), { get out() { throw "a string"; } }), ArgumentError, "options.out", "threw a string");
});

test("resizable memory: views past its end read as empty, shrunk buffers are refused, never a RangeError", async () => {
  await ewise.init();
  const memory = new ArrayBuffer(16, { maxByteLength: 64 });
  const tracking = new Float32Array(memory);
  tracking.set([-1, 2, -3, 4]);
  assert.deepEqual(Array.from(ewise.sign(tracking)), [-1, 1, -1, 1]);
  const fixed = new Float32Array(memory, 8, 2);
  memory.resize(4);
  assert.equal(ewise.sign(fixed).length, 0, "a view out of bounds has no elements");
  throwsLike(() => ewise.sign(new Float32Array(2), { out: fixed }), ValidationError, "SliceLength");
  const t = ewise.tensorDesc("FLOAT32", [2]);
  const op = new ewise.Device().createOperator(ewise.OperatorDesc.sign(t, t)).compile();
  const binding = [{ buffer: 0, offset: 0, sizeInBytes: 8 }];
  throwsLike(() => op.execute([memory], binding, binding), ValidationError, null);
  throwsLike(() => op.execute([new DataView(memory, 0, 4)], binding, binding), ValidationError, null);
  const outOfBounds = new DataView(new ArrayBuffer(8, { maxByteLength: 8 }), 4, 4);
  outOfBounds.buffer.resize(0);
  throwsLike(() => op.executeInPlace(outOfBounds), ValidationError, null);
});

test("messages quote what the caller gave cut to 64 characters, saying how long it was", async () => {
  await ewise.init();
  const long = "x".repeat(1 << 20);
  const clipped = `${"x".repeat(64)}…(${1 << 20} chars)`;
  const checks = [
    [() => new ewise.Device({ featureLevel: long }), ArgumentError, "options.featureLevel", `unknown feature level '${clipped}'`],
    [() => new ewise.Device().checkFeatureLevels([long]), ArgumentError, "levels", `'${clipped}'`],
    [() => ewise.sign(new Float32Array(1), { [long]: 1 }), ArgumentError, "options", `unknown option "${clipped}"`],
    [() => ewise.sign(new Float32Array(1), { nan: long }), ArgumentError, "options.nan", `got "${clipped}"`],
    [() => ewise.sign(new Float32Array(1), { dtype: long }), ArgumentError, "options.dtype", `got "${clipped}"`],
    [() => ewise.sign(long), ArgumentError, "x", `got the string "${clipped}"`],
    [() => ewise.sign(Symbol(long)), ArgumentError, "x", `got symbol Symbol(${"x".repeat(57)}…(${(1 << 20) + 8} chars)`],
    [() => ewise.sign({ [Symbol.toStringTag]: long }), ArgumentError, "x", `got an object ([object ${"x".repeat(56)}…(${(1 << 20) + 9} chars))`],
    [() => ewise.tensorDesc(long, [1]), ArgumentError, "desc.dataType", `got "${clipped}"`],
    [() => ewise.tensorDesc("FLOAT32", [1], [2n ** 4000n]), ArgumentError, "desc.strides", "…(1205 chars)n"],
    [() => ewise.sign(new Float32Array(1), { get nan() { throw new Error(long); } }), ArgumentError, "options.nan", `threw Error: ${clipped}`],
  ];
  for (const [f, cls, kind, part] of checks) {
    const e = throwsLike(f, cls, kind, part);
    assert.ok(e.message.length < 600, `${e.message.length} characters: ${e.message.slice(0, 200)}`);
  }
});

test("init(path), init(file URL) read the file in Node; a bad source is a LoadError", async () => {
  const { execFileSync } = await import("node:child_process");
  const dir = process.env.EWISE_WEB_PKG ?? new URL("../pkg", import.meta.url).pathname;
  const entry = pathToFileURL(`${dir}/ewise.js`).href;
  const wasmPath = `${dir}/ewise_web_bg.wasm`;
  const run = (source) => execFileSync(process.execPath, ["--input-type=module", "-e", `
    import { init, sign } from ${JSON.stringify(entry)};
    try {
      await init(${source});
      console.log(sign(new Int8Array([-7]))[0]);
    } catch (e) {
      console.log(e.name, e.kind, e.cause?.code ?? e.cause?.name, e.message);
    }`], { encoding: "utf8" }).trim();
  assert.equal(run(JSON.stringify(wasmPath)), "-1", "a path");
  assert.equal(run(`new URL(${JSON.stringify(pathToFileURL(wasmPath).href)})`), "-1", "a file URL");
  assert.equal(run(JSON.stringify(pathToFileURL(wasmPath).href)), "-1", "a file URL as a string");
  assert.match(run(JSON.stringify(`${dir}/missing.wasm`)), /^LoadError Load ENOENT init: the WebAssembly module from "(.*missing\.wasm|.{64}…\(\d+ chars\))" could not be loaded: Error: ENOENT/);
  assert.match(run("new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 5])"), /^LoadError Compile CompileError init: the WebAssembly module from a Uint8Array could not be compiled/);
  assert.match(run(JSON.stringify(`/${"d".repeat(5000)}.wasm`)), /^LoadError Load ENAMETOOLONG init: the WebAssembly module from "\/d{63}…\(5006 chars\)" could not be loaded/);
});
