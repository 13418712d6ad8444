// Assertions for the browser tests, after node:assert's: each throws an AssertionError
// naming what was expected and what came.

export class AssertionError extends Error {
  constructor(message) {
    super(message);
    this.name = "AssertionError";
  }
}

function show(v) {
  if (typeof v === "bigint") return `${v}n`;
  if (typeof v === "string") return JSON.stringify(v);
  if (v instanceof Error) return `${v.name}: ${v.message}`;
  if (ArrayBuffer.isView(v)) return `${v.constructor.name}(${v.length ?? v.byteLength})`;
  return String(v);
}

function fail(message, fallback) {
  throw new AssertionError(message ? `${message}: ${fallback}` : fallback);
}

/** `value` is truthy. */
export function ok(value, message) {
  if (!value) fail(message, `expected a truthy value, got ${show(value)}`);
}

/** `actual` is `expected` (Object.is). */
export function equal(actual, expected, message) {
  if (!Object.is(actual, expected)) fail(message, `expected ${show(expected)}, got ${show(actual)}`);
}

/** `text` matches `re`. */
export function match(text, re, message) {
  if (typeof text !== "string" || !re.test(text)) fail(message, `expected a string matching ${re}, got ${show(text)}`);
}

function check(error, expected, message) {
  if (expected === undefined) return;
  if (expected instanceof RegExp) {
    if (!expected.test(String(error?.message))) fail(message, `the error ${show(error)} does not match ${expected}`);
  } else if (typeof expected === "function" && expected.prototype instanceof Error) {
    if (!(error instanceof expected)) fail(message, `expected a ${expected.name}, got ${show(error)}`);
  } else if (typeof expected === "function") {
    if (expected(error) !== true) fail(message, `the error ${show(error)} was not the one expected`);
  }
}

/** `fn()` throws, and the error satisfies `expected` (a RegExp for its message, an Error
 * class, or a predicate returning true). */
export function throws(fn, expected, message) {
  try {
    fn();
  } catch (e) {
    check(e, expected, message);
    return;
  }
  fail(message, "expected an exception, none was thrown");
}

/** `promise` (or `fn()`'s) rejects, and the reason satisfies `expected` (as `throws`). */
export async function rejects(promise, expected, message) {
  try {
    await (typeof promise === "function" ? promise() : promise);
  } catch (e) {
    check(e, expected, message);
    return;
  }
  fail(message, "expected a rejection, the promise resolved");
}

function bytesOf(v) {
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  throw new TypeError(`sameBytes takes typed arrays, DataViews or ArrayBuffers; got ${show(v)}`);
}

/** `got` and `want` hold the same bytes; a difference names the first differing element
 * (of `want`'s element size) and both bit patterns in hex. */
export function sameBytes(got, want, message) {
  const g = bytesOf(got);
  const w = bytesOf(want);
  if (g.length !== w.length) fail(message, `expected ${w.length} bytes, got ${g.length}`);
  const size = ArrayBuffer.isView(want) && want.BYTES_PER_ELEMENT ? want.BYTES_PER_ELEMENT : 1;
  for (let i = 0; i < w.length; i++) {
    if (g[i] !== w[i]) {
      const e = Math.floor(i / size);
      const hex = (b) => Array.from(b.subarray(e * size, e * size + size)).reverse().map((x) => x.toString(16).padStart(2, "0")).join("");
      fail(message, `element ${e} (of ${w.length / size}) differs: expected 0x${hex(w)}, got 0x${hex(g)}`);
    }
  }
}
