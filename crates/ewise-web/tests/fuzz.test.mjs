// Property-based tests of the package (fast-check): random typed arrays of every kind
// (in ArrayBuffers, SharedArrayBuffers and resizable ArrayBuffers, at random offsets,
// with outputs aliasing the input's memory directly or through a clone of a shared
// buffer), random options including hostile ones, and random DirectML-style
// descriptions and bindings. Every call either gives the reference's bits (reference.mjs)
// in the output elements with every other byte of every memory unchanged, or throws an
// EwiseError and changes nothing; which of the two is predicted from the arguments.
// Each property runs with a fixed seed, then with a random one (printed; give it back
// through EWISE_FUZZ_SEED to replay).
//
// fast-check comes from EWISE_WEB_FAST_CHECK (its package directory), by default
// target/tools/node_modules/fast-check, where scripts/web-test.sh installs it. Without it
// the tests skip, saying so; under CI=true they fail.

import { test } from "node:test";
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";

import { loadPackage, TYPES, patternArray, signOf, isInfinityOf } from "./reference.mjs";

const FIXED_SEED = 20261128;
const RUNS = Number(process.env.EWISE_FUZZ_RUNS ?? 1000);

async function loadFastCheck() {
  const dir = process.env.EWISE_WEB_FAST_CHECK;
  const url = dir ? pathToFileURL(`${dir.replace(/\/$/, "")}/lib/fast-check.js`) : new URL("../../../target/tools/node_modules/fast-check/lib/fast-check.js", import.meta.url);
  try {
    return { fc: await import(url.href) };
  } catch (e) {
    const why = `fast-check cannot be imported from ${url.pathname} (${e.message}); install it with scripts/web-test.sh or npm install --prefix target/tools fast-check, or set EWISE_WEB_FAST_CHECK`;
    if (process.env.CI === "true") throw new Error(why);
    console.error(`fuzz.test.mjs: SKIPPED: ${why}`);
    return { skip: why };
  }
}

const { fc, skip } = await loadFastCheck();
const ewise = await loadPackage();
await ewise.init();
const { EwiseError } = ewise;

// ------------------------------------------------------------------------- helpers

/** xorshift32 bytes from `seed`. */
function fillRandom(bytes, seed) {
  let s = (seed | 0) || 1;
  for (let i = 0; i < bytes.length; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    bytes[i] = s & 0xff;
  }
}

/** Writes specials (zeros, ones, infinities, NaNs) of `type` over some elements. */
function sprinkle(type, memory, at, n, seed) {
  const t = TYPES[type];
  if (t.kind !== "float") return;
  const P = patternArray(t.bits);
  const view = new P(memory, at, n);
  const nan = t.inf | 1n;
  const specials = [0n, t.one, t.minusOne, t.inf, t.minusInf, nan, nan | (1n << BigInt(t.bits - 1))];
  for (let i = 0; i < n; i++) {
    const r = (seed * 31 + i * 7) >>> 0;
    if (r % 3 === 0) {
      const p = specials[r % specials.length];
      view[i] = t.bits === 64 ? p : Number(p);
    }
  }
}

function newMemory(kind, bytes) {
  if (kind === "shared") return new SharedArrayBuffer(bytes);
  if (kind === "resizable") return new ArrayBuffer(bytes, { maxByteLength: bytes + 64 });
  return new ArrayBuffer(bytes);
}

function snapshot(memory) {
  return new Uint8Array(memory).slice();
}

/** Asserts that `memory` holds `before` except in the byte ranges `[from, to)` of
 * `skip`. */
function unchangedExcept(memory, before, skip, label) {
  const now = new Uint8Array(memory);
  assert.equal(now.length, before.length, `${label}: the memory's length changed`);
  for (let i = 0; i < now.length; i++) {
    if (now[i] !== before[i] && !skip.some(([a, b]) => i >= a && i < b)) {
      assert.fail(`${label}: byte ${i} outside the output changed from ${before[i]} to ${now[i]}`);
    }
  }
}

/** The patterns, as BigInts, of `n` elements of `bits` bits at byte `at` of `bytes`. */
function patterns(bytes, at, n, bits) {
  const P = patternArray(bits);
  const copy = bytes.slice(at, at + n * (bits / 8));
  return Array.from(new P(copy.buffer, 0, n), BigInt);
}

/** Values fast-check uses where an option, description field or argument should be
 * something else. */
