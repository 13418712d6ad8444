// The page: open or generate a .npy array, run SIGN or IS_INFINITY from the npm package
// `ewise` on the CPU (WebAssembly) or the GPU (WebGPU), show and download the result,
// and time the package beside a plain JavaScript loop and a copy.

import { DTYPES, MAX_DATA_BYTES, NpyError, checkFileSize, descrOf, encodeNpy, formatShape, npyHeader, parseNpy, sizeText } from "./npy.js";
import {
  IS_INFINITY_DTYPES, SIGN_DTYPES, countIsInfinity, countSign, formatBits, formatValue, jsSign, randomArray, sampleArray,
} from "./reference.js";

const PACKAGE = "../../crates/ewise-web/pkg/ewise.js";
const SAMPLE_SHAPE = [8, 128];
const SHOWN = 16;
const TIMING_MAX_BYTES = 256 * 2 ** 20;
const MIN_RUN_MS = 10;

const $ = (id) => document.getElementById(id);
const body = document.body;

const state = {
  ewise: null,
  gpu: null,
  gpuError: null,
  file: null,
  input: null,
  result: null,
  downloadUrl: null,
  busy: false,
};

function bump(name) {
  body.dataset[name] = String(Number(body.dataset[name]) + 1);
}

function setBusy(busy) {
  state.busy = busy;
  $("run-button").disabled = busy;
  $("timing-button").disabled = busy;
}

function say(id, text, kind = "info") {
  const el = $(id);
  el.textContent = text;
  el.dataset.kind = text === "" ? "" : kind;
}

function errorText(e) {
  if (e instanceof NpyError) return e.message;
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return String(e);
}

function halfDtype(dtype) {
  return dtype === "float16" || dtype === "bfloat16" ? { dtype } : {};
}

function fill(select, values, chosen) {
  for (const v of values) {
    const o = document.createElement("option");
    o.value = v;
    o.textContent = v;
    o.selected = v === chosen;
    select.append(o);
  }
}

function row(cells, header = false) {
  const tr = document.createElement("tr");
  cells.forEach((c, i) => {
    const td = document.createElement(header && i === 0 ? "th" : "td");
    if (header && i === 0) td.scope = "row";
    td.textContent = c;
    tr.append(td);
  });
  return tr;
}

function dl(el, pairs) {
  el.replaceChildren();
  for (const [k, v] of pairs) {
    const dt = document.createElement("dt");
    dt.textContent = k;
    const dd = document.createElement("dd");
    dd.textContent = v;
    el.append(dt, dd);
  }
}

function ms(t) {
  if (t === 0) return "less than the browser's clock resolution";
  return t >= 100 ? `${t.toFixed(0)} ms` : t >= 1 ? `${t.toFixed(2)} ms` : `${(t * 1000).toPrecision(3)} µs`;
}

// ----------------------------------------------------------------------------- input

async function openFile(file) {
  say("input-message", `Reading ${file.name}…`);
  try {
    checkFileSize(file.size);
    const bytes = new Uint8Array(await file.arrayBuffer());
    state.file = { name: file.name, bytes, sample: false };
  } catch (e) {
    inputFailed(file.name, e);
    bump("inputSeq");
    return;
  }
  loadInput();
}

function makeSample() {
  const dtype = $("sample-dtype").value;
  const count = SAMPLE_SHAPE[0] * SAMPLE_SHAPE[1];
  const bytes = encodeNpy({ dtype, shape: SAMPLE_SHAPE, data: sampleArray(dtype, count) });
  $("read-as").value = dtype === "bfloat16" ? "bfloat16" : "";
  state.file = { name: `sample-${dtype}.npy`, bytes, sample: true };
  loadInput();
}

/** Takes the last result off the page: it belongs to an input that is gone. */
function clearResult() {
  state.result = null;
  $("result").hidden = true;
  $("result-empty").hidden = false;
  say("run-message", "");
}

