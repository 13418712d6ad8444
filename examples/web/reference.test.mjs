// Tests of reference.js: the plain JavaScript SIGN and IS_INFINITY give the package's
// bytes (when crates/ewise-web/pkg/ is built; skipped with a message otherwise), and
// values are shown and counted as the page means to.

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { test } from "node:test";

import { DTYPES } from "./npy.js";
import {
  IS_INFINITY_DTYPES, MODES, NAN_POLICIES, SIGN_DTYPES, countIsInfinity, countSign, formatBits, formatValue, jsIsInfinity, jsSign,
  randomArray, sampleArray,
} from "./reference.js";

const PACKAGE = new URL("../../crates/ewise-web/pkg/ewise.js", import.meta.url);

function bytesOf(x) {
  return Buffer.from(x.buffer, x.byteOffset, x.byteLength);
}

test("the JavaScript loops give the package's bytes for every dtype, NaN policy and mode", async (t) => {
  if (!existsSync(PACKAGE)) {
    t.skip(`${PACKAGE.pathname} is not built: run scripts/web-build.sh`);
    return;
  }
  const ewise = await import(PACKAGE);
  await ewise.init();
  for (const dtype of SIGN_DTYPES) {
    const half = dtype === "float16" || dtype === "bfloat16" ? { dtype } : {};
    for (const x of [sampleArray(dtype, 1024), randomArray(dtype, 20000, 99)]) {
      for (const nan of NAN_POLICIES) {
        const want = ewise.sign(x, { nan, ...half });
        const got = jsSign(x, dtype, nan, new DTYPES[dtype].array(x.length));
        assert.ok(bytesOf(got).equals(bytesOf(want)), `SIGN ${dtype} ${nan}`);
      }
      if (!IS_INFINITY_DTYPES.includes(dtype)) continue;
      for (const mode of MODES) {
        const want = ewise.isInfinity(x, { mode, ...half });
        assert.ok(bytesOf(jsIsInfinity(x, dtype, mode, new Uint8Array(x.length))).equals(bytesOf(want)), `IS_INFINITY ${dtype} ${mode}`);
      }
    }
  }
});

test("samples start with the special values of each type", () => {
  const f32 = new Uint32Array(sampleArray("float32", 64).buffer);
  for (const bits of [0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0x00000001, 0x7f7fffff]) {
    assert.ok(f32.subarray(0, 24).includes(bits), bits.toString(16));
  }
  assert.deepEqual([...sampleArray("int8", 4)], [0, 1, -1, -128]);
  assert.deepEqual([...sampleArray("uint64", 3)], [0n, 1n, 2n ** 64n - 1n]);
  assert.equal(sampleArray("float64", 3).length, 3);
  assert.ok(bytesOf(sampleArray("float16", 100)).equals(bytesOf(sampleArray("float16", 100))), "deterministic");
});

test("values are shown as the shortest decimal that reads back, with their bits", () => {
  const f32 = new Float32Array(new Uint32Array([0x3dcccccd, 0x80000000, 0x7fc00001, 0xff800000, 0x00000001, 0x7f7fffff]).buffer);
  assert.deepEqual([0, 1, 2, 3, 4, 5].map((i) => formatValue(f32, i, "float32")), ["0.1", "-0", "NaN", "-inf", "1e-45", "3.4028235e+38"]);
  assert.equal(formatBits(f32, 2, "float32"), "0x7fc00001");
  const f16 = new Uint16Array([0x2e66, 0x0001, 0x7bff, 0xfc00, 0x7e01, 0x3555]);
  assert.deepEqual([0, 1, 2, 3, 4, 5].map((i) => formatValue(f16, i, "float16")), ["0.1", "6e-8", "65500", "-inf", "NaN", "0.3333"]);
  assert.equal(formatBits(f16, 4, "float16"), "0x7e01");
  const bf16 = new Uint16Array([0x3dcd, 0x4049, 0x0001, 0x7f7f]);
  assert.deepEqual([0, 1, 2, 3].map((i) => formatValue(bf16, i, "bfloat16")), ["0.1", "3.14", "9e-41", "3.39e+38"]);
  const f64 = new Float64Array([0.1, -0, 5e-324]);
  assert.deepEqual([0, 1, 2].map((i) => formatValue(f64, i, "float64")), ["0.1", "-0", "5e-324"]);
  assert.equal(formatBits(f64, 1, "float64"), "0x8000000000000000");
  assert.equal(formatValue(new BigInt64Array([-5n]), 0, "int64"), "-5");
  assert.equal(formatBits(new Int16Array([-2]), 0, "int16"), "0xfffe");
});

test("outputs are counted by value", () => {
  const f32 = new Float32Array([-1, 0, 1, 1, NaN]);
  assert.deepEqual(countSign(f32, "float32"), { "-1": 1, 0: 1, "+1": 2, NaN: 1 });
  assert.deepEqual(countSign(new Float64Array([-1, -1, 0]), "float64"), { "-1": 2, 0: 1, "+1": 0, NaN: 0 });
  assert.deepEqual(countSign(new Int32Array([-1, 1, 0, 0]), "int32"), { "-1": 1, 0: 2, "+1": 1, NaN: 0 });
  assert.deepEqual(countSign(new BigInt64Array([-1n, 1n]), "int64"), { "-1": 1, 0: 0, "+1": 1, NaN: 0 });
  assert.deepEqual(countSign(new Uint16Array([0xbf80, 0x3f80, 0x7fc0]), "bfloat16"), { "-1": 1, 0: 0, "+1": 1, NaN: 1 });
  assert.deepEqual(countSign(new Int8Array([-1, 1]), "int8"), { "-1": 1, 0: 0, "+1": 1, NaN: 0 });
  assert.deepEqual(countIsInfinity(new Uint8Array([1, 0, 0, 1, 1])), { 1: 3, 0: 2 });
});
