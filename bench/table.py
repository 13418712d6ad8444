#!/usr/bin/env python3
"""Turn `ewise bench --json` output into the Markdown tables of docs/PERFORMANCE.md.

    target/release/ewise bench --json > bench.json && python3 bench/table.py bench.json

Given several files (runs of the same cases), it prints per case the median ratio over
the runs and its range, which says more than one run on a shared, noisy machine.
'vs read' is the time of a plain read of the input over the operator's time:

    for k in 1 2 3; do target/release/ewise bench --json > run$k.json; done
    python3 bench/table.py run1.json run2.json run3.json
"""

import json
import statistics
import sys


def key(r):
    return (r["op"], r["dtype"], r["elements"], r["layout"], r["threads"])


def cases(rows):
    """The measured cases of a run: `ewise bench --device gpu` adds overhead rows."""
    return [r for r in rows if r.get("kind", "case") == "case"]


def one_run(rows):
    groups = {}
    for r in rows:
        groups.setdefault((r["elements"], r["layout"]), []).append(r)
    for (elements, layout), rs in sorted(groups.items()):
        print(f"\n### {elements} elements, {layout}\n")
        print("| op | dtype | threads | GB/s | best copy | copy GB/s | ratio | ns/call | vs read |")
        print("|---|---|---|---:|---|---:|---:|---:|---:|")
        for r in rs:
            print(
                f"| {r['op']} | {r['dtype']} | {r['threads']} | {r['gbps']:.1f} | "
                f"{r['best_copy']} x{r['best_copy_threads']} | {r['best_copy_gbps']:.1f} | "
                f"{r['ratio']:.2f} | {r['ns_per_call']:.0f} | {r.get('vs_read', float('nan')):.2f} |"
            )


def several_runs(runs):
    cases = {}
    for rows in runs:
        for r in rows:
            cases.setdefault(key(r), []).append(r)
    groups = {}
    for k, rs in cases.items():
        groups.setdefault((k[2], k[3]), []).append(rs)
    for (elements, layout), cs in sorted(groups.items()):
        print(f"\n### {elements} elements, {layout}, {len(runs)} runs\n")
        print(
            "| op | dtype | threads | GB/s (median) | copy GB/s (median) | ratio (median) "
            "| ratio (range) | vs read (median) |"
        )
        print("|---|---|---|---:|---:|---:|---|---:|")
        for rs in cs:
            ratios = [r["ratio"] for r in rs]
            r0 = rs[0]
            print(
                f"| {r0['op']} | {r0['dtype']} | {r0['threads']} | "
                f"{statistics.median(r['gbps'] for r in rs):.1f} | "
                f"{statistics.median(r['best_copy_gbps'] for r in rs):.1f} | "
                f"{statistics.median(ratios):.2f} | {min(ratios):.2f}-{max(ratios):.2f} | "
                f"{statistics.median(r.get('vs_read', float('nan')) for r in rs):.2f} |"
            )


def main():
    paths = sys.argv[1:]
    if len(paths) <= 1:
        one_run(cases(json.load(open(paths[0]) if paths else sys.stdin)))
    else:
        several_runs([cases(json.load(open(p))) for p in paths])


if __name__ == "__main__":
    main()
