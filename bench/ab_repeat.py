#!/usr/bin/env python3
"""Compare two builds of the CPU kernels case by case: their `examples/repeat` binaries
run in alternation, so that both see the same spells of a noisy host.

    cargo build --release -p ewise-cpu --example repeat   # in each of the two checkouts
    python3 bench/ab_repeat.py --base BASE/repeat --head HEAD/repeat --sizes 16Mi 256Mi

Each case (operator, data type, layout, size) runs `--runs` times per build, base and head
taking turns (the one going first alternates from run to run). A run makes `--calls`
calls; its figure is the median GB/s of all calls but the first (which faults the
output's pages in). A case's ratio is the median of head's run figures over the median
of base's. A case whose ratio is under `--threshold` is timed again with
`--recheck-runs` runs per build, and that ratio counts: on a shared host a spell of
other work can take one build's few runs. The exit status is 0 whatever the ratios (1
when a binary fails, 2 for bad arguments).

With `--pause-us N`, each call comes N microseconds after the one before (repeat's
PAUSE_US, which both binaries must take: scripts/cpu-host-check.sh builds the base with
this checkout's examples/repeat.rs): sporadic calls, which find the helper threads asleep
when N is over a millisecond.

The cases at each size below 256 Mi elements: SIGN of float32, int8, float16, int64,
uint16 and float64 and IS_INFINITY of float32 and float16, contiguous and transposed; at
256 Mi and more, contiguous only, SIGN of float32, int8, float16 and int64 and
IS_INFINITY of float32 and float16 (a transposed 256 Mi case takes seconds a call).
256 Mi of float32 needs 2 GiB of memory per binary, one binary at a time. `--only`
keeps some of them.
"""

import argparse
import math
import os
import re
import statistics
import subprocess
import sys

from peers import parse_size

CASES_16 = [
    ("sign", "float32"),
    ("sign", "int8"),
    ("sign", "float16"),
    ("sign", "int64"),
    ("sign", "uint16"),
    ("sign", "float64"),
    ("is-infinity", "float32"),
    ("is-infinity", "float16"),
]
CASES_LARGE = [
    ("sign", "float32"),
    ("sign", "int8"),
    ("sign", "float16"),
    ("sign", "int64"),
    ("is-infinity", "float32"),
    ("is-infinity", "float16"),
]
LARGE = 1 << 28
LINE = re.compile(r"^\s*([0-9.]+) ms\s+([0-9.]+) GB/s\s*$")


def cases(sizes):
    out = []
    for n in sizes:
        if n >= LARGE:
            out += [(op, dt, "contiguous", n) for op, dt in CASES_LARGE]
        else:
            out += [(op, dt, lay, n) for lay in ("contiguous", "transposed") for op, dt in CASES_16]
    return out


