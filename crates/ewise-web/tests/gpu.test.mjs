// requestGpu where there is no WebGPU (Node) or no adapter: typed errors, no trap. The
// GPU's results are tested in a browser (WebGPU), not here.

import { test } from "node:test";
import assert from "node:assert/strict";

import { loadPackage } from "./reference.mjs";

const ewise = await loadPackage();
await ewise.init();
const { ArgumentError, EwiseError, GpuError, GpuDevice, GpuOperator, GpuCompiledOperator, ValidationError, WebGpuUnavailableError } = ewise;

const unavailable = (e) => e instanceof WebGpuUnavailableError && e.kind === "WebGpuUnavailable";

function argumentError(kind, re) {
  return (e) => {
    assert.ok(e instanceof ArgumentError, `${e?.name}: ${e?.message}`);
    assert.equal(e.kind, kind);
    assert.match(e.message, re);
    return true;
  };
}

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
  await assert.rejects(ewise.requestGpu({ adapter: "x" }), argumentError("options",
    /^requestGpu: unknown option "adapter" \(accepted: allowSoftware, featureLevel, minFeatureLevel, extensions, nanPolicy, maxWorkgroupsPerDimension, maxBindingSize\)$/));
  await assert.rejects(ewise.requestGpu([]), argumentError("options", /options must be an object/));
});

test("requestGpu checks every option before it looks for WebGPU", async () => {
  for (const bad of [0, -1, 1.5, NaN, Infinity, "4", 4n, 2 ** 32, null, true]) {
    await assert.rejects(ewise.requestGpu({ maxWorkgroupsPerDimension: bad }), argumentError("options.maxWorkgroupsPerDimension",
      /^requestGpu: options\.maxWorkgroupsPerDimension must be a positive integer up to 4294967295; got /));
  }
  for (const bad of [0, -1, 0n, -1n, 2n ** 64n, 1.5, 2 ** 53, "1024", null, false]) {
    await assert.rejects(ewise.requestGpu({ maxBindingSize: bad }), argumentError("options.maxBindingSize",
      /^requestGpu: options\.maxBindingSize must be a positive integer \(a number up to 2\^53 - 1, or a bigint below 2\^64\); got /));
  }
  await assert.rejects(ewise.requestGpu({ featureLevel: "7_0" }), argumentError("options.featureLevel", /^unknown feature level '7_0' \(accepted: 1_0, 2_0/));
  await assert.rejects(ewise.requestGpu({ minFeatureLevel: [] }), argumentError("options.minFeatureLevel", /^requestGpu: options\.minFeatureLevel must be a feature level/));
  await assert.rejects(ewise.requestGpu({ extensions: "yes" }), argumentError("options.extensions", /^requestGpu: options\.extensions must be true or false/));
  await assert.rejects(ewise.requestGpu({ nanPolicy: "nan" }), argumentError("options.nanPolicy", /^requestGpu: options\.nanPolicy must be "zero" or "propagate"; got "nan"$/));
  // The CPU Device's refusal, with its message.
  let cpu;
  try {
    new ewise.Device({ featureLevel: "3_0", minFeatureLevel: "4_1" });
  } catch (e) {
    cpu = e;
  }
  await assert.rejects(ewise.requestGpu({ featureLevel: "3_0", minFeatureLevel: "4_1" }), (e) => {
    assert.ok(e instanceof ValidationError, `${e.name}: ${e.message}`);
    assert.equal(e.kind, "FeatureLevelUnavailable");
    assert.equal(e.message, cpu.message);
    return true;
  });
  // Accepted values get as far as WebGPU, which Node lacks.
  await assert.rejects(ewise.requestGpu({
    allowSoftware: false, featureLevel: 0x4100, minFeatureLevel: "DML_FEATURE_LEVEL_2_0", extensions: true, nanPolicy: "propagate",
    maxWorkgroupsPerDimension: 2 ** 32 - 1, maxBindingSize: 2n ** 64n - 1n,
  }), unavailable);
  await assert.rejects(ewise.requestGpu({ maxWorkgroupsPerDimension: 1, maxBindingSize: 1 }), unavailable);
  await assert.rejects(ewise.requestGpu({ maxBindingSize: 2 ** 53 - 1 }), unavailable);
  await assert.rejects(ewise.requestGpu(undefined), unavailable);
});

test("GpuDevice, GpuOperator and GpuCompiledOperator come only from requestGpu, createOperator and compile", () => {
  assert.throws(() => new GpuDevice({}), argumentError("device", /^GpuDevice: use requestGpu\(\) to get one$/));
  assert.throws(() => new GpuDevice(), argumentError("device", /use requestGpu\(\)/));
  assert.throws(() => new GpuOperator({}), argumentError("operator", /^GpuOperator: use GpuDevice\.createOperator\(\) to get one$/));
  assert.throws(() => new GpuCompiledOperator({}), argumentError("compiled", /^GpuCompiledOperator: use GpuOperator\.compile\(\) to get one$/));
  // A CPU operator is no GPU operator, nor the reverse.
  const t = ewise.tensorDesc("FLOAT32", [4]);
  const cpu = new ewise.Device().createOperator(ewise.OperatorDesc.sign(t, t));
  assert.throws(() => new GpuOperator(cpu), argumentError("operator", /use GpuDevice\.createOperator\(\)/));
  assert.throws(() => new GpuCompiledOperator(cpu.compile()), argumentError("compiled", /use GpuOperator\.compile\(\)/));
  assert.throws(() => new ewise.Operator({}), argumentError("operator", /^Operator: use Device\.createOperator\(\) to get one$/));
  for (const name of ["GpuDevice", "GpuOperator", "GpuCompiledOperator"]) {
    assert.equal(typeof ewise[name], "function", name);
  }
});

test("navigator.gpu outside a window or worker, then with no adapter: typed errors, and the module keeps working", async () => {
  const navigator = Object.getOwnPropertyDescriptor(globalThis, "navigator");
  Object.defineProperty(globalThis, "navigator", { value: { gpu: { requestAdapter: async () => null } }, configurable: true });
  try {
    await assert.rejects(ewise.requestGpu(), (e) => e instanceof WebGpuUnavailableError && /neither a window nor a worker/.test(e.message));
    globalThis.Window = function Window() {};
    const everything = { featureLevel: "4_1", extensions: true, nanPolicy: "propagate", maxWorkgroupsPerDimension: 3, maxBindingSize: 512n };
    for (const options of [{ allowSoftware: true }, { allowSoftware: false }, everything]) {
      await assert.rejects(ewise.requestGpu(options), (e) => {
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
