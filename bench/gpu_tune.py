#!/usr/bin/env python3
"""Chooses the GPU backend's two tuning constants from `ewise bench --device gpu --json`
sweeps (scripts/gpu-device-kit.sh runs it; issue 39). Not part of the tests.

    gpu_tune.py merge OUT.json IN.json...    the case and overhead rows of ewise's JSON
                                             outputs (whole, concatenated, or cut off part
                                             way: rows are read line by line) as one array
    gpu_tune.py loads SWEEP.json             prints the chosen LOADS_IN_FLIGHT
    gpu_tune.py rows SWEEP.json              prints the chosen MIN_ROW_UNITS
    gpu_tune.py write TUNED.json LOADS_SWEEP.json ROWS_SWEEP.json [--note TEXT]...
                                             both choices with their evidence

LOADS_IN_FLIGHT: the value (of 1 2 4 8 16) with the largest median, over the sweep's
cases (sign float32/float16/int8/float64 and is-infinity float32/float16 contiguous,
sign float32 rows; each size), of the ratio to the WGSL copy kernel measured beside it;
values within 1% of the best count as ties, and ties go to the smaller value. Only cases
measured under every value are compared (a sweep cut short compares what it has).

MIN_ROW_UNITS: the smallest row length (16-byte units of output) at which the row kernel
(min_row_units 1) is at least as fast as the strided walk (min_row_units above the row
length), as the median over the sweep's data types of the row kernel's ratio to the copy
kernel over the strided walk's; 1 when it always is.

Without usable rows, a choice keeps the library's default (4 and 1), and says so.
"""

import json
import statistics
import sys

DEFAULT_LOADS = 4
DEFAULT_MIN_ROWS = 1
TIE = 0.01

LOADS_CASES = {
    ("sign", "FLOAT32", "contiguous"),
    ("sign", "FLOAT16", "contiguous"),
    ("sign", "INT8", "contiguous"),
    ("sign", "FLOAT64", "contiguous"),
    ("is-infinity", "FLOAT32", "contiguous"),
    ("is-infinity", "FLOAT16", "contiguous"),
    ("sign", "FLOAT32", "rows"),
}


def read_rows(path):
    """The JSON objects of ewise's output at `path`, one per line; [] if unreadable."""
    rows = []
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return rows
    for line in lines:
        line = line.strip().rstrip(",")
        if line.startswith("{") and line.endswith("}"):
            try:
                rows.append(json.loads(line))
            except ValueError:
                pass
    return rows


def cases(rows):
    return [r for r in rows if r.get("kind") == "case"]


def key(r):
    return (r["op"], r["dtype"], r["elements"], r["layout"], r.get("row_units"))


def copy_ratio(r):
    return r.get("ratio_copy_kernel", r["ratio"])


def choose_loads(rows):
    """(value, evidence)."""
    by_value = {}
    for r in cases(rows):
        if (r["op"], r["dtype"], r["layout"]) in LOADS_CASES:
            by_value.setdefault(r["loads_in_flight"], {})[key(r)] = copy_ratio(r)
    if not by_value:
        return DEFAULT_LOADS, {"note": "no sweep rows: the default is kept"}
    common = set.intersection(*(set(v) for v in by_value.values()))
    if not common:
        return DEFAULT_LOADS, {"note": "no case measured under every value: the default is kept"}
    medians = {v: statistics.median(c[k] for k in common) for v, c in by_value.items()}
    best = max(medians.values())
    chosen = min(v for v, m in medians.items() if m >= best * (1 - TIE))
    evidence = {
        "rule": "largest median ratio to the copy kernel; within 1% of the best, the smaller value",
        "cases_compared": len(common),
        "median_ratio_copy_kernel": {str(v): round(m, 4) for v, m in sorted(medians.items())},
        "per_case": [
            {
                "op": k[0],
                "dtype": k[1],
                "elements": k[2],
                "layout": k[3],
                "row_units": k[4],
                "ratio_copy_kernel": {str(v): round(by_value[v][k], 4) for v in sorted(by_value)},
            }
            for k in sorted(common, key=str)
        ],
    }
    return chosen, evidence


def choose_rows(rows):
    """(value, evidence)."""
    table = {}  # row_units -> dtype -> {"row": ratio, "strided": ratio}
    for r in cases(rows):
        units = r.get("row_units")
        if r["layout"] != "rows" or units is None:
            continue
        kernel = "row" if r["min_row_units"] <= units else "strided"
        table.setdefault(units, {}).setdefault(r["dtype"], {})[kernel] = copy_ratio(r)
    speedups = {}
    for units, by_dtype in table.items():
        s = [d["row"] / d["strided"] for d in by_dtype.values() if "row" in d and d.get("strided")]
        if s:
            speedups[units] = statistics.median(s)
    if not speedups:
        return DEFAULT_MIN_ROWS, {"note": "no sweep rows: the default is kept"}
    faster = [u for u, s in sorted(speedups.items()) if s >= 1.0]
    if not faster:
        chosen = 2 * max(speedups)
        note = "the row kernel was slower at every row length measured: twice the longest"
    elif len(faster) == len(speedups):
        chosen, note = 1, "the row kernel was at least as fast at every row length measured"
    else:
        chosen, note = faster[0], "the smallest row length where the row kernel is at least as fast"
    evidence = {
        "rule": "smallest row length (units) where median over dtypes of row/strided >= 1; 1 if always",
        "note": note,
        "median_row_over_strided": {str(u): round(s, 4) for u, s in sorted(speedups.items())},
        "per_dtype": {
            str(u): {
                dt: {k: round(v, 4) for k, v in d.items()} for dt, d in sorted(table[u].items())
            }
            for u in sorted(table)
        },
    }
    return chosen, evidence


def main(argv):
    if len(argv) >= 2 and argv[0] == "merge":
        rows = [r for path in argv[2:] for r in read_rows(path)]
        text = "[\n" + ",\n".join("  " + json.dumps(r) for r in rows) + "\n]\n"
        with open(argv[1], "w") as f:
            f.write(text if rows else "[]\n")
        print(f"{argv[1]}: {len(cases(rows))} cases, {len(rows) - len(cases(rows))} other rows")
        return 0
    if len(argv) == 2 and argv[0] == "loads":
        print(choose_loads(read_rows(argv[1]))[0])
        return 0
    if len(argv) == 2 and argv[0] == "rows":
        print(choose_rows(read_rows(argv[1]))[0])
        return 0
    if len(argv) >= 4 and argv[0] == "write":
        notes = [argv[k + 1] for k in range(4, len(argv) - 1) if argv[k] == "--note"]
        loads_rows, rows_rows = read_rows(argv[2]), read_rows(argv[3])
        loads, loads_evidence = choose_loads(loads_rows)
        min_rows, rows_evidence = choose_rows(rows_rows)
        adapter = next((r.get("adapter") for r in loads_rows + rows_rows if "adapter" in r), None)
        tuned = {
            "loads_in_flight": loads,
            "min_row_units": min_rows,
            "defaults": {"loads_in_flight": DEFAULT_LOADS, "min_row_units": DEFAULT_MIN_ROWS},
            "adapter": adapter,
            "notes": notes,
            "loads_in_flight_evidence": loads_evidence,
            "min_row_units_evidence": rows_evidence,
        }
        with open(argv[1], "w") as f:
            json.dump(tuned, f, indent=1)
            f.write("\n")
        print(
            f"tuned: loads_in_flight {loads} (medians {loads_evidence.get('median_ratio_copy_kernel')}), "
            f"min_row_units {min_rows} (row/strided {rows_evidence.get('median_row_over_strided')})"
        )
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
