// The worker of shared.test.mjs: runs strided executions into a SharedArrayBuffer that
// other workers write at the same time. Not a test file itself.

import { parentPort, workerData } from "node:worker_threads";

import { loadPackage } from "./reference.mjs";

const ewise = await loadPackage();
await ewise.init();
const { Device, OperatorDesc, tensorDesc } = ewise;

const { memory, control, n, stride, lane, workers } = workerData;
const device = new Device();
const op = device
  .createOperator(OperatorDesc.sign(tensorDesc("FLOAT32", [n]), tensorDesc("FLOAT32", [n], [stride])))
  .compile();
const out = tensorDesc("FLOAT32", [n], [stride]);
const input = new Float32Array(n);
for (let i = 0; i < n; i++) input[i] = ((i + lane) % 3) - 1;
const view = new Uint8Array(memory, lane * 4);
const ctrl = new Int32Array(control);

parentPort.on("message", (trial) => {
  // A barrier: every worker starts its execution when all have arrived.
  Atomics.add(ctrl, 0, 1);
  while (Atomics.load(ctrl, 0) < workers * (trial + 1));
  op.execute([input, view], [{ buffer: 0, offset: 0, sizeInBytes: n * 4 }], [{ buffer: 1, offset: 0, sizeInBytes: out.totalTensorSizeInBytes }]);
  parentPort.postMessage(trial);
});
parentPort.postMessage("ready");
