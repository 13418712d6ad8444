// The entry module of the npm package `ewise`: DirectML's SIGN and IS_INFINITY,
// bit-exact (docs/SEMANTICS.md), on the CPU through WebAssembly and on the GPU through
// WebGPU. Types: ewise.d.ts. Built into pkg/ by scripts/web-build.sh beside the
// wasm-bindgen output (ewise_web.js, ewise_web_bg.wasm).

import wasmInit, * as wasm from "./ewise_web.js";

// ---------------------------------------------------------------------------- errors

/** Every error ewise throws. `kind` says which, more finely than the class. */
export class EwiseError extends Error {
  constructor(message, kind, options) {
    super(message, options);
    this.kind = kind ?? "Error";
  }
}

/** A description, binding or array that DirectML's rules (or ewise's) refuse: the Rust
 * error's message, unchanged; `kind` is its variant (`UnsupportedDataType`, ...). */
export class ValidationError extends EwiseError {}

/** An argument of the wrong type, an unknown option or option value: `kind` names the
 * argument (`x`, `options.nan`, ...). What inspecting an argument threw (a revoked
 * Proxy, a getter that throws) is one too, with that as `cause` (`kind` "arguments"
 * where no single argument is to blame). */
export class ArgumentError extends EwiseError {}

/** The GPU could not be had or failed: `kind` is the Rust variant (`NoAdapter`,
 * `NoUsableAdapter`, `Wgpu`, ...). */
export class GpuError extends EwiseError {}

/** The page or runtime has no WebGPU (`navigator.gpu` is missing). */
export class WebGpuUnavailableError extends GpuError {}

/** Memory could not be allocated: WebAssembly memory for a copy, or a JavaScript
 * array sized by the caller's data (a result, a staging copy), whose RangeError is then
 * the `cause`. */
export class OutOfMemoryError extends EwiseError {}

/** `init` could not load the WebAssembly module: reading, fetching or compiling it
 * failed (`cause` says why); `kind` is "Load" or "Compile". */
export class LoadError extends EwiseError {}

for (const [cls, name] of [
  [EwiseError, "EwiseError"],
  [ValidationError, "ValidationError"],
  [ArgumentError, "ArgumentError"],
  [GpuError, "GpuError"],
  [WebGpuUnavailableError, "WebGpuUnavailableError"],
  [OutOfMemoryError, "OutOfMemoryError"],
  [LoadError, "LoadError"],
]) {
  Object.defineProperty(cls.prototype, "name", { value: name, configurable: true, writable: true });
}

const FROM_WASM = { ValidationError, ArgumentError, GpuError, OutOfMemoryError };

/** Runs `f`, turning the module's tagged errors into this module's classes. */
function call(f) {
  if (trapped !== null) throw trapped;
  try {
    return f();
  } catch (e) {
    throw converted(e);
  }
}

let trapped = null;

function converted(e) {
  if (e instanceof WebAssembly.RuntimeError) {
    trapped = new EwiseError(`ewise's WebAssembly module trapped (${e.message}), which is a bug in ewise: please report it; the module cannot be used again in this page or process`, "Trapped", { cause: e });
    return trapped;
  }
  if (e instanceof Error && !(e instanceof EwiseError) && Object.hasOwn(FROM_WASM, e.name)) {
    return new FROM_WASM[e.name](e.message, e.kind);
  }
  return e;
}

async function callAsync(f) {
  if (trapped !== null) throw trapped;
  try {
    return await f();
  } catch (e) {
    throw converted(e);
  }
}

function argumentError(argument, message) {
  return new ArgumentError(message, argument);
}

/** The most characters of a caller's string that a message quotes. */
const CLIP = 64;

/** `text` as a message quotes it: its first 64 characters, then "…(N chars)" when it
 * is longer, as ewise-core's `text::clip`, which the Rust module uses, cuts them. */
function clip(text) {
  return text.length > CLIP ? `${text.slice(0, CLIP)}…(${text.length} chars)` : text;
}

/** A thrown value as a message shows it ("TypeError: ..."), never throwing itself. */
function shown(e) {
  try {
    if (e instanceof Error) return `${clip(String(e.name))}: ${clip(String(e.message))}`;
    return typeof e === "string" ? clip(e) : describe(e);
  } catch {
    return "a value that cannot be shown";
  }
}

/** `e`, thrown while `what` inspected `argument` by `doing`, as an ArgumentError whose
 * `cause` is `e`. */
function inspectionError(argument, what, doing, e) {
  return new ArgumentError(`${what}: ${doing} threw ${shown(e)}`, argument, { cause: e });
}

/** What an entry point throws for `e`: ewise's own errors (and the module's, converted)
 * as they are; anything else (a revoked Proxy, a getter that throws, a detached
 * buffer met where no check expected it) an ArgumentError of kind "arguments" whose
 * `cause` is `e`. */
function foreign(e, what) {
  try {
    const c = converted(e);
    if (c instanceof EwiseError) return c;
  } catch {
    // `e` is hostile itself: reported below.
  }
  return inspectionError("arguments", what, "inspecting its arguments", e);
}

/** `f()` for the entry point `what`, throwing only EwiseErrors (`foreign`). */
function guard(what, f) {
  try {
    return f();
  } catch (e) {
    throw foreign(e, what);
  }
}

/** `await f()` for the entry point `what`, rejecting only with EwiseErrors. */
async function guardAsync(what, f) {
  try {
    return await f();
  } catch (e) {
    throw foreign(e, what);
  }
}

// ------------------------------------------------------------------------------ init

let loading = null;
let ready = false;
/** The module's WebAssembly.Memory, once loaded. */
let memory = null;

function isNode() {
  return typeof process === "object" && process !== null && typeof process.versions?.node === "string";
}

const NODE_FS = "node:fs/promises";

/** Under Node, the file `source` names, for `fs.readFile`: the default module beside
 * this one (beside the bundle, for a CommonJS bundle of it), a `file:` URL (a URL or a
 * string), or a string that is no URL (a path; one letter before a colon is a Windows
 * drive); otherwise undefined (fetched). */
function nodeFile(source) {
  if (source === undefined) {
    // A CommonJS bundle of this module has no import.meta.url, but its own __dirname.
    const base = import.meta.url;
    if (base === undefined && typeof __dirname === "string") return `${__dirname}/ewise_web_bg.wasm`;
    return new URL("./ewise_web_bg.wasm", base);
  }
  if (source instanceof URL) return source.protocol === "file:" ? source : undefined;
  if (typeof source !== "string") return undefined;
  if (!/^[a-z][a-z0-9+.-]+:/i.test(source)) return source;
  return /^file:/i.test(source) ? new URL(source) : undefined;
}

/** `e`, thrown by `init` while it loaded `source`, as a LoadError. */
function loadError(e, source) {
  if (e instanceof EwiseError) return e;
  const compile = e instanceof WebAssembly.CompileError || e instanceof WebAssembly.LinkError;
  const from = source === undefined ? "ewise_web_bg.wasm beside ewise.js" : typeof source === "string" || source instanceof URL ? JSON.stringify(clip(String(source))) : describe(source);
  const failed = compile ? "could not be compiled" : "could not be loaded";
  return new LoadError(`init: the WebAssembly module from ${from} ${failed}: ${shown(e)}`, compile ? "Compile" : "Load", { cause: e });
}

async function load(source) {
  let module = source;
  try {
    const file = isNode() ? nodeFile(source) : undefined;
    if (file !== undefined) {
      const fs = await import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_FS);
      module = await fs.readFile(file);
    }
    const exports = await wasmInit(module === undefined ? undefined : { module_or_path: module });
    memory = exports.memory;
  } catch (e) {
    throw loadError(e, source);
  }
  ready = true;
}

/**
 * Loads and instantiates the WebAssembly module; every other function needs it done.
 * With no argument it finds `ewise_web_bg.wasm` beside this module (`fetch` in a
 * browser, the file system in Node); `source` may instead be a URL (in Node a `file:`
 * URL or a path string is read from the file system, as the default is; other URLs are
 * fetched), a `Response`, bytes or a compiled `WebAssembly.Module`. Any failure is a
 * `LoadError` (kind "Load", or "Compile" for bytes that are no module of this build)
 * with the reason as `cause`. Calling it again returns the same promise.
 */