function hostile() {
  return fc.oneof(
    fc.string({ maxLength: 80 }),
    fc.string({ minLength: 65, maxLength: 300 }),
    fc.integer(),
    fc.double(),
    fc.bigInt(),
    fc.constantFrom(null, true, {}, [], Symbol("s"), () => 1, new DataView(new ArrayBuffer(4))),
    fc.constant("revoked"),
    fc.constant("throwing"),
  );
}

/** `v` with the markers "revoked" and "throwing" replaced by a revoked Proxy. */
function realize(v) {
  if (v === "revoked") {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    return proxy;
  }
  return v;
}

/** An options object with `entries`, as a plain object, one whose getters throw (when
 * `style` says so), a Proxy, or a revoked Proxy. */
function optionsObject(entries, style) {
  if (style === "undefined") return entries.length === 0 ? undefined : Object.fromEntries(entries);
  const o = {};
  for (const [k, v] of entries) {
    if (v === "throwing") {
      Object.defineProperty(o, k, { enumerable: true, get() { throw new RangeError(`${k} throws`); } });
    } else {
      o[k] = realize(v);
    }
  }
  if (style === "proxy") return new Proxy(o, {});
  if (style === "revoked") return realize("revoked");
  return o;
}

function expectEwiseError(f, label) {
  let caught;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught !== undefined, `${label}: expected an EwiseError, but the call succeeded`);
  assert.ok(caught instanceof EwiseError, `${label}: threw ${caught?.name}: ${caught?.message}, not an EwiseError`);
  return caught;
}

/** Runs `property` with the fixed seed (and `RUNS` runs), then with a random seed or
 * EWISE_FUZZ_SEED, printing it. */
function both(name, property, runs = RUNS) {
  test(`${name} (fixed seed ${FIXED_SEED})`, { skip }, () => {
    fc.assert(property(), { seed: FIXED_SEED, numRuns: runs, includeErrorInReport: true });
  });
  test(`${name} (random seed)`, { skip }, (t) => {
    const seed = process.env.EWISE_FUZZ_SEED ? Number(process.env.EWISE_FUZZ_SEED) : (Math.random() * 2 ** 31) | 0;
    t.diagnostic(`seed ${seed}: replay with EWISE_FUZZ_SEED=${seed}`);
    console.error(`fuzz.test.mjs: ${name}: seed ${seed}`);
    fc.assert(property(), { seed, numRuns: runs, includeErrorInReport: true });
  });
}

// ----------------------------------------------------------- sign and isInfinity

const DTYPE_NAMES = Object.keys(TYPES);
const NAN = ["zero", "propagate"];
const MODES = ["either", "positive", "negative", "neither"];

/** The typed array holding `type`'s elements (float16 and bfloat16: Uint16Array). */
function arrayOf(type) {
  return TYPES[type].array;
}

/** The natural dtype of typed array constructor `A`. */
function naturalOf(A) {
  return DTYPE_NAMES.find((d) => TYPES[d].array === A && !["float16", "bfloat16"].includes(d));
}

const arrayCase = () => fc.record({
  op: fc.constantFrom("sign", "isInfinity"),
  type: fc.constantFrom(...DTYPE_NAMES),
  memory: fc.constantFrom("plain", "shared", "resizable"),
  tracking: fc.boolean(),
  n: fc.oneof({ weight: 39, arbitrary: fc.integer({ min: 0, max: 40 }) }, fc.integer({ min: 131_000, max: 300_000 })),
  xAt: fc.nat(12),
  out: fc.constantFrom("none", "null", "x", "same-memory", "clone", "other", "wrong-type", "wrong-length", "hostile"),
  shift: fc.oneof({ weight: 3, arbitrary: fc.integer({ min: -45, max: 45 }) }, fc.integer({ min: -300_000, max: 300_000 })),
  fill: fc.integer(),
  policy: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(undefined, ...NAN, ...MODES) }, hostile()),
  dtype: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(undefined, "natural", "natural") }, fc.constantFrom(...DTYPE_NAMES), hostile()),
  hostileOut: hostile(),
  extra: fc.option(fc.constantFrom("mode", "nan", "nna", "x".repeat(70)), { nil: undefined }),
  style: fc.constantFrom("plain", "plain", "plain", "undefined", "proxy", "revoked"),
  xStyle: fc.constantFrom("array", "array", "array", "array", "array", "revoked", "hostile"),
});

