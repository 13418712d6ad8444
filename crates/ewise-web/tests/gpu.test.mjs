// requestGpu where there is no WebGPU (Node) or no adapter: typed errors, no trap. The
// GPU's results are tested in a browser (WebGPU), not here.

import { test } from "node:test";
import assert from "node:assert/strict";

import { loadPackage } from "./reference.mjs";

const ewise = await loadPackage();
await ewise.init();
const { ArgumentError, EwiseError, GpuError, GpuDevice, WebGpuUnavailableError } = ewise;

test("Node has no WebGPU: WebGpuUnavailableError naming what is missing", async () => {
  await assert.rejects(ewise.requestGpu(), (e) => {
    assert.ok(e instanceof WebGpuUnavailableError && e instanceof GpuError && e instanceof EwiseError);
    assert.equal(e.name, "WebGpuUnavailableError");
    assert.equal(e.kind, "WebGpuUnavailable");
    assert.match(e.message, /^requestGpu: WebGPU is not available: navigator\.gpu is missing \(Node [\d.]+ has no WebGPU\); the CPU functions sign and isInfinity work everywhere$/);
    return true;
  });
});

test("requestGpu's options", async () => {
  await assert.rejects(ewise.requestGpu({ allowSoftware: 1 }), (e) => e instanceof ArgumentError && e.kind === "options.allowSoftware" && /allowSoftware must be true or false; got number 1/.test(e.message));
  await assert.rejects(ewise.requestGpu({ adapter: "x" }), (e) => e instanceof ArgumentError && /unknown option "adapter" \(accepted: allowSoftware\)/.test(e.message));
  assert.throws(() => new GpuDevice({}), (e) => e instanceof ArgumentError && /use requestGpu\(\)/.test(e.message));
});

test("navigator.gpu outside a window or worker, then with no adapter: typed errors, and the module keeps working", async () => {
  const navigator = Object.getOwnPropertyDescriptor(globalThis, "navigator");
  Object.defineProperty(globalThis, "navigator", { value: { gpu: { requestAdapter: async () => null } }, configurable: true });
  try {
    await assert.rejects(ewise.requestGpu(), (e) => e instanceof WebGpuUnavailableError && /neither a window nor a worker/.test(e.message));
    globalThis.Window = function Window() {};
    for (const allowSoftware of [true, false]) {
      await assert.rejects(ewise.requestGpu({ allowSoftware }), (e) => {
        assert.ok(e instanceof GpuError && !(e instanceof WebGpuUnavailableError), `${e.name}: ${e.message}`);
        assert.equal(e.kind, "NoAdapter");
        assert.match(e.message, /^no GPU adapter found: tried backends webgpu; .*found none\. WebGPU needs a browser that offers navigator\.gpu/);
        return true;
      });
    }
  } finally {
    delete globalThis.Window;
    if (navigator) Object.defineProperty(globalThis, "navigator", navigator);
    else delete globalThis.navigator;
  }
  assert.deepEqual(Array.from(ewise.sign(new Float32Array([-3, 0, 3]))), [-1, 0, 1]);
});
