// Allocation failure at wasm32's largest sizes: every entry point that copies into the
// module's memory throws OutOfMemoryError (an EwiseError) instead of trapping, writes
// nothing, and the module works afterwards (issue 48, item 6). The arrays are
// zero-filled ArrayBuffers of up to 4 GiB that are mostly never touched; the module's
// memory grows to about 2 GiB. The tests run one after another. The JavaScript arrays
// sized by the caller's data (results, staging copies) are checked in a child process
// whose address space is limited (memory-limit.mjs).

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

import { loadPackage } from "./reference.mjs";

const ewise = await loadPackage();
await ewise.init();
const { Device, OperatorDesc, tensorDesc, EwiseError, OutOfMemoryError } = ewise;

/** 2^31 - 8 bytes: about the largest span a wasm32 tensor may have (2^29 - 2 FLOAT32
 * elements, as [2, 2^28 - 1]). */
const HALF = 2 ** 31 - 8;
/** 4 GiB - 16 bytes: the most an array call takes, rounded to whole FLOAT32 elements. */
const WHOLE = 2 ** 32 - 16;

const bind = (buffer, offset, sizeInBytes) => ({ buffer, offset, sizeInBytes });

function outOfMemory(f, label) {
  let caught;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof OutOfMemoryError, `${label}: ${caught?.name} (${caught?.kind}): ${caught?.message}; expected OutOfMemoryError`);
  assert.ok(caught instanceof EwiseError, label);
  assert.equal(caught.kind, "OutOfMemory", label);
  stillWorks(label);
}

function stillWorks(label) {
  const x = new Float32Array([-2, 0, 3, NaN]);
  assert.deepEqual(Array.from(ewise.sign(x)), [-1, 0, 1, 0], `${label}: the module works afterwards`);
}

/** Whether `bytes` are all 0, sampled about every 4 KiB. */
function untouched(bytes) {
  for (let i = 0; i < bytes.length; i += 4093) if (bytes[i] !== 0) return false;
  return true;
}

test("execute in place with layouts that differ at 2^31 - 8 bytes", () => {
  const m = (HALF / 8);
  const input = tensorDesc("FLOAT32", [2, m], [1, 2]);
  const output = tensorDesc("FLOAT32", [2, m]);
  assert.equal(input.totalTensorSizeInBytes, HALF);
  const op = new Device().createOperator(OperatorDesc.sign(input, output)).compile();
  const data = new Uint8Array(HALF);
  outOfMemory(() => op.execute([data], [bind(0, 0, HALF)], [bind(0, 0, HALF)]), "execute in place");
  assert.ok(untouched(data));
});

test("execute with two 2^31 - 8 byte ranges", () => {
  const t = tensorDesc("FLOAT32", [HALF / 4]);
  const op = new Device().createOperator(OperatorDesc.sign(t, t)).compile();
  let x = new Uint8Array(HALF);
  let out = new Uint8Array(HALF);
  outOfMemory(() => op.execute([x, out], [bind(0, 0, HALF)], [bind(1, 0, HALF)]), "execute");
  outOfMemory(() => op.executeSlices(x, out), "executeSlices");
  x = out = null;
});

test("executeInPlace at 2^31 - 8 bytes, the largest span: its one copy fits", () => {
  const t = tensorDesc("FLOAT32", [HALF / 4]);
  const op = new Device().createOperator(OperatorDesc.sign(t, t)).compile();
  const data = new Float32Array(HALF / 4);
  data[0] = -5;
  data[data.length - 1] = 7;
  op.executeInPlace(data);
  assert.equal(data[0], -1);
  assert.equal(data[data.length - 1], 1);
  stillWorks("executeInPlace");
});

test("sign and isInfinity with an out that starts inside x, at 4 GiB - 16 bytes", () => {
  const memory = new ArrayBuffer(WHOLE);
  const n = WHOLE / 4 - 1;
  outOfMemory(() => ewise.sign(new Float32Array(memory, 0, n), { out: new Float32Array(memory, 4, n) }), "sign");
  outOfMemory(() => ewise.isInfinity(new Float32Array(memory, 0, n), { out: new Uint8Array(memory, 1, n) }), "isInfinity");
  assert.ok(untouched(new Uint8Array(memory)));
});

test("lists and feature levels that would be copied into the module are bounded: ArgumentError, at once", () => {
  const { ArgumentError } = ewise;
  const refused = (f, argument, label, text = /more than the 1048576 one call takes/) => {
    let caught;
    try {
      f();
    } catch (e) {
      caught = e;
    }
    assert.ok(caught instanceof ArgumentError, `${label}: ${caught?.name}: ${caught?.message}`);
    assert.equal(caught.kind, argument, label);
    assert.match(caught.message, text, label);
  };
  const long = new Uint32Array(2 ** 28);
  refused(() => tensorDesc("FLOAT32", long), "desc.sizes", "sizes");
  refused(() => tensorDesc("FLOAT32", [4], long), "desc.strides", "strides");
  refused(() => new Device({ featureLevel: "6".repeat(2 ** 21) }), "options.featureLevel", "featureLevel");
  const device = new Device();
  refused(() => device.checkFeatureLevels(new Array(2 ** 20 + 1).fill("6_4")), "levels", "levels");
  refused(() => device.checkFeatureLevels(new Array(5).fill("1".repeat(2 ** 20))), "levels", "levels' characters", /more than the 4194304 one call takes/);
  const t = tensorDesc("FLOAT32", [4]);
  const op = device.createOperator(OperatorDesc.sign(t, t)).compile();
  const b = new Float32Array(4);
  const many = new Array(2 ** 20 + 1).fill(bind(0, 0, 16));
  refused(() => op.execute([b], many, [bind(0, 0, 16)]), "inputs", "inputs");
  refused(() => op.execute(new Array(2 ** 20 + 1).fill(b), [bind(0, 0, 16)], [bind(0, 0, 16)]), "buffers", "buffers");
  stillWorks("bounded lists");
});

test("JavaScript arrays sized by the caller's data that cannot be allocated: OutOfMemoryError with the RangeError as cause", (t) => {
  const child = spawnSync(process.execPath, [fileURLToPath(new URL("./memory-limit.mjs", import.meta.url))], { encoding: "utf8", env: process.env });
  assert.equal(child.status, 0, `the child failed: ${child.stderr}`);
  const report = JSON.parse(child.stdout.trim().split("\n").at(-1));
  if (report.skip) {
    t.skip(report.skip);
    return;
  }
  for (const [call, e] of Object.entries(report.results)) {
    assert.ok(e, `${call}: nothing thrown under an address-space limit of ${report.limit} bytes`);
    assert.ok(e.isOutOfMemory, `${call}: ${e.name} (${e.kind}): ${e.message}; expected OutOfMemoryError`);
    assert.equal(e.kind, "OutOfMemory", call);
    assert.match(e.message, /out of memory: \d+ bytes for .* could not be allocated/, call);
    assert.ok(e.cause?.isRangeError, `${call}: cause ${JSON.stringify(e.cause)}`);
  }
  assert.deepEqual(report.after, [-1, 0, 1], "a small sign works afterwards");
  assert.equal(report.x0, -3, "x is unchanged");
});