function checkArrayCase(c) {
  const A = arrayOf(c.type);
  const size = TYPES[c.type].bits / 8;
  const room = Math.min(Math.abs(c.shift), c.n + 50);
  const bytes = (c.xAt + c.n + 50 + room) * size + 64;
  const memory = newMemory(c.memory, bytes);
  fillRandom(new Uint8Array(memory), c.fill);
  const xOffset = (c.xAt + (c.shift < 0 ? room : 0)) * size;
  sprinkle(c.type, memory, xOffset, c.n, c.fill);
  const tracking = c.tracking && c.memory === "resizable";
  let x = tracking ? new A(memory, xOffset) : new A(memory, xOffset, c.n);
  const n = x.length;
  let valid = true;
  if (c.xStyle === "revoked") {
    x = realize("revoked");
    valid = false;
  } else if (c.xStyle === "hostile") {
    x = realize(c.hostileOut);
    valid = false;
  }

  // The dtype the call sees, and whether it is one that the operation takes.
  const natural = naturalOf(A);
  const dtypeOption = c.dtype === "natural" ? (A === Uint16Array ? c.type : natural) : c.dtype;
  let dtype;
  // null is the same as no dtype (docs/SEMANTICS.md section 8.3).
  if (dtypeOption === undefined || dtypeOption === null || dtypeOption === natural) dtype = natural;
  else if (A === Uint16Array && (dtypeOption === "float16" || dtypeOption === "bfloat16")) dtype = dtypeOption;
  else valid = false;
  if (c.op === "isInfinity" && dtype !== undefined && TYPES[dtype].kind !== "float") valid = false;

  const policyKey = c.op === "sign" ? "nan" : "mode";
  const policies = c.op === "sign" ? NAN : MODES;
  if (c.policy !== undefined && !policies.includes(c.policy)) valid = false;
  const policy = c.policy ?? policies[0];

  const OutArray = c.op === "sign" ? A : Uint8Array;
  const outSize = OutArray.BYTES_PER_ELEMENT;
  let out;
  let outMemory = memory;
  switch (c.out) {
    case "none":
      break;
    case "null":
      out = null;
      break;
    case "x":
      out = x;
      if (c.op === "isInfinity") valid = false;
      break;
    case "same-memory":
    case "clone": {
      const target = c.out === "clone" ? structuredClone(memory) : memory;
      const at = Math.max(0, Math.min(xOffset + c.shift * size, bytes - n * outSize));
      out = new OutArray(target, at - (at % outSize), n);
      outMemory = target;
      break;
    }
    case "other":
      outMemory = newMemory(c.memory, n * outSize + 16);
      fillRandom(new Uint8Array(outMemory), c.fill + 1);
      out = new OutArray(outMemory, 8, n);
      break;
    case "wrong-type": {
      const W = OutArray === Float64Array ? Int8Array : Float64Array;
      out = new W(n);
      valid = false;
      break;
    }
    case "wrong-length":
      out = new OutArray(n + 1);
      valid = false;
      break;
    case "hostile":
      out = c.hostileOut;
      if (out !== null) valid = false;
      break;
  }
  if (out === "throwing" || out === "revoked") valid = false;

  const entries = [];
  if (c.policy !== undefined) entries.push([policyKey, c.policy]);
  if (c.out !== "none") entries.push(["out", out]);
  if (dtypeOption !== undefined) entries.push(["dtype", dtypeOption]);
  if (c.extra !== undefined && c.extra !== policyKey) {
    entries.push([c.extra, "zero"]);
    valid = false;
  }
  if (c.style === "revoked") valid = false;
  for (const [, v] of entries) if (v === "throwing" || v === "revoked") valid = false;
  const options = optionsObject(entries, c.style);

  const separate = outMemory !== memory && !(memory instanceof SharedArrayBuffer && c.out === "clone");
  const before = snapshot(memory);
  const outBefore = separate ? snapshot(outMemory) : undefined;
  const label = `${c.op}(${c.type} x${tracking ? " (length-tracking)" : ""} of ${n} at byte ${xOffset} of a ${c.memory} buffer, out ${c.out}${ArrayBuffer.isView(out) ? ` at byte ${out.byteOffset}` : ""}, ${JSON.stringify(entries.map(([k, v]) => [k, typeof v === "object" || typeof v === "bigint" || typeof v === "symbol" || typeof v === "function" ? String(typeof v) : v]))}, style ${c.style})`;
  const f = () => ewise[c.op](x, options);
  if (!valid) {
    expectEwiseError(f, label);
    unchangedExcept(memory, before, [], label);
    if (separate) unchangedExcept(outMemory, outBefore, [], label);
    return;
  }
  let result;
  try {
    result = f();
  } catch (e) {
    assert.fail(`${label}: threw ${e?.name}: ${e?.message}`);
  }
  if (out !== undefined && out !== null) assert.equal(result, out, `${label}: the result is not options.out`);
  assert.ok(result instanceof OutArray && result.length === n, `${label}: the result is no ${OutArray.name} of ${n}`);
  const bits = TYPES[dtype].bits;
  const input = patterns(before, xOffset, n, bits);
  const want = input.map((p) => (c.op === "sign" ? signOf(dtype, p, policy) : BigInt(isInfinityOf(dtype, p, policy))));
  const got = patterns(new Uint8Array(result.buffer), result.byteOffset, n, c.op === "sign" ? bits : 8);
  const bad = got.findIndex((v, i) => v !== want[i]);
  assert.equal(bad, -1, `${label}: element ${bad} is 0x${got[bad]?.toString(16)}, not 0x${want[bad]?.toString(16)} (input 0x${input[bad]?.toString(16)})`);
  const written = out === undefined || out === null ? [] : [[result.byteOffset, result.byteOffset + n * outSize]];
  if (separate) {
    unchangedExcept(memory, before, [], label);
    unchangedExcept(outMemory, outBefore, written, label);
  } else {
    unchangedExcept(memory, before, written, label);
  }
}