export function init(source) {
  if (loading === null) {
    loading = load(source).catch((e) => {
      loading = null;
      throw e;
    });
  }
  return loading;
}

function needReady(what) {
  if (trapped !== null) throw trapped;
  if (!ready) {
    throw new EwiseError(`${what}: the WebAssembly module is not loaded yet: await init() first`, "NotInitialized");
  }
}

// ----------------------------------------------------------------------- array types

/** The engine's own getter `name` of `proto`, or undefined: called on a value, it reads
 * the internal slot, which no own property, subclass or Proxy can fake. */
function intrinsic(proto, name) {
  return Object.getOwnPropertyDescriptor(proto, name)?.get;
}

const TYPED = Object.getPrototypeOf(Uint8Array.prototype);
const TAG = intrinsic(TYPED, Symbol.toStringTag);
const TA_BUFFER = intrinsic(TYPED, "buffer");
const TA_OFFSET = intrinsic(TYPED, "byteOffset");
const TA_BYTES = intrinsic(TYPED, "byteLength");
const TA_LENGTH = intrinsic(TYPED, "length");
const DV_BUFFER = intrinsic(DataView.prototype, "buffer");
const DV_OFFSET = intrinsic(DataView.prototype, "byteOffset");
const DV_BYTES = intrinsic(DataView.prototype, "byteLength");
const AB_BYTES = intrinsic(ArrayBuffer.prototype, "byteLength");
const AB_DETACHED = intrinsic(ArrayBuffer.prototype, "detached");
const SAB_BYTES = typeof SharedArrayBuffer === "function" ? intrinsic(SharedArrayBuffer.prototype, "byteLength") : undefined;

/** `getter.call(v)`, or undefined where `v` lacks the getter's internal slot. */
function slot(getter, v) {
  if (getter === undefined) return undefined;
  try {
    return getter.call(v);
  } catch {
    return undefined;
  }
}

/** The byte length of `b` and whether it is shared, where it is an ArrayBuffer or a
 * SharedArrayBuffer (by their own getters, which no prototype or Proxy fakes), else
 * undefined. The getter `b` looks like it has is tried first: an exception (which costs
 * microseconds) is met only where `b` disguises its class or is neither. */
function bufferKind(b) {
  let shared = false;
  try {
    shared = SAB_BYTES !== undefined && b instanceof SharedArrayBuffer;
  } catch {
    // A revoked Proxy: neither, as the getters say below.
  }
  const first = slot(shared ? SAB_BYTES : AB_BYTES, b);
  if (first !== undefined) return { length: first, shared };
  const other = shared ? slot(AB_BYTES, b) : slot(SAB_BYTES, b);
  return other === undefined ? undefined : { length: other, shared: !shared };
}

/** Whether ArrayBuffer `b` is detached (transferred): its `detached`, or where the
 * runtime lacks that, a length of 0 that no view can be made over. */
function isDetached(b) {
  if (AB_DETACHED !== undefined) return AB_DETACHED.call(b);
  if (AB_BYTES.call(b) !== 0) return false;
  try {
    new Uint8Array(b);
    return false;
  } catch {
    return true;
  }
}

/** The length in elements of typed array `x`, from its internal slots. */
function lengthOf(x) {
  return TA_LENGTH.call(x);
}

/** DataType numbers (DML_TENSOR_DATA_TYPE, ewise's extensions from 1000). */
const DT = {
  int8: 8, uint8: 5, int16: 7, uint16: 4, int32: 6, uint32: 3, int64: 11, uint64: 10,
  float16: 2, bfloat16: 1000, float32: 1, float64: 9,
};

/** Each typed array's natural dtype and constructor. */
const ARRAYS = {
  Int8Array: ["int8", Int8Array],
  Uint8Array: ["uint8", Uint8Array],
  Int16Array: ["int16", Int16Array],
  Uint16Array: ["uint16", Uint16Array],
  Int32Array: ["int32", Int32Array],
  Uint32Array: ["uint32", Uint32Array],
  BigInt64Array: ["int64", BigInt64Array],
  BigUint64Array: ["uint64", BigUint64Array],
  Float32Array: ["float32", Float32Array],
  Float64Array: ["float64", Float64Array],
};
if (typeof Float16Array === "function") {
  ARRAYS.Float16Array = ["float16", globalThis.Float16Array];
}

const SIGN_ARRAYS = Object.keys(ARRAYS);
const FLOAT_DTYPES = ["float16", "bfloat16", "float32", "float64"];
const FLOAT_ARRAYS = ["Float32Array", "Float64Array", ...(ARRAYS.Float16Array ? ["Float16Array"] : [])];

function tagOf(x) {
  return ArrayBuffer.isView(x) ? TAG.call(x) : undefined;
}

function describe(x) {
  try {
    return described(x);
  } catch {
    return "an object that throws when inspected (a revoked Proxy?)";
  }
}

function described(x) {
  if (x === null) return "null";
  if (x === undefined) return "undefined";
  if (Array.isArray(x)) return "an Array (convert it first, e.g. Float32Array.from(x))";
  const tag = tagOf(x);
  if (tag) return article(tag);
  if (x instanceof DataView) return "a DataView";
  if (x instanceof ArrayBuffer) return "an ArrayBuffer (wrap it in a typed array of its elements)";
  if (typeof x === "object") return `an object (${clip(Object.prototype.toString.call(x))})`;
  if (typeof x === "string") return `the string ${JSON.stringify(clip(x))}`;
  if (typeof x === "function") return "a function";
  return `${typeof x} ${clip(String(x))}`;
}

function article(noun) {
  return `${/^[AEIO]/i.test(noun) ? "an" : "a"} ${noun}`;
}

function listed(names) {
  return names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} or ${names.at(-1)}`;
}

function quoted(values) {
  return listed(values.map((v) => JSON.stringify(v)));
}

function showValue(v) {
  if (typeof v === "string") return JSON.stringify(clip(v));
  if (typeof v === "bigint") return `${clip(String(v))}n`;
  return describe(v);
}

/** The most bytes one array may hold: the module counts them in 32 bits. */
const MAX_BYTES = 0xffffffff;

function tooLarge(argument, what, n) {
  return argumentError(argument, `${what}: ${argument} holds ${n} bytes, more than the ${MAX_BYTES} one call takes (split it)`);
}

function detachedError(argument, what) {
  return argumentError(argument, `${what}: ${argument}'s memory is detached (transferred) and cannot be read`);
}

/** The bytes of typed array or DataView `x`, as a view of its memory (a view that is
 * out of bounds of a shrunk resizable ArrayBuffer has none). */
function bytes(x, argument, what) {
  const typed = tagOf(x) !== undefined;
  const buffer = (typed ? TA_BUFFER : DV_BUFFER).call(x);
  if (bufferKind(buffer)?.shared === false && isDetached(buffer)) throw detachedError(argument, what);
  const offset = slot(typed ? TA_OFFSET : DV_OFFSET, x) ?? 0;
  const length = slot(typed ? TA_BYTES : DV_BYTES, x) ?? 0;
  if (length > MAX_BYTES) throw tooLarge(argument, what, length);
  return new Uint8Array(buffer, offset, length);
}

/** `input` (bytes from `bytes`) itself, or where it and `out` are views of two
 * SharedArrayBuffer objects, which may be one memory (JavaScript cannot tell), a copy
 * of it in JavaScript's heap: the result is then that of reading the whole input
 * before writing any output, without the module's memory holding the input. */
function staged(input, out, what) {
  const [a, b] = [TA_BUFFER.call(input), TA_BUFFER.call(out)];
  if (a === b || bufferKind(a)?.shared !== true || bufferKind(b)?.shared !== true) return input;
  const copy = allocated(Uint8Array, input.length, 1, "a copy of x, whose memory the output may share", what);
  copy.set(input);
  return copy;
}

/** `new Type(length)`, an array of `length` elements of `size` bytes for `purpose`:
 * where it cannot be allocated (a RangeError), an OutOfMemoryError of kind
 * "OutOfMemory" with that RangeError as `cause`. */
