// The module worker of shared-gpu.test.mjs (not a test module itself). Messages:
// { setup: { memory, n, stride, lane } }: the package initialised, a GPU device, SIGN on
// FLOAT32 [n] into an output of stride `stride` elements starting at element `lane` of
// the SharedArrayBuffer `memory`, compiled; then { run: trial }: one GPU execute. Each
// is answered { done } or { error } (the error's name, message and stack).
// { writeGaps: { memory, control, from, step, count } }: stores, pass after pass, the
// pass number (1, 2, ...) into Int32 elements from, from + step, ... (count of them)
// until control[0] is nonzero, control[1] counting every store; then answers { stores }.

import * as ewise from "../../pkg/ewise.js";

let run;

async function setup({ memory, n, stride, lane }) {
  await ewise.init();
  const gpu = await ewise.requestGpu();
  const { OperatorDesc, tensorDesc } = ewise;
  const output = tensorDesc("FLOAT32", [n], [stride]);
  const op = gpu.createOperator(OperatorDesc.sign(tensorDesc("FLOAT32", [n]), output)).compile();
  const input = new Float32Array(n);
  for (let i = 0; i < n; i++) input[i] = ((i + lane) % 3) - 1;
  const view = new Uint8Array(memory, lane * 4);
  const bytes = output.totalTensorSizeInBytes;
  run = () => op.execute([input, view], [{ buffer: 0, offset: 0, sizeInBytes: 4 * n }], [{ buffer: 1, offset: 0, sizeInBytes: bytes }]);
}

function writeGaps({ memory, control, from, step, count }) {
  const gaps = new Int32Array(memory);
  const ctrl = new Int32Array(control);
  let stores = 0;
  for (let pass = 1; ; pass++) {
    for (let k = 0; k < count; k++) {
      if (Atomics.load(ctrl, 0) !== 0) return stores;
      Atomics.store(gaps, from + k * step, pass);
      stores++;
      Atomics.store(ctrl, 1, stores);
    }
  }
}

self.onmessage = async ({ data }) => {
  try {
    if (data.setup) await setup(data.setup);
    else if ("run" in data) await run();
    else if (data.writeGaps) {
      self.postMessage({ stores: writeGaps(data.writeGaps) });
      return;
    }
    self.postMessage({ done: true });
  } catch (e) {
    self.postMessage({ error: `${e?.name}: ${e?.message}\n${e?.stack ?? ""}` });
  }
};
