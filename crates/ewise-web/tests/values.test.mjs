// Every type, NaN policy and mode against the reference (reference.mjs): every pattern
// of the 8- and 16-bit types, and specials plus random patterns of the 32- and 64-bit
// types (more than one 1 MiB chunk of the module's copies), compared by bits.

import { test } from "node:test";
import assert from "node:assert/strict";

import {
  TYPES, allPatterns, firstMismatch, isInfinityOf, loadPackage, patternsOf, signOf,
  valuesOf, widePatterns,
} from "./reference.mjs";

const ewise = await loadPackage();
await ewise.init();

const NAN = ["zero", "propagate"];
const MODES = ["either", "positive", "negative", "neither"];
const WIDE = 300_000;

/** The input of `type` as its own array and options (float16/bfloat16 as bit patterns). */
function inputOf(type) {
  const t = TYPES[type];
  const patterns = t.bits <= 16 ? allPatterns(t.bits) : widePatterns(type, WIDE);
  const dtype = type === "float16" || type === "bfloat16" ? { dtype: type } : {};
  return { patterns, x: valuesOf(type, patterns), dtype };
}

for (const type of Object.keys(TYPES)) {
  const t = TYPES[type];
  const { patterns, x, dtype } = inputOf(type);
  const what = t.bits <= 16 ? `all ${patterns.length} patterns` : `${patterns.length} special and random patterns`;

  for (const nan of NAN) {
    test(`sign ${type}, nan ${nan}: ${what}`, () => {
      const before = patterns.slice();
      const out = ewise.sign(x, { nan, ...dtype });
      assert.equal(Object.getPrototypeOf(out), Object.getPrototypeOf(x), "the result has x's type");
      assert.equal(out.length, x.length);
      assert.notEqual(out.buffer, x.buffer);
      assert.equal(firstMismatch(patterns, patternsOf(out), (p) => signOf(type, p, nan)), null);
      assert.deepEqual(patterns, before, "x is not written");
    });
  }

  if (t.kind === "float") {
    for (const mode of MODES) {
      test(`isInfinity ${type}, mode ${mode}: ${what}`, () => {
        const out = ewise.isInfinity(x, { mode, ...dtype });
        assert.ok(out instanceof Uint8Array);
        assert.equal(out.length, x.length);
        assert.equal(firstMismatch(patterns, out, (p) => BigInt(isInfinityOf(type, p, mode))), null);
      });
    }
  }
}

test("defaults are nan zero and mode either", () => {
  const x = new Float32Array([NaN, -Infinity, Infinity, -0]);
  assert.deepEqual(Array.from(patternsOf(ewise.sign(x))), [0, 0xbf800000, 0x3f800000, 0]);
  assert.deepEqual(Array.from(ewise.isInfinity(x)), [0, 1, 1, 0]);
});

test("the pinned cases of section 1.1", () => {
  const f32 = (bits) => new Float32Array(new Uint32Array(bits).buffer);
  assert.deepEqual(Array.from(patternsOf(ewise.sign(f32([0x80000000, 0x00000001, 0x80000001, 0x7f7fffff])))),
    [0, 0x3f800000, 0xbf800000, 0x3f800000]);
  assert.deepEqual(Array.from(ewise.sign(new Uint16Array([0xfc00]), { dtype: "float16" })), [0xbc00]);
  assert.deepEqual(Array.from(ewise.sign(new Int8Array([-128]))), [-1]);
  assert.deepEqual(Array.from(ewise.sign(new Uint8Array([0xff]))), [1]);
  assert.deepEqual(Array.from(ewise.sign(new BigUint64Array([0xffffffffffffffffn]))), [1n]);
  assert.deepEqual(Array.from(ewise.sign(new BigInt64Array([-(1n << 63n)]))), [-1n]);
});

test("a quiet, a signalling and a negative NaN propagate bit for bit (float64)", () => {
  const bits = new BigUint64Array([0x7ff8000000000001n, 0x7ff0000000000001n, 0xfff4000000abcdefn]);
  const x = new Float64Array(bits.buffer);
  assert.deepEqual(patternsOf(ewise.sign(x, { nan: "propagate" })), bits);
  assert.deepEqual(patternsOf(ewise.sign(x)), new BigUint64Array(3));
});

test("empty arrays of every type", () => {
  for (const type of Object.keys(TYPES)) {
    const dtype = type === "float16" || type === "bfloat16" ? { dtype: type } : {};
    const x = new TYPES[type].array(0);
    assert.equal(ewise.sign(x, dtype).length, 0);
    if (TYPES[type].kind === "float") assert.equal(ewise.isInfinity(x, dtype).length, 0);
  }
});

test("Float16Array, where the runtime has one", { skip: typeof Float16Array !== "function" && "no Float16Array in this runtime" }, () => {
  const x = new Float16Array([-2, -0, Infinity, NaN, 3]);
  assert.deepEqual(Array.from(new Uint16Array(ewise.sign(x).buffer)), [0xbc00, 0, 0x3c00, 0, 0x3c00]);
  assert.deepEqual(Array.from(ewise.isInfinity(x, { mode: "positive" })), [0, 0, 1, 0, 0]);
});