both("sign and isInfinity: the reference's bits in the output and nothing else changed, or an EwiseError", () => fc.property(arrayCase(), checkArrayCase));

// ------------------------------------------------------------------- WasmArray

// Sequences of allocations, frees, views taken, memory growth and calls on a pool of
// WasmArrays, their views (current, stale after growth, of freed arrays, subarrays) and
// JavaScript arrays. A model holds every live array's bytes: each call gives the
// reference's bits in its output, or throws an EwiseError as the model predicts, and
// after every step every live array holds what the model says (nothing else written,
// nothing lost to growth).

/** The module's exports (its memory), from the glue ewise.js loaded. */
const glueDir = process.env.EWISE_WEB_PKG;
const glue = await import((glueDir ? pathToFileURL(`${glueDir.replace(/\/$/, "")}/ewise_web.js`) : new URL("../pkg/ewise_web.js", import.meta.url)).href);
const wasmExports = await glue.default();

const POOL_TYPES = ["float32", "float16", "bfloat16", "float64", "int8", "uint8", "int64", "uint32"];

const poolCase = () => fc.array(fc.record({
  act: fc.constantFrom("alloc", "alloc", "alloc", "op", "op", "op", "op", "op", "free", "view", "view", "grow"),
  type: fc.constantFrom(...POOL_TYPES),
  n: fc.oneof({ weight: 24, arbitrary: fc.integer({ min: 0, max: 40 }) }, fc.integer({ min: 100_000, max: 300_000 })),
  op: fc.constantFrom("sign", "isInfinity"),
  xKind: fc.constantFrom("array", "array", "view", "view", "js"),
  out: fc.constantFrom("none", "array", "array", "same", "view", "js", "js-wrong"),
  sub: fc.boolean(),
  pick: fc.nat(),
  pick2: fc.nat(),
  seed: fc.integer(),
  policy: fc.constantFrom(undefined, ...NAN, ...MODES),
}), { minLength: 4, maxLength: 24, size: "max" });

/** The bytes of typed array `a` (a copy). */
function bytesOf(a) {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength).slice();
}

/** `n` random patterns of `type`, with specials, as `type`'s array. */
function randomArray(type, n, seed) {
  const A = arrayOf(type);
  const memory = new ArrayBuffer(n * A.BYTES_PER_ELEMENT);
  fillRandom(new Uint8Array(memory), seed);
  sprinkle(type, memory, 0, n, seed);
  return new A(memory);
}

/** The result bytes of `op` over `type`'s elements in `input` (bytes) under `policy`. */
function expected(op, type, input, n, policy) {
  const bits = TYPES[type].bits;
  const ps = patterns(input, 0, n, bits);
  if (op === "isInfinity") return Uint8Array.from(ps, (p) => isInfinityOf(type, p, policy));
  const P = patternArray(bits);
  const out = new P(n);
  ps.forEach((p, i) => {
    const v = signOf(type, p, policy);
    out[i] = bits === 64 ? v : Number(v);
  });
  return new Uint8Array(out.buffer);
}

/** How the pool property's calls went: run, refused, and refused as stale or freed. */
const poolStats = { ran: 0, refused: 0, stale: 0, freed: 0 };

