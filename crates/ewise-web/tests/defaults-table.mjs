// The defaults table of docs/SEMANTICS.md section 8.2, as the package's tests read it:
// the lines from the `<!-- defaults-table ... -->` marker to the next blank line, one
// Markdown table whose first column names the setting. Used by defaults.test.mjs (Node)
// and browser/defaults.test.mjs (the row Node cannot check).

/** The column of the JavaScript array functions. */
export const COLUMN = "JavaScript `sign`, `isInfinity`";

/** The cells of `column` in the defaults table of `markdown` (SEMANTICS.md's text), as
 * a Map from the setting (first column) to the cell, in the table's order; throws an
 * Error saying what is missing when there is no marker, no table or no such column. */
export function defaultsColumn(markdown, column = COLUMN) {
  const lines = markdown.split(/\r?\n/);
  const start = lines.findIndex((l) => /^<!--\s*defaults-table\b/.test(l));
  if (start < 0) throw new Error("SEMANTICS.md has no <!-- defaults-table ... --> marker");
  const end = lines.findIndex((l, i) => i > start && l.trim() === "");
  const table = lines.slice(start + 1, end < 0 ? lines.length : end);
  const cells = (line) => line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
  if (table.length < 3 || !table.every((l) => l.trim().startsWith("|"))) {
    throw new Error(`the lines after the defaults-table marker are no Markdown table: ${JSON.stringify(table.slice(0, 3))}`);
  }
  const header = cells(table[0]);
  const k = header.indexOf(column);
  if (k < 1) throw new Error(`the defaults table has no column ${JSON.stringify(column)}; its columns: ${JSON.stringify(header)}`);
  const rows = new Map();
  for (const line of table.slice(2)) {
    const row = cells(line);
    if (row.length !== header.length) throw new Error(`a defaults table row has ${row.length} cells, not ${header.length}: ${line}`);
    rows.set(row[0], row[k]);
  }
  return rows;
}
