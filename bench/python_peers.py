#!/usr/bin/env python3
"""ewise's Python package against numpy on the same arrays, in one run.

For every op x dtype that both handle and each size, times a whole call as a user makes
it, in two forms: with a fresh result (`ewise.sign(x)` vs `np.sign(x)`) and into a
preallocated `out=`. Rounds are interleaved (ewise, numpy, ewise, ...) and each
cell is the median over rounds; small sizes repeat the call inside a round so the timer
does not dominate. GB/s counts bytes read plus bytes written, for the `out=` form. Needs the package installed
(a release build: `pip install ./crates/ewise-python`) and ml_dtypes for bfloat16/float8.

    python3 bench/python_peers.py [--sizes 4096 65536 1048576 16777216] [--rounds 15]
        [--ops sign isinf] [--json]
"""

import argparse
import json
import statistics
import sys
import time

import numpy as np

import ewise

try:
    import ml_dtypes
except ImportError:  # bfloat16 and float8 rows need it
    ml_dtypes = None

SIGN_DTYPES = [
    "float32", "float16", "float64", "bfloat16",
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
]
ISINF_DTYPES = ["float32", "float16", "float64", "bfloat16", "float8_e5m2", "float8_e4m3fn"]


def dtype_of(name):
    if hasattr(np, name) and name not in ("bfloat16",) and not name.startswith("float8"):
        return np.dtype(name)
    if ml_dtypes is None:
        return None
    return np.dtype(getattr(ml_dtypes, name))


def data(dtype, n):
    rng = np.random.default_rng(7)
    x = (rng.integers(-3, 4, n)).astype(np.float32)
    x[::97] = np.inf
    x[::89] = -np.inf
    x[::83] = np.nan
    if dtype.kind in "iu":
        return rng.integers(-3 if dtype.kind == "i" else 0, 4, n).astype(dtype)
    return x.astype(dtype)


def per_call(fn, inner):
    start = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - start) / inner


def cases(op, dtype, n):
    x = data(dtype, n)
    if op == "sign":
        out = np.empty_like(x)
        ew = (lambda: ewise.sign(x), lambda: ewise.sign(x, out=out))
        npf = (lambda: np.sign(x), lambda: np.sign(x, out=out))
        moved = 2 * x.nbytes
    else:
        out = np.empty(n, dtype=bool)
        ew = (lambda: ewise.isinf(x), lambda: ewise.isinf(x, out=out))
        npf = (lambda: np.isinf(x), lambda: np.isinf(x, out=out))
        moved = x.nbytes + n
    return ew, npf, moved


def measure(op, dtype, n, rounds):
    ew, npf, moved = cases(op, dtype, n)
    inner = max(1, (1 << 24) // max(moved, 1))
    inner = min(inner, 2000)
    try:
        np_ok = npf[1]() is not None
    except TypeError:
        np_ok = False
    fns = {"ewise": ew[0], "ewise out=": ew[1]}
    if np_ok:
        fns["numpy"] = npf[0]
        fns["numpy out="] = npf[1]
    for fn in fns.values():  # warm-up
        fn()
    times = {k: [] for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            times[k].append(per_call(fn, inner))
    med = {k: statistics.median(v) for k, v in times.items()}
    row = {"op": op, "dtype": str(dtype), "elements": n, "bytes_moved": moved}
    for k, t in med.items():
        row[k + " us"] = t * 1e6
    row["ewise GB/s"] = moved / med["ewise out="] / 1e9
    if np_ok:
        row["numpy GB/s"] = moved / med["numpy out="] / 1e9
        row["speedup call"] = med["numpy"] / med["ewise"]
        row["speedup out="] = med["numpy out="] / med["ewise out="]
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[4096, 65536, 1 << 20, 1 << 24])
    p.add_argument("--ops", nargs="+", default=["sign", "isinf"], choices=["sign", "isinf"])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--json", action="store_true", help="one JSON object per row")
    args = p.parse_args()
    rows = []
    for n in args.sizes:
        for op in args.ops:
            for name in SIGN_DTYPES if op == "sign" else ISINF_DTYPES:
                dtype = dtype_of(name)
                if dtype is None:
                    print(f"skipped {op} {name}: ml_dtypes is not installed", file=sys.stderr)
                    continue
                rows.append(measure(op, dtype, n, args.rounds))
                if args.json:
                    print(json.dumps(rows[-1]), flush=True)
    if args.json:
        return
    print(f"ewise {ewise.__version__} ({ewise.instruction_set()}), numpy {np.__version__}")
    print("| op | dtype | elements | ewise us | numpy us | speedup (call) | ewise out= us "
          "| numpy out= us | speedup (out=) | ewise GB/s | numpy GB/s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        f = lambda k, fmt="{:.2f}": fmt.format(r[k]) if k in r else "-"  # noqa: E731
        print(f"| {r['op']} | {r['dtype']} | {r['elements']} | {f('ewise us')} | {f('numpy us')} "
              f"| {f('speedup call')} | {f('ewise out= us')} | {f('numpy out= us')} "
              f"| {f('speedup out=')} | {f('ewise GB/s', '{:.1f}')} | {f('numpy GB/s', '{:.1f}')} |")


if __name__ == "__main__":
    main()
