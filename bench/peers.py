#!/usr/bin/env python3
"""Compare ewise with numpy, ONNX Runtime and PyTorch on the same cases.

Runs `ewise bench --json` (built in release mode) for the contiguous and the transposed
cases, then times each peer that is installed on the same sizes, and prints one table of
GB/s and of ratios to the best memory copy that `ewise bench` measured in its run. Peers
that are not installed are skipped, and so are the cases a peer lacks (a "-" cell). When
the `ewise` Python package is importable, its calls are timed from Python exactly like the
peers' ("ewise (python)"): the wall time per call a Python user sees, where the "ewise"
column is `ewise bench`'s in-process time. Not part of the tests.

Layouts: 'contiguous' is a packed 1-D array; 'transposed' is the transpose of a C-ordered
rows x columns array (as square as the size allows, the shape `ewise bench` uses), read
through its `.T` view into a C-contiguous output: `np.sign(a.T, out=o)`,
`torch.sign(t.T, out=o)`, `ewise.sign(a.T, out=o)` (ONNX Runtime takes no strided input:
"-").

The Python columns of a row take turns in 15 rounds (where all their buffers fit in
memory at once; else one column after another), each timing a fifteenth of its --repeat
calls per round (at least one), each call alone, and the median of all is kept: a slow
spell of the host falls on every column alike. Each column's turn starts 10 ms after the
one before (threads that a peer left spinning have gone to sleep by then) and makes its
calls for 2 ms before it times them, in the same loop (threads asleep have woken by then,
and the calls timed are the loop's steady state).

--cold: every column timed from Python cycles, call by call, through enough distinct
input/output pairs that together exceed twice the last-level cache, so that no call
finds its data in the cache; `ewise bench --cold` does the same for its column and for
the copies it is compared with.

A (size, data type) whose buffers would not fit in 60% of MemAvailable is skipped with a
note ("mem" cells): `ewise bench` holds its input and output plus four copy baselines of
as many bytes (5x, per pair when cold), a Python column its input/output pairs plus a
result of as many bytes.

--call-floor: instead, the Python call floor (issue 40): ns per call of `ewise.sign`,
`ewise.isinf` and `ewise.is_infinity` on C-contiguous float32, float64, int8 and float16
arrays of 1, 64 and 4096 elements, with and without `out=`, beside `numpy.sign` /
`numpy.isinf` and PyTorch's `torch.sign` / `torch.isinf` (when torch imports) on the same
data, in this one process: the best of --floor-rounds rounds of --floor-calls calls, the
columns interleaved round by round so that a loaded machine slows them alike. Needs
neither the CLI nor a release build of it; about ten seconds.

    python3 bench/peers.py [--sizes 4Ki 64Ki 256Ki 1Mi 4Mi 16Mi 64Mi 256Mi (the default)]
        [--ops sign is-infinity] [--layouts contiguous transposed] [--cold] [--repeat 45]
        (a cell whose calls would take more than 3 s gets fewer repeats, at least 3)
    python3 bench/peers.py --call-floor [--floor-calls 20000] [--floor-rounds 5]
"""

import argparse
import functools
import json
import math
import os
import platform
import re
import shlex
import subprocess
import sys
import time

DTYPES = {
    "FLOAT32": "float32",
    "FLOAT16": "float16",
    "FLOAT64": "float64",
    "BFLOAT16": "bfloat16",
    "INT8": "int8",
    "INT16": "int16",
    "INT32": "int32",
    "INT64": "int64",
    "UINT8": "uint8",
    "UINT16": "uint16",
    "UINT32": "uint32",
    "UINT64": "uint64",
}

DEFAULT_SIZES = ["4Ki", "64Ki", "256Ki", "1Mi", "4Mi", "16Mi", "64Mi", "256Mi"]
LAYOUTS = ["contiguous", "transposed"]

