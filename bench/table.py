#!/usr/bin/env python3
"""Turn `ewise bench --json` output into the Markdown tables of docs/PERFORMANCE.md.

    target/release/ewise bench --json > bench.json && python3 bench/table.py bench.json
"""

import json
import sys


def main():
    rows = json.load(open(sys.argv[1]) if len(sys.argv) > 1 else sys.stdin)
    groups = {}
    for r in rows:
        groups.setdefault((r["elements"], r["layout"]), []).append(r)
    for (elements, layout), rs in sorted(groups.items()):
        print(f"\n### {elements} elements, {layout}\n")
        print("| op | dtype | threads | GB/s | best copy | copy GB/s | ratio | ns/call |")
        print("|---|---|---|---:|---|---:|---:|---:|")
        for r in rs:
            print(
                f"| {r['op']} | {r['dtype']} | {r['threads']} | {r['gbps']:.1f} | "
                f"{r['best_copy']} x{r['best_copy_threads']} | {r['best_copy_gbps']:.1f} | "
                f"{r['ratio']:.2f} | {r['ns_per_call']:.0f} |"
            )


if __name__ == "__main__":
    main()