function allocated(Type, length, size, purpose, what) {
  try {
    return new Type(length);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    throw new OutOfMemoryError(`${what}: out of memory: ${length * size} bytes for ${purpose} could not be allocated`, "OutOfMemory", { cause: e });
  }
}

// --------------------------------------------------------------------------- options

/** `options` (an object, or undefined or null for none) with only `accepted` keys: a
 * new object holding each accepted key's value, read once. */
function optionsOf(options, accepted, what, argument = "options") {
  if (options === undefined || options === null) return {};
  let keys;
  try {
    if (typeof options === "object" && !Array.isArray(options) && !ArrayBuffer.isView(options)) keys = Object.keys(options);
  } catch (e) {
    throw inspectionError(argument, what, `inspecting ${argument}`, e);
  }
  if (keys === undefined) {
    throw argumentError(argument, `${what}: ${argument} must be an object such as { ${accepted[0]}: ... }; got ${describe(options)}`);
  }
  for (const key of keys) {
    if (!accepted.includes(key)) {
      const name = JSON.stringify(clip(key));
      const unknown = argument === "options" ? `unknown option ${name}` : `${argument} has an unknown field ${name}`;
      throw argumentError(argument, `${what}: ${unknown} (accepted: ${accepted.join(", ")})`);
    }
  }
  const values = {};
  for (const key of accepted) {
    try {
      values[key] = options[key];
    } catch (e) {
      throw inspectionError(`${argument}.${key}`, what, `reading ${argument}.${key}`, e);
    }
  }
  return values;
}

function choice(options, key, values, what) {
  const v = options[key];
  if (v === undefined) return values[0];
  if (!values.includes(v)) {
    throw argumentError(`options.${key}`, `${what}: options.${key} must be ${quoted(values)}; got ${showValue(v)}`);
  }
  return v;
}

const NAN = ["zero", "propagate"];
const MODES = ["either", "positive", "negative", "neither"];
const MODE_NUMBERS = { either: 0, positive: 1, negative: 2, neither: 1000 };
const DTYPES = Object.keys(DT);

/** The element type of `x` under `options.dtype`: its dtype name. */
function elementType(x, options, float, what) {
  const tag = tagOf(x);
  const arrays = float ? FLOAT_ARRAYS : SIGN_ARRAYS;
  if (tag === undefined || !(float ? [...arrays, "Uint16Array"] : arrays).includes(tag)) {
    const kinds = float ? "floating-point elements" : "integer or floating-point elements";
    throw argumentError("x", `${what}: x must be ${article(listed(arrays))} (${kinds}; float16 and bfloat16 also as Uint16Array bit patterns with options.dtype "float16" or "bfloat16"); got ${describe(x)}`);
  }
  const natural = ARRAYS[tag][0];
  const dtype = options.dtype ?? undefined;
  if (dtype !== undefined && !DTYPES.includes(dtype)) {
    throw argumentError("options.dtype", `${what}: options.dtype must be ${quoted(DTYPES)}; got ${showValue(dtype)}`);
  }
  if (dtype === undefined || dtype === natural) {
    if (float && tag === "Uint16Array") {
      throw argumentError("options.dtype", `${what}: a Uint16Array needs options.dtype "float16" or "bfloat16" (its elements are then bit patterns), since ${what} takes floating-point elements only`);
    }
    return natural;
  }
  if (tag === "Uint16Array" && (dtype === "float16" || dtype === "bfloat16")) return dtype;
  throw argumentError("options.dtype", `${what}: options.dtype ${showValue(dtype)} does not fit ${article(tag)} (its dtype is "${natural}"; "float16" and "bfloat16" are given as Uint16Array bit patterns)`);
}

// ------------------------------------------------------------------- WasmArray

/** The buffer of the module's memory last seen, and every one before it (each detached
 * when the memory grew): a view over one of those is a stale view of a WasmArray. */
let memoryBuffer = null;
const formerBuffers = new WeakSet();

/** The module memory's buffer now (noting the one it replaced). */
function moduleBuffer() {
  const b = memory.buffer;
  if (b !== memoryBuffer) {
    if (memoryBuffer !== null) formerBuffers.add(memoryBuffer);
    memoryBuffer = b;
  }
  return b;
}

/** Whether `buffer` is, or was before the memory grew, the module's memory. */
function isModuleMemory(buffer) {
  return memory !== null && (buffer === moduleBuffer() || formerBuffers.has(buffer));
}

/** Each view a WasmArray handed out (`.array`), to that WasmArray: while a view is
 * reachable its WasmArray is, so the FinalizationRegistry never frees memory a view
 * still shows. */
const viewOwners = new WeakMap();

/** Frees blocks whose WasmArray was collected without `free()`. */
const finalizer = typeof FinalizationRegistry === "function"
  ? new FinalizationRegistry((id) => {
    try {
      if (trapped === null) wasm.blockFree(id);
    } catch {
      // The module trapped meanwhile: nothing can be freed.
    }
  })
  : null;

const CREATE = Symbol("WasmArray");

/**
 * A typed array in ewise's WebAssembly memory: `sign`, `isInfinity` and a
 * `CompiledOperator`'s `execute` run on it where it lies, with no copy in or out.
 * Made by `alloc`; `array` is a view of its elements (made again after the memory grew,
 * which detaches older views: take `array` again rather than keeping it across calls);
 * `free()` releases it (a FinalizationRegistry frees one that is collected unfreed, as
 * a backstop). Any use after `free()`, through it or a view it handed out, is an
 * ArgumentError; nothing is read.
 */
export class WasmArray {
  #id;
  /** Its address, element count, dtype and typed array constructor. */
  #meta;
  #view = null;

  constructor(token, id, address, length, dtype, Type) {
    if (token !== CREATE) throw argumentError("WasmArray", "WasmArray: use alloc(type, length) to get one");
    this.#id = id;
    this.#meta = Object.freeze({ address, length, dtype, Type });
  }

