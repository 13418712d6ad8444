// The JavaScript peers bench, for Node and browsers alike: the contenders, the timing in
// interleaved rounds, the bits check on special values, and the markdown it prints. The
// caller (peers.mjs in Node, page.mjs in a browser) loads what it can and passes it in.

import { jsIsInfinity, jsSign } from "../../examples/web/reference.js";
import { oneNodeModel } from "./onnx-model.mjs";

export const DEFAULT_SIZES = ["4Ki", "64Ki", "1Mi", "16Mi"];
export const DEFAULT_EXTRA = ["sign/float64/1Mi", "sign/int8/1Mi"];
export const DEFAULT_ROUNDS = 11;
/** Each contender's turn in a round times calls for about this long (at least one call). */
export const DEFAULT_TURN_MS = 10;
/** Before its timed calls, a turn makes untimed calls for this long (at least one). */
const WARM_MS = 2;

// The copy's output is placed at several offsets from a fresh buffer's start, and the
// fastest kept: on this host (AMD EPYC, Node 20) a 16 KiB `set` into an array allocated
// just after its source ran 20x slower than into one allocated elsewhere.
const COPY_PLACEMENTS = 4;
const COPY_STEP = 1024;
const COPY_PICK_MS = 3;

const ARRAYS = { float32: Float32Array, float64: Float64Array, int8: Int8Array };
const OPS = ["sign", "is-infinity"];
/** The WasmArrays of the ewise-zero-copy contender's current row. */
const zeroCopyHeld = [];

/** An element count: digits with an optional Ki or Mi suffix. */
export function parseSize(text) {
  const m = /^\s*(\d+)(Ki|Mi)?\s*$/.exec(text);
  const n = m ? Number(m[1]) * { undefined: 1, Ki: 1024, Mi: 1 << 20 }[m[2]] : NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > 1 << 28) {
    throw new RangeError(`invalid size '${text}' (1 to 256Mi elements, e.g. 4096, 64Ki, 16Mi)`);
  }
  return n;
}

/** A row "op/dtype/size" (e.g. "sign/float64/1Mi") as { op, dtype, n }. */
export function parseRow(text) {
  const [op, dtype, size, ...rest] = text.split("/");
  if (rest.length || !OPS.includes(op) || !(dtype in ARRAYS) || size === undefined) {
    throw new RangeError(`invalid row '${text}' (op/dtype/size: op ${OPS.join(" or ")}, dtype ${Object.keys(ARRAYS).join(", ")})`);
  }
  if (op === "is-infinity" && dtype === "int8") throw new RangeError(`invalid row '${text}': IS_INFINITY takes floats`);
  return { op, dtype, n: parseSize(size) };
}