def one_run(binary, case, threads, calls, pause_us, timeout):
    """The median GB/s of one run's calls after the first."""
    op, dtype, layout, n = case
    cmd = [binary, op, dtype, layout, str(n), str(threads), str(calls), "zero"]
    if pause_us:
        cmd.append(str(pause_us))
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{' '.join(cmd)}: no answer in {timeout} s") from None
    except OSError as e:
        raise RuntimeError(f"{binary}: {e.strerror}") from None
    rates = [float(m.group(2)) for m in map(LINE.match, p.stdout.splitlines()) if m]
    if p.returncode != 0 or len(rates) != calls:
        raise RuntimeError(
            f"{' '.join(cmd)}: exit status {p.returncode}, {len(rates)} of {calls} calls "
            f"timed: {p.stderr.strip() or p.stdout.strip()[-300:]}"
        )
    return statistics.median(rates[1:])


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--base", required=True, help="the base build's repeat binary")
    ap.add_argument("--head", required=True, help="the build under test's repeat binary")
    ap.add_argument("--sizes", nargs="+", type=parse_size, default=[16 << 20, 256 << 20])
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                    help="threads per call (default: the CPUs this process may use)")
    ap.add_argument("--runs", type=int, default=5, help="runs per build and case")
    ap.add_argument("--calls", type=int, default=0,
                    help="calls per run (default: 12 below 256 Mi elements, 6 from it)")
    ap.add_argument("--pause-us", type=int, default=0,
                    help="microseconds between calls (default 0: back to back)")
    ap.add_argument("--only", nargs="+", metavar="OP:DTYPE:LAYOUT", default=[],
                    help="time only these of the default cases (e.g. sign:uint16:contiguous)")
    ap.add_argument("--threshold", type=float, default=0.95)
    ap.add_argument("--recheck-runs", type=int, default=10,
                    help="runs per build for a second timing of each case under the threshold, "
                         "whose ratio then counts (0: none)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds one run may take")
    a = ap.parse_args()
    if min(a.runs, a.threads) < 1 or min(a.recheck_runs, a.calls) < 0 or a.calls == 1:
        ap.error("--runs and --threads take 1 or more, --recheck-runs 0 or more, --calls 2 or more")
    if not 0 <= a.pause_us < 1 << 32:
        ap.error("--pause-us takes 0 to 2^32 - 1")
    named = {":".join(c[:3]) for c in cases(a.sizes)}
    unknown = [o for o in a.only if o not in named]
    if unknown:
        ap.error(f"--only {' '.join(unknown)}: not a case at these sizes; the cases are "
                 + ", ".join(sorted(named)))
    for b in (a.base, a.head):
        if not (os.path.isfile(b) and os.access(b, os.X_OK)):
            ap.error(f"{b}: not an executable file")

    print(f"base {a.base}\nhead {a.head}\n{a.threads} threads, {a.runs} runs per build and case, "
          + (f"{a.pause_us} us between calls" if a.pause_us else "calls back to back"))

    def compare(case, runs):
        """Base's and head's median GB/s over `runs` alternated runs each."""
        calls = a.calls or (6 if case[3] >= LARGE else 12)
        got = {"base": [], "head": []}
        for i in range(runs):
            for who in ("base", "head") if i % 2 == 0 else ("head", "base"):
                binary = a.base if who == "base" else a.head
                try:
                    got[who].append(one_run(binary, case, a.threads, calls, a.pause_us, a.timeout))
                except RuntimeError as e:
                    raise RuntimeError(f"{who}: {e}") from None
        return statistics.median(got["base"]), statistics.median(got["head"])

    def row(case, b, h, note=""):
        mark = f"under {a.threshold}" if h / b < a.threshold else ""
        print(f"| {case[0]} | {case[1]} | {case[2]} | {case[3]} | {b:.1f} | {h:.1f} | {h / b:.2f} "
              f"| {' '.join(filter(None, (note, mark)))} |", flush=True)

    header = ("\n| op | dtype | layout | elements | base GB/s | head GB/s | head / base | |\n"
              "|---|---|---|---:|---:|---:|---:|---|")
    print(header)
    results = {}
    try:
        for case in cases(a.sizes):
            if a.only and ":".join(case[:3]) not in a.only:
                continue
            b, h = compare(case, a.runs)
            results[case] = h / b
            row(case, b, h)
        low = [c for c, r in results.items() if r < a.threshold]
        if low and a.recheck_runs:
            print(f"\nUnder {a.threshold}, timed again with {a.recheck_runs} runs per build:")
            print(header)
            for case in low:
                b, h = compare(case, a.recheck_runs)
                results[case] = h / b
                row(case, b, h, "again")
    except RuntimeError as e:
        print(f"ab_repeat: {e}", file=sys.stderr)
        return 1
    print()
    for n in a.sizes:
        rs = [r for c, r in results.items() if c[3] == n]
        if rs:
            g = math.exp(sum(map(math.log, rs)) / len(rs))
            print(f"{n} elements: {len(rs)} cases, geometric mean {g:.3f}, lowest {min(rs):.2f}")
    low = [c for c, r in results.items() if r < a.threshold]
    again = " after the second timing" if a.recheck_runs else ""
    print(f"{len(low)} of {len(results)} cases under {a.threshold}{again}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