  /** The elements: a typed array over the module's memory (a Uint16Array of bit
   * patterns for "float16" and "bfloat16"). */
  get array() {
    return guard("WasmArray.array", () => this.#current("array", "WasmArray.array"));
  }

  /** The element count. */
  get length() {
    return this.#meta.length;
  }

  /** The element type's name ("float32", "bfloat16", ...). */
  get dtype() {
    return this.#meta.dtype;
  }

  /** The bytes the elements take. */
  get byteLength() {
    return this.#meta.length * this.#meta.Type.BYTES_PER_ELEMENT;
  }

  /** Whether `free()` was called. */
  get freed() {
    return this.#id === null;
  }

  /** Releases the memory; every later use is refused. Calling it again does nothing. */
  free() {
    if (this.#id === null) return;
    const id = this.#id;
    this.#id = null;
    this.#view = null;
    finalizer?.unregister(this);
    if (trapped === null) wasm.blockFree(id);
  }

  /** The current view, made again where the memory grew; refused after `free()`. */
  #current(argument, what) {
    if (this.#id === null) throw freedError(argument, what);
    needReady(what);
    const buffer = moduleBuffer();
    if (this.#view === null || TA_BUFFER.call(this.#view) !== buffer) {
      const { Type, address, length } = this.#meta;
      this.#view = new Type(buffer, address, length);
      viewOwners.set(this.#view, this);
    }
    return this.#view;
  }

  /** `x`'s WasmArray and its address where `x` is a WasmArray or one's current view;
   * undefined where `x` is not in the module's memory; refused where it is but cannot
   * be read there (freed, stale after growth, or a view no WasmArray handed out). */
  static resident(x, argument, what) {
    let owner = x;
    if (!WasmArray.is(x)) {
      const tag = tagOf(x);
      const buffer = tag !== undefined ? TA_BUFFER.call(x) : ArrayBuffer.isView(x) ? DV_BUFFER.call(x) : x;
      if (!isModuleMemory(buffer)) return undefined;
      owner = viewOwners.get(x);
      if (owner === undefined) {
        throw argumentError(argument, `${what}: ${argument} is a view of ewise's WebAssembly memory that no WasmArray handed out (a subarray, or a view made over its buffer): pass the WasmArray, or a copy (slice()) of the elements`);
      }
      if (owner.#id === null) throw freedError(argument, what);
      if (buffer !== moduleBuffer()) {
        throw argumentError(argument, `${what}: ${argument} is a stale view of a WasmArray: ewise's WebAssembly memory grew since it was taken, which detached it; take the WasmArray's array again (or pass the WasmArray)`);
      }
    }
    return { owner, view: owner.#current(argument, what), address: owner.#meta.address };
  }

  /** Whether `x` is a WasmArray (a brand check, which no Proxy or prototype fakes and
   * which never throws). */
  static is(x) {
    return typeof x === "object" && x !== null && #id in x;
  }

  /** WasmArray `x`'s address, length, dtype and typed array, or null once freed. */
  static meta(x) {
    return x.#id === null ? null : x.#meta;
  }

  static made(id, dtype, Type, length) {
    const a = new WasmArray(CREATE, id, wasm.blockAddress(id), length, dtype, Type);
    finalizer?.register(a, id, a);
    return a;
  }
}

if (typeof Symbol.dispose === "symbol") {
  Object.defineProperty(WasmArray.prototype, Symbol.dispose, {
    value() {
      this.free();
    },
    writable: true,
    configurable: true,
  });
}

function freedError(argument, what) {
  return argumentError(argument, `${what}: ${argument} is a WasmArray that was freed (use after free); nothing was read or written`);
}

/** The dtype names alloc takes, each with its typed array (bit patterns in a
 * Uint16Array for float16 and bfloat16). */
function allocType(type, what) {
  if (typeof type === "string") {
    if (!DTYPES.includes(type)) {
      throw argumentError("type", `${what}: type must be a typed array constructor or ${quoted(DTYPES)}; got ${showValue(type)}`);
    }
    const tag = type === "float16" || type === "bfloat16" ? "Uint16Array" : Object.keys(ARRAYS).find((t) => ARRAYS[t][0] === type && t !== "Float16Array");
    return [type, ARRAYS[tag][1]];
  }
  const tag = Object.keys(ARRAYS).find((t) => ARRAYS[t][1] === type);
  if (tag === undefined) {
    throw argumentError("type", `${what}: type must be one of ${listed(Object.keys(ARRAYS))} or ${quoted(DTYPES)}; got ${describe(type)}`);
  }
  return [ARRAYS[tag][0], type];
}

/**
 * A new WasmArray of `length` zeroed elements of `type`: a typed array constructor
 * (Float32Array, Int8Array, ...) or a dtype name ("float32", "float16", "bfloat16":
 * the last two as Uint16Array bit patterns). An OutOfMemoryError where the module's
 * memory cannot grow to hold it.
 */
export function alloc(type, length) {
  const what = "alloc";
  return guard(what, () => {
    needReady(what);
    const [dtype, Type] = allocType(type, what);
    return allocLike(dtype, Type, length, "length", what);
  });
}

function allocLike(dtype, Type, length, argument, what) {
  if (!Number.isSafeInteger(length) || length < 0 || length * Type.BYTES_PER_ELEMENT > MAX_BYTES) {
    throw argumentError(argument, `${what}: ${argument} must be an integer from 0 to ${Math.floor(MAX_BYTES / Type.BYTES_PER_ELEMENT)} (elements of ${Type.BYTES_PER_ELEMENT} bytes); got ${showValue(length)}`);
  }
  const id = call(() => wasm.blockAlloc(length * Type.BYTES_PER_ELEMENT));
  return WasmArray.made(id, dtype, Type, length);
}

// ------------------------------------------------------------------------ operations

/** `x` (an array argument) with its WasmArray, where it is one or one's view. */
function operand(x, argument, what) {
  const r = WasmArray.resident(x, argument, what);
  return r === undefined ? { array: x, resident: null } : { array: r.view, resident: r };
}

/** The output: `options.out` (a typed array of tag `tag` or a WasmArray of it), or a
 * new array of `length`, a WasmArray where the input is one. */
function outputOf(options, tag, dtype, length, input, what) {
  const out = options.out;
  if (out === undefined || out === null) {
    const Type = ARRAYS[tag][1];
    if (input.resident !== null) {
      const r = allocLike(dtype, Type, length, "x", what);
      return { result: r, ...operand(r, "options.out", what) };
    }
    const result = allocated(Type, length, Type.BYTES_PER_ELEMENT, "the result", what);
    return { result, array: result, resident: null };
  }
  const o = operand(out, "options.out", what);
  if (tagOf(o.array) !== tag) {
    throw argumentError("options.out", `${what}: options.out must be ${article(tag)}${input.resident !== null || o.resident !== null ? " (or a WasmArray of one)" : ""} (like ${tag === "Uint8Array" ? "the result" : "x"}); got ${describe(out)}`);
  }
  return { result: out, ...o };
}

/** `options.dtype`, or where x is a WasmArray and the option is absent, its dtype. */
function withDtype(o, input) {
  return o.dtype === undefined && input.resident !== null ? { ...o, dtype: input.resident.owner.dtype } : o;
}

const SIGN_OPTIONS = ["nan", "out", "dtype"];
const IS_INFINITY_OPTIONS = ["mode", "out", "dtype"];

function prepareSign(x, o, what) {
  const input = operand(x, "x", what);
  const dtype = elementType(input.array, withDtype(o, input), false, what);
  const nan = NAN.indexOf(choice(o, "nan", NAN, what));
  const tag = tagOf(input.array);
  const count = lengthOf(input.array);
  return { dtype: DT[dtype], nan, count, input, output: outputOf(o, tag, dtype, count, input, what) };
}

function prepareIsInfinity(x, o, what) {
  const input = operand(x, "x", what);
  const dtype = elementType(input.array, withDtype(o, input), true, what);
  const mode = MODE_NUMBERS[choice(o, "mode", MODES, what)];
  const count = lengthOf(input.array);
  return { dtype: DT[dtype], mode, count, input, output: outputOf(o, "Uint8Array", "uint8", count, input, what) };
}

/** The zero-copy call's common case, on numbers alone: WasmArray `x` (live, of a type
 * the operation takes) into a live WasmArray `o.out` of its type (or a new one), with
 * no `o.dtype`; undefined for any other case, which the general path runs or refuses
 * with its messages. */
function zeroCopy(x, o, isSign, what) {
  const xm = WasmArray.meta(x);
  if (xm === null || (o.dtype !== undefined && o.dtype !== null)) return undefined;
  if (!isSign && !FLOAT_DTYPES.includes(xm.dtype)) return undefined;
  const OutType = isSign ? xm.Type : Uint8Array;
  let out = o.out;
  let om;
  if (out === undefined || out === null) {
    out = undefined;
  } else {
    om = WasmArray.is(out) ? WasmArray.meta(out) : null;
    if (om === null || om.Type !== OutType) return undefined;
  }
  const arg = isSign ? NAN.indexOf(choice(o, "nan", NAN, what)) : MODE_NUMBERS[choice(o, "mode", MODES, what)];
  if (out === undefined) {
    out = allocLike(isSign ? xm.dtype : "uint8", OutType, xm.length, "x", what);
    om = WasmArray.meta(out);
  }
  const f = isSign ? wasm.signBlocks : wasm.isInfinityBlocks;
  call(() => f(DT[xm.dtype], arg, xm.address, om.address, xm.length, om.length));
  return out;
}

/** Runs `atFn` (the module's signAt or isInfinityAt) or `bytesFn` (its copying
 * signBytes or isInfinityBytes) on prepared operands `p`, with `arg` (NaN policy or
 * mode). */
function runPrepared(p, arg, atFn, bytesFn, what) {
  const { input, output } = p;
  if (input.resident === null && output.resident === null) {
    const out = bytes(output.array, "options.out", what);
    call(() => bytesFn(p.dtype, arg, staged(bytes(input.array, "x", what), out, what), out));
  } else {
    const i = input.resident?.address ?? bytes(input.array, "x", what);
    const o = output.resident?.address ?? bytes(output.array, "options.out", what);
    call(() => atFn(p.dtype, arg, i, o, p.count, lengthOf(output.array)));
  }
  return output.result;
}

/**
 * The sign of each element of `x`: -1, +0 or +1 of its type (+0 for -0; NaN gives +0
 * under `nan: "zero"`, DirectML's default, or itself, bit for bit, under
 * `nan: "propagate"`). Returns `options.out` (which may be `x`) or a new array of `x`'s
 * type (a new WasmArray where `x` is one). `x` and `options.out` may be WasmArrays (or
 * their `array`): those are read and written where they lie.
 */
export function sign(x, options) {
  const what = "sign";
  return guard(what, () => {
    needReady(what);
    const o = optionsOf(options, SIGN_OPTIONS, what);
    const fast = WasmArray.is(x) ? zeroCopy(x, o, true, what) : undefined;
    if (fast !== undefined) return fast;
    const p = prepareSign(x, o, what);
    return runPrepared(p, p.nan, wasm.signAt, wasm.signBytes, what);
  });
}

/**
 * 1 where an element of `x` is an infinity that `mode` selects ("either", the default;
 * "positive"; "negative"; "neither": none), else 0. Returns `options.out` or a new
 * Uint8Array (a new WasmArray where `x` is one); WasmArrays as `sign` takes them.
 */
export function isInfinity(x, options) {
  const what = "isInfinity";
  return guard(what, () => {
    needReady(what);
    const o = optionsOf(options, IS_INFINITY_OPTIONS, what);
    const fast = WasmArray.is(x) ? zeroCopy(x, o, false, what) : undefined;
    if (fast !== undefined) return fast;
    const p = prepareIsInfinity(x, o, what);
    return runPrepared(p, p.mode, wasm.isInfinityAt, wasm.isInfinityBytes, what);
  });
}

// ------------------------------------------------------------- DirectML-style API

const DATA_TYPES = [
  "FLOAT32", "FLOAT16", "UINT32", "UINT16", "UINT8", "INT32", "INT16", "INT8", "FLOAT64",
  "UINT64", "INT64", "UINT4", "INT4", "BFLOAT16", "BOOL", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ",
  "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UNKNOWN",
];
const OPERATORS = ["ELEMENT_WISE_SIGN", "ELEMENT_WISE_IS_INFINITY"];
const INFINITY_MODES = ["EITHER", "POSITIVE", "NEGATIVE", "NEITHER"];
const U32 = 0xffffffff;
const U64 = (1n << 64n) - 1n;

/** The most entries of a list (sizes, strides, bindings, buffers, feature levels) and
 * characters of a feature level one call takes (of all its feature levels: four times
 * that): they are copied into the module's memory by wasm-bindgen, whose allocation
 * traps where it fails, so they are bounded before they cross. */
const MAX_ENTRIES = 1 << 20;

function tooMany(n, argument, what, unit) {
  if (n > MAX_ENTRIES) {
    throw argumentError(argument, `${what}: ${argument} has ${n} ${unit}, more than the ${MAX_ENTRIES} one call takes`);
  }
}

function u32List(v, argument, what, optional) {
  if (optional && (v === undefined || v === null)) return undefined;
  if (!Array.isArray(v) && !ArrayBuffer.isView(v)) {
    throw argumentError(argument, `${what}: ${argument} must be an array of integers from 0 to ${U32}; got ${describe(v)}`);
  }
  tooMany(Array.isArray(v) ? v.length : slot(TA_LENGTH, v) ?? 0, argument, what, "entries");
  let list;
  try {
    list = Array.from(v);
  } catch (e) {
    throw inspectionError(argument, what, `reading ${argument}`, e);
  }
  for (const [i, n] of list.entries()) {
    if (!Number.isInteger(n) || n < 0 || n > U32) {
      throw argumentError(argument, `${what}: ${argument}[${i}] must be an integer from 0 to ${U32}; got ${showValue(n)}`);
    }
  }
  return Uint32Array.from(list);
}

function u32(v, argument, what, fallback) {
  if (v === undefined && fallback !== undefined) return fallback;
  if (!Number.isInteger(v) || v < 0 || v > U32) {
    throw argumentError(argument, `${what}: ${argument} must be an integer from 0 to ${U32}; got ${showValue(v)}`);
  }
  return v;
}

function u64(v, argument, what) {
  const n = typeof v === "bigint" ? v : Number.isSafeInteger(v) ? BigInt(v) : -1n;
  if (n < 0n || n > U64) {
    throw argumentError(argument, `${what}: ${argument} must be a non-negative integer (a number up to 2^53 - 1, or a bigint below 2^64); got ${showValue(v)}`);
  }
  return n;
}

/** A bigint as a number where that is exact. */
function numeric(n) {
  return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
}

function dataTypeName(v, argument, what) {
  if (typeof v !== "string" || !DATA_TYPES.includes(v.toUpperCase())) {
    throw argumentError(argument, `${what}: ${argument} must be a data type name (${DATA_TYPES.join(", ")}); got ${showValue(v)}`);
  }
  return v.toUpperCase();
}

function levelText(v, argument, what) {
  if (typeof v === "number" && Number.isInteger(v)) return `0x${v.toString(16)}`;
  if (typeof v !== "string") {
    throw argumentError(argument, `${what}: ${argument} must be a feature level such as "6_4", "6.4" or 0x6400; got ${showValue(v)}`);
  }
  tooMany(v.length, argument, what, "characters");
  return v;
}

function nanNumber(v, argument, what) {
  if (v === undefined) return 0;
  if (!NAN.includes(v)) {
    throw argumentError(argument, `${what}: ${argument} must be ${quoted(NAN)}; got ${showValue(v)}`);
  }
  return NAN.indexOf(v);
}

const DESC_KEYS = ["dataType", "sizes", "strides", "totalTensorSizeInBytes", "guaranteedBaseOffsetAlignment", "flags"];

/** A `TensorDesc` object as the module's description (checked argument types only). */
function wasmDesc(desc, argument, what) {
  const d = optionsOf(desc, DESC_KEYS, what, argument);
  if (desc === undefined || desc === null) {
    throw argumentError(argument, `${what}: ${argument} must be a tensor description { dataType, sizes, strides?, ... }; got ${describe(desc)}`);
  }
  const total = d.totalTensorSizeInBytes === undefined ? undefined : u64(d.totalTensorSizeInBytes, `${argument}.totalTensorSizeInBytes`, what);
  return call(() => new wasm.WebTensorDesc(
    dataTypeName(d.dataType, `${argument}.dataType`, what),
    u32List(d.sizes, `${argument}.sizes`, what, false),
    u32List(d.strides, `${argument}.strides`, what, true),
    total,
    u32(d.guaranteedBaseOffsetAlignment, `${argument}.guaranteedBaseOffsetAlignment`, what, 0),
    u32(d.flags, `${argument}.flags`, what, 0),
  ));
}

/**
 * DirectML's `DMLCalcBufferTensorSize`: the minimum bytes of a tensor (rounded up to 4),
 * or `null` when there is none (strides of another count, a type without a byte size).
 */
export function calcBufferTensorSize(dataType, sizes, strides) {
  const what = "calcBufferTensorSize";
  return guard(what, () => {
    needReady(what);
    const size = call(() => wasm.calcBufferTensorSize(
      dataTypeName(dataType, "dataType", what),
      u32List(sizes, "sizes", what, false),
      u32List(strides, "strides", what, true),
    ));
    return size === undefined ? null : numeric(size);
  });
}

/**
 * A tensor description (`DML_BUFFER_TENSOR_DESC`) with DMLCalcBufferTensorSize's total
 * size, flags 0 and no alignment promise: `TensorDesc::new` or, with `strides`,
 * `TensorDesc::strided`.
 */
export function tensorDesc(dataType, sizes, strides) {
  const what = "tensorDesc";
  return guard(what, () => {
    needReady(what);
    const d = wasmDesc({ dataType, sizes, strides }, "desc", what);
    try {
      return {
        dataType: d.dataType,
        sizes: Array.from(d.sizes),
        ...(d.strides === undefined ? {} : { strides: Array.from(d.strides) }),
        totalTensorSizeInBytes: numeric(d.totalTensorSizeInBytes),
        guaranteedBaseOffsetAlignment: 0,
        flags: 0,
      };
    } finally {
      d.free();
    }
  });
}

/** Operator descriptions: `OperatorDesc.sign(input, output)`,
 * `OperatorDesc.isInfinity(input, output, mode = "EITHER")`. */
export const OperatorDesc = Object.freeze({
  sign: (input, output) => ({ type: "ELEMENT_WISE_SIGN", input, output }),
  isInfinity: (input, output, mode = "EITHER") => ({ type: "ELEMENT_WISE_IS_INFINITY", input, output, mode }),
});

/** A binding of `sizeInBytes` bytes at `offset` of buffer number `buffer`. */
export function bufferBinding(buffer, offset, sizeInBytes) {
  return { buffer, offset, sizeInBytes };
}

const DEVICE_OPTIONS = ["featureLevel", "minFeatureLevel", "extensions", "nanPolicy"];

/** The device options of `o` (`DEVICE_OPTIONS`), checked: the module's
 * `WebDeviceOptions`, which the caller frees. */
function wasmDeviceOptions(o, what) {
  const level = o.featureLevel === undefined ? undefined : levelText(o.featureLevel, "options.featureLevel", what);
  const min = o.minFeatureLevel === undefined ? undefined : levelText(o.minFeatureLevel, "options.minFeatureLevel", what);
  const extensions = o.extensions === undefined ? false : o.extensions;
  if (typeof extensions !== "boolean") {
    throw argumentError("options.extensions", `${what}: options.extensions must be true or false; got ${describe(extensions)}`);
  }
  const nan = nanNumber(o.nanPolicy, "options.nanPolicy", what);
  return call(() => new wasm.WebDeviceOptions(level, min, extensions, nan));
}

/** `checkFeatureLevels` of the module's `device`. */
function checkLevels(device, levels, what) {
  if (!Array.isArray(levels)) {
    throw argumentError("levels", `${what}: levels must be an array of feature levels; got ${describe(levels)}`);
  }
  tooMany(levels.length, "levels", what, "entries");
  const texts = levels.map((l, i) => levelText(l, `levels[${i}]`, what));
  const chars = texts.reduce((n, t) => n + t.length, 0);
  if (chars > 4 * MAX_ENTRIES) {
    throw argumentError("levels", `${what}: levels have ${chars} characters in all, more than the ${4 * MAX_ENTRIES} one call takes`);
  }
  return call(() => device.checkFeatureLevels(texts)) ?? null;
}

/** `createOperator` of the module's `device`, wrapped in `Cls` (`Operator` or
 * `GpuOperator`). */
function createWith(device, desc, what, Cls) {
  const d = optionsOf(desc, ["type", "input", "output", "mode"], what, "desc");
  if (!OPERATORS.includes(d.type)) {
    throw argumentError("desc.type", `${what}: desc.type must be ${quoted(OPERATORS)}; got ${showValue(d.type)}`);
  }
  const sign = d.type === OPERATORS[0];
  if (sign && d.mode !== undefined) {
    throw argumentError("desc.mode", `${what}: ELEMENT_WISE_SIGN has no mode`);
  }
  let mode = 0;
  if (!sign && d.mode !== undefined) {
    const m = typeof d.mode === "string" ? d.mode.toUpperCase() : d.mode;
    mode = INFINITY_MODES.includes(m) ? MODE_NUMBERS[m.toLowerCase()] : -1;
    if (mode < 0) {
      throw argumentError("desc.mode", `${what}: desc.mode must be ${quoted(INFINITY_MODES)}; got ${showValue(d.mode)}`);
    }
  }
  const input = wasmDesc(d.input, "desc.input", what);
  let output;
  try {
    output = wasmDesc(d.output, "desc.output", what);
    return new Cls(call(() => device.createOperator(sign ? 0 : 1, input, output, mode)), d);
  } finally {
    input.free();
    output?.free();
  }
}

/** What a CPU `Device` and a `GpuDevice` share: the DirectML-style face of a wasm
 * device (its options, feature levels and operator creation). */
class DirectMLDevice {
  #device;

  constructor(device) {
    this.#device = device;
  }

  /** The feature level of its DirectML-style operators ("6_4"). */
  get featureLevel() {
    return this.#device.featureLevel;
  }

  /** Whether its DirectML-style operators may use the ewise extensions. */
  get extensions() {
    return this.#device.extensions;
  }

  /** The NaN policy new SIGN operators start with. */
  get nanPolicy() {
    return NAN[this.#device.nanPolicy];
  }

  /** The highest of `levels` at or below the device's level, or null. */
  checkFeatureLevels(levels) {
    const what = `${this.constructor.label}.checkFeatureLevels`;
    return guard(what, () => checkLevels(this.#device, levels, what));
  }

  /** Validates `desc` (from `OperatorDesc`) at the device's level: an operator of the
   * device's kind (`Operator`, `GpuOperator`), or the rules' first `ValidationError` (on
   * the GPU, a `GpuError` of kind "BufferTooLarge" for a tensor larger than the GPU's
   * largest buffer). */
  createOperator(desc) {
    const what = `${this.constructor.label}.createOperator`;
    return guard(what, () => createWith(this.#device, desc, what, this.constructor.operatorClass));
  }
}

/** A CPU device that validates as a DirectML device of one feature level. */
export class Device extends DirectMLDevice {
  static label = "Device";

  static get operatorClass() {
    return Operator;
  }

  /**
   * `featureLevel` (default "6_4"), `minFeatureLevel` (creation fails when the level is
   * below it), `extensions` (default false: DirectML's rules only) and `nanPolicy`
   * ("zero", the default, or "propagate") of new SIGN operators.
   */
  constructor(options) {
    const what = "new Device";
    super(guard(what, () => {
      needReady(what);
      const deviceOptions = wasmDeviceOptions(optionsOf(options, DEVICE_OPTIONS, what), what);
      try {
        return call(() => new wasm.WebDevice(deviceOptions));
      } finally {
        deviceOptions.free();
      }
    }));
  }

  /** A strict device at `level`. */
  static withFeatureLevel(level) {
    return new Device({ featureLevel: level });
  }
}

/** What `Operator` and `GpuOperator` share: a validated operator, not yet compiled. */
class Validated {
  #operator;
  #desc;

  constructor(operator, desc) {
    const cls = new.target;
    if (!guard(cls.label, () => operator instanceof cls.wasmClass)) {
      throw argumentError("operator", `${cls.label}: use ${cls.creator}() to get one`);
    }
    this.#operator = operator;
    this.#desc = desc;
  }

  /** The description it was created from. */
  get desc() {
    return this.#desc;
  }

  /** Its NaN policy ("zero" or "propagate"). */
  get nanPolicy() {
    return NAN[this.#operator.nanPolicy];
  }

  /** This operator with another NaN policy. */
  withNanPolicy(policy) {
    const cls = this.constructor;
    const what = `${cls.label}.withNanPolicy`;
    return guard(what, () => {
      const nan = nanNumber(policy, "policy", what);
      if (policy === undefined) {
        throw argumentError("policy", `${what}: policy must be ${quoted(NAN)}; got undefined`);
      }
      return new cls(call(() => this.#operator.withNanPolicy(nan)), this.#desc);
    });
  }

  /** Compiles the operator. */
  compile() {
    return guard(`${this.constructor.label}.compile`, () => new this.constructor.compiledClass(call(() => this.#operator.compile())));
  }
}

/** A validated operator, not yet compiled. */
export class Operator extends Validated {
  static label = "Operator";
  static creator = "Device.createOperator";
  static wasmClass = wasm.WebOperator;
  static get compiledClass() {
    return CompiledOperator;
  }
}

/** The bytes of buffer `b` (an ArrayBuffer or SharedArrayBuffer, a typed array or a
 * DataView) as a Uint8Array of the length it has now. */
function bufferMemory(b, name, what) {
  if (WasmArray.is(b) || WasmArray.resident(b, name, what) !== undefined) {
    throw argumentError(name, `${what}: ${name} is a WasmArray (or its array), which only the CPU's CompiledOperator.execute takes, with every buffer a WasmArray; copy its elements out (slice()) for this call`);
  }
  if (ArrayBuffer.isView(b)) return bytes(b, name, what);
  const kind = bufferKind(b);
  if (kind !== undefined) {
    if (!kind.shared && isDetached(b)) throw detachedError(name, what);
    if (kind.length > MAX_BYTES) throw tooLarge(name, what, kind.length);
    return new Uint8Array(b, 0, kind.length);
  }
  throw argumentError(name, `${what}: ${name} must be an ArrayBuffer, a typed array or a DataView; got ${describe(b)}`);
}

function flatBindings(list, argument, what) {
  if (!Array.isArray(list)) {
    throw argumentError(argument, `${what}: ${argument} must be an array of bindings { buffer, offset, sizeInBytes }; got ${describe(list)}`);
  }
  tooMany(list.length, argument, what, "bindings");
  const flat = [];
  for (let i = 0; i < list.length; i++) {
    const b = list[i];
    const name = `${argument}[${i}]`;
    const o = optionsOf(b, ["buffer", "offset", "sizeInBytes"], what, name);
    if (b === undefined || b === null) {
      throw argumentError(name, `${what}: ${name} must be a binding { buffer, offset, sizeInBytes }; got ${describe(b)}`);
    }
    flat.push(
      BigInt(u32(o.buffer, `${name}.buffer`, what)),
      u64(o.offset ?? 0, `${name}.offset`, what),
      u64(o.sizeInBytes, `${name}.sizeInBytes`, what),
    );
  }
  return BigUint64Array.from(flat);
}

/** The arguments of `execute`, checked, as the module's `execute` takes them (or with
 * `blocks`, where every buffer is a WasmArray, as its `executeBlocks` does). */
function executeArgs(buffers, inputs, outputs, what, blocks = false) {
  if (!Array.isArray(buffers)) {
    throw argumentError("buffers", `${what}: buffers must be an array of ArrayBuffers or typed arrays; got ${describe(buffers)}`);
  }
  tooMany(buffers.length, "buffers", what, "entries");
  if (blocks) {
    const resident = buffers.map((b, i) => WasmArray.resident(b, `buffers[${i}]`, what));
    const mixed = resident.findIndex((r) => (r === undefined) !== (resident[0] === undefined));
    if (resident.length > 0 && resident[0] !== undefined && mixed === -1) {
      const addresses = Uint32Array.from(resident, (r) => r.address);
      return { addresses, inputs: flatBindings(inputs, "inputs", what), outputs: flatBindings(outputs, "outputs", what) };
    }
    if (mixed !== -1) {
      const [w, j] = resident[0] === undefined ? [mixed, 0] : [0, mixed];
      throw argumentError(`buffers[${j}]`, `${what}: buffers[${w}] is a WasmArray and buffers[${j}] is not: the buffers of one execution are all WasmArrays (run where they lie) or all JavaScript memory (copied in and out)`);
    }
  }
  const views = [];
  for (let i = 0; i < buffers.length; i++) views.push(bufferMemory(buffers[i], `buffers[${i}]`, what));
  const memories = Uint32Array.from(views, (v) => views.findIndex((w) => w.buffer === v.buffer));
  return { views, memories, inputs: flatBindings(inputs, "inputs", what), outputs: flatBindings(outputs, "outputs", what) };
}

/** A compiled operator: executes any number of times. */
export class CompiledOperator {
  #compiled;

  constructor(compiled) {
    if (!guard("CompiledOperator", () => compiled instanceof wasm.WebCompiledOperator)) {
      throw argumentError("compiled", "CompiledOperator: use Operator.compile() to get one");
    }
    this.#compiled = compiled;
  }

  /** "ELEMENT_WISE_SIGN" or "ELEMENT_WISE_IS_INFINITY". */
  get operatorType() {
    return this.#compiled.operatorType;
  }

  /**
   * Runs with one input and one output binding into `buffers` (ArrayBuffers, typed
   * arrays or DataViews: a binding's offset counts from the view's first byte), checked
   * as DirectML checks them. Buffers over one ArrayBuffer are one memory: identical
   * ranges run in place (SIGN), other overlaps are hazards. Two SharedArrayBuffer
   * objects may be one memory without JavaScript knowing: the input binding's range is
   * copied whole before any output is written. Only output elements' bytes are
   * written; a copy that cannot be allocated is an OutOfMemoryError.
   */
  execute(buffers, inputs, outputs) {
    const what = "CompiledOperator.execute";
    guard(what, () => {
      const a = executeArgs(buffers, inputs, outputs, what, true);
      if (a.addresses !== undefined) {
        call(() => this.#compiled.executeBlocks(a.addresses, a.inputs, a.outputs));
      } else {
        call(() => this.#compiled.execute(a.views, a.memories, a.inputs, a.outputs));
      }
    });
  }

  /** Runs on the bytes of `input` and `output` from each tensor's base (no binding
   * rules; each holds at least its tensor's exact span). */
  executeSlices(input, output) {
    const what = "CompiledOperator.executeSlices";
    guard(what, () => {
      const i = bufferMemory(input, "input", what);
      const o = bufferMemory(output, "output", what);
      call(() => this.#compiled.executeSlices(i, o));
    });
  }

  /** SIGN in place on the bytes of `data`. */
  executeInPlace(data) {
    const what = "CompiledOperator.executeInPlace";
    guard(what, () => call(() => this.#compiled.executeInPlace(bufferMemory(data, "data", what))));
  }
}

// ------------------------------------------------------------------------------- GPU

/** The input bytes and a buffer for the result of a GPU call on prepared operands `p`:
 * a WasmArray's input is copied out of the module's memory, which the call may grow
 * (detaching views of it). */
function gpuOperands(p, what) {
  const { input, output } = p;
  const view = bytes(input.array, "x", what);
  const source = input.resident === null ? view : allocated(Uint8Array, view.length, 1, "a copy of x outside the module's memory", what);
  if (source !== view) source.set(view);
  const length = TA_BYTES.call(output.array);
  output.view = output.resident === null ? bytes(output.array, "options.out", what) : null;
  return [source, allocated(Uint8Array, length, 1, "the GPU's result", what)];
}

/** The output of a GPU call on `p` after `result` (its bytes, computed by the GPU) is
 * copied into it: into the view of its bytes taken when the call was made, or a
 * WasmArray's view now (an ArgumentError, with nothing written, when the array was
 * freed meanwhile, or when the view no longer holds all the bytes: a resizable
 * ArrayBuffer shrunk or transferred meanwhile). */
function gpuWritten(p, result, what) {
  const { output } = p;
  const view = output.view ?? bytes(WasmArray.resident(output.result, "options.out", what).view, "options.out", what);
  if (view.length !== result.length) {
    throw argumentError("options.out", `${what}: options.out's memory shrank or was detached (transferred) while the GPU ran: it holds ${view.length} of the ${result.length} bytes the result needs; nothing was written`);
  }
  view.set(result);
  return output.result;
}

/**
 * A GPU device over WebGPU. Its array-style `sign` and `isInfinity` give the CPU
 * functions' bits whatever the device's options; its DirectML-style operators
 * (`createOperator`) are validated at its options, as a CPU `Device`'s.
 */
export class GpuDevice extends DirectMLDevice {
  static label = "GpuDevice";

  static get operatorClass() {
    return GpuOperator;
  }

  #device;

  constructor(device) {
    if (!guard("GpuDevice", () => device instanceof wasm.WebGpuDevice)) {
      throw argumentError("device", "GpuDevice: use requestGpu() to get one");
    }
    super(device);
    this.#device = device;
  }

  /** The adapter: name, backend, type and driver. */
  get adapter() {
    return this.#device.adapter;
  }

  /** Whether the adapter is a software renderer (SwiftShader: WebGPU's fallback
   * adapter). */
  get isSoftware() {
    return this.#device.isSoftware;
  }

  /** The bytes one binding window spans at most: the adapter's limit, or
   * `maxBindingSize` (raised to 256 bytes plus the adapter's offset alignment). */
  get maxBindingSize() {
    return numeric(this.#device.maxBindingSize);
  }

  /** As `sign`, on the GPU. */
  async sign(x, options) {
    const what = "GpuDevice.sign";
    return guardAsync(what, async () => {
      const p = prepareSign(x, optionsOf(options, SIGN_OPTIONS, what), what);
      const [input, result] = gpuOperands(p, what);
      await callAsync(() => this.#device.signBytes(p.dtype, p.nan, input, lengthOf(p.output.array), result));
      return gpuWritten(p, result, what);
    });
  }

  /** As `isInfinity`, on the GPU. */
  async isInfinity(x, options) {
    const what = "GpuDevice.isInfinity";
    return guardAsync(what, async () => {
      const p = prepareIsInfinity(x, optionsOf(options, IS_INFINITY_OPTIONS, what), what);
      const [input, result] = gpuOperands(p, what);
      await callAsync(() => this.#device.isInfinityBytes(p.dtype, p.mode, input, lengthOf(p.output.array), result));
      return gpuWritten(p, result, what);
    });
  }
}

/** A validated GPU operator, not yet compiled. */
export class GpuOperator extends Validated {
  static label = "GpuOperator";
  static creator = "GpuDevice.createOperator";
  static wasmClass = wasm.WebGpuOperator;
  static get compiledClass() {
    return GpuCompiledOperator;
  }
}

/**
 * A compiled GPU operator: executes any number of times. Each execution is a promise,
 * and every error is its rejection: arguments and bindings are checked (with the CPU's
 * errors and messages) before anything is copied or run; the input's bytes are read
 * when the method is called; the output's elements are written into the caller's
 * memory only when the GPU has finished, and on any error nothing is written.
 */
export class GpuCompiledOperator {
  #compiled;

  constructor(compiled) {
    if (!guard("GpuCompiledOperator", () => compiled instanceof wasm.WebGpuCompiledOperator)) {
      throw argumentError("compiled", "GpuCompiledOperator: use GpuOperator.compile() to get one");
    }
    this.#compiled = compiled;
  }

  /** "ELEMENT_WISE_SIGN" or "ELEMENT_WISE_IS_INFINITY". */
  get operatorType() {
    return this.#compiled.operatorType;
  }

  /** How many dispatches one execution records: more than one when the tensors span
   * more than one binding window or dispatch grid; 0 for empty tensors. */
  get dispatches() {
    return this.#compiled.dispatches;
  }

  /** As `CompiledOperator.execute`, on the GPU: the same bindings, rules and errors.
   * Only output elements' bytes are written; the bytes between them keep what they
   * hold when the GPU finishes. */
  async execute(buffers, inputs, outputs) {
    const what = "GpuCompiledOperator.execute";
    await guardAsync(what, async () => {
      const a = executeArgs(buffers, inputs, outputs, what);
      await callAsync(() => this.#compiled.execute(a.views, a.memories, a.inputs, a.outputs));
    });
  }

  /** As `CompiledOperator.executeSlices`, on the GPU. */
  async executeSlices(input, output) {
    const what = "GpuCompiledOperator.executeSlices";
    await guardAsync(what, async () => {
      const i = bufferMemory(input, "input", what);
      const o = bufferMemory(output, "output", what);
      await callAsync(() => this.#compiled.executeSlices(i, o));
    });
  }

  /** As `CompiledOperator.executeInPlace`, on the GPU. */
  async executeInPlace(data) {
    const what = "GpuCompiledOperator.executeInPlace";
    await guardAsync(what, async () => {
      const d = bufferMemory(data, "data", what);
      await callAsync(() => this.#compiled.executeInPlace(d));
    });
  }
}

const GPU_OPTIONS = ["allowSoftware", "featureLevel", "minFeatureLevel", "extensions", "nanPolicy", "maxWorkgroupsPerDimension", "maxBindingSize"];

/** `options[key]` as a positive integer up to `max` (a bigint when `big`), or undefined. */
function cap(options, key, max, big, what) {
  const v = options[key];
  if (v === undefined) return undefined;
  const n = typeof v === "bigint" && big ? v : Number.isSafeInteger(v) ? BigInt(v) : 0n;
  if (n < 1n || n > max) {
    const range = big ? "a positive integer (a number up to 2^53 - 1, or a bigint below 2^64)" : `a positive integer up to ${max}`;
    throw argumentError(`options.${key}`, `${what}: options.${key} must be ${range}; got ${showValue(v)}`);
  }
  return big ? n : Number(n);
}

/**
 * A GPU device through WebGPU (`navigator.gpu.requestAdapter()`). A software adapter
 * (SwiftShader, WebGPU's fallback adapter) is refused under `allowSoftware: false`
 * (`GpuError` of kind "NoAdapter"), taken silently under `allowSoftware: true`, and
 * without the option taken with one `console.warn` per device ("ewise: warning: ...",
 * docs/SEMANTICS.md section 8.1); `featureLevel`, `minFeatureLevel`, `extensions`
 * and `nanPolicy` as a CPU `Device`'s (for its DirectML-style operators);
 * `maxWorkgroupsPerDimension` and `maxBindingSize` cap the workgroups per dispatch
 * dimension and the bytes per binding window below the adapter's limits. The options
 * are checked first (`ArgumentError`, or `ValidationError` of kind
 * "FeatureLevelUnavailable"); then it rejects with `WebGpuUnavailableError` where there
 * is no WebGPU (Node; a browser without it or outside a secure context), and with
 * `GpuError` (kind `NoAdapter`) where WebGPU gives no adapter.
 */
export async function requestGpu(options) {
  return guardAsync("requestGpu", () => openGpu(options, "requestGpu"));
}

async function openGpu(options, what) {
  needReady(what);
  const o = optionsOf(options, GPU_OPTIONS, what);
  const allowSoftware = o.allowSoftware;
  if (allowSoftware !== undefined && typeof allowSoftware !== "boolean") {
    throw argumentError("options.allowSoftware", `${what}: options.allowSoftware must be true or false; got ${describe(allowSoftware)}`);
  }
  const maxWorkgroups = cap(o, "maxWorkgroupsPerDimension", BigInt(U32), false, what);
  const maxBindingSize = cap(o, "maxBindingSize", U64, true, what);
  const deviceOptions = wasmDeviceOptions(o, what);
  try {
    if (typeof globalThis.navigator?.gpu?.requestAdapter !== "function") {
      const where = isNode()
        ? `Node ${process.versions.node} has no WebGPU`
        : globalThis.isSecureContext === false
          ? "this page is not a secure context (WebGPU needs https or localhost)"
          : "this browser has no WebGPU, or has it turned off";
      throw new WebGpuUnavailableError(`${what}: WebGPU is not available: navigator.gpu is missing (${where}); the CPU functions sign and isInfinity work everywhere`, "WebGpuUnavailable");
    }
    // wgpu reaches navigator.gpu only from a window or a worker, which it recognises by
    // these constructors, and panics elsewhere.
    if (typeof globalThis.Window !== "function" && typeof globalThis.WorkerGlobalScope !== "function") {
      throw new WebGpuUnavailableError(`${what}: WebGPU is not available: navigator.gpu exists, but this is neither a window nor a worker (no Window or WorkerGlobalScope), where alone ewise's WebGPU backend can reach it`, "WebGpuUnavailable");
    }
    const device = await callAsync(() => wasm.requestGpuDevice(allowSoftware === true, deviceOptions, maxWorkgroups, maxBindingSize));
    if (allowSoftware === false && device.isSoftware) {
      const adapter = device.adapter;
      device.free();
      throw new GpuError(`${what}: the only adapter WebGPU gives is ${adapter}, a software renderer, and options.allowSoftware is false`, "NoAdapter");
    }
    const warning = device.softwareWarning;
    if (warning !== undefined) {
      // ewise-gpu's advice names an environment variable, which no browser reads.
      console.warn(`ewise: warning: ${warning.replace(/; name it with .*$/, "")}; requestGpu({ allowSoftware: true }) takes it silently`);
    }
    return new GpuDevice(device);
  } finally {
    deviceOptions.free();
  }
}