function checkPool(steps) {
  const arrays = [];
  const views = [];
  const pick = (list, k) => (list.length === 0 ? undefined : list[k % list.length]);
  try {
    for (const [index, s] of steps.entries()) {
      const label = `step ${index} (${JSON.stringify(s)})`;
      switch (s.act) {
        case "alloc": {
          const wa = ewise.alloc(s.type, s.n);
          const init = randomArray(s.type, s.n, s.seed);
          new Uint8Array(wa.array.buffer, wa.array.byteOffset, wa.byteLength).set(new Uint8Array(init.buffer));
          arrays.push({ wa, type: s.type, n: s.n, model: bytesOf(init), live: true });
          break;
        }
        case "free": {
          const a = pick(arrays, s.pick);
          if (a) {
            a.wa.free();
            a.live = false;
          }
          break;
        }
        case "grow":
          wasmExports.memory.grow(1);
          break;
        case "view": {
          const a = pick(arrays, s.pick);
          if (a?.live) views.push({ owner: a, view: s.sub && a.n > 1 ? a.wa.array.subarray(1) : a.wa.array, sub: s.sub && a.n > 1 });
          break;
        }
        case "op": {
          const policies = s.op === "sign" ? NAN : MODES;
          const policy = policies.includes(s.policy) ? s.policy : undefined;
          // x: an operand with the array it is in (null for JavaScript memory).
          let x;
          if (s.xKind === "array") {
            const a = pick(arrays, s.pick);
            x = a && { value: a.wa, owner: a, sub: false };
          } else if (s.xKind === "view") {
            const v = pick(views, s.pick);
            x = v && { value: v.view, owner: v.owner, sub: v.sub, view: v };
          }
          if (x === undefined) {
            const type = ["float16", "bfloat16"].includes(s.type) ? "float32" : s.type;
            const value = randomArray(type, s.n, s.seed);
            x = { value, owner: null, type, n: s.n, bytes: bytesOf(value) };
          }
          const xType = x.owner?.type ?? x.type;
          const xn = x.owner ? x.owner.n - (x.sub ? 1 : 0) : x.n;
          const OutA = s.op === "sign" ? arrayOf(xType) : Uint8Array;
          let valid = true;
          const usable = (o) => o.owner === null || (o.owner.live && !o.sub && !(o.view && o.view.view.buffer.byteLength === 0));
          if (!usable(x)) valid = false;
          if (s.op === "isInfinity" && TYPES[xType].kind !== "float") valid = false;
          let out;
          if (s.out === "array") {
            const a = pick(arrays, s.pick2);
            out = a && { value: a.wa, owner: a, sub: false };
          } else if (s.out === "same") {
            out = { ...x };
          } else if (s.out === "view") {
            const v = pick(views, s.pick2);
            out = v && { value: v.view, owner: v.owner, sub: v.sub, view: v };
          } else if (s.out === "js" || s.out === "js-wrong") {
            const n = s.out === "js" ? xn : xn + 1;
            out = { value: new OutA(n), owner: null, n };
          }
          if (out !== undefined) {
            if (!usable(out)) valid = false;
            const outType = out.owner?.type ?? (OutA === Uint8Array && s.op === "isInfinity" ? "uint8" : xType);
            const outN = out.owner ? out.owner.n - (out.sub ? 1 : 0) : out.n;
            if (arrayOf(outType) !== OutA) valid = false;
            if (outN !== xn) valid = false;
            if (x.owner === null && out.owner === null) valid = false;
          }
          const options = {};
          if (policy !== undefined) options[s.op === "sign" ? "nan" : "mode"] = policy;
          if (out !== undefined) options.out = out.value;
          // The input's bytes now, from the model (arrays) or the array itself (JavaScript).
          const input = x.owner ? (x.owner.live ? x.owner.model.subarray(x.sub ? TYPES[xType].bits / 8 : 0) : null) : x.bytes;
          const f = () => ewise[s.op](x.value, options);
          if (out !== undefined && x.owner === null && out.owner === null) {
            // Two JavaScript arrays: the copying path, not this property's subject.
            break;
          }
          if (!valid) {
            const e = expectEwiseError(f, label);
            poolStats.refused++;
            if (/stale view/.test(e.message)) poolStats.stale++;
            if (/freed/.test(e.message)) poolStats.freed++;
            break;
          }
          poolStats.ran++;
          let result;
          try {
            result = f();
          } catch (e) {
            assert.fail(`${label}: threw ${e?.name}: ${e?.message}`);
          }
          const want = expected(s.op, xType, input, xn, policy ?? policies[0]);
          if (out === undefined) {
            assert.ok(x.owner === null ? ArrayBuffer.isView(result) : result instanceof ewise.WasmArray, `${label}: the result's kind`);
            const got = x.owner === null ? bytesOf(result) : bytesOf(result.array);
            assert.deepEqual(got, want, `${label}: the new result's bits`);
            if (x.owner !== null) arrays.push({ wa: result, type: s.op === "sign" ? xType : "uint8", n: xn, model: got, live: true });
          } else {
            assert.equal(result, out.value, `${label}: the result is options.out`);
            if (out.owner === null) assert.deepEqual(bytesOf(result), want, `${label}: the output's bits`);
            else out.owner.model.set(want, out.sub ? TYPES[out.owner.type].bits / 8 : 0);
          }
          break;
        }
      }
      for (const a of arrays) {
        if (!a.live) continue;
        const now = bytesOf(a.wa.array);
        const bad = now.findIndex((b, i) => b !== a.model[i]);
        assert.equal(bad, -1, `${label}: byte ${bad} of a live ${a.type} WasmArray of ${a.n} is ${now[bad]}, not ${a.model[bad]}`);
      }
    }
  } finally {
    for (const a of arrays) if (a.live) a.wa.free();
  }
}

