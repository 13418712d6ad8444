// Run by scripts/web-test.sh in a project made with `npm init -y` that installed the
// packed package: import from "ewise" as an ES module does (a .mjs file in a CommonJS
// project), and require("ewise") beside it giving the same module where Node can
// require() ES modules.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import * as ewise from "ewise";

await ewise.init();
assert.deepEqual([...ewise.sign(new Int8Array([-128, 0, 5]))], [-1, 0, 1]);
assert.deepEqual([...ewise.sign(new Uint16Array([0xfc00, 0x7e00]), { dtype: "float16" })], [0xbc00, 0]);
if (process.features.require_module === true) {
  assert.equal(createRequire(import.meta.url)("ewise"), ewise, "import and require give one module");
}
console.log(`import from "ewise" under Node ${process.version}: ok`);
