#!/usr/bin/env node
// The npm package `ewise` against JavaScript peers, in one Node process (Node >= 20):
// SIGN and IS_INFINITY through ewise's copying calls, a plain JavaScript loop,
// TensorFlow.js (wasm and cpu backends), onnxruntime-web (wasm) and onnxruntime-node,
// each as a ratio to `TypedArray.prototype.set` of the same bytes timed in the same
// rounds; then each peer's bits on special values against ewise's. Markdown on stdout.
//
// ewise comes from crates/ewise-web/pkg (scripts/web-build.sh), the peers from
// target/tools/js-peers (scripts/js-peers.sh installs them and runs this); a peer that
// cannot be loaded is reported as unavailable with the reason, and the rest run.
// Not part of the tests.
//
//   node bench/js/peers.mjs [--rounds 11] [--sizes 4Ki,64Ki,1Mi,16Mi]
//       [--extra sign/float64/1Mi,sign/int8/1Mi | --extra none] [--rows op/dtype/size,...]
//       [--contenders copy,ewise-out,...] [--turn-ms 10] [--nan zero|propagate] [--no-bits]
//       [--ewise crates/ewise-web/pkg] [--peers target/tools/js-peers] [--list]

import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { CONTENDERS, DEFAULT_EXTRA, DEFAULT_ROUNDS, DEFAULT_SIZES, DEFAULT_TURN_MS, defaultRows, parseRow, parseSize, runBench } from "./bench.mjs";

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");

function usage(message) {
  process.stderr.write(`peers.mjs: ${message}\n`);
  process.exit(2);
}

function list(text) {
  return text.split(",").map((s) => s.trim()).filter(Boolean);
}

/** `require` of a peer from the peers' folder: { module, version }, or { reason }. */
function loadPeer(requireFrom, peers, name) {
  try {
    const module = requireFrom(name);
    const manifest = JSON.parse(readFileSync(path.join(peers, "node_modules", name, "package.json"), "utf8"));
    return { module, version: manifest.version };
  } catch (e) {
    const why = `${e.code ?? e.name}: ${String(e.message).split("\n")[0]}`;
    return { reason: `${name} cannot be loaded from ${peers} (scripts/js-peers.sh installs it): ${why}` };
  }
}

async function main() {
  let parsed;
  try {
    parsed = parseArgs({
      options: {
        rounds: { type: "string", default: String(DEFAULT_ROUNDS) },
        sizes: { type: "string", default: DEFAULT_SIZES.join(",") },
        extra: { type: "string", default: DEFAULT_EXTRA.join(",") },
        rows: { type: "string" },
        contenders: { type: "string" },
        "turn-ms": { type: "string", default: String(DEFAULT_TURN_MS) },
        nan: { type: "string", default: "zero" },
        "no-bits": { type: "boolean", default: false },
        ewise: { type: "string", default: path.join(ROOT, "crates/ewise-web/pkg") },
        peers: { type: "string", default: path.join(ROOT, "target/tools/js-peers") },
        list: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
    }).values;
  } catch (e) {
    usage(e.message);
  }
  if (parsed.help) {
    process.stdout.write(readFileSync(new URL(import.meta.url), "utf8").split("\n").slice(1, 17).map((l) => l.replace(/^\/\/ ?/, "")).join("\n") + "\n");
    return;
  }
  parsed.peers = path.resolve(parsed.peers);
  parsed.ewise = path.resolve(parsed.ewise);
  if (parsed.list) {
    for (const c of CONTENDERS) process.stdout.write(`${c.id.padEnd(16)} ${c.note}\n`);
    return;
  }
  const options = { bits: !parsed["no-bits"] };
  try {
    options.rounds = Number(parsed.rounds);
    if (!Number.isInteger(options.rounds) || options.rounds < 1) throw new RangeError(`invalid --rounds '${parsed.rounds}' (a positive integer)`);
    options.turnMs = Number(parsed["turn-ms"]);
    if (!(options.turnMs > 0)) throw new RangeError(`invalid --turn-ms '${parsed["turn-ms"]}' (a positive number)`);
    if (parsed.rows) options.rows = list(parsed.rows).map(parseRow);
    else {
      const extra = parsed.extra === "none" ? [] : list(parsed.extra).map(parseRow);
      options.rows = defaultRows(list(parsed.sizes).map(parseSize), extra);
    }
    if (parsed.contenders) {
      options.contenders = list(parsed.contenders);
      const known = CONTENDERS.map((c) => c.id);
      const unknown = options.contenders.filter((id) => !known.includes(id));
      if (unknown.length) throw new RangeError(`unknown contender '${unknown[0]}' (${known.join(", ")})`);
    }
    if (!["zero", "propagate"].includes(parsed.nan)) throw new RangeError(`invalid --nan '${parsed.nan}' (zero or propagate)`);
  } catch (e) {
    usage(e.message);
  }

  // TensorFlow.js greets Node users on the console: keep stdout for the markdown.
  console.log = (...args) => process.stderr.write(`${args.join(" ")}\n`);
  console.warn = console.log;

  const env = { reasons: {}, versions: { node: process.versions.node }, nan: parsed.nan };
  const entry = path.join(parsed.ewise, "ewise.js");
  try {
    const ewise = await import(pathToFileURL(entry).href);
    await ewise.init();
    env.ewise = ewise;
    const manifest = path.join(parsed.ewise, "package.json");
    env.versions.ewise = existsSync(manifest) ? JSON.parse(readFileSync(manifest, "utf8")).version : "?";
  } catch (e) {
    env.reasons.ewise = `${entry}: ${e.message} (scripts/web-build.sh builds it)`;
  }

  const requireFrom = createRequire(path.join(parsed.peers, "package.json"));
  const tf = loadPeer(requireFrom, parsed.peers, "@tensorflow/tfjs-core");
  if (tf.module) {
    for (const backend of ["@tensorflow/tfjs-backend-wasm", "@tensorflow/tfjs-backend-cpu"]) {
      const b = loadPeer(requireFrom, parsed.peers, backend);
      if (b.reason) env.reasons.tf = b.reason;
      else env.versions[backend.replace("@tensorflow/", "")] = b.version;
    }
    env.tf = tf.module;
    env.versions["tfjs-core"] = tf.version;
  } else env.reasons.tf = tf.reason;
  for (const [key, name] of [["ortWeb", "onnxruntime-web"], ["ortNode", "onnxruntime-node"]]) {
    const p = loadPeer(requireFrom, parsed.peers, name);
    if (p.module) {
      env[key] = p.module;
      env.versions[name] = p.version;
    } else env.reasons[key] = p.reason;
  }
  if (env.ortWeb) env.versions["onnxruntime-web"] += ` (wasm threads ${env.ortWeb.env.wasm.numThreads ?? "default"})`;

  const cpu = os.cpus()[0]?.model ?? "unknown CPU";
  env.host = `${cpu}, ${os.cpus().length} CPUs, ${os.platform()} ${os.arch()}; Node ${process.versions.node} (V8 ${process.versions.v8})`;
  env.command = ["node", path.relative(process.cwd(), new URL(import.meta.url).pathname), ...process.argv.slice(2)].join(" ");

  await runBench(env, options, (line) => process.stdout.write(`${line}\n`));
}

main().catch((e) => {
  process.stderr.write(`peers.mjs: ${e?.stack ?? e}\n`);
  process.exit(1);
});