both("WasmArrays: alloc, free, growth, views and calls against a model of every live array", () => fc.property(poolCase(), checkPool), Math.max(1, Math.floor(RUNS / 5)));

test("the WasmArray property runs calls, and refuses stale views and freed arrays, in a fair share of its steps", { skip }, () => {
  const { ran, refused, stale, freed } = poolStats;
  console.error(`fuzz.test.mjs: WasmArray calls: ${ran} ran, ${refused} refused (${stale} stale views, ${freed} freed)`);
  assert.ok(ran >= refused / 4 && stale > 0 && freed > 0, JSON.stringify(poolStats));
});

// ------------------------------------------------------------ DirectML-style API

const DML_TYPES = {
  FLOAT32: "float32", FLOAT16: "float16", BFLOAT16: "bfloat16", FLOAT64: "float64", INT8: "int8", UINT8: "uint8",
  INT16: "int16", UINT16: "uint16", INT32: "int32", UINT32: "uint32", INT64: "int64", UINT64: "uint64",
};

const dmlCase = () => fc.record({
  level: fc.oneof({ weight: 12, arbitrary: fc.constantFrom(undefined, "6_4", "6_4", "6_4", "6_2", "5_0", "4_1", "3_0", "2_1") }, hostile()),
  extensions: fc.constantFrom(true, true, true, false),
  nanPolicy: fc.constantFrom(undefined, "zero", "propagate"),
  withNan: fc.constantFrom(undefined, "zero", "propagate"),
  op: fc.constantFrom("sign", "isInfinity"),
  mode: fc.constantFrom(undefined, "EITHER", "POSITIVE", "NEGATIVE", "NEITHER"),
  inType: fc.oneof({ weight: 20, arbitrary: fc.constantFrom(...Object.keys(DML_TYPES)) }, fc.constantFrom("BOOL", "UINT4")),
  floatType: fc.constantFrom("FLOAT32", "FLOAT16", "FLOAT64", "BFLOAT16"),
  anyType: fc.constantFrom(false, false, true),
  outType: fc.constantFrom("same", "same", "same", "same", "same", "same", "UINT8", "FLOAT32", "INT8"),
  dims: fc.array(fc.record({ size: fc.oneof({ weight: 12, arbitrary: fc.integer({ min: 1, max: 4 }) }, fc.constant(0)), inStride: fc.integer({ min: 0, max: 6 }), outStride: fc.integer({ min: 0, max: 6 }), pad: fc.nat(2) }), { minLength: 1, maxLength: 5 }),
  outStrides: fc.constantFrom("dense", "gaps", "gaps", "random"),
  inStrided: fc.boolean(),
  memory: fc.constantFrom("plain", "shared", "resizable"),
  layout: fc.constantFrom("two", "one-disjoint", "one-identical", "one-overlapping", "clone"),
  inView: fc.constantFrom("buffer", "uint8", "dataview", "float64"),
  outView: fc.constantFrom("buffer", "uint8", "dataview", "float64"),
  viewAt: fc.nat(3),
  gap: fc.integer({ min: -16, max: 24 }),
  binding: fc.constantFrom("exact", "exact", "exact", "random", "hostile"),
  randomOffset: fc.nat(40),
  randomSize: fc.nat(200),
  hostileValue: hostile(),
  hole: fc.constantFrom(false, false, false, false, false, false, false, false, false, true),
  fill: fc.integer(),
});

