// docs/SEMANTICS.md section 8: the defaults table's row "software renderer chosen
// unasked" for JavaScript, which Node (no WebGPU) cannot check: requestGpu() without
// allowSoftware reports a software adapter (SwiftShader here, where Chromium has no GPU)
// once per device with console.warn("ewise: warning: ..."), and says nothing on a
// hardware one; allowSoftware: true takes it silently; allowSoftware: false refuses it.

import { test } from "../../browser/harness.mjs";
import * as assert from "../../browser/assert.mjs";
import * as ewise from "../../pkg/ewise.js";
import { COLUMN, defaultsColumn } from "../defaults-table.mjs";

const ROW = "software renderer chosen unasked";

/** What `f()` resolves to, and the lines console.warn was given meanwhile. */
async function warnings(f) {
  const warned = [];
  const warn = console.warn;
  console.warn = (...args) => warned.push(args.map(String).join(" "));
  try {
    return { value: await f(), warned };
  } finally {
    console.warn = warn;
  }
}

test(`defaults table: ${ROW}`, async () => {
  const response = await fetch(new URL("../../../../docs/SEMANTICS.md", import.meta.url));
  assert.ok(response.ok, `docs/SEMANTICS.md is served (${response.status})`);
  const cell = defaultsColumn(await response.text(), COLUMN).get(ROW);
  assert.equal(cell, "warning (`console.warn`)", `the report this test knows for "${ROW}"`);

  const first = await warnings(() => ewise.requestGpu());
  const gpu = first.value;
  assert.ok(gpu instanceof ewise.GpuDevice);
  if (gpu.isSoftware) {
    assert.equal(first.warned.length, 1, `one warning for ${gpu.adapter}; got ${JSON.stringify(first.warned)}`);
    assert.match(first.warned[0], /^ewise: warning: the GPU device runs on .*software renderer chosen because no GPU was found/);
    assert.match(first.warned[0], /; requestGpu\(\{ allowSoftware: true \}\) takes it silently$/);
    assert.ok(!first.warned[0].includes("EWISE_GPU_ADAPTER"), `no environment variable, which browsers do not read: ${first.warned[0]}`);
    assert.ok(first.warned[0].includes(gpu.adapter.split(" (")[0]), `the warning names the adapter ${gpu.adapter}: ${first.warned[0]}`);
  } else {
    assert.equal(first.warned.length, 0, `no warning on the hardware adapter ${gpu.adapter}; got ${JSON.stringify(first.warned)}`);
  }
  const again = await warnings(async () => {
    await gpu.sign(new Float32Array([-1, 2]));
    await gpu.isInfinity(new Float32Array([Infinity]));
  });
  assert.equal(again.warned.length, 0, `once per device: the device's calls say nothing; got ${JSON.stringify(again.warned)}`);
  const second = await warnings(() => ewise.requestGpu());
  assert.equal(second.warned.length, gpu.isSoftware ? 1 : 0, `a second device warns once again where software; got ${JSON.stringify(second.warned)}`);
});

test("requestGpu({ allowSoftware: true }) takes a software adapter silently", async () => {
  const { value: gpu, warned } = await warnings(() => ewise.requestGpu({ allowSoftware: true }));
  assert.ok(gpu instanceof ewise.GpuDevice);
  assert.equal(warned.length, 0, `no warning; got ${JSON.stringify(warned)}`);
  assert.sameBytes(await gpu.sign(new Float32Array([-3, NaN])), new Float32Array([-1, 0]), "it runs");
});

test("requestGpu({ allowSoftware: false }) refuses a software adapter, takes a hardware one", async () => {
  const probe = await ewise.requestGpu({ allowSoftware: true });
  const { value, warned } = await warnings(async () => {
    try {
      return await ewise.requestGpu({ allowSoftware: false });
    } catch (e) {
      return e;
    }
  });
  assert.equal(warned.length, 0, `no warning; got ${JSON.stringify(warned)}`);
  if (probe.isSoftware) {
    assert.ok(value instanceof ewise.GpuError, `a GpuError; got ${value}`);
    assert.equal(value.kind, "NoAdapter");
    assert.match(value.message, /^requestGpu: the only adapter WebGPU gives is .*, a software renderer, and options\.allowSoftware is false$/);
  } else {
    assert.ok(value instanceof ewise.GpuDevice, `a device on ${probe.adapter}; got ${value}`);
  }
});
