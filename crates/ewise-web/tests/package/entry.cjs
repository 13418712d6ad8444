// Run by scripts/web-test.sh in a project made with `npm init -y` (CommonJS) that
// installed the packed package: require("ewise") as a CommonJS program does. Where Node
// can require() ES modules it is the very module import() gives (one WebAssembly
// instance, one init()); under --no-experimental-require-module, as Node 20 before 20.19
// runs it, it is the CommonJS copy, which init() loads and which import() does not share.
"use strict";
const assert = require("node:assert/strict");
const ewise = require("ewise");

const copy = process.features.require_module !== true;

(async () => {
  assert.throws(() => ewise.sign(new Int8Array(1)), (e) => e instanceof ewise.EwiseError && e.kind === "NotInitialized");
  await ewise.init();
  assert.deepEqual([...ewise.sign(new Float32Array([-2.5, -0, NaN, 7]))], [-1, 0, 0, 1]);
  assert.deepEqual([...ewise.isInfinity(new Float64Array([Infinity, -Infinity, NaN]))], [1, 1, 0]);
  assert.throws(() => ewise.sign([1, 2]), (e) => e instanceof ewise.ArgumentError && e instanceof ewise.EwiseError && e.kind === "x");
  const esm = await import("ewise");
  if (copy) {
    assert.notEqual(esm.init, ewise.init, "the CommonJS copy is a second module");
    assert.throws(() => esm.sign(new Int8Array(1)), (e) => e.kind === "NotInitialized", "which import() does not share");
  } else {
    assert.equal(esm, ewise, "require and import give one module");
    assert.deepEqual([...esm.sign(new Int8Array([-3]))], [-1], "initialised once for both");
  }
  console.log(`require("ewise") under Node ${process.version}: ${copy ? "the CommonJS copy (ewise.commonjs.cjs)" : "ewise.js through require(esm)"}: ok`);
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
