// Float16Array, which Chromium has and Node 20 lacks: sign and isInfinity take it as
// float16 without a dtype option, on the CPU and the GPU, for every bit pattern.

import { test } from "../../browser/harness.mjs";
import * as assert from "../../browser/assert.mjs";
import * as ewise from "../../pkg/ewise.js";
import { allPatterns, firstMismatch, isInfinityOf, signOf } from "../reference.mjs";

const patterns = allPatterns(16);

test("this browser has Float16Array", () => {
  assert.equal(typeof Float16Array, "function");
});

test("sign and isInfinity of every Float16Array pattern, CPU and GPU", async () => {
  const x = new Float16Array(patterns.buffer);
  const gpu = await ewise.requestGpu();
  for (const nan of ["zero", "propagate"]) {
    const cpu = ewise.sign(x, { nan });
    assert.ok(cpu instanceof Float16Array, "the result is a Float16Array");
    assert.equal(firstMismatch(patterns, new Uint16Array(cpu.buffer), (p) => signOf("float16", p, nan)), null, `CPU, nan=${nan}`);
    const onGpu = await gpu.sign(x, { nan });
    assert.ok(onGpu instanceof Float16Array);
    assert.sameBytes(onGpu, cpu, `GPU, nan=${nan}`);
    assert.sameBytes(cpu, ewise.sign(patterns, { nan, dtype: "float16" }), "as the Uint16Array bit patterns give");
  }
  for (const mode of ["either", "positive", "negative", "neither"]) {
    const cpu = ewise.isInfinity(x, { mode });
    assert.equal(firstMismatch(patterns, cpu, (p) => isInfinityOf("float16", p, mode)), null, `CPU, mode=${mode}`);
    assert.sameBytes(await gpu.isInfinity(x, { mode }), cpu, `GPU, mode=${mode}`);
  }
  const out = new Float16Array(x.length);
  assert.equal(ewise.sign(x, { out }), out, "out= a Float16Array");
  assert.throws(() => ewise.sign(x, { out: new Uint16Array(x.length) }), ewise.ArgumentError);
  assert.throws(() => ewise.sign(x, { dtype: "bfloat16" }), ewise.ArgumentError);
});