function loadInput() {
  clearResult();
  const { name, bytes, sample } = state.file;
  const as = $("read-as").value || undefined;
  try {
    const input = parseNpy(bytes, { as });
    state.input = { ...input, name };
    const summary = $("input-summary");
    dl(summary, [
      ["file", `${name}${sample ? " (generated)" : ""}, ${sizeText(bytes.length)}`],
      ["format", `version ${input.version}, descr '${input.descr}'${input.byteOrder === ">" ? " (big-endian: swapped on reading)" : ""}`],
      ["dtype", input.dtype],
      ["shape", `${formatShape(input.shape)}, ${input.count} elements`],
      ["order", input.fortranOrder ? "Fortran (column-major); kept in the result" : "C (row-major)"],
    ]);
    summary.dataset.state = "loaded";
    const takes = [SIGN_DTYPES.includes(input.dtype) && "SIGN", IS_INFINITY_DTYPES.includes(input.dtype) && "IS_INFINITY"].filter(Boolean);
    if (takes.length === 0) {
      say("input-message", `Read ${name}, but neither operator takes ${input.dtype} (SIGN takes ${SIGN_DTYPES.join(", ")}; IS_INFINITY takes ${IS_INFINITY_DTYPES.join(", ")}).`, "error");
    } else {
      say("input-message", `Read ${name}: ${takes.join(" and ")} can run on it.`, "ok");
    }
  } catch (e) {
    inputFailed(name, e);
  } finally {
    bump("inputSeq");
  }
}

function inputFailed(name, e) {
  clearResult();
  state.input = null;
  const summary = $("input-summary");
  summary.replaceChildren();
  summary.dataset.state = "error";
  const hint = e instanceof NpyError && e.code === "raw" && e.message.includes("bfloat16") ? ' (choose bfloat16 under "Read 2-byte data as")' : "";
  say("input-message", `Cannot read ${name}: ${errorText(e)}${hint}`, "error");
}

// ------------------------------------------------------------------------------ GPU

async function probeGpu() {
  const status = $("gpu-status");
  try {
    state.gpu = await state.ewise.requestGpu();
    const software = state.gpu.isSoftware ? " (a software renderer, as no GPU was found: exact, but slower than the CPU)" : "";
    status.textContent = `WebGPU adapter: ${state.gpu.adapter.trim()}${software}`;
    body.dataset.gpu = "ready";
  } catch (e) {
    state.gpuError = e;
    status.textContent = `WebGPU cannot be used here, so the CPU runs everything. ${errorText(e)}`;
    $("device-gpu").disabled = true;
    body.dataset.gpu = "unavailable";
  }
}

// ------------------------------------------------------------------------------- run

function options() {
  const op = document.querySelector('input[name="op"]:checked').value;
  const device = document.querySelector('input[name="device"]:checked').value;
  return { op, device, nan: $("nan-policy").value, mode: $("inf-mode").value };
}

function syncOptions() {
  const { op } = options();
  $("nan-policy").disabled = op !== "sign";
  $("inf-mode").disabled = op !== "isInfinity";
}

async function run() {
  if (state.busy) return;
  const input = state.input;
  if (input === null) {
    say("run-message", "Open a .npy file or generate a sample first.", "error");
    bump("runSeq");
    return;
  }
  const { op, device, nan, mode } = options();
  const accepted = op === "sign" ? SIGN_DTYPES : IS_INFINITY_DTYPES;
  const opName = op === "sign" ? "SIGN" : "IS_INFINITY";
  if (!accepted.includes(input.dtype)) {
    say("run-message", `${opName} does not take ${input.dtype}; it takes ${accepted.join(", ")}.`, "error");
    bump("runSeq");
    return;
  }
  if (device === "gpu" && state.gpu === null) {
    say("run-message", `WebGPU is not available: ${errorText(state.gpuError ?? new Error("still looking for an adapter"))}. Choose the CPU.`, "error");
    bump("runSeq");
    return;
  }
  setBusy(true);
  say("run-message", `Running ${opName} on ${input.count} elements…`);
  try {
    await new Promise((r) => setTimeout(r, 0));
    const opts = { ...(op === "sign" ? { nan } : { mode }), ...halfDtype(input.dtype) };
    const target = device === "gpu" ? state.gpu : state.ewise;
    const t0 = performance.now();
    const out = await target[op](input.data, opts);
    const elapsed = performance.now() - t0;
    showResult({ input, op, opName, device, nan, mode, out, elapsed });
    say("run-message", `${opName} took ${ms(elapsed)}.`, "ok");
  } catch (e) {
    say("run-message", `${opName} failed: ${errorText(e)}`, "error");
  } finally {
    setBusy(false);
    bump("runSeq");
  }
}