# Of MemAvailable, the share a case may take.
MEMORY_SHARE = 0.6
# Headroom for the interpreter, the pattern chunks and a peer's own allocations.
MEMORY_SLACK = 64 << 20
# `ewise bench` holds the input and output and four copy baselines of as many bytes.
CLI_MEMORY_FACTOR = 5
# The input pattern is built in chunks of this many elements (a multiple of 7, the
# pattern's period), so that no temporary as large as the array is made.
PATTERN_CHUNK = 7 << 16
# Timed calls of one cell take at most about this long (a transposed 256 Mi row of a
# slow peer takes seconds a call): fewer repeats there, never fewer than 3.
CELL_SECONDS = 3.0
# Every column's cell starts after this pause, so that it finds the CPUs free of the
# threads that the column before left spinning: PyTorch's OpenMP workers spin for a few
# milliseconds after each call (ewise's helpers for 1 ms), and a cell whose calls take
# 0.3 ms in all ran at one thread's speed beside them (not after a 5 ms pause).
SETTLE_SECONDS = 0.01
# Then its calls are made for this long, at least once each, before the timed ones: the
# columns that run on several threads (PyTorch, ONNX Runtime, ewise) find their threads
# asleep after the pause, and waking them takes tens of microseconds, as long as
# several calls of a 64 Ki cell.
WARMUP_SECONDS = 0.002
# Rounds of a row: its columns take turns, each making a share of its timed calls. On the
# 2-CPU VM about one round in five ran at 0.55-0.7 of the others' speed, for numpy and
# ewise alike (SIGN int64 4 Ki: 33-43 GB/s against 61), and the speed also moved between
# levels 1.5x apart every hundred milliseconds or so: with 7 rounds, a row repeated 25
# times had its ratio of ewise to numpy spread over 0.78-1.42 (SIGN int64 4 Ki), with 15
# rounds over 1.16-1.50 (the same cells' ratio in a tight loop: 1.25).
ROUNDS = 15
# Assumed last-level cache when the host says nothing about its caches (as `ewise bench --cold`).
FALLBACK_LLC = 16 << 20


def parse_size(s):
    """An element count: digits with an optional Ki, Mi or Gi suffix (as `ewise bench`)."""
    m = re.fullmatch(r"\s*(\d+)(Ki|Mi|Gi)?\s*", s)
    if not m:
        raise argparse.ArgumentTypeError(f"invalid size '{s}' (e.g. 4096, 64Ki, 16Mi)")
    n = int(m.group(1)) * {None: 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}[m.group(2)]
    if not 1 <= n <= 0xFFFF_FFFF:
        raise argparse.ArgumentTypeError(f"invalid size '{s}' (1 to 4294967295 elements)")
    return n


def human_bytes(n):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            v = n / scale
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.1f} {unit}"
    return f"{n} B"


def mem_available():
    """MemAvailable in bytes, or None where /proc/meminfo does not say."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def fits(need):
    """Whether `need` bytes fit in MEMORY_SHARE of the memory available now (and the
    budget, for the note)."""
    avail = mem_available()
    if avail is None:
        return True, None
    budget = int(avail * MEMORY_SHARE)
    return need + MEMORY_SLACK <= budget, budget


def cpu_model():
    """The CPU's name, with its family and model and widest vector extension where
    /proc/cpuinfo says (x86: 'AMD EPYC (family 25 model 17, AVX-512)')."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break  # the first CPU's block
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    name = next(
        (fields[k] for k in ("model name", "Hardware", "Processor", "cpu model") if fields.get(k)),
        platform.processor() or platform.machine() or "unknown CPU",
    )
    extra = []
    if fields.get("cpu family") and fields.get("model"):
        extra.append(f"family {fields['cpu family']} model {fields['model']}")
    flags = fields.get("flags", "").split()
    if "avx512f" in flags:
        extra.append("AVX-512")
    elif "avx2" in flags:
        extra.append("AVX2")
    return f"{name} ({', '.join(extra)})" if extra else name


def cpu_count(cpu_list):
    """The number of CPUs in a sysfs list such as '0-3,8-11'."""
    count = 0
    for part in cpu_list.strip().split(","):
        if "-" in part:
            lo, hi = part.split("-")
            count += int(hi) - int(lo) + 1
        elif part:
            count += 1
    return count


def host_caches():
    """cpu0's caches from sysfs: [(level, type, bytes, CPUs sharing it)], by level."""
    root = "/sys/devices/system/cpu/cpu0/cache"
    caches = []
    try:
        entries = sorted(e for e in os.listdir(root) if e.startswith("index"))
    except OSError:
        return caches
    for entry in entries:
        d = os.path.join(root, entry)

        def read(name, d=d):
            with open(os.path.join(d, name)) as f:
                return f.read().strip()

        try:
            size = read("size")
            m = re.fullmatch(r"(\d+)([KMG]?)", size)
            if not m:
                continue
            nbytes = int(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2)]
            try:
                shared = cpu_count(read("shared_cpu_list"))
            except OSError:
                shared = 0
            caches.append((int(read("level")), read("type"), nbytes, shared))
        except (OSError, ValueError):
            continue
    caches.sort(key=lambda c: (c[0], c[1]))
    return caches


