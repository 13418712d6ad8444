// Runs a wasm32-wasip1 program under Node's WASI: `node scripts/wasi-run.mjs PROGRAM.wasm ARGS...`.
// The program sees ARGS, the environment, and the current directory (as `.` and under its
// own absolute path); its exit status is this process's. Used as cargo's runner:
// CARGO_TARGET_WASM32_WASIP1_RUNNER="node scripts/wasi-run.mjs" (scripts/wasm-test.sh).
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import process, { argv, cwd, env, exit } from "node:process";

// Node 20 warns that WASI is experimental, on every run.
process.removeAllListeners("warning");
const { WASI } = await import("node:wasi");

const [program, ...args] = argv.slice(2);
if (!program) {
  console.error("usage: node wasi-run.mjs PROGRAM.wasm [ARGS...]");
  exit(2);
}
const here = cwd();
const wasi = new WASI({
  version: "preview1",
  args: [basename(program), ...args],
  env,
  preopens: { ".": here, [here]: here },
  returnOnExit: true,
});
const module = await WebAssembly.compile(await readFile(program));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
exit(wasi.start(instance));
