// Every WGSL kernel ewise-gpu can compile, through the runtime's own WGSL compiler
// (Tint in Chromium, which is stricter than naga in places: WGSL asks for parentheses
// where bitwise and arithmetic operators meet, and naga takes them without; naga in
// Deno). The sources come from `cargo run -p ewise-gpu --example wgsl_sources --
// target/web/wgsl`, which scripts/browser-test.sh and scripts/deno-test.sh run first;
// they are found beside this module's URL (served over HTTP in the browser, a file: URL
// under Deno).

import { test } from "../../browser/harness.mjs";
import * as assert from "../../browser/assert.mjs";

const DIR = new URL("../../../../target/web/wgsl/", import.meta.url);

test("every kernel's WGSL compiles in this browser without an error or a warning", async () => {
  const index = await fetch(new URL("index.txt", DIR));
  assert.ok(index.ok, `${DIR}index.txt is there (scripts/browser-test.sh and scripts/deno-test.sh write it): HTTP ${index.status}`);
  const entries = (await index.text()).trim().split("\n").map((line) => line.split("\t"));
  assert.ok(entries.length > 100, `${entries.length} kernels listed`);
  const adapter = await navigator.gpu.requestAdapter();
  assert.ok(adapter, "WebGPU gives an adapter");
  const device = await adapter.requestDevice();
  const failures = [];
  for (const [file, label] of entries) {
    const code = await (await fetch(new URL(file, DIR))).text();
    device.pushErrorScope("validation");
    const module = device.createShaderModule({ code, label });
    const info = await module.getCompilationInfo();
    const scope = await device.popErrorScope();
    const messages = info.messages.map((m) => `${m.type} ${m.lineNum}:${m.linePos}: ${m.message}`);
    if (scope) messages.push(`validation: ${scope.message}`);
    if (messages.length) failures.push(`${file} (${label}):\n  ${messages.join("\n  ")}`);
  }
  device.destroy();
  assert.equal(failures.length, 0, `${failures.length} of ${entries.length} kernels do not compile:\n${failures.slice(0, 5).join("\n")}`);
});
