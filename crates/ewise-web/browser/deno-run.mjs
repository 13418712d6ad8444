// Runs the browser tests (crates/ewise-web/tests/browser/*.test.mjs) under Deno, whose
// WebGPU is wgpu's (on a machine without a GPU, Mesa's lavapipe or llvmpipe): initialises
// the package once, imports each test module in turn (file name order, in this one
// process, where the browser runner opens a page per module), runs what it registered
// (harness.mjs) and prints a line per test, as run.mjs does. A console.error, an uncaught
// error or an unhandled rejection is a failure, as in the browser; each distinct
// console.warn is shown once per module. Exits 1 when anything failed.
// scripts/deno-test.sh builds the package and the WGSL files first, and gives the
// permissions.
//
// Permissions (deno run): --allow-read for crates/ewise-web/browser and
// crates/ewise-web/tests (the test modules are listed and imported dynamically, which
// Deno lets read only what it may, their imports included), crates/ewise-web/pkg (init()
// reads the .wasm from disk, as in Node), docs/SEMANTICS.md (defaults.test.mjs reads its
// table) and target/web/wgsl (wgsl.test.mjs); --allow-env=EWISE_BROWSER_TIMEOUT_S (per
// test module, seconds, default 600).
//
// Usage: deno run PERMISSIONS crates/ewise-web/browser/deno-run.mjs [REGEXP]   (only the
// test modules whose file name matches)

import { init } from "../pkg/ewise.js";
import { errorText, runRegistered } from "./harness.mjs";

const filter = Deno.args[0] ? new RegExp(Deno.args[0]) : null;
const moduleTimeout = 1000 * Number(Deno.env.get("EWISE_BROWSER_TIMEOUT_S") || 600);
const dir = new URL("../tests/browser/", import.meta.url);

// What the browser runner collects from the page: console errors, uncaught errors and
// unhandled rejections, as problems of the module that runs; warnings shown once.
let problems = [];
let warned = new Set();
let current = "";
const consoleError = console.error;
const consoleWarn = console.warn;
console.error = (...args) => problems.push(`console error: ${args.map(String).join(" ")}`);
console.warn = (...args) => {
  const text = args.map(String).join(" ");
  if (warned.has(text)) return;
  warned.add(text);
  console.log(`#   ${current}: console warn (shown once): ${text}`);
};
globalThis.addEventListener("error", (e) => {
  e.preventDefault();
  problems.push(`uncaught error: ${errorText(e.error ?? e.message)}`);
});
globalThis.addEventListener("unhandledrejection", (e) => {
  e.preventDefault();
  problems.push(`unhandled rejection: ${errorText(e.reason)}`);
});

/** Resolves with `promise`, or rejects after `ms` milliseconds saying `what` hung. */
function within(promise, ms, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish in ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

async function runModule(file) {
  const results = [];
  const run = async () => {
    await import(new URL(file, dir).href);
    await runRegistered((result) => results.push(result));
  };
  try {
    await within(run(), moduleTimeout, file);
    return { results, fatal: null };
  } catch (e) {
    return { results, fatal: errorText(e) };
  }
}

let passed = 0;
let failures = 0;
let count = 0;
try {
  await init();
  const adapter = await navigator.gpu?.requestAdapter();
  console.log(`# Deno ${Deno.version.deno}, WebGPU adapter: ${adapter ? adapter.info.description || adapter.info.vendor : "none"}`);
  const modules = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isFile && entry.name.endsWith(".test.mjs") && (!filter || filter.test(entry.name))) modules.push(entry.name);
  }
  modules.sort();
  if (modules.length === 0) throw new Error(`no test module in ${dir.pathname}${filter ? ` matches ${filter}` : ""}`);
  for (const file of modules) {
    current = file;
    problems = [];
    warned = new Set();
    const state = await runModule(file);
    for (const r of state.results) {
      count++;
      if (r.ok) {
        passed++;
        console.log(`ok ${count} - ${file}: ${r.name} (${r.ms} ms)`);
      } else {
        failures++;
        console.log(`not ok ${count} - ${file}: ${r.name} (${r.ms} ms)\n${r.error.replace(/^/gm, "#   ")}`);
      }
    }
    for (const p of [state.fatal, ...problems].filter(Boolean)) {
      failures++;
      console.log(`not ok - ${file}: ${p.replace(/\n/g, "\n#   ")}`);
    }
  }
} catch (e) {
  failures++;
  console.log(`not ok - the tests could not be run: ${errorText(e)}`);
}
console.error = consoleError;
console.warn = consoleWarn;
console.log(`# ${passed} passed, ${failures} failed`);
Deno.exit(failures ? 1 : 0);
