// docs/SEMANTICS.md section 8: the defaults of the array functions `sign` and
// `isInfinity`, read from the defaults table (the column "JavaScript `sign`,
// `isInfinity`") and checked row by row against the package called without options; a
// row or cell this test does not know fails it. The row "software renderer chosen
// unasked" needs WebGPU, which Node lacks: tests/browser/defaults.test.mjs checks it in
// Chromium (SwiftShader), this file that Node gives no GPU, silently or not. Also the
// rule of section 8.3 for `null`: it means "not given" for `out` and `dtype` only, and
// is refused, naming the option and what it accepts, everywhere else.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { COLUMN, defaultsColumn } from "./defaults-table.mjs";
import { loadPackage } from "./reference.mjs";

const ewise = await loadPackage();
await ewise.init();
const { sign, isInfinity, requestGpu, Device, OperatorDesc, tensorDesc } = ewise;
const { ArgumentError, ValidationError, WebGpuUnavailableError } = ewise;

const semantics = readFileSync(new URL("../../../docs/SEMANTICS.md", import.meta.url), "utf8");
const column = defaultsColumn(semantics, COLUMN);

/** The bits of `a`'s elements, as unsigned BigInts. */
function bits(a) {
  const bytes = a.BYTES_PER_ELEMENT;
  const view = new DataView(a.buffer, a.byteOffset, a.byteLength);
  return Array.from({ length: a.length }, (_, i) => {
    if (bytes === 2) return BigInt(view.getUint16(i * 2, true));
    if (bytes === 4) return BigInt(view.getUint32(i * 4, true));
    return view.getBigUint64(i * 8, true);
  });
}

/** Whether `f()` is refused with a ValidationError (true) or returns (false); anything
 * else fails the test. */
function refused(f) {
  try {
    f();
    return false;
  } catch (e) {
    assert.ok(e instanceof ValidationError, `a ValidationError, not ${e?.name}: ${e?.message}`);
    return true;
  }
}

/** The outcome `cell` names for an input or mode: accepted or refused. */
function acceptance(cell) {
  assert.ok(["accepted", "refused"].includes(cell), `a cell this test knows ("accepted", "refused"); got ${JSON.stringify(cell)}`);
  return cell === "accepted";
}

const FLOAT64 = new Float64Array([-2.5, -0, 3, -Infinity, Infinity]);
const INT64 = new BigInt64Array([-(2n ** 63n), -5n, 0n, 7n, 2n ** 63n - 1n]);
// bfloat16 -1.5, -0, +inf, -inf, 2
const BFLOAT16 = new Uint16Array([0xbfc0, 0x8000, 0x7f80, 0xff80, 0x4000]);
const INFINITIES = new Float32Array([Infinity, -Infinity, 1, NaN, -0]);
const MODE_RESULTS = {
  either: [1, 1, 0, 0, 0],
  positive: [1, 0, 0, 0, 0],
  negative: [0, 1, 0, 0, 0],
  neither: [0, 0, 0, 0, 0],
};

/** The float64, bfloat16 and `neither` cases the extended rules accept and DirectML's
 * strict rules refuse: whether the array functions accept them, checking the values
 * where they do. */
const extendedOnly = {
  float64() {
    const r = refused(() => {
      assert.deepEqual(bits(sign(FLOAT64)), bits(new Float64Array([-1, 0, 1, -1, 1])));
      assert.deepEqual([...isInfinity(FLOAT64)], [0, 0, 0, 1, 1]);
    });
    return !r;
  },
  bfloat16() {
    const r = refused(() => {
      assert.deepEqual([...sign(BFLOAT16, { dtype: "bfloat16" })], [0xbf80, 0x0000, 0x3f80, 0xbf80, 0x3f80]);
      assert.deepEqual([...isInfinity(BFLOAT16, { dtype: "bfloat16" })], [0, 0, 1, 1, 0]);
    });
    return !r;
  },
  neither() {
    return !refused(() => assert.deepEqual([...isInfinity(INFINITIES, { mode: "neither" })], MODE_RESULTS.neither));
  },
};