function showResult({ input, op, opName, device, nan, mode, out, elapsed }) {
  const outDtype = op === "sign" ? input.dtype : "uint8";
  const descr = descrOf(outDtype);
  const where = device === "gpu"
    ? `on the GPU through WebGPU, adapter ${state.gpu.adapter.trim()}; includes the upload and the read-back (and, the first time for a dtype, building its shader)`
    : "on the CPU through WebAssembly; includes the copies into and out of its memory";
  dl($("result-summary"), [
    ["operator", op === "sign" ? `SIGN, NaN gives ${nan === "zero" ? "+0 (zero)" : "itself (propagate)"}` : `IS_INFINITY, mode ${mode}`],
    ["input", `${input.dtype}, shape ${formatShape(input.shape)}`],
    ["output", `${outDtype} ('${descr}'), shape ${formatShape(input.shape)}${input.fortranOrder ? ", Fortran order" : ""}`],
    ["time", `${ms(elapsed)} ${where}`],
  ]);
  const counts = op === "sign" ? countSign(out, outDtype) : countIsInfinity(out);
  const keys = op === "sign" ? ["-1", "0", "+1", ...(nan === "propagate" || counts.NaN > 0 ? ["NaN"] : [])] : ["1", "0"];
  const tbody = $("counts").tBodies[0];
  tbody.replaceChildren();
  for (const k of keys) {
    const label = op === "sign" && k === "NaN" ? "NaN (passed through)" : op === "isInfinity" ? `${k} (${k === "1" ? "infinity" : "not"})` : k;
    const tr = row([label, String(counts[k])], true);
    tr.cells[1].dataset.key = k;
    tbody.append(tr);
  }
  const values = $("values").tBodies[0];
  values.replaceChildren();
  const shown = Math.min(SHOWN, input.count);
  for (let i = 0; i < shown; i++) {
    values.append(row([String(i), formatValue(input.data, i, input.dtype), formatBits(input.data, i, input.dtype), formatValue(out, i, outDtype), formatBits(out, i, outDtype)]));
  }
  $("values").caption.textContent = input.count > shown
    ? `First ${shown} of ${input.count} elements, in storage order`
    : `All ${input.count} elements, in storage order`;
  const stem = input.name.replace(/\.npy$/i, "");
  const name = `${stem}.${op === "sign" ? "sign" : "is_infinity"}.npy`;
  const header = npyHeader({ descr, shape: input.shape, fortranOrder: input.fortranOrder });
  state.result = { name, parts: [header, out] };
  $("download-note").textContent = `${name}: ${sizeText(header.length + out.byteLength)}, '${descr}'${op === "isInfinity" ? " (uint8, as DirectML and the ewise CLI's default write it)" : ""}, little-endian.`;
  $("result-empty").hidden = true;
  $("result").hidden = false;
}

function download() {
  if (state.result === null) {
    say("run-message", "Run an operator first; then its result can be downloaded.", "error");
    return;
  }
  if (state.downloadUrl !== null) URL.revokeObjectURL(state.downloadUrl);
  state.downloadUrl = URL.createObjectURL(new Blob(state.result.parts, { type: "application/octet-stream" }));
  const a = document.createElement("a");
  a.href = state.downloadUrl;
  a.download = state.result.name;
  document.body.append(a);
  a.click();
  a.remove();
}