/** The rows: SIGN and IS_INFINITY of float32 at each of `sizes`, then `extra`. */
export function defaultRows(sizes, extra) {
  const rows = [];
  for (const op of OPS) for (const n of sizes) rows.push({ op, dtype: "float32", n });
  rows.push(...extra);
  const key = (r) => `${OPS.indexOf(r.op)}/${r.dtype === "float32" ? 0 : 1}/${r.dtype}/${String(r.n).padStart(10)}`;
  return rows.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

function sizeText(n) {
  if (n % (1 << 20) === 0) return `${n >> 20} Mi`;
  if (n % 1024 === 0) return `${n >> 10} Ki`;
  return String(n);
}

/** The bytes one call reads and writes: input and output (one byte an element for IS_INFINITY). */
function moved(op, x) {
  return op === "sign" ? 2 * x.byteLength : x.byteLength + x.length;
}

/** The timing input: -3..3 repeating, as bench/peers.py's. */
function timingInput(dtype, n) {
  const x = new ARRAYS[dtype](n);
  for (let i = 0; i < n; i++) x[i] = (i % 7) - 3;
  return x;
}

function outputFor(op, x) {
  return op === "sign" ? new x.constructor(x.length) : new Uint8Array(x.length);
}

// ------------------------------------------------------------------------ contenders

/**
 * The contenders, in table order. Each: `id` (for --contenders), `label` (its column),
 * `setup(env)` (async; returns a reason string where it cannot run here, else nothing),
 * `supports(op, dtype)` (true, or a reason for a "-" cell), `prepare(op, dtype, x, env)`
 * (async; returns `{ run, isAsync, enter }`: `run()` makes one whole call on `x` and
 * returns the output array, or a promise of it where `isAsync`; `enter()`, when given,
 * is awaited before each of its turns), and `version(env)`. The copy comes first: the
 * reference of every ratio.
 */
export const CONTENDERS = [
  {
    id: "copy",
    label: "copy",
    note:
      "`out.set(x)`: TypedArray.prototype.set of the input's bytes into an array of as many, the fastest of " +
      `${COPY_PLACEMENTS} placements ${COPY_STEP} bytes apart (chosen per row, by ${COPY_PICK_MS} ms of calls each)`,
    setup: () => undefined,
    supports: () => true,
    prepare(op, dtype, x) {
      let best;
      for (let k = 0; k < COPY_PLACEMENTS; k++) {
        const out = new x.constructor(new ArrayBuffer(x.byteLength + COPY_PLACEMENTS * COPY_STEP), k * COPY_STEP, x.length);
        const start = performance.now();
        let calls = 0;
        while (calls < 3 || performance.now() - start < COPY_PICK_MS) {
          out.set(x);
          calls++;
        }
        const perCall = (performance.now() - start) / calls;
        if (!best || perCall < best.perCall) best = { out, perCall };
      }
      const out = best.out;
      return { run: () => (out.set(x), out) };
    },
    version: () => "",
  },
  {
    id: "ewise-out",
    label: "ewise out",
    note: "ewise `sign(x, { out })` / `isInfinity(x, { out })`: copies x into WebAssembly memory and the result out",
    setup: (env) => (env.ewise ? undefined : env.reasons.ewise ?? "ewise not loaded"),
    supports: () => true,
    prepare(op, dtype, x, env) {
      const out = outputFor(op, x);
      const { sign, isInfinity } = env.ewise;
      const nan = env.nan;
      return { run: op === "sign" ? () => sign(x, { out, nan }) : () => isInfinity(x, { out }) };
    },
    version: (env) => env.versions.ewise ?? "",
  },
  {
    id: "ewise-new",
    label: "ewise new",
    note: "ewise `sign(x)` / `isInfinity(x)`: as `ewise out`, into a new array each call",
    setup: (env) => (env.ewise ? undefined : env.reasons.ewise ?? "ewise not loaded"),
    supports: () => true,
    prepare(op, dtype, x, env) {
      const { sign, isInfinity } = env.ewise;
      const nan = env.nan;
      return { run: op === "sign" ? () => sign(x, { nan }) : () => isInfinity(x) };
    },
    version: (env) => env.versions.ewise ?? "",
  },
  {
    id: "ewise-zero-copy",
    label: "ewise zero-copy",
    note: "ewise `sign(a, { out: b })` / `isInfinity(a, { out: b })` on WasmArrays (`alloc`): the kernel where the arrays lie, no copy in or out",
    setup: (env) =>
      !env.ewise
        ? env.reasons.ewise ?? "ewise not loaded"
        : typeof env.ewise.alloc !== "function"
          ? "this ewise has no WasmArray (alloc)"
          : undefined,
    supports: () => true,
    prepare(op, dtype, x, env) {
      const { alloc, sign, isInfinity } = env.ewise;
      // One row's arrays at a time: the previous row's are freed.
      for (const a of zeroCopyHeld.splice(0)) a.free();
      const input = alloc(dtype, x.length);
      input.array.set(x);
      const out = op === "sign" ? alloc(dtype, x.length) : alloc(Uint8Array, x.length);
      zeroCopyHeld.push(input, out);
      const nan = env.nan;
      return {
        run: op === "sign"
          ? () => sign(input, { out, nan }).array
          : () => isInfinity(input, { out }).array,
      };
    },
    version: (env) => env.versions.ewise ?? "",
  },
  {
    id: "js-loop",
    label: "JS loop",
    note: "a plain JavaScript loop on the bit patterns (examples/web/reference.js) into a preallocated output",
    setup: () => undefined,
    supports: () => true,
    prepare(op, dtype, x, env) {
      const out = outputFor(op, x);
      const nan = env.nan;
      return { run: op === "sign" ? () => jsSign(x, dtype, nan, out) : () => jsIsInfinity(x, dtype, "either", out) };
    },
    version: () => "",
  },
  ...["wasm", "cpu"].map((backend) => ({
    id: `tfjs-${backend}`,
    label: `TF.js ${backend}`,
    note: `TensorFlow.js, ${backend} backend: \`tf.tensor1d(x)\`, \`tf.sign\` / \`tf.isInf\`, \`dataSync()\`, both tensors disposed by \`dispose()\` (\`tf.tidy\` took about 15x as long per call here)`,
    async setup(env) {
      if (!env.tf) return env.reasons.tf ?? "TensorFlow.js not loaded";
      try {
        if (!(await env.tf.setBackend(backend))) return `tf.setBackend("${backend}") failed`;
        await env.tf.ready();
      } catch (e) {
        return `tf.setBackend("${backend}"): ${e?.message ?? e}`;
      }
      return undefined;
    },
    supports: (op, dtype) => (dtype === "float32" ? true : `TF.js has no ${dtype} tensors`),
    prepare(op, dtype, x, env) {
      const tf = env.tf;
      const fn = op === "sign" ? tf.sign : tf.isInf;
      return {
        enter: async () => {
          if (tf.getBackend() !== backend) await tf.setBackend(backend);
        },
        run: () => {
          const t = tf.tensor1d(x, "float32");
          const y = fn(t);
          const data = y.dataSync();
          t.dispose();
          y.dispose();
          return data;
        },
      };
    },
    version: (env) => env.versions.tf ?? "",
  })),
  ...[
    ["ort-web", "ORT web", "ortWeb", "wasm"],
    ["ort-node", "ORT node", "ortNode", "cpu"],
  ].map(([id, label, key, provider]) => ({
    id,
    label,
    note: `${key === "ortWeb" ? "onnxruntime-web, wasm" : "onnxruntime-node, CPU"} execution provider: a one-node Sign / IsInf model (bench/js/onnx-model.mjs), \`session.run({ x: new ort.Tensor(x) })\`, awaited`,
    setup: (env) => (env[key] ? undefined : env.reasons[key] ?? `${id} not loaded`),
    supports: () => true,
    async prepare(op, dtype, x, env) {
      const ort = env[key];
      const session = await ort.InferenceSession.create(oneNodeModel(op === "sign" ? "Sign" : "IsInf", dtype), {
        executionProviders: [provider],
      });
      const dims = [x.length];
      return { isAsync: true, run: () => session.run({ x: new ort.Tensor(dtype, x, dims) }).then((r) => r.y.data) };
    },
    version: (env) => env.versions[key] ?? "",
  })),
];

// ---------------------------------------------------------------------------- timing

async function callsFor(c, ms, minCalls) {
  const { run, isAsync } = c.case;
  const start = performance.now();
  let calls = 0;
  if (isAsync) {
    while (calls < minCalls || performance.now() - start < ms) {
      await run();
      calls++;
    }
  } else {
    while (calls < minCalls || performance.now() - start < ms) {
      run();
      calls++;
    }
  }
  return calls;
}

async function timedCalls(c, count) {
  const { run, isAsync } = c.case;
  const start = performance.now();
  if (isAsync) for (let i = 0; i < count; i++) await run();
  else for (let i = 0; i < count; i++) run();
  return performance.now() - start;
}

/**
 * Median seconds per call of each case: `rounds` rounds in which every case takes a turn,
 * in an order rotated round by round (so a slow spell of the host falls on all alike);
 * a turn makes untimed calls for WARM_MS, then times a fixed count of calls (set in the
 * first round, from as many calls as `turnMs` holds, at least 3, so a turn lasts about
 * `turnMs`). A case whose call throws gets the error.
 */
async function interleavedMedians(cases, rounds, turnMs) {
  const live = cases.filter((c) => !c.error);
  for (let r = 0; r < rounds; r++) {
    const order = live.slice(r % live.length).concat(live.slice(0, r % live.length));
    for (const c of order) {
      if (c.error) continue;
      try {
        if (c.case.enter) await c.case.enter();
        if (c.count === undefined) {
          const start = performance.now();
          const calls = await callsFor(c, turnMs, 3);
          const perCall = (performance.now() - start) / calls;
          c.count = Math.max(1, Math.min(1e7, Math.round(turnMs / Math.max(perCall, 1e-6))));
        }
        await callsFor(c, WARM_MS, 1);
        let ms = await timedCalls(c, c.count);
        // Calls that got faster after the first round's count was set (JIT tiers) would
        // leave the turn within a coarse clock's tick (browsers: 0.1 ms): more calls.
        while (ms < turnMs / 2 && c.count < 1e8) {
          c.count *= 2;
          ms = await timedCalls(c, c.count);
        }
        c.times.push(ms / c.count);
      } catch (e) {
        c.error = e;
      }
    }
  }
  for (const c of live) {
    if (c.error) continue;
    const t = [...c.times].sort((a, b) => a - b);
    c.seconds = t[t.length >> 1] / 1000;
  }
}

// ------------------------------------------------------------------------------ bits

const F32 = new Float32Array(1);
const F32_BITS = new Uint32Array(F32.buffer);

function f32(bits) {
  F32_BITS[0] = bits;
  return F32[0];
}

function f64Bits(hi, lo) {
  const b = new BigUint64Array(1);
  b[0] = (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);
  return b;
}

/** The special values of each type, each with a label: ±0, ±inf, NaNs of both signs with
 * payloads (quiet and signalling), subnormals, float32 epsilon-scale values, extremes. */
export function specialValues(dtype) {
  if (dtype === "int8") {
    const labelled = [[-128, "-128 (the most negative)"], [-127, "-127"], [-1, "-1"], [0, "0"], [1, "1"], [2, "2"], [127, "127 (the largest)"]];
    return { x: Int8Array.from(labelled.map((v) => v[0])), labels: labelled.map((v) => v[1]) };
  }
  if (dtype === "float32") {
    const labelled = [
      [0x00000000, "+0"], [0x80000000, "-0"], [0x3f800000, "+1"], [0xbf800000, "-1"], [0x40400000, "3"],
      [0x7f800000, "+inf"], [0xff800000, "-inf"],
      [0x7fc00000, "+NaN (quiet)"], [0xffc00000, "-NaN (quiet)"], [0x7fc0beef, "+NaN with payload 0x7fc0beef"],
      [0xffc0beef, "-NaN with payload 0xffc0beef"], [0x7f800001, "+NaN (signalling) 0x7f800001"],
      [0xff800001, "-NaN (signalling) 0xff800001"], [0x7fffffff, "+NaN 0x7fffffff"], [0xffffffff, "-NaN 0xffffffff"],
      [0x00000001, "+smallest subnormal"], [0x80000001, "-smallest subnormal"], [0x007fffff, "+largest subnormal"],
      [0x807fffff, "-largest subnormal"], [0x00800000, "+smallest normal"], [0x80800000, "-smallest normal"],
      [0x34000000, "+float32 epsilon (2^-23)"], [0xb4000000, "-float32 epsilon"], [0x33800000, "+2^-24"],
      [0xb3800000, "-2^-24"], [0x322bcc77, "+1e-8"], [0xb22bcc77, "-1e-8"], [0x1e3ce508, "+1e-20"],
      [0x9e3ce508, "-1e-20"], [0x35000000, "+2^-21"], [0x3f000000, "+0.5"],
      [0x7f7fffff, "+largest finite"], [0xff7fffff, "-largest finite"],
    ];
    return { x: new Float32Array(Uint32Array.from(labelled.map((v) => v[0])).buffer), labels: labelled.map((v) => v[1]) };
  }
  const labelled = [
    [0x00000000, 0, "+0"], [0x80000000, 0, "-0"], [0x3ff00000, 0, "+1"], [0xbff00000, 0, "-1"],
    [0x7ff00000, 0, "+inf"], [0xfff00000, 0, "-inf"], [0x7ff80000, 0, "+NaN (quiet)"], [0xfff80000, 0, "-NaN (quiet)"],
    [0x7ff8dead, 0xbeef0001, "+NaN with payload"], [0xfff8dead, 0xbeef0001, "-NaN with payload"],
    [0x7ff00000, 1, "+NaN (signalling)"], [0xfff00000, 1, "-NaN (signalling)"], [0, 1, "+smallest subnormal"],
    [0x80000000, 1, "-smallest subnormal"], [0x000fffff, 0xffffffff, "+largest subnormal"],
    [0x00100000, 0, "+smallest normal"], [0x3ca00000, 0, "+float64 epsilon (2^-53)"], [0x3e800000, 0, "+2^-23"],
    [0x3e45798e, 0xe2308c3a, "+1e-8"], [0xbe45798e, 0xe2308c3a, "-1e-8"], [0x36a00000, 0, "+2^-149 (float32's smallest subnormal)"],
    [0x36900000, 0, "+2^-150 (below float32's range)"], [0xb6900000, 0, "-2^-150"], [0x47efffff, 0xe0000000, "+float32's largest finite"],
    [0x47f00000, 0, "+2^128 (above float32's range)"], [0x7fefffff, 0xffffffff, "+largest finite"], [0xffefffff, 0xffffffff, "-largest finite"],
  ];
  const x = new Float64Array(labelled.length);
  const b = new BigUint64Array(x.buffer);
  labelled.forEach(([hi, lo], i) => (b[i] = f64Bits(hi, lo)[0]));
  return { x, labels: labelled.map((v) => v[2]) };
}

function bitsOf(a, i) {
  if (a instanceof Float32Array) return new Uint32Array(a.buffer, a.byteOffset, a.length)[i];
  if (a instanceof Float64Array) return new BigUint64Array(a.buffer, a.byteOffset, a.length)[i];
  return Number(a[i]);
}

function show(a, i) {
  const v = a[i];
  if (a instanceof Float32Array) return `${Object.is(v, -0) ? "-0" : v} (0x${bitsOf(a, i).toString(16).padStart(8, "0")})`;
  if (a instanceof Float64Array) return `${Object.is(v, -0) ? "-0" : v} (0x${bitsOf(a, i).toString(16).padStart(16, "0")})`;
  return String(typeof v === "boolean" ? Number(v) : v);
}

/**
 * One line per class of difference between `got` (a peer's output on the special values
 * of `dtype`) and ewise's (`ref`, with NaN -> +0, and `alt`, with NaN propagated): what the
 * peer gives where ewise gives what, and for which inputs.
 */
function differences(label, op, dtype, special, got, ref, alt) {
  const classes = new Map();
  const x = special.x;
  const g = Array.isArray(got) || ArrayBuffer.isView(got) ? got : [];
  for (let i = 0; i < x.length; i++) {
    if (i >= g.length) {
      classes.set("gives no element", [...(classes.get("gives no element") ?? []), special.labels[i]]);
      continue;
    }
    const want = bitsOf(ref, i);
    const have = ArrayBuffer.isView(g) && g.constructor === ref.constructor ? bitsOf(g, i) : Number(g[i]);
    if (have === want) continue;
    let key;
    if (op === "sign" && Number.isNaN(x[i]) && alt && ArrayBuffer.isView(g) && have === bitsOf(alt, i)) {
      key = "gives the NaN itself, bit for bit (as ewise's nan: \"propagate\"; its default gives +0)";
    } else if (op === "sign" && Number.isNaN(x[i]) && Number.isNaN(g[i])) {
      key = `gives NaN ${show(g, i)} (ewise: +0, or the input NaN's own bits with nan: "propagate")`;
    } else {
      key = `gives ${show(g, i)} where ewise gives ${show(ref, i)}`;
    }
    classes.set(key, [...(classes.get(key) ?? []), special.labels[i]]);
  }
  return [...classes].map(([key, inputs]) => `${label} ${op === "sign" ? "SIGN" : "IS_INFINITY"} ${dtype}: ${key}, for ${inputs.join(", ")}`);
}

const BITS_CASES = [
  ["sign", "float32"],
  ["sign", "float64"],
  ["sign", "int8"],
  ["is-infinity", "float32"],
  ["is-infinity", "float64"],
];

async function bitsLines(contenders, env) {
  const lines = [];
  const { sign, isInfinity } = env.ewise;
  for (const [op, dtype] of BITS_CASES) {
    const special = specialValues(dtype);
    const ref = op === "sign" ? sign(special.x, { nan: "zero" }) : isInfinity(special.x);
    const alt = op === "sign" ? sign(special.x, { nan: "propagate" }) : null;
    for (const c of contenders) {
      if (c.id === "copy" || c.supports(op, dtype) !== true) continue;
      let got;
      try {
        const k = await c.prepare(op, dtype, special.x, { ...env, nan: "zero" });
        if (k.enter) await k.enter();
        got = await k.run();
        if (got === special.x || got?.buffer === special.x.buffer) got = got.slice();
      } catch (e) {
        lines.push(`${c.label} ${op} ${dtype}: failed: ${e?.message ?? e}`);
        continue;
      }
      const found = differences(c.label, op, dtype, special, got, ref, alt);
      lines.push(...found);
      c.bitsChecked = (c.bitsChecked ?? 0) + 1;
      c.bitsDiffering = (c.bitsDiffering ?? 0) + (found.length ? 1 : 0);
    }
  }
  return lines;
}

// ------------------------------------------------------------------------------ run

/** A ratio with two decimals, or two significant digits below 0.1. */
function ratioText(r) {
  return r >= 0.1 ? r.toFixed(2) : r.toPrecision(2);
}

/**
 * Runs the bench and returns its markdown, line by line through `print`.
 * `env`: { ewise, tf, ortWeb, ortNode (modules or undefined), reasons (why each missing
 * one is), versions (strings), host, command, nan ("zero" | "propagate") }; `options`:
 * { rows, rounds, turnMs, contenders (ids, or undefined for all), bits (boolean) }.
 */
export async function runBench(env, options, print) {
  const wanted = options.contenders;
  for (const id of wanted ?? []) {
    if (!CONTENDERS.some((c) => c.id === id)) {
      throw new RangeError(`unknown contender '${id}' (${CONTENDERS.map((c) => c.id).join(", ")})`);
    }
  }
  const chosen = CONTENDERS.filter((c) => c.id === "copy" || !wanted || wanted.includes(c.id));
  const ready = [];
  const unavailable = [];
  for (const c of chosen) {
    const reason = await c.setup(env);
    if (reason) unavailable.push(`${c.label}: ${reason}`);
    else ready.push(c);
  }
  if (!env.ewise) throw new Error(`ewise could not be loaded: ${env.reasons.ewise}`);

  print(`command: ${env.command}`);
  print(`host: ${env.host}`);
  const versions = Object.entries(env.versions).map(([k, v]) => `${k} ${v}`);
  print(`versions: ${versions.join(", ")}`);
  print(
    `method: one process; per row, ${options.rounds} rounds in which each column takes a turn (order rotated ` +
      `round by round): ${WARM_MS} ms of untimed calls, then a fixed count of calls timed together ` +
      `(about ${options.turnMs} ms); the median turn's time per call. ewise SIGN with nan: "${env.nan}".`,
  );
  for (const u of unavailable) print(`unavailable: ${u}`);
  print("");

  const peers = ready.filter((c) => c.id !== "copy");
  print(`| op | dtype | elements | copy GB/s | ${peers.map((c) => c.label).join(" | ")} |`);
  print(`|---|---|---:|---:|${peers.map(() => "---:").join("|")}|`);
  const failures = [];
  for (const row of options.rows) {
    const x = timingInput(row.dtype, row.n);
    const byId = new Map();
    for (const c of ready) {
      const ok = c.supports(row.op, row.dtype);
      const entry = { contender: c, times: [], cell: ok === true ? undefined : "-" };
      if (ok === true) {
        try {
          entry.case = await c.prepare(row.op, row.dtype, x, env);
        } catch (e) {
          entry.error = e;
        }
      }
      byId.set(c.id, entry);
    }
    await interleavedMedians([...byId.values()].filter((e) => e.cell === undefined), options.rounds, options.turnMs);
    const copy = byId.get("copy");
    const copyGbps = copy.seconds ? (2 * x.byteLength) / copy.seconds / 1e9 : undefined;
    const cells = peers.map((c) => {
      const e = byId.get(c.id);
      if (e.cell) return e.cell;
      if (e.error) {
        failures.push(`${c.label} ${row.op} ${row.dtype} ${row.n}: ${e.error?.message ?? e.error}`);
        return "fail";
      }
      const gbps = moved(row.op, x) / e.seconds / 1e9;
      return copyGbps ? ratioText(gbps / copyGbps) : gbps.toFixed(1);
    });
    const op = row.op === "sign" ? "SIGN" : "IS_INFINITY";
    print(`| ${op} | ${row.dtype} | ${sizeText(row.n)} | ${copyGbps ? copyGbps.toFixed(1) : "fail"} | ${cells.join(" | ")} |`);
  }
  print("");
  print(
    "GB/s = (bytes read + bytes written) / second (the output is 1 byte an element for IS_INFINITY); " +
      "each contender's cell: its GB/s over the copy's, measured in the same rounds.",
  );
  const unsupported = new Set();
  for (const c of peers) {
    for (const row of options.rows) {
      const ok = c.supports(row.op, row.dtype);
      if (ok !== true) unsupported.add(`${c.label}: ${ok}`);
    }
  }
  for (const u of unsupported) print(`-: ${u}`);
  for (const f of failures) print(`fail: ${f}`);
  print("");
  for (const c of ready) print(`- ${c.label}: ${c.note}`);

  if (options.bits) {
    print("");
    print("Bits: each contender's output on special values (±0, ±inf, NaNs of both signs with payloads, subnormals, " +
      "float32 epsilon-scale values, extremes) against ewise's:");
    print("");
    const lines = await bitsLines(peers, env);
    for (const line of lines) print(`- ${line}`);
    const same = peers.filter((c) => c.bitsChecked && !c.bitsDiffering).map((c) => c.label);
    if (same.length) print(`- the same bits as ewise in every case checked: ${same.join(", ")}`);
  }
}
