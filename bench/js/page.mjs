// The bench page: loads ewise and the browser-capable peers, runs bench.mjs with the
// options of the query string, and shows its markdown.

import { DEFAULT_EXTRA, DEFAULT_ROUNDS, DEFAULT_SIZES, DEFAULT_TURN_MS, defaultRows, parseRow, parseSize, runBench } from "./bench.mjs";

const PEERS = "../../target/tools/js-peers/node_modules/";
const out = document.getElementById("out");
const status = document.getElementById("status");

function list(text) {
  return text.split(",").map((s) => s.trim()).filter(Boolean);
}

async function main() {
  const q = new URLSearchParams(location.search);
  const options = {
    rounds: Number(q.get("rounds") ?? DEFAULT_ROUNDS),
    turnMs: Number(q.get("turn-ms") ?? DEFAULT_TURN_MS),
    bits: q.get("bits") !== "0",
  };
  if (!Number.isInteger(options.rounds) || options.rounds < 1) throw new RangeError(`invalid rounds '${q.get("rounds")}'`);
  if (!(options.turnMs > 0)) throw new RangeError(`invalid turn-ms '${q.get("turn-ms")}'`);
  if (q.get("rows")) options.rows = list(q.get("rows")).map(parseRow);
  else {
    const extra = q.get("extra") === "none" ? [] : list(q.get("extra") ?? DEFAULT_EXTRA.join(",")).map(parseRow);
    options.rows = defaultRows(list(q.get("sizes") ?? DEFAULT_SIZES.join(",")).map(parseSize), extra);
  }
  if (q.get("contenders")) options.contenders = list(q.get("contenders"));
  const nan = q.get("nan") ?? "zero";
  if (!["zero", "propagate"].includes(nan)) throw new RangeError(`invalid nan '${nan}' (zero or propagate)`);

  const env = { reasons: {}, versions: {}, nan, host: navigator.userAgent, command: location.href };
  try {
    const ewise = await import("../../crates/ewise-web/pkg/ewise.js");
    await ewise.init();
    env.ewise = ewise;
    env.versions.ewise = (await (await fetch("../../crates/ewise-web/pkg/package.json")).json()).version;
  } catch (e) {
    env.reasons.ewise = `crates/ewise-web/pkg/ewise.js: ${e.message} (scripts/web-build.sh builds it)`;
  }
  if (globalThis.tf?.wasm) {
    globalThis.tf.wasm.setWasmPaths(new URL(`${PEERS}@tensorflow/tfjs-backend-wasm/dist/`, location.href).href);
    env.tf = globalThis.tf;
    env.versions["tfjs-core"] = globalThis.tf.version_core;
  } else env.reasons.tf = `TensorFlow.js did not load from ${PEERS} (scripts/js-peers.sh installs it)`;
  try {
    const ort = await import(`${PEERS}onnxruntime-web/dist/ort.wasm.min.mjs`);
    ort.env.wasm.wasmPaths = new URL(`${PEERS}onnxruntime-web/dist/`, location.href).href;
    env.ortWeb = ort;
    env.versions["onnxruntime-web"] = ort.env.versions.web;
  } catch (e) {
    env.reasons.ortWeb = `onnxruntime-web did not load from ${PEERS}: ${e.message}`;
  }
  env.reasons.ortNode = "onnxruntime-node runs in Node only";

  status.textContent = "Running...";
  await new Promise((r) => setTimeout(r, 50));
  await runBench(env, options, (line) => {
    out.textContent += `${line}\n`;
  });
  status.textContent = "Done.";
  document.body.dataset.done = "1";
}

main().catch((e) => {
  status.textContent = `Failed: ${e?.message ?? e}`;
  document.body.dataset.done = "error";
});
