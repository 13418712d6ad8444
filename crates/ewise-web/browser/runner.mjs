// The in-page side of the browser tests (run.mjs drives it): initialises the package,
// imports the test module named by `?module=` (a path from the served root), runs the
// tests it registered in order and publishes each result on `window.ewiseTests`:
// { done, results: [{ name, ok, ms, error }], fatal }.

import { init } from "../pkg/ewise.js";
import { takeRegistered } from "./harness.mjs";

const state = { done: false, results: [], fatal: null };
window.ewiseTests = state;
const log = document.getElementById("log");

function errorText(e) {
  if (e instanceof Error) {
    const head = `${e.name}: ${e.message}`;
    return e.stack?.startsWith(head) ? e.stack : `${head}\n${e.stack ?? ""}`;
  }
  return `thrown: ${String(e)}`;
}

try {
  const module = new URLSearchParams(location.search).get("module");
  if (!module || !module.startsWith("/") || module.includes("..")) throw new Error(`?module= must name a test module from the root; got ${module}`);
  await init();
  await import(module);
  for (const { name, fn } of takeRegistered()) {
    const start = performance.now();
    let error = null;
    try {
      await fn();
    } catch (e) {
      error = errorText(e);
    }
    const ms = Math.round(performance.now() - start);
    state.results.push({ name, ok: error === null, ms, error });
    log.textContent += `${error === null ? "ok" : "not ok"} ${name} (${ms} ms)\n`;
  }
} catch (e) {
  state.fatal = errorText(e);
}
state.done = true;