/** Each row's check of its cell: throws (fails) unless the package does what it says. */
const ROWS = {
  rules(cell) {
    assert.ok(["extended", "strict"].includes(cell), `"extended" or "strict"; got ${JSON.stringify(cell)}`);
    const accepted = Object.values(extendedOnly).map((f) => f());
    assert.deepEqual(accepted, accepted.map(() => cell === "extended"), "float64, bfloat16 and mode neither");
  },
  "rules with a feature level"(cell) {
    assert.ok(["extended", "strict"].includes(cell), `"extended" or "strict"; got ${JSON.stringify(cell)}`);
    const device = new Device({ featureLevel: "6_4" });
    assert.equal(device.featureLevel, "6_4");
    for (const type of ["FLOAT64", "BFLOAT16"]) {
      const t = tensorDesc(type, [2, 3]);
      const r = refused(() => device.createOperator(OperatorDesc.sign(t, t)));
      assert.equal(r, cell === "strict", `a ${type} SIGN at feature level 6_4`);
    }
  },
  "float64 input"(cell) {
    assert.equal(extendedOnly.float64(), acceptance(cell));
  },
  "int64 input"(cell) {
    const accepted = !refused(() => assert.deepEqual([...sign(INT64)], [-1n, -1n, 0n, 1n, 1n]));
    assert.equal(accepted, acceptance(cell));
  },
  "bfloat16 input"(cell) {
    assert.equal(extendedOnly.bfloat16(), acceptance(cell));
  },
  "IS_INFINITY mode `neither`"(cell) {
    assert.equal(extendedOnly.neither(), acceptance(cell));
  },
  "SIGN NaN policy"(cell) {
    assert.ok(["zero", "propagate"].includes(cell), `"zero" or "propagate"; got ${JSON.stringify(cell)}`);
    const x = new Float32Array(new Uint32Array([0x7fc00001, 0xffffffff, 0x7f800001]).buffer);
    const expected = cell === "zero" ? [0n, 0n, 0n] : bits(x);
    assert.deepEqual(bits(sign(x)), expected, "float32 NaNs");
    const d = new Float64Array(new BigUint64Array([0x7ff8000000000001n, 0xfff0000000000001n]).buffer);
    assert.deepEqual(bits(sign(d)), cell === "zero" ? [0n, 0n] : bits(d), "float64 NaNs");
  },
  "IS_INFINITY mode"(cell) {
    assert.ok(Object.hasOwn(MODE_RESULTS, cell), `a mode (${Object.keys(MODE_RESULTS).join(", ")}); got ${JSON.stringify(cell)}`);
    assert.deepEqual([...isInfinity(INFINITIES)], MODE_RESULTS[cell]);
  },
  "IS_INFINITY output"(cell) {
    assert.equal(cell, "uint8", `the one output JavaScript has, "uint8" (a Uint8Array of 0 and 1); got ${JSON.stringify(cell)}`);
    for (const x of [INFINITIES, FLOAT64, new Float32Array(0)]) {
      const got = isInfinity(x);
      assert.equal(got.constructor, Uint8Array);
      assert.equal(got.length, x.length);
      assert.ok(got.every((v) => v === 0 || v === 1));
    }
  },
  device(cell) {
    assert.equal(cell, "cpu", `the device this test knows for the array functions, "cpu"; got ${JSON.stringify(cell)}`);
    // The CPU functions answer at once; only a GpuDevice's (requestGpu) are promises.
    const got = sign(new Int8Array([-3, 0, 4]));
    assert.ok(got instanceof Int8Array, "a result, not a promise");
    assert.deepEqual([...got], [-1, 0, 1]);
  },
  async "software renderer chosen unasked"(cell) {
    assert.equal(cell, "warning (`console.warn`)", `the report this test knows, "warning (\`console.warn\`)"; got ${JSON.stringify(cell)}`);
    // Node has no WebGPU, so no renderer at all, and says so; the warning itself is
    // checked in Chromium (tests/browser/defaults.test.mjs).
    const warned = [];
    const warn = console.warn;
    console.warn = (...args) => warned.push(args.join(" "));
    try {
      await assert.rejects(requestGpu(), (e) => e instanceof WebGpuUnavailableError);
    } finally {
      console.warn = warn;
    }
    assert.deepEqual(warned, []);
  },
};

test("the defaults table has the JavaScript column and every row this test knows", () => {
  assert.deepEqual([...column.keys()].filter((row) => !Object.hasOwn(ROWS, row)), [], "rows this test does not know");
  assert.deepEqual(Object.keys(ROWS).filter((row) => !column.has(row)), [], "rows this test checks that the table lacks");
});

for (const [row, cell] of column) {
  test(`defaults table: ${row} = ${cell}`, async () => {
    assert.ok(Object.hasOwn(ROWS, row), `a row this test does not know: ${JSON.stringify(row)}`);
    await ROWS[row](cell);
  });
}

/** An ArgumentError of kind `kind` whose message names `option` and lists `accepts`. */
function namesOption(kind, option, accepts) {
  return (e) => {
    assert.ok(e instanceof ArgumentError, `an ArgumentError, not ${e?.name}: ${e?.message}`);
    assert.equal(e.kind, kind);
    assert.ok(e.message.includes(option) && e.message.includes(accepts), e.message);
    assert.ok(e.message.endsWith("got null"), e.message);
    return true;
  };
}

test("null means not given for out and dtype", () => {
  const x = new Float32Array([-2, NaN, Infinity]);
  assert.deepEqual(bits(sign(x, { out: null, dtype: null })), bits(sign(x)));
  assert.deepEqual([...isInfinity(x, { out: null, dtype: null })], [...isInfinity(x)]);
  const h = new Uint16Array([0xfc00]);
  assert.throws(() => isInfinity(h, { dtype: null }), (e) => e instanceof ArgumentError && e.kind === "options.dtype", "a Uint16Array still needs its dtype");
});

test("null is refused, naming the option and what it accepts, for every other option", async () => {
  const x = new Float32Array([1]);
  assert.throws(() => sign(x, { nan: null }), namesOption("options.nan", "options.nan", '"zero" or "propagate"'));
  assert.throws(() => isInfinity(x, { mode: null }), namesOption("options.mode", "options.mode", '"either", "positive", "negative" or "neither"'));
  for (const [key, accepts] of [["featureLevel", "a feature level"], ["minFeatureLevel", "a feature level"], ["extensions", "true or false"], ["nanPolicy", '"zero" or "propagate"']]) {
    assert.throws(() => new Device({ [key]: null }), namesOption(`options.${key}`, `options.${key}`, accepts));
    await assert.rejects(requestGpu({ [key]: null }), namesOption(`options.${key}`, `options.${key}`, accepts));
  }
  await assert.rejects(requestGpu({ allowSoftware: null }), namesOption("options.allowSoftware", "options.allowSoftware", "true or false"));
  for (const key of ["maxWorkgroupsPerDimension", "maxBindingSize"]) {
    await assert.rejects(requestGpu({ [key]: null }), namesOption(`options.${key}`, `options.${key}`, "a positive integer"));
  }
});
