// The in-page side of the browser tests (run.mjs drives it): initialises the package,
// imports the test module named by `?module=` (a path from the served root), runs the
// tests it registered in order and publishes each result on `window.ewiseTests`:
// { done, results: [{ name, ok, ms, error }], fatal }.

import { init } from "../pkg/ewise.js";
import { errorText, runRegistered } from "./harness.mjs";

const state = { done: false, results: [], fatal: null };
window.ewiseTests = state;
const log = document.getElementById("log");

try {
  const module = new URLSearchParams(location.search).get("module");
  if (!module || !module.startsWith("/") || module.includes("..")) throw new Error(`?module= must name a test module from the root; got ${module}`);
  await init();
  await import(module);
  await runRegistered((result) => {
    state.results.push(result);
    log.textContent += `${result.ok ? "ok" : "not ok"} ${result.name} (${result.ms} ms)\n`;
  });
} catch (e) {
  state.fatal = errorText(e);
}
state.done = true;
