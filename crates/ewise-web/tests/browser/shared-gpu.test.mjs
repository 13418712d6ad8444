// GPU executions into shared memory write only the output elements' bytes (issue 48,
// item 5): module workers filling interleaved strided outputs of one SharedArrayBuffer
// on the GPU keep each other's elements, and the bytes between strided elements keep
// what another worker stores there while an execution runs and writes back.

import { test } from "../../browser/harness.mjs";
import * as assert from "../../browser/assert.mjs";
import * as ewise from "../../pkg/ewise.js";

const { OperatorDesc, tensorDesc } = ewise;
const WORKER = new URL("./shared-gpu-worker.js", import.meta.url);

/** A module worker and `ask(message)`: its next answer, rejected on { error }. */
function worker() {
  const w = new Worker(WORKER, { type: "module" });
  let pending = null;
  const settle = (f, v) => {
    const p = pending;
    pending = null;
    p?.[f](v);
  };
  w.onmessage = ({ data }) => (data.error ? settle("reject", new Error(`worker: ${data.error}`)) : settle("resolve", data));
  w.onerror = (e) => settle("reject", new Error(`worker error: ${e.message}`));
  const ask = (message) => new Promise((resolve, reject) => {
    pending = { resolve, reject };
    w.postMessage(message);
  });
  return { w, ask };
}

test("two workers filling interleaved strided outputs of one SharedArrayBuffer on the GPU keep each other's elements", async () => {
  const n = 1 << 20;
  const memory = new SharedArrayBuffer(8 * n);
  const pool = [worker(), worker()];
  try {
    await Promise.all(pool.map((p, lane) => p.ask({ setup: { memory, n, stride: 2, lane } })));
    const out = new Float32Array(memory);
    for (let trial = 0; trial < 5; trial++) {
      out.fill(42);
      await Promise.all(pool.map((p) => p.ask({ run: trial })));
      for (let i = 0; i < 2 * n; i++) {
        const lane = i & 1;
        const want = (((i >> 1) + lane) % 3) - 1;
        if (out[i] !== want) assert.ok(false, `trial ${trial}: element ${i >> 1} of worker ${lane} is ${out[i]}, not ${want}`);
      }
    }
  } finally {
    for (const p of pool) p.w.terminate();
  }
});

test("GPU execute: the bytes between strided output elements keep what a worker stores there during the execution", async () => {
  const n = 1 << 21;
  const memory = new SharedArrayBuffer(8 * n);
  const control = new SharedArrayBuffer(8);
  const ctrl = new Int32Array(control);
  const gpu = await ewise.requestGpu();
  const output = tensorDesc("INT32", [n], [2]);
  const op = gpu.createOperator(OperatorDesc.sign(tensorDesc("INT32", [n]), output)).compile();
  const input = Int32Array.from({ length: n }, (_, i) => (i % 3) - 1);
  const words = new Int32Array(memory);
  const writer = worker();
  try {
    for (let trial = 0; trial < 5; trial++) {
      words.fill(7);
      for (let i = 1; i < 2 * n; i += 2) words[i] = 0;
      Atomics.store(ctrl, 0, 0);
      Atomics.store(ctrl, 1, 0);
      const stored = writer.ask({ writeGaps: { memory, control, from: 1, step: 2, count: n } });
      while (Atomics.load(ctrl, 1) === 0) await new Promise((r) => setTimeout(r, 1));
      const before = Atomics.load(ctrl, 1);
      await op.execute([input, memory], [{ buffer: 0, offset: 0, sizeInBytes: 4 * n }], [{ buffer: 1, offset: 0, sizeInBytes: output.totalTensorSizeInBytes }]);
      const during = Atomics.load(ctrl, 1);
      Atomics.store(ctrl, 0, 1);
      const { stores } = await stored;
      // Whether the worker stores again between the two lines above is up to the
      // scheduler: what must hold is that it stored while the execution ran.
      assert.ok(during > before, `trial ${trial}: the worker stored while the execution ran (${before} stores before it, ${during} after)`);
      assert.ok(stores >= during, `trial ${trial}: the worker's count went back from ${during} to ${stores}`);
      const passes = Math.floor(stores / n);
      const rest = stores % n;
      for (let k = 0; k < n; k++) {
        const want = k < rest ? passes + 1 : passes;
        if (words[2 * k + 1] !== want) assert.ok(false, `trial ${trial}: the gap after element ${k} holds ${words[2 * k + 1]}, not the worker's last store ${want} (${stores} stores)`);
        if (words[2 * k] !== (k % 3) - 1) assert.ok(false, `trial ${trial}: element ${k} is ${words[2 * k]}, not ${(k % 3) - 1}`);
      }
    }
  } finally {
    Atomics.store(ctrl, 0, 1);
    writer.w.terminate();
  }
});
