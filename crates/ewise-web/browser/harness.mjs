// The registry of browser tests: test modules call `test(name, fn)` when imported, and
// runner.mjs runs what they registered, in order.

const registered = [];

/** Registers the test `name`: `fn` (async or not) passes unless it throws or rejects. */
export function test(name, fn) {
  if (typeof name !== "string" || typeof fn !== "function") {
    throw new TypeError("test(name, fn): name must be a string and fn a function");
  }
  registered.push({ name, fn });
}

/** Takes the tests registered so far, leaving none. */
export function takeRegistered() {
  return registered.splice(0, registered.length);
}