/** Row-major strides with `pad` elements after each row of every dimension. */
function gapped(dims) {
  const strides = new Array(dims.length).fill(1);
  for (let i = dims.length - 2; i >= 0; i--) strides[i] = strides[i + 1] * dims[i + 1].size + dims[i + 1].pad;
  return strides;
}

function denseStrides(sizes) {
  const strides = new Array(sizes.length).fill(1);
  for (let i = sizes.length - 2; i >= 0; i--) strides[i] = strides[i + 1] * sizes[i + 1];
  return strides;
}

/** A view `kind` of `memory` starting at byte `at` (a multiple of 8). */
function viewOf(kind, memory, at) {
  const rest = memory.byteLength - at;
  switch (kind) {
    case "buffer": return memory;
    case "uint8": return new Uint8Array(memory, at, rest);
    case "dataview": return new DataView(memory, at, rest);
    default: return new Float64Array(memory, at, Math.floor(rest / 8));
  }
}

/** Runs `f`: its value, or undefined after checking that it threw an EwiseError. */
function stepOrError(f, label, errors) {
  try {
    return { value: f() };
  } catch (e) {
    assert.ok(e instanceof EwiseError, `${label}: threw ${e?.name}: ${e?.message}, not an EwiseError`);
    errors.push(e);
    return undefined;
  }
}

/** How many DirectML-style cases ran and how many executed, for the test's diagnostic. */
const stats = { cases: 0, executed: 0 };

