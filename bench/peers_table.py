#!/usr/bin/env python3
"""Markdown tables from the output of `bench/peers.py`.

For each layout, one row per operator and data type and one column per size; each cell
is "ewise / best peer" in GB/s, ewise being the better of the `ewise` (ewise bench) and
`ewise (python)` columns, and the best peer the fastest of numpy, torch and onnxruntime
(its initial: n, t, o). A cell is bold where ewise is more than 5% behind. Then the
list of those rows, with every column's figure.

    python3 bench/peers.py > warm.txt && python3 bench/peers_table.py warm.txt
"""

import re
import sys

CELL = re.compile(r"(\d+\.\d+) \(\d+\.\d+\)|\d+\.\d+|mem|-")
EWISE = ("ewise", "ewise (python)")
NOISE = 0.95


def parse(lines):
    """(columns, rows): the peer column names, and per row (op, dtype, elements,
    layout, {column: GB/s or None})."""
    columns, rows = None, []
    for line in lines:
        if line.startswith("op ") and "copy GB/s" in line:
            tail = line.split("copy GB/s", 1)[1]
            columns = [c.strip() for c in re.split(r"\s{2,}", tail.strip()) if c.strip()]
            continue
        if columns is None or not re.match(r"^(sign|is-infinity)\s", line):
            continue
        op, dtype, elements, layout, rest = line.split(None, 4)
        cells = [m.group(0) for m in CELL.finditer(rest)][1:]  # the first is the copy's
        values = {}
        for name, cell in zip(columns, cells):
            number = re.match(r"\d+\.\d+", cell)
            values[name] = float(number.group(0)) if number else None
        rows.append((op, dtype, int(elements), layout, values))
    return columns or [], rows


def size_name(n):
    for unit, shift in (("Mi", 20), ("Ki", 10)):
        if n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return str(n)


def verdict(values):
    """(ewise GB/s, best peer GB/s, the peer's initial), None where either is missing."""
    ours = [values[c] for c in EWISE if values.get(c) is not None]
    peers = [(v, c) for c, v in values.items() if c not in EWISE and v is not None]
    if not ours or not peers:
        return None
    best, name = max(peers)
    return max(ours), best, name[0]


def main():
    with open(sys.argv[1]) as f:
        columns, rows = parse(f)
    sizes = sorted({r[2] for r in rows})
    behind = []
    for layout in dict.fromkeys(r[3] for r in rows):
        print(f"\n{layout}: ewise / best peer, GB/s (n numpy, t torch, o onnxruntime)\n")
        print("| op | dtype | " + " | ".join(size_name(s) for s in sizes) + " |")
        print("|---|---|" + "---:|" * len(sizes))
        keys = list(dict.fromkeys((r[0], r[1]) for r in rows if r[3] == layout))
        for op, dtype in keys:
            cells = []
            for s in sizes:
                match = [r for r in rows if r[:4] == (op, dtype, s, layout)]
                v = verdict(match[0][4]) if match else None
                if v is None:
                    cells.append("-")
                    continue
                ours, best, name = v
                cell = f"{ours:.1f} / {best:.1f} {name}"
                if ours < NOISE * best:
                    cell = f"**{cell}**"
                    behind.append(match[0])
                cells.append(cell)
            print(f"| {op} | {dtype.lower()} | " + " | ".join(cells) + " |")
    print(f"\nbehind the best peer by more than {100 - NOISE * 100:.0f}%: {len(behind)} rows")
    for op, dtype, n, layout, values in behind:
        shown = ", ".join(f"{c} {v:.1f}" for c, v in values.items() if v is not None)
        print(f"- {op} {dtype.lower()} {size_name(n)} {layout}: {shown}")


if __name__ == "__main__":
    main()
