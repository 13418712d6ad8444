// Writes the JavaScript blocks of a Markdown file (the package's README) into a folder as
// a user would save them: a block whose info string is `js cjs` as blockN.cjs (CommonJS
// only), `js` and `js esm` as blockN.mjs (an ES module; the doc runner,
// scripts/doc-test.sh, also runs `js` blocks as CommonJS), N the block's line. A block
// after `<!-- not run: ... -->` is left out, and so is a `js deno` block (Deno's, which
// scripts/doc-test.sh runs under Deno). Prints the files' names, one a line.
//
// Usage: node readme-blocks.mjs README.md FOLDER

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [file, folder] = process.argv.slice(2);
if (!file || !folder) {
  console.error("usage: node readme-blocks.mjs README.md FOLDER");
  process.exit(2);
}
const lines = readFileSync(file, "utf8").split("\n");
for (let i = 0; i < lines.length; i++) {
  const open = /^(`{3,})\s*(\S*)\s*(.*)$/.exec(lines[i]);
  if (!open) continue;
  const end = lines.findIndex((l, k) => k > i && l.startsWith(open[1]) && l.trim() === open[1]);
  if (end < 0) throw new Error(`${file}:${i + 1}: a fence that is never closed`);
  const skipped = i > 0 && /^<!--\s*not run:/.test(lines[i - 1]);
  const attrs = open[3].split(/[\s,]+/).filter(Boolean);
  if (open[2] === "js" && !skipped && !attrs.includes("deno")) {
    const name = `block${i + 1}.${attrs.includes("cjs") ? "cjs" : "mjs"}`;
    writeFileSync(join(folder, name), lines.slice(i + 1, end).join("\n") + "\n");
    console.log(name);
  }
  i = end;
}