function checkDmlCase(c) {
  stats.cases++;
  const errors = [];
  const label = `DML ${JSON.stringify(c, (k, v) => (typeof v === "bigint" || typeof v === "symbol" || typeof v === "function" ? String(typeof v) : v))}`;
  const device = stepOrError(() => new ewise.Device(optionsObject([
    ...(c.level === undefined ? [] : [["featureLevel", c.level]]),
    ["extensions", c.extensions],
    ...(c.nanPolicy === undefined ? [] : [["nanPolicy", c.nanPolicy]]),
  ], "plain")), label, errors)?.value;
  if (device === undefined) return;
  const sizes = c.dims.map((d) => d.size);
  const inStrides = c.inStrided ? c.dims.map((d) => d.inStride) : undefined;
  const outStrides = c.outStrides === "dense" ? undefined : c.outStrides === "random" ? c.dims.map((d) => d.outStride) : gapped(c.dims);
  const inTypeName = c.op === "isInfinity" && !c.anyType ? c.floatType : c.inType;
  const outType = c.outType === "same" ? (c.op === "sign" ? inTypeName : "UINT8") : c.outType;
  const inDesc = stepOrError(() => ewise.tensorDesc(inTypeName, sizes, inStrides), label, errors)?.value;
  const outDesc = stepOrError(() => ewise.tensorDesc(outType, sizes, outStrides), label, errors)?.value;
  if (inDesc === undefined || outDesc === undefined) return;
  const desc = c.op === "sign" ? ewise.OperatorDesc.sign(inDesc, outDesc) : ewise.OperatorDesc.isInfinity(inDesc, outDesc, c.mode);
  let operator = stepOrError(() => device.createOperator(desc), label, errors)?.value;
  if (operator === undefined) return;
  if (c.withNan !== undefined) {
    operator = stepOrError(() => operator.withNanPolicy(c.withNan), label, errors)?.value;
    if (operator === undefined) return;
  }
  const nan = operator.nanPolicy;
  const compiled = stepOrError(() => operator.compile(), label, errors)?.value;
  if (compiled === undefined) return;

  const inTotal = inDesc.totalTensorSizeInBytes;
  const outTotal = outDesc.totalTensorSizeInBytes;
  const viewAt = c.viewAt * 8;
  const span = viewAt + inTotal + outTotal + 64;
  const memory = newMemory(c.memory, span + 64);
  fillRandom(new Uint8Array(memory), c.fill);
  const inType = DML_TYPES[inTypeName];
  if (inType) sprinkle(inType, memory, 0, Math.floor(memory.byteLength / (TYPES[inType].bits / 8)), c.fill);
  let outMemory = memory;
  let inOffset = 0;
  let outOffset;
  switch (c.layout) {
    case "two":
    case "clone":
      outMemory = c.layout === "clone" ? structuredClone(memory) : newMemory(c.memory, outTotal + viewAt + 64);
      if (c.layout === "two") fillRandom(new Uint8Array(outMemory), c.fill + 1);
      outOffset = 0;
      break;
    case "one-identical":
      outOffset = 0;
      break;
    case "one-overlapping":
      outOffset = Math.max(0, c.gap & ~3);
      break;
    default:
      outOffset = inTotal + Math.max(0, c.gap & ~3);
  }
  const inBuffer = viewOf(c.inView, memory, viewAt);
  const outBuffer = viewOf(c.outView, outMemory, viewAt);
  const base = (v) => (v instanceof ArrayBuffer || v instanceof SharedArrayBuffer ? 0 : v.byteOffset);
  const buffers = [inBuffer, outBuffer];
  let inBinding = { buffer: 0, offset: inOffset, sizeInBytes: inTotal };
  let outBinding = { buffer: 1, offset: outOffset, sizeInBytes: outTotal };
  if (c.binding === "random") {
    inBinding = { buffer: 0, offset: c.randomOffset, sizeInBytes: c.randomSize };
  } else if (c.binding === "hostile") {
    outBinding = { ...outBinding, offset: realize(c.hostileValue) };
  }
  if (c.hole) {
    buffers.splice(1, 0, undefined);
    delete buffers[1];
    outBinding.buffer = 2;
  }
  const memories = outMemory === memory || (memory instanceof SharedArrayBuffer && c.layout === "clone") ? [memory] : [memory, outMemory];
  const before = memories.map(snapshot);
  const done = stepOrError(() => compiled.execute(buffers, [inBinding], [outBinding]), label, errors);
  if (done === undefined) {
    memories.forEach((m, i) => unchangedExcept(m, before[i], [], `${label}: ${errors.at(-1).message}`));
    return;
  }
  assert.ok(!c.hole, `${label}: a hole in buffers was accepted`);
  stats.executed++;
  const outType2 = DML_TYPES[outType] ?? (outType === "UINT8" ? "uint8" : undefined);
  if (inType === undefined || outType2 === undefined) return;
  const inSize = TYPES[inType].bits / 8;
  const outSize = TYPES[outType2].bits / 8;
  const inS = inStrides ?? denseStrides(sizes);
  const outS = outStrides ?? denseStrides(sizes);
  const inAbs = base(inBuffer) + Number(inBinding.offset);
  const outAbs = base(outBuffer) + Number(outBinding.offset);
  const outIndex = memories.length === 1 ? 0 : 1;
  const allowed = new Map();
  const count = sizes.reduce((a, b) => a * b, 1);
  for (let flat = 0; flat < count; flat++) {
    let rest = flat;
    let inPos = inAbs;
    let outPos = outAbs;
    for (let d = sizes.length - 1; d >= 0; d--) {
      const i = rest % sizes[d];
      rest = Math.floor(rest / sizes[d]);
      inPos += i * inS[d] * inSize;
      outPos += i * outS[d] * outSize;
    }
    const p = patterns(before[0], inPos, 1, TYPES[inType].bits)[0];
    const want = c.op === "sign" ? signOf(inType, p, nan) : BigInt(isInfinityOf(inType, p, (c.mode ?? "EITHER").toLowerCase()));
    if (!allowed.has(outPos)) allowed.set(outPos, new Set());
    allowed.get(outPos).add(want);
  }
  const now = new Uint8Array(memories[outIndex]);
  for (const [pos, wants] of allowed) {
    const got = patterns(now, pos, 1, TYPES[outType2].bits)[0];
    assert.ok(wants.has(got), `${label}: the output element at byte ${pos} is 0x${got.toString(16)}, not ${[...wants].map((w) => `0x${w.toString(16)}`).join(" or ")}`);
  }
  const written = [...allowed.keys()].map((p) => [p, p + outSize]);
  memories.forEach((m, i) => unchangedExcept(m, before[i], i === outIndex ? written : [], label));
}

both("DirectML-style descriptions and bindings: the reference's bits in the output elements and nothing else changed, or an EwiseError", () => fc.property(dmlCase(), checkDmlCase));

test("the DirectML-style property executes in at least a tenth of its cases", { skip }, () => {
  assert.ok(stats.executed * 10 >= stats.cases, `${stats.executed} of ${stats.cases} cases executed`);
  console.error(`fuzz.test.mjs: DirectML-style cases: ${stats.executed} of ${stats.cases} executed`);
});
