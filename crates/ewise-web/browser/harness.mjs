// The registry of browser tests: test modules call `test(name, fn)` when imported, and
// the runners (runner.mjs in a page, deno-run.mjs under Deno) run what they registered,
// in order, with runRegistered.

const registered = [];

/** Registers the test `name`: `fn` (async or not) passes unless it throws or rejects. */
export function test(name, fn) {
  if (typeof name !== "string" || typeof fn !== "function") {
    throw new TypeError("test(name, fn): name must be a string and fn a function");
  }
  registered.push({ name, fn });
}

/** Takes the tests registered so far, leaving none. */
function takeRegistered() {
  return registered.splice(0, registered.length);
}

/** What a failed test threw, as one text: an error's name, message and stack, or the
 * thrown value. */
export function errorText(e) {
  if (e instanceof Error) {
    const head = `${e.name}: ${e.message}`;
    return e.stack?.startsWith(head) ? e.stack : `${head}\n${e.stack ?? ""}`;
  }
  return `thrown: ${String(e)}`;
}

/** Takes the tests registered so far and runs them in order, each to its end, calling
 * `report({ name, ok, ms, error })` after each (`error`: its errorText, or null). */
export async function runRegistered(report) {
  for (const { name, fn } of takeRegistered()) {
    const start = performance.now();
    let error = null;
    try {
      await fn();
    } catch (e) {
      error = errorText(e);
    }
    report({ name, ok: error === null, ms: Math.round(performance.now() - start), error });
  }
}
