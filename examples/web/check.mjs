// The browser check of examples/web/: drives the page in Chromium (puppeteer-core) as a
// person would, and compares what it shows and downloads with results computed here,
// independently of the page's own code.

import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

const STEP_MS = 60_000;

/** The input: float32 bit patterns covering every case of the contract. */
const INPUT_BITS = [
  0x7fc00000, 0xffc00001, 0x7f800001, 0x7fa5a5a5, 0x00000000, 0x80000000, 0x7f800000, 0xff800000,
  0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x3f800000, 0xbf800000, 0x7f7fffff, 0xff7fffff,
  0x40200000, 0xc0200000, 0x3dcccccd, 0x0da24260, 0xc2f6e979, 0x7f800000, 0x00800000, 0x80800000,
];
const SHAPE = [4, 6];

function npyFile(descr, shape, fortranOrder, data) {
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(", ")})`;
  let text = `{'descr': '${descr}', 'fortran_order': ${fortranOrder ? "True" : "False"}, 'shape': ${shapeText}, }`;
  text += " ".repeat((64 - ((10 + text.length + 1) % 64)) % 64) + "\n";
  const header = Buffer.alloc(10);
  Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]).copy(header);
  header.writeUInt16LE(text.length, 8);
  return Buffer.concat([header, Buffer.from(text, "latin1"), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]);
}

function float32Sign(bits, nan) {
  const magnitude = bits & 0x7fffffff;
  if (magnitude === 0) return 0;
  if (magnitude > 0x7f800000) return nan === "propagate" ? bits : 0;
  return bits >= 0x80000000 ? 0xbf800000 : 0x3f800000;
}

function float32IsInfinity(bits, mode) {
  return (bits === 0x7f800000 && (mode === "either" || mode === "positive")) ||
    (bits === 0xff800000 && (mode === "either" || mode === "negative")) ? 1 : 0;
}

function expected(op, option) {
  if (op === "sign") {
    const out = Uint32Array.from(INPUT_BITS, (b) => float32Sign(b, option));
    const counts = { "-1": 0, 0: 0, "+1": 0, NaN: 0 };
    for (const b of out) counts[b === 0 ? "0" : b === 0x3f800000 ? "+1" : b === 0xbf800000 ? "-1" : "NaN"]++;
    if (option !== "propagate") delete counts.NaN;
    return { counts, file: npyFile("<f4", SHAPE, true, out) };
  }
  const out = Uint8Array.from(INPUT_BITS, (b) => float32IsInfinity(b, option));
  const ones = out.reduce((a, b) => a + b, 0);
  return { counts: { 1: ones, 0: out.length - ones }, file: npyFile("|u1", SHAPE, true, out) };
}

function firstDifference(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

/**
 * Opens `${baseUrl}/examples/web/index.html` in `browser` (a puppeteer-core Browser:
 * Chromium with WebGPU), loads a malformed file and a float32 .npy written into
 * `outDir`, runs SIGN and IS_INFINITY on the WebAssembly CPU and on WebGPU, checks the
 * counts shown and the downloaded .npy bytes against results computed here, runs the
 * timing panel on 4096 elements, and saves `${outDir}/ewise-web-page.png`; then a file
 * whose shape has a dimension past 2^53 must be refused and take the last result off
 * the page. Throws an
 * Error naming the first failure (console errors and page errors included); returns a
 * one-line summary.
 */
export default async function check({ browser, baseUrl, outDir }) {
  const problems = [];
  const page = await browser.newPage();
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console error: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("response", (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()} for ${r.url()}`);
  });
  const cdp = await browser.target().createCDPSession();
  const fail = (message) => {
    throw new Error(`examples/web check: ${message}${problems.length > 0 ? `; also: ${problems.join("; ")}` : ""}`);
  };
  const text = (selector) => page.$eval(selector, (el) => el.textContent.trim());
  const seq = (name) => page.$eval("body", (b, n) => Number(b.dataset[n]), name);
  const after = async (name, action) => {
    const before = await seq(name);
    await action();
    await page.waitForFunction((n, b) => Number(document.body.dataset[n]) > b, { timeout: STEP_MS }, name, before);
  };

  try {
    await page.setViewport({ width: 1280, height: 800 });
    await cdp.send("Browser.setDownloadBehavior", { behavior: "allowAndName", downloadPath: outDir, eventsEnabled: true });
    await page.goto(`${baseUrl}/examples/web/index.html`, { waitUntil: "load" });
    await page.waitForSelector('body:not([data-ready="false"])', { timeout: STEP_MS });
    if ((await page.$eval("body", (b) => b.dataset.ready)) !== "true") fail(`the page did not load ewise: ${await text("#load-status")}`);
    await page.waitForSelector('body:not([data-gpu="pending"])', { timeout: STEP_MS });
    if ((await page.$eval("body", (b) => b.dataset.gpu)) !== "ready") fail(`WebGPU is not available to the page: ${await text("#gpu-status")}`);
    const adapter = (await text("#gpu-status")).replace(/^WebGPU adapter: /, "");
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    if (wide > 1280) fail(`the page is ${wide} px wide at a 1280x800 viewport (it scrolls sideways)`);

    const fileInput = await page.$("#file-input");
    const upload = async (name, bytes) => {
      const path = join(outDir, name);
      await writeFile(path, bytes);
      await after("inputSeq", () => fileInput.uploadFile(path));
    };

    await upload("ewise-web-not-npy.npy", Buffer.from("PK\x03\x04 this is not a .npy file"));
    const refused = await text("#input-message");
    if (!refused.includes("not a .npy file")) fail(`a file without the .npy magic string gave the message ${JSON.stringify(refused)}`);
    await upload("ewise-web-truncated.npy", npyFile("<f4", SHAPE, false, new Float32Array(20)));
    const truncated = await text("#input-message");
    if (!truncated.includes("truncated data")) fail(`a file with too little data gave the message ${JSON.stringify(truncated)}`);

    await upload("ewise-web-input.npy", npyFile("<f4", SHAPE, true, Uint32Array.from(INPUT_BITS)));
    const summary = await text("#input-summary");
    if (!summary.includes("(4, 6)") || !summary.includes("float32") || !summary.includes("Fortran")) {
      fail(`after loading the input, the summary reads ${JSON.stringify(summary)} (${await text("#input-message")})`);
    }

    const download = async () => {
      let guid = null;
      let name = null;
      let onBegin;
      let onProgress;
      const finished = new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("the download did not finish within 60 s")), STEP_MS);
        onBegin = (e) => {
          guid = e.guid;
          name = e.suggestedFilename;
        };
        onProgress = (e) => {
          if (e.guid !== guid) return;
          if (e.state === "completed") resolve(clearTimeout(timer));
          if (e.state === "canceled") reject(new Error("the download was cancelled"), clearTimeout(timer));
        };
        cdp.on("Browser.downloadWillBegin", onBegin);
        cdp.on("Browser.downloadProgress", onProgress);
      });
      try {
        await page.click("#download-button");
        await finished;
      } finally {
        cdp.off("Browser.downloadWillBegin", onBegin);
        cdp.off("Browser.downloadProgress", onProgress);
      }
      const path = join(outDir, name);
      await rm(path, { force: true });
      await rename(join(outDir, guid), path);
      return { name, bytes: await readFile(path) };
    };

    const runs = [
      ["isInfinity", "cpu", "either"],
      ["isInfinity", "gpu", "negative"],
      ["sign", "cpu", "zero"],
      ["sign", "cpu", "propagate"],
      ["sign", "gpu", "zero"],
      ["sign", "gpu", "propagate"],
    ];
    const done = [];
    for (const [op, device, option] of runs) {
      const what = `${op === "sign" ? "SIGN" : "IS_INFINITY"} (${option}) on ${device === "cpu" ? "the wasm CPU" : "WebGPU"}`;
      await page.click(`input[name="op"][value="${op}"]`);
      await page.click(`input[name="device"][value="${device}"]`);
      await page.select(op === "sign" ? "#nan-policy" : "#inf-mode", option);
      await after("runSeq", () => page.click("#run-button"));
      const message = await page.$eval("#run-message", (el) => [el.dataset.kind, el.textContent]);
      if (message[0] !== "ok") fail(`${what}: the page says ${JSON.stringify(message[1])}`);
      const want = expected(op, option);
      const counts = await page.$$eval("#counts td[data-key]", (tds) => Object.fromEntries(tds.map((td) => [td.dataset.key, Number(td.textContent)])));
      if (JSON.stringify(counts) !== JSON.stringify(want.counts)) {
        fail(`${what}: the page counts ${JSON.stringify(counts)}, expected ${JSON.stringify(want.counts)}`);
      }
      const got = await download();
      const at = firstDifference(got.bytes, want.file);
      if (at >= 0) {
        fail(`${what}: the downloaded ${got.name} (${got.bytes.length} bytes) differs from the expected .npy (${want.file.length} bytes) first at byte ${at}`);
      }
      done.push(`${op} ${option} ${device}`);
    }
    const shownBits = await page.$$eval("#values tbody tr", (rows) => rows.map((r) => r.cells[4].textContent));
    if (shownBits[1] !== "0xffc00001" || shownBits[2] !== "0x7f800001") {
      fail(`SIGN (propagate): the first output bits shown are ${shownBits.slice(0, 4).join(", ")}, expected the NaNs' own bits 0xffc00001 and 0x7f800001 at 1 and 2`);
    }

    await page.$eval("#timing-count", (el) => { el.value = "4096"; });
    await page.$eval("#timing-runs", (el) => { el.value = "2"; });
    await after("timingSeq", () => page.click("#timing-button"));
    const timing = await page.$$eval("#timing tbody tr", (rows) => rows.map((r) => ({ method: r.dataset.method, gbps: Number(r.dataset.gbps), same: r.dataset.same, text: r.textContent })));
    const methods = timing.map((t) => t.method).join(",");
    if (methods !== "wasm,webgpu,js,copy") fail(`the timing table has the rows ${methods} (${await text("#timing-message")})`);
    for (const t of timing) {
      if (!(t.gbps > 0) || t.same !== "true") fail(`timing row ${t.method}: ${JSON.stringify(t.text)}`);
    }

    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(outDir, "ewise-web-page.png"), fullPage: true });

    await upload("ewise-web-huge-dimension.npy", npyFile("<f4", [0n, 2n ** 53n + 1n], false, new Float32Array(0)));
    const huge = await text("#input-message");
    if (!huge.includes("dimension 1 has 9007199254740993 elements")) fail(`a shape (0, 2^53 + 1) gave the message ${JSON.stringify(huge)}`);
    const shown = await page.$eval("#result", (el) => !el.hidden);
    if (shown || (await text("#run-message")) !== "") fail("after a refused file, the previous file's result is still on the page");
    if (problems.length > 0) fail(problems.join("; "));
    const rate = Object.fromEntries(timing.map((t) => [t.method, t.gbps.toFixed(2)]));
    return `examples/web: ${done.length} runs (${done.join("; ")}) shown and downloaded bit-exact, malformed files refused with messages, timing on 4096 float32 in GB/s: wasm ${rate.wasm}, WebGPU ${rate.webgpu}, JS ${rate.js}, copy ${rate.copy} (adapter ${adapter})`;
  } finally {
    await cdp.send("Browser.setDownloadBehavior", { behavior: "default" }).catch(() => {});
    await cdp.detach().catch(() => {});
    await page.close().catch(() => {});
  }
}