// ---------------------------------------------------------------------------- timing

async function repeat(f, isAsync, reps) {
  const t0 = performance.now();
  if (isAsync) for (let k = 0; k < reps; k++) await f();
  else for (let k = 0; k < reps; k++) f();
  return performance.now() - t0;
}

/** The best time of one call of `f` over `runs` runs, after two warm-up calls; each run
 * repeats the call until it has taken at least MIN_RUN_MS. */
async function time(f, isAsync, runs) {
  await repeat(f, isAsync, 2);
  let reps = 1;
  for (;;) {
    const t = await repeat(f, isAsync, reps);
    if (t >= MIN_RUN_MS || reps >= 2 ** 20) break;
    reps *= t > 0 ? Math.max(2, Math.ceil(MIN_RUN_MS / t)) : 16;
  }
  let best = Infinity;
  for (let r = 0; r < runs; r++) {
    await new Promise((ok) => setTimeout(ok, 0));
    best = Math.min(best, (await repeat(f, isAsync, reps)) / reps);
  }
  return best;
}

function sameBytes(a, b) {
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

function readCount(id, what, min, max) {
  const text = $(id).value.trim();
  const n = Number(text);
  if (text === "" || !Number.isInteger(n) || n < min || n > max) {
    throw new RangeError(`${what} must be a whole number from ${min} to ${max}; got ${JSON.stringify(text)}`);
  }
  return n;
}

async function timing() {
  if (state.busy) return;
  const dtype = $("timing-dtype").value;
  const size = DTYPES[dtype].size;
  let count;
  let runs;
  try {
    count = readCount("timing-count", "elements", 1, Math.floor(TIMING_MAX_BYTES / size));
    runs = readCount("timing-runs", "runs", 1, 100);
  } catch (e) {
    say("timing-message", `${e.message} (at most ${sizeText(TIMING_MAX_BYTES)} of ${dtype} here).`, "error");
    bump("timingSeq");
    return;
  }
  setBusy(true);
  const table = $("timing");
  const tbody = table.tBodies[0];
  tbody.replaceChildren();
  table.dataset.state = "running";
  const bytes = 2 * count * size;
  const opts = { nan: "zero", ...halfDtype(dtype) };
  try {
    const x = randomArray(dtype, count, 0x7153);
    const Array_ = DTYPES[dtype].array;
    const reference = jsSign(x, dtype, "zero", new Array_(count));
    const methods = [
      ["wasm SIMD128: sign()", "wasm", false, (out) => () => state.ewise.sign(x, { ...opts, out })],
      ["WebGPU: GpuDevice.sign()", "webgpu", true, (out) => () => state.gpu.sign(x, { ...opts, out })],
      ["plain JavaScript loop", "js", false, (out) => () => jsSign(x, dtype, "zero", out)],
      ["copy: TypedArray.prototype.set", "copy", false, (out) => () => out.set(x)],
    ];
    const results = [];
    for (const [label, key, isAsync, make] of methods) {
      say("timing-message", `Timing ${label} on ${count} ${dtype} elements…`);
      await new Promise((ok) => setTimeout(ok, 0));
      if (key === "webgpu" && state.gpu === null) {
        results.push({ label, key, note: `not available: ${errorText(state.gpuError ?? new Error("no adapter yet"))}` });
        continue;
      }
      const out = new Array_(count);
      try {
        const best = await time(make(out), isAsync, runs);
        results.push({ label, key, best, same: key === "copy" ? sameBytes(out, x) : sameBytes(out, reference) });
      } catch (e) {
        results.push({ label, key, note: `failed: ${errorText(e)}` });
      }
    }
    const copy = results.find((r) => r.key === "copy").best ?? NaN;
    for (const r of results) {
      let tr;
      if (r.best === undefined) {
        tr = row([r.label, r.note], true);
        tr.cells[1].colSpan = 4;
      } else {
        const gbps = bytes / r.best / 1e6;
        tr = row([r.label, ms(r.best), gbps.toFixed(2), `${(copy / r.best).toFixed(2)}×`, r.key === "copy" ? "(a copy of the input)" : r.same ? "yes" : "NO"], true);
        tr.dataset.gbps = String(gbps);
        tr.dataset.same = String(r.same);
      }
      tr.dataset.method = r.key;
      tbody.append(tr);
    }
    const wrong = results.filter((r) => r.key !== "copy" && r.same === false).map((r) => r.label);
    const failed = results.filter((r) => r.note?.startsWith("failed")).map((r) => r.label);
    say("timing-message", wrong.length > 0
      ? `Done, but ${wrong.join(" and ")} gave other bytes than the JS loop: please report it.`
      : failed.length > 0
        ? `Done, but ${failed.join(" and ")} failed: see the table.`
        : `Best of ${runs} runs on ${count} ${dtype} elements: ${sizeText(count * size)} in and as much out.`, wrong.length + failed.length > 0 ? "error" : "ok");
    table.dataset.state = "done";
  } catch (e) {
    table.dataset.state = "error";
    say("timing-message", `Timing failed: ${errorText(e)}`, "error");
  } finally {
    setBusy(false);
    bump("timingSeq");
  }
}

// ----------------------------------------------------------------------------- start

function wire() {
  fill($("sample-dtype"), SIGN_DTYPES, "float32");
  fill($("timing-dtype"), SIGN_DTYPES, "float32");
  $("timing-count").max = String(TIMING_MAX_BYTES / 4);
  $("file-input").addEventListener("change", (ev) => {
    const file = ev.target.files[0];
    if (file !== undefined) openFile(file);
  });
  $("read-as").addEventListener("change", () => {
    if (state.file !== null) loadInput();
  });
  $("sample-button").addEventListener("click", makeSample);
  for (const el of document.querySelectorAll('input[name="op"]')) el.addEventListener("change", syncOptions);
  $("run-button").addEventListener("click", run);
  $("download-button").addEventListener("click", download);
  $("timing-button").addEventListener("click", timing);
  const zone = $("drop-zone");
  window.addEventListener("dragover", (ev) => {
    ev.preventDefault();
    zone.classList.add("over");
  });
  window.addEventListener("dragleave", (ev) => {
    if (ev.relatedTarget === null) zone.classList.remove("over");
  });
  window.addEventListener("drop", (ev) => {
    ev.preventDefault();
    zone.classList.remove("over");
    const files = ev.dataTransfer?.files ?? [];
    if (files.length === 0) {
      say("input-message", "Nothing to read was dropped: drop a .npy file.", "error");
      return;
    }
    openFile(files[0]);
    if (files.length > 1) say("input-message", `${files.length} files were dropped; reading the first, ${files[0].name}.`);
  });
  syncOptions();
}

async function start() {
  wire();
  try {
    state.ewise = await import(PACKAGE);
    await state.ewise.init();
  } catch (e) {
    say("load-status", `The ewise package could not be loaded from ${new URL(PACKAGE, import.meta.url)}: ${errorText(e)}. Build it with scripts/web-build.sh (it writes crates/ewise-web/pkg/), and serve the repository root.`, "error");
    for (const id of ["run-button", "timing-button", "sample-button", "file-input"]) $(id).disabled = true;
    $("gpu-status").textContent = "WebGPU is reached through the package, which did not load.";
    body.dataset.gpu = "unavailable";
    body.dataset.ready = "error";
    return;
  }
  say("load-status", `ewise is loaded: open a .npy file (up to ${MAX_DATA_BYTES / 2 ** 30} GiB of data) or generate a sample.`, "ok");
  body.dataset.ready = "true";
  await probeGpu();
}

start();
