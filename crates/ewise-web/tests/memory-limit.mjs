// The child process of memory.test.mjs's address-space test (not a test file itself):
// allocates its arrays, lowers its own address-space limit (RLIMIT_AS, by prlimit) to
// 128 MiB above what it uses, then makes the calls whose JavaScript allocations no
// longer fit, and prints one JSON line: for each call, what it threw.

import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

import { loadPackage } from "./reference.mjs";

const ewise = await loadPackage();
await ewise.init();

const n = 2 ** 28; // 1 GiB of float32
const x = new Float32Array(n);
x[0] = -3;
const sharedX = new Float32Array(new SharedArrayBuffer(4 * n));
const sharedOut = new Float32Array(new SharedArrayBuffer(4 * n));
ewise.sign(new Float32Array([1, -1]));

const used = Number(readFileSync("/proc/self/status", "utf8").match(/VmSize:\s+(\d+) kB/)[1]) * 1024;
const limit = used + 128 * 2 ** 20;
const set = spawnSync("prlimit", ["--pid", String(process.pid), `--as=${limit}`], { encoding: "utf8" });
if (set.status !== 0) {
  console.log(JSON.stringify({ skip: `prlimit failed: ${set.error?.message ?? set.stderr}` }));
  process.exit(0);
}

function thrown(f) {
  try {
    f();
    return null;
  } catch (e) {
    return { name: e.name, kind: e.kind, message: e.message, isOutOfMemory: e instanceof ewise.OutOfMemoryError, cause: e.cause && { name: e.cause.name, message: e.cause.message, isRangeError: e.cause instanceof RangeError } };
  }
}

const results = {
  "sign(x): a 1 GiB result": thrown(() => ewise.sign(x)),
  "isInfinity(x): a 256 MiB result": thrown(() => ewise.isInfinity(x)),
  "sign(x, { out }) in two SharedArrayBuffers: a 1 GiB staging copy": thrown(() => ewise.sign(sharedX, { out: sharedOut })),
};
const after = Array.from(ewise.sign(new Float32Array([-2, 0, 5])));
console.log(JSON.stringify({ limit, results, after, x0: x[0] }));
