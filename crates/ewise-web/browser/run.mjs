// Runs the browser tests in headless Chromium with WebGPU (SwiftShader where there is no
// GPU): serves the repository root read-only on 127.0.0.1 (a secure context), opens one
// page per test module of crates/ewise-web/tests/browser/ (runner.html), prints a line
// per test, then runs examples/web/check.mjs when present. Exits 1 when anything failed.
// scripts/browser-test.sh builds the package and installs the tools first.
//
// Environment: EWISE_CHROMIUM (the browser, default /usr/bin/chromium),
// EWISE_PUPPETEER (a directory whose node_modules holds puppeteer-core), EWISE_BROWSER_OUT
// (the directory for artefacts such as screenshots, created when missing),
// EWISE_BROWSER_TIMEOUT_S (per test module, default 600).
//
// Usage: node crates/ewise-web/browser/run.mjs [REGEXP]   (only the test modules whose
// file name matches; the page check runs when REGEXP matches "examples/web")

import { createServer } from "node:http";
import { createReadStream } from "node:fs";
import { mkdir, mkdtemp, readdir, realpath, rm, stat } from "node:fs/promises";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(fileURLToPath(new URL("../../..", import.meta.url)));
const filter = process.argv[2] ? new RegExp(process.argv[2]) : null;
const chromium = process.env.EWISE_CHROMIUM || "/usr/bin/chromium";
const outDir = path.resolve(process.env.EWISE_BROWSER_OUT || path.join(root, "target/web/browser-out"));
const moduleTimeout = 1000 * Number(process.env.EWISE_BROWSER_TIMEOUT_S || 600);

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".npy": "application/octet-stream",
  ".ts": "text/plain; charset=utf-8",
  ".md": "text/plain; charset=utf-8",
};

/** The regular file under `root` that `urlPath` names, links resolved and confined to
 * `root`; null for anything else. */
async function fileFor(urlPath) {
  let p;
  try {
    p = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (p.includes("\0") || p.split("/").includes("..")) return null;
  if (p.endsWith("/")) p += "index.html";
  try {
    const real = await realpath(path.join(root, p));
    if (real !== root && !real.startsWith(root + path.sep)) return null;
    return (await stat(real)).isFile() ? real : null;
  } catch {
    return null;
  }
}

function serve() {
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    const file = req.method === "GET" || req.method === "HEAD" ? await fileFor(url.pathname) : null;
    if (!file) {
      res.writeHead(req.method === "GET" || req.method === "HEAD" ? 404 : 405).end();
      return;
    }
    res.writeHead(200, {
      "Content-Type": TYPES[path.extname(file)] || "application/octet-stream",
      "Cache-Control": "no-store",
      "Cross-Origin-Opener-Policy": "same-origin",
      "Cross-Origin-Embedder-Policy": "require-corp",
    });
    if (req.method === "HEAD") res.end();
    else createReadStream(file).on("error", () => res.destroy()).pipe(res);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}

async function puppeteer() {
  const dir = process.env.EWISE_PUPPETEER;
  if (!dir) throw new Error("EWISE_PUPPETEER must name the directory whose node_modules holds puppeteer-core (scripts/browser-test.sh sets it)");
  const require = createRequire(path.join(path.resolve(dir), "package.json"));
  return (await import(pathToFileURL(require.resolve("puppeteer-core")).href)).default;
}

async function runModule(browser, base, module) {
  const page = await browser.newPage();
  const problems = [];
  const warned = new Set();
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console error: ${m.text()}`);
    else if (m.type() === "warn" && !warned.has(m.text())) {
      // Each warning once per module: every device on SwiftShader gives one.
      warned.add(m.text());
      console.log(`#   ${module}: console ${m.type()} (shown once): ${m.text()}`);
    }
  });
  try {
    await page.goto(`${base}/crates/ewise-web/browser/runner.html?module=${encodeURIComponent(module)}`);
    await page.waitForFunction(() => window.ewiseTests?.done === true, { timeout: moduleTimeout, polling: 100 });
    const state = await page.evaluate(() => window.ewiseTests);
    return { ...state, problems };
  } catch (e) {
    return { results: [], fatal: `${module} did not finish: ${e.message}`, problems };
  } finally {
    await page.close().catch(() => {});
  }
}

// Chromium's profile and its own temporary files go into one directory of ours, removed
// at the end, on an error and on SIGINT or SIGTERM: nothing is left in the system's
// temporary directory.
let browser;
const scratch = await mkdtemp(path.join(tmpdir(), "ewise-browser-test-"));
const removeScratch = () => rmSync(scratch, { recursive: true, force: true });
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => {
    console.log(`# stopped by ${signal}`);
    const pid = browser?.process()?.pid;
    try {
      if (pid) process.kill(-pid, "SIGKILL"); // puppeteer starts it as a process group
    } catch {
      browser?.process()?.kill("SIGKILL");
    }
    removeScratch();
    process.exit(130);
  });
}

const server = await serve();
const base = `http://127.0.0.1:${server.address().port}`;
let failures = 0;
let passed = 0;
let count = 0;
try {
  const pp = await puppeteer();
  const args = ["--enable-unsafe-webgpu", "--headless=new"];
  if (process.getuid?.() === 0) args.push("--no-sandbox");
  await mkdir(path.join(scratch, "tmp"));
  browser = await pp.launch({
    executablePath: chromium,
    headless: true,
    args,
    userDataDir: path.join(scratch, "profile"),
    env: { ...process.env, TMPDIR: path.join(scratch, "tmp") },
    protocolTimeout: moduleTimeout + 60000,
  });
  console.log(`# ${await browser.version()} at ${base}`);

  const dir = path.join(root, "crates/ewise-web/tests/browser");
  const modules = (await readdir(dir)).filter((f) => f.endsWith(".test.mjs") && (!filter || filter.test(f))).sort();
  for (const file of modules) {
    const module = `/crates/ewise-web/tests/browser/${file}`;
    const state = await runModule(browser, base, module);
    for (const r of state.results) {
      const label = `${file}: ${r.name}`;
      count++;
      if (r.ok) {
        passed++;
        console.log(`ok ${count} - ${label} (${r.ms} ms)`);
      }
      else {
        failures++;
        console.log(`not ok ${count} - ${label} (${r.ms} ms)\n${r.error.replace(/^/gm, "#   ")}`);
      }
    }
    for (const p of [state.fatal, ...state.problems].filter(Boolean)) {
      failures++;
      console.log(`not ok - ${file}: ${p.replace(/\n/g, "\n#   ")}`);
    }
  }

  const check = path.join(root, "examples/web/check.mjs");
  if ((!filter || filter.test("examples/web")) && (await stat(check).catch(() => null))) {
    await mkdir(outDir, { recursive: true });
    count++;
    try {
      const { default: run } = await import(pathToFileURL(check).href);
      const summary = await run({ browser, baseUrl: base, outDir });
      passed++;
      console.log(`ok ${count} - examples/web/check.mjs: ${summary}`);
    } catch (e) {
      failures++;
      console.log(`not ok ${count} - examples/web/check.mjs\n${String(e?.stack || e).replace(/^/gm, "#   ")}`);
    }
  }
} catch (e) {
  failures++;
  console.log(`not ok - the browser could not be driven: ${e?.stack || e}`);
} finally {
  await browser?.close().catch(() => {});
  server.close();
  await rm(scratch, { recursive: true, force: true });
}
console.log(`# ${passed} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