def last_level_cache(caches):
    """The level-3 cache, else the highest data or unified one: (level, bytes, shared)."""
    data = [c for c in caches if c[1] in ("Data", "Unified")]
    l3 = [c for c in data if c[0] == 3]
    pick = l3 or sorted(data, key=lambda c: (c[0], c[2]))[-1:]
    if not pick:
        return None
    level, _, nbytes, shared = max(pick, key=lambda c: c[2])
    return level, nbytes, shared


def describe_caches(caches):
    if not caches:
        return "no cache information in /sys/devices/system/cpu/cpu0/cache"
    parts = []
    for level, kind, nbytes, shared in caches:
        name = f"L{level}" + {"Data": "d", "Instruction": "i"}.get(kind, "")
        if shared > 1:
            parts.append(f"{name} {human_bytes(nbytes)} shared by {shared} CPUs")
        else:
            parts.append(f"{name} {human_bytes(nbytes)} per CPU")
    return ", ".join(parts)


def item_bytes(cli_dtype):
    """Bytes per element of an `ewise bench` data type name (FLOAT16, UINT64, FLOAT8...)."""
    m = re.search(r"(\d+)", cli_dtype)
    return max(1, int(m.group(1)) // 8) if m else 8


def moved_bytes(op, cli_dtype, n):
    """Bytes read plus written by one call: the input, and the output (1 byte for IS_INFINITY)."""
    item = item_bytes(cli_dtype)
    return n * item * 2 if op == "sign" else n * (item + 1)


def transposed_shape(n):
    """Rows x columns of the 2-D array whose transpose is read, as in `ewise bench`."""
    rows = max(int(math.sqrt(n)), 1)
    while n % rows:
        rows -= 1
    return rows, n // rows


class Pairs:
    """How many distinct input/output pairs a Python-timed case cycles through."""

    def __init__(self, cold, llc_bytes):
        self.cold = cold
        self.llc_bytes = llc_bytes

    def __call__(self, moved):
        if not self.cold:
            return 1
        return max(1, 2 * self.llc_bytes // max(moved, 1) + 1)

    def memory(self, moved):
        """The bytes a Python column holds: its pairs plus one result of as many bytes."""
        return self(moved) * moved + moved


class Column:
    """One peer's calls in one row, timed in rounds by `interleaved_medians`."""

    def __init__(self, calls):
        self.calls = calls
        self.times = []
        self.count = None  # timed calls in all, set by the first round from the first call's time
        self.per_round = None
        self.next = 0

    def done(self):
        return self.count is not None and len(self.times) >= self.count

    def call_round(self, repeat, rounds):
        """One round: SETTLE_SECONDS of sleep, then calls for WARMUP_SECONDS (in the
        first round, each call at least once: first-call costs, and the output pages
        touched), then this round's share of the timed calls. The calls before and
        after the warm-up are made and timed by the same loop, only the later ones kept:
        on this VM the first call timed by a loop of its own, after the warm-up loop,
        took 1.5-2x the steady time, and the next two or three 1.1-1.3x, for every
        column (SIGN int64 4 Ki: 2.6, 1.6, 1.5 then 1.4 us)."""
        time.sleep(SETTLE_SECONDS)
        warm_until = time.perf_counter() + WARMUP_SECONDS
        if self.count is None:
            for fn in self.calls:
                start = time.perf_counter()
                fn()
                once = time.perf_counter() - start
            self.count = max(3, min(repeat, int(CELL_SECONDS / max(once, 1e-9))))
            self.per_round = -(-self.count // rounds)
        calls, k = self.calls, self.next
        want = min(self.per_round, self.count - len(self.times))
        timed = 0
        while timed < want:
            fn = calls[k % len(calls)]
            k += 1
            start = time.perf_counter()
            fn()
            seconds = time.perf_counter() - start
            if start >= warm_until:
                self.times.append(seconds)
                timed += 1
        self.next = k

    def median(self):
        times = sorted(self.times)
        return times[len(times) // 2]


def interleaved_medians(columns, repeat):
    """The median time of one call for each of `columns` (name: Column): ROUNDS rounds,
    each column's share of `repeat` timed calls per round (fewer, at least 3 in all,
    where one call is slow enough that they would take more than CELL_SECONDS: such a
    column leaves the rounds when its calls are done), the columns taking turns, in an
    order that rotates round by round. So a host whose speed changes from one moment to
    the next (this 2-CPU VM's did, by up to 2x, for numpy and ewise alike, every few
    hundred ms) slows every column alike, where timing one column after another put a
    slow spell into one column of a row. A column whose call raises gets the exception
    instead, and leaves the rounds."""
    names = list(columns)
    result = {}
    for r in range(ROUNDS):
        for name in names[r % len(names):] + names[: r % len(names)]:
            if name in result or columns[name].done():
                continue
            try:
                columns[name].call_round(repeat, ROUNDS)
            except Exception as e:  # a dtype or kernel the peer lacks (torch: sign of uint64)
                result[name] = e
    return {name: result[name] if name in result else columns[name].median() for name in names}


def numpy_dtype(np, dtype):
    """numpy's dtype for a name; bfloat16 comes from ml_dtypes, when installed."""
    if dtype == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(dtype)


def numpy_input(np, dtype, n, layout):
    """The input's storage, filled with -3..3 repeating (`np.arange(n) % 7 - 3`), built
    chunk by chunk: 1-D, or C-ordered columns x rows whose `.T` is the transposed input."""
    dt = numpy_dtype(np, dtype)
    x = np.empty(n, dtype=dt)
    chunk = (np.arange(min(n, PATTERN_CHUNK)) % 7 - 3).astype(dt)
    for start in range(0, n, PATTERN_CHUNK):
        stop = min(n, start + PATTERN_CHUNK)
        x[start:stop] = chunk[: stop - start]
    if layout == "transposed":
        rows, cols = transposed_shape(n)
        return x.reshape(cols, rows)
    return x


def ndarray_case(np, sign, isinf, op, dtype, n, layout, pairs):
    """Calls of `sign(x, out=o)` / `isinf(x, out=o)` on numpy arrays, one per pair."""
    if op != "sign" and dtype.startswith(("int", "uint")):
        return None
    base = numpy_input(np, dtype, n, layout)
    shape = (n,) if layout == "contiguous" else transposed_shape(n)
    if op == "sign":
        out_dtype, fn, moved = base.dtype, sign, base.nbytes * 2
    else:
        out_dtype, fn, moved = np.dtype(bool), isinf, base.nbytes + n
    bases = [base] + [base.copy() for _ in range(pairs(moved) - 1)]
    calls = []
    for b in bases:
        x = b if layout == "contiguous" else b.T
        calls.append(functools.partial(fn, x, out=np.empty(shape, dtype=out_dtype)))
    return calls, moved


def numpy_case(np, op, dtype, n, layout, pairs):
    return ndarray_case(np, np.sign, np.isinf, op, dtype, n, layout, pairs)


def ewise_py_case(ewise, np, op, dtype, n, layout, pairs):
    sign = functools.partial(ewise.sign, nan="propagate")
    return ndarray_case(np, sign, ewise.isinf, op, dtype, n, layout, pairs)


def torch_case(torch, op, dtype, n, layout, pairs):
    tdtype = getattr(torch, dtype, None)
    if tdtype is None:
        return None
    base = torch.empty(n, dtype=tdtype)
    if op != "sign" and not base.is_floating_point():
        return None
    chunk = (torch.arange(min(n, PATTERN_CHUNK)) % 7 - 3).to(tdtype)
    for start in range(0, n, PATTERN_CHUNK):
        stop = min(n, start + PATTERN_CHUNK)
        base[start:stop] = chunk[: stop - start]
    del chunk
    shape = (n,)
    if layout == "transposed":
        rows, cols = transposed_shape(n)
        base, shape = base.reshape(cols, rows), (rows, cols)
    if op == "sign":
        moved = n * base.element_size() * 2
    else:
        moved = n * (base.element_size() + 1)
    bases = [base] + [base.clone() for _ in range(pairs(moved) - 1)]
    calls = []
    for b in bases:
        x = b if layout == "contiguous" else b.T
        if op == "sign":
            calls.append(functools.partial(torch.sign, x, out=torch.empty(shape, dtype=tdtype)))
        else:  # torch.isinf has no out=: it returns a new tensor
            calls.append(functools.partial(torch.isinf, x))
    return calls, moved


def ort_case(ort, onnx, np, op, dtype, n, layout, pairs):
    from onnx import TensorProto, helper

    if layout != "contiguous":  # ONNX Runtime takes packed inputs only
        return None
    elem = helper.np_dtype_to_tensor_dtype(numpy_dtype(np, dtype))
    if op == "sign":
        node = helper.make_node("Sign", ["x"], ["y"])
        out_type = elem
    else:
        if dtype not in ("float32", "float64"):
            return None
        node = helper.make_node("IsInf", ["x"], ["y"])
        out_type = TensorProto.BOOL
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", elem, [n])],
        [helper.make_tensor_value_info("y", out_type, [n])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    try:
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception:  # a type this ONNX Runtime build has no kernel for
        return None
    x = numpy_input(np, dtype, n, layout)
    out_bytes = x.nbytes if op == "sign" else n
    moved = x.nbytes + out_bytes
    inputs = [x] + [x.copy() for _ in range(pairs(moved) - 1)]
    return [functools.partial(sess.run, None, {"x": xi}) for xi in inputs], moved


def cli_bench(args, sizes, layouts, notes, pairs):
    """`ewise bench --json` records for every size and layout, keyed by (op, DTYPE,
    elements, layout); a (size, type) whose buffers would not fit is left out, with a
    note. Also the CLI's type list per op, in its order, the commands run and the
    (DTYPE, elements) left out for memory."""
    op = "all" if set(args.ops) >= {"sign", "is-infinity"} else args.ops[0]

    def run(extra):
        cmd = [args.ewise, "bench", "--json", "--op", op, *extra]
        if args.cold:
            cmd.append("--cold")
        try:
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        except FileNotFoundError:
            sys.exit(f"peers.py: {args.ewise} not found: cargo build --release -p ewise-cli")
        except subprocess.CalledProcessError as e:
            notes.append(f"`{shlex.join(cmd)}` failed: {e.stderr.strip()}")
            return []
        return json.loads(out)

    # The types `ewise bench` times for these ops, from a run on 64 elements.
    types = {}
    for r in run(["--dtype", "all", "--sizes", "64", "--layout", "contiguous", "--samples", "3"]):
        types.setdefault(r["op"], [])
        if r["dtype"] not in types[r["op"]]:
            types[r["op"]].append(r["dtype"])
    all_types = list(dict.fromkeys(t for op_types in types.values() for t in op_types))

    def cli_need(dtype, n):
        return CLI_MEMORY_FACTOR * max(
            pairs(moved) * moved
            for moved in (moved_bytes(o, dtype, n) for o, ts in types.items() if dtype in ts)
        )

    records = {}
    commands = []
    skipped = set()
    for n in sizes:
        fitting = []
        for dtype in all_types:
            ok, budget = fits(cli_need(dtype, n))
            if ok:
                fitting.append(dtype)
            else:
                skipped.add((dtype, n))
                notes.append(
                    f"ewise bench {dtype.lower()} x {n}: skipped, its buffers "
                    f"({human_bytes(cli_need(dtype, n))}) would not fit in {MEMORY_SHARE:.0%} "
                    f"of MemAvailable ({human_bytes(budget)})"
                )
        if not fitting:
            continue
        choices = ["all"] if len(fitting) == len(all_types) else [t.lower() for t in fitting]
        for layout in layouts:
            for dtype in choices:
                extra = ["--dtype", dtype, "--sizes", str(n), "--layout", layout]
                cold = ["--cold"] if args.cold else []
                commands.append(shlex.join([args.ewise, "bench", "--json", "--op", op, *extra, *cold]))
                for r in run(extra):
                    if r["op"] in args.ops and r["layout"] in layouts:
                        records[(r["op"], r["dtype"], r["elements"], r["layout"])] = r
    return records, types, commands, skipped


def versions(peers_modules, ewise_cli):
    try:
        cli = subprocess.run([ewise_cli, "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        cli = ""
    parts = [f"{cli or 'ewise ?'} (CLI)", f"python {platform.python_version()}"]
    for name in ("numpy", "torch", "onnxruntime", "ml_dtypes"):
        module = peers_modules.get(name)
        parts.append(f"{name} {getattr(module, '__version__', '?')}" if module else f"{name} not installed")
    ewise = peers_modules.get("ewise")
    if ewise:
        parts.append(f"ewise (python) {ewise.__version__} ({ewise.instruction_set()})")
    else:
        parts.append("ewise (python) not installed")
    return ", ".join(parts)


FLOOR_DTYPES = ["float32", "float64", "int8", "float16"]
FLOOR_SIZES = [1, 64, 4096]


def floor_cases(np, ewise, torch, dtype, n):
    """The call-floor rows of one (dtype, size): (call, out, {column: no-argument call or
    None}); the input holds -3..3 repeating, as the GB/s tables' inputs do."""
    x = (np.arange(n) % 7 - 3).astype(dtype)
    same, boolean, uint8 = np.empty_like(x), np.empty(n, bool), np.empty(n, np.uint8)
    t = tsame = None
    if torch is not None:
        t = torch.from_numpy(x.copy())
        tsame = torch.empty_like(t)
    rows = [
        ("sign", "-", {
            "ewise": lambda: ewise.sign(x),
            "numpy": lambda: np.sign(x),
            "torch": (lambda: torch.sign(t)) if t is not None else None,
        }),
        ("sign", "out", {
            "ewise": lambda: ewise.sign(x, out=same),
            "numpy": lambda: np.sign(x, out=same),
            "torch": (lambda: torch.sign(t, out=tsame)) if t is not None else None,
        }),
    ]
    if x.dtype.kind != "f":
        return rows
    # numpy and PyTorch give bool; ewise.is_infinity's default is uint8 (DirectML's).
    for call, fn, out in (("isinf", ewise.isinf, boolean), ("is_infinity", ewise.is_infinity, uint8)):
        rows.append((call, "-", {
            "ewise": lambda fn=fn: fn(x),
            "numpy": lambda: np.isinf(x),
            "torch": (lambda: torch.isinf(t)) if t is not None else None,
        }))
        rows.append((call, "out", {
            "ewise": lambda fn=fn, out=out: fn(x, out=out),
            "numpy": lambda: np.isinf(x, out=boolean),
            "torch": None,  # torch.isinf has no out=
        }))
    return rows


def call_floor(args):
    """Prints the call-floor table (see --call-floor in the module's docstring)."""
    import numpy as np

    try:
        import ewise
    except ImportError:
        sys.exit("peers.py --call-floor: the ewise package is not importable (scripts/python-test.sh builds it)")
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        torch = None
    names = ["ewise", "numpy"] + (["torch"] if torch is not None else [])

    def best_ns(fn):
        start = time.perf_counter_ns()
        for _ in range(args.floor_calls):
            fn()
        return (time.perf_counter_ns() - start) / args.floor_calls

    print(f"command: {shlex.join([sys.executable, *sys.argv])}")
    print(f"host: {cpu_model()}, {os.cpu_count()} CPUs")
    modules = {"numpy": np, "ewise": ewise}
    if torch is not None:
        modules["torch"] = torch
    print(
        f"versions: python {platform.python_version()}, numpy {np.__version__}, "
        + (f"torch {torch.__version__}, " if torch is not None else "torch not installed, ")
        + f"ewise {ewise.__version__} ({ewise.instruction_set()})"
    )
    print(
        f"mode: call floor: ns per call, best of {args.floor_rounds} rounds of "
        f"{args.floor_calls} calls on the same C-contiguous input (and out=), the columns "
        f"interleaved round by round; ratio = ewise / numpy"
    )
    print()
    print(
        f"{'call':<12} {'dtype':<8} {'out':<4} {'elements':>8} "
        + " ".join(f"{n:>8}" for n in names)
        + f" {'ratio':>6}"
    )
    for dtype in FLOOR_DTYPES:
        for n in FLOOR_SIZES:
            for call, out, fns in floor_cases(np, ewise, torch, dtype, n):
                live = {k: f for k, f in fns.items() if k in names and f is not None}
                for f in live.values():  # first-call costs
                    f()
                best = dict.fromkeys(live, float("inf"))
                for _ in range(args.floor_rounds):
                    for k, f in live.items():
                        best[k] = min(best[k], best_ns(f))
                cells = [f"{best[k]:8.0f}" if k in best else f"{'-':>8}" for k in names]
                ratio = best["ewise"] / best["numpy"]
                print(f"{call:<12} {dtype:<8} {out:<4} {n:>8} " + " ".join(cells) + f" {ratio:6.2f}", flush=True)
    print("\nns per call, best round; numpy and torch: np.sign / np.isinf, torch.sign / torch.isinf (bool)")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ewise", default="target/release/ewise")
    parser.add_argument(
        "--sizes", nargs="+", type=parse_size, default=[parse_size(s) for s in DEFAULT_SIZES],
        help=f"element counts, with Ki, Mi or Gi suffixes allowed (default: {' '.join(DEFAULT_SIZES)})",
    )
    parser.add_argument("--ops", nargs="+", default=["sign", "is-infinity"], choices=["sign", "is-infinity"])
    parser.add_argument("--layouts", nargs="+", default=LAYOUTS, choices=LAYOUTS)
    parser.add_argument("--repeat", type=int, default=45)
    parser.add_argument(
        "--cold", action="store_true",
        help="cycle every column (and ewise bench's copies) through inputs and outputs of more than 2x the last-level cache",
    )
    parser.add_argument(
        "--call-floor", action="store_true",
        help="only the Python call floor: ns per call on 1, 64 and 4096 elements, ewise beside numpy and torch",
    )
    parser.add_argument("--floor-calls", type=int, default=20000, help="calls per round (--call-floor)")
    parser.add_argument("--floor-rounds", type=int, default=5, help="rounds, the best kept (--call-floor)")
    args = parser.parse_args()
    if args.call_floor:
        return call_floor(args)
    layouts = [layout for layout in LAYOUTS if layout in args.layouts]

    caches = host_caches()
    llc = last_level_cache(caches)
    pairs = Pairs(args.cold, llc[1] if llc else FALLBACK_LLC)

    notes = []
    records, types, commands, cli_skipped = cli_bench(args, args.sizes, layouts, notes, pairs)

    modules = {}
    peers = {}
    try:
        import numpy as np

        modules["numpy"] = np
    except ImportError:
        np = None
    try:
        import ml_dtypes

        modules["ml_dtypes"] = ml_dtypes
    except ImportError:
        pass
    try:
        import ewise

        modules["ewise"] = ewise
        if np is not None:
            peers["ewise (python)"] = lambda *case: ewise_py_case(ewise, np, *case)
    except ImportError:
        pass
    if np is not None:
        peers["numpy"] = lambda *case: numpy_case(np, *case)
    try:
        import torch

        modules["torch"] = torch
        torch.set_num_threads(max((r["threads"] for r in records.values()), default=1))
        peers["torch"] = lambda *case: torch_case(torch, *case)
    except ImportError:
        pass
    try:
        import onnx
        import onnxruntime as ort

        modules["onnxruntime"] = ort
        if np is not None:
            peers["onnxruntime"] = lambda *case: ort_case(ort, onnx, np, *case)
    except ImportError:
        pass

    # The header: the command, the host, the versions, warm or cold.
    any_record = next(iter(records.values()), None)
    print(f"command: {shlex.join([sys.executable, *sys.argv])}")
    print(f"host: {cpu_model()}, {os.cpu_count()} CPUs; caches: {describe_caches(caches)}")
    if llc:
        shared = f", shared by {llc[2]} CPUs" if llc[2] > 1 else ""
        print(f"last-level cache: L{llc[0]} {human_bytes(llc[1])}{shared}")
    else:
        print(f"last-level cache: unknown (--cold assumes {human_bytes(FALLBACK_LLC)})")
    print(f"versions: {versions(modules, args.ewise)}")
    if any_record:
        thresholds = sorted({(r["threads"], r.get("stream_threshold")) for r in records.values()})
        shown = ", ".join(
            f"{human_bytes(t) if t else 'never'} on {k} thread{'s' if k > 1 else ''}" for k, t in thresholds
        )
        llc_cli = any_record.get("llc_bytes")
        print(
            f"ewise bench: {any_record.get('instruction_set')} kernels; streaming stores when input + "
            f"output is above {shown} (its last-level cache: "
            f"{human_bytes(llc_cli) if llc_cli else 'unknown'}, from {any_record.get('cache_source')}); "
            f"{len(commands)} runs such as `{commands[0]}`"
        )
    if args.cold:
        print(
            f"mode: cold: each column timed from Python cycles, call by call, through distinct "
            f"input/output pairs totalling more than 2 x {human_bytes(pairs.llc_bytes)} (the "
            f"last-level cache); the 'ewise' column and 'copy GB/s' are `ewise bench --cold`'s, "
            f"which rotate the same way"
        )
    else:
        print("mode: warm: every call of a case on the same input and output")
    for note in notes:
        print(f"note: {note}")
    print()

    # The rows: the CLI's cases, in its order of types, by size and layout.
    rows = []
    for op in [o for o in ("sign", "is-infinity") if o in args.ops]:
        for dtype in types.get(op, []):
            for n in args.sizes:
                for layout in layouts:
                    rows.append((op, dtype, n, layout))
    # Records for types the discovery run did not list (none expected) come last.
    rows += [k for k in records if k not in set(rows)]

    names = ["ewise", *peers]
    print(
        f"{'op':<12} {'dtype':<8} {'elements':>9} {'layout':<10} {'copy GB/s':>9} "
        + " ".join(f"{n:>16}" for n in names)
    )
    py_notes = []
    for key in rows:
        op, cli_dtype, n, layout = key
        r = records.get(key)
        copy = r["best_copy_gbps"] if r else None
        if r:
            cells = [f"{r['gbps']:6.1f} ({r['ratio']:.2f})"]
        else:
            cells = ["mem" if (cli_dtype, n) in cli_skipped else "-"]
        dtype = DTYPES.get(cli_dtype)
        moved = moved_bytes(op, cli_dtype, n)
        need = pairs.memory(moved)
        together, _ = fits(need * len(peers))
        # The columns of a row are timed together where all their buffers fit at once,
        # else one after another.
        groups = [list(peers)] if together else [[name] for name in peers]
        results = {}
        for group in groups:
            columns, moved_by = {}, {}
            for name in group:
                if dtype is None:
                    results[name] = "-"
                    continue
                ok, budget = fits(need)
                if not together and not ok:
                    results[name] = "mem"
                    py_notes.append(
                        f"{name}: {op} {cli_dtype.lower()} x {n} ({layout}): skipped, its buffers "
                        f"({human_bytes(need)}) would not fit in {MEMORY_SHARE:.0%} of "
                        f"MemAvailable ({human_bytes(budget)})"
                    )
                    continue
                try:
                    case = peers[name](op, dtype, n, layout, pairs)
                except Exception as e:  # a dtype the peer lacks
                    print(f"{name}: {op} {dtype} {layout}: {type(e).__name__}: {e}", file=sys.stderr)
                    results[name] = "-"
                    continue
                if case is None:
                    results[name] = "-"
                    continue
                columns[name] = Column(case[0])
                moved_by[name] = case[1]
                case = None
            for name, seconds in interleaved_medians(columns, args.repeat).items():
                if isinstance(seconds, Exception):  # a kernel the peer lacks (torch: sign of uint64)
                    print(f"{name}: {op} {dtype} {layout}: {type(seconds).__name__}: {seconds}", file=sys.stderr)
                    results[name] = "-"
                    continue
                gbps = moved_by[name] / seconds / 1e9
                results[name] = f"{gbps:6.1f} ({gbps / copy:.2f})" if copy else f"{gbps:6.1f}"
            columns = None  # the buffers go before the next group makes its own
        cells += [results[name] for name in peers]
        copy_cell = f"{copy:>9.1f}" if copy else f"{'-':>9}"
        print(
            f"{op:<12} {cli_dtype:<8} {n:>9} {layout:<10} {copy_cell} "
            + " ".join(f"{c:>16}" for c in cells),
            flush=True,
        )
    print("\nGB/s = (bytes read + bytes written) / second, median; (ratio to ewise's best copy in its run)")
    if "onnxruntime" in peers and "transposed" in layouts:
        print("onnxruntime: '-' on transposed rows, as it takes packed inputs only")
    if py_notes or cli_skipped:
        print(
            f"mem: skipped, the case's buffers would not fit in {MEMORY_SHARE:.0%} of MemAvailable "
            f"(ewise bench: {CLI_MEMORY_FACTOR}x input + output; a Python column: its pairs plus one result)"
        )
    for note in py_notes:
        print(f"note: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
