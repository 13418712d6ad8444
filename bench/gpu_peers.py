#!/usr/bin/env python3
"""Compare `ewise bench --device gpu` with PyTorch and CuPy on the same GPU and cases.

Runs `ewise bench --device gpu --json` (build it with `cargo build --release -p ewise-cli`),
then times each peer that imports and sees a CUDA device on the same cases (operator, data
type, element count and layout: contiguous, transposed 2-D, or a row broadcast along a
2-D output) with CUDA events, and prints one table: GB/s per peer (bytes read + bytes
written per second, median of rounds of back-to-back calls on inputs rotated through
256 MiB, as ewise does) and ewise's GB/s over each peer's. A peer that is missing, or that
lacks a data type or a kernel, gives "-" cells. Without CUDA only the ewise column is
printed. Not part of the tests.

    python3 bench/gpu_peers.py                                # ewise's default GPU cases
    python3 bench/gpu_peers.py --sizes 16Mi 256Mi --op sign --dtype float32
    python3 bench/gpu_peers.py --ewise target/release/ewise --layout contiguous
    python3 bench/gpu_peers.py --ewise-json table.json --layout contiguous   # ewise's rows
                                                          # from an earlier run's JSON

Layouts the peers have no view for (ewise's `rows`) give "-" peer cells. Each line is
also printed to stderr as soon as it is measured.
"""

import argparse
import json
import math
import statistics
import subprocess
import sys
import time

ROTATE_BYTES = 256 << 20
BATCH_BYTES = 64 << 20
MAX_BATCH = 64
MAX_COPIES = 4096

DTYPES = {
    "FLOAT32": "float32",
    "FLOAT16": "float16",
    "BFLOAT16": "bfloat16",
    "FLOAT64": "float64",
    "INT8": "int8",
    "INT16": "int16",
    "INT32": "int32",
    "INT64": "int64",
    "UINT8": "uint8",
    "UINT16": "uint16",
    "UINT32": "uint32",
    "UINT64": "uint64",
}

SIZES = {"FLOAT64": 8, "INT64": 8, "UINT64": 8, "FLOAT32": 4, "INT32": 4, "UINT32": 4}
SIZES.update({"FLOAT16": 2, "BFLOAT16": 2, "INT16": 2, "UINT16": 2})


def transposed_shape(n):
    """Rows x columns as `ewise bench` chooses them: as square as n allows."""
    rows = max(math.isqrt(n), 1)
    while n % rows:
        rows -= 1
    return rows, n // rows


class Peer:
    """One library on CUDA: makes tensors of a layout and times calls with CUDA events."""

    name = ""

    def __init__(self, lib):
        self.lib = lib

    def dtype(self, name):
        raise NotImplementedError

    def random(self, nbytes, dtype):
        raise NotImplementedError

    def layout_view(self, base, layout, rows, cols):
        raise NotImplementedError

    def empty(self, shape, dtype):
        raise NotImplementedError

    def sign(self, x, out):
        raise NotImplementedError

    def isinf(self, x, out):
        raise NotImplementedError

    def events(self):
        raise NotImplementedError

    def synchronize(self):
        raise NotImplementedError

    def itemsize(self, dtype):
        raise NotImplementedError

    def case(self, op, dtype_name, n, layout):
        """(list of calls, bytes moved per call) on rotated tensors, or None."""
        if layout not in ("contiguous", "transposed", "broadcast"):
            return None
        dtype = self.dtype(dtype_name)
        if dtype is None:
            return None
        es = self.itemsize(dtype)
        rows, cols = transposed_shape(n)
        base_len = cols if layout == "broadcast" else n
        out_es = es if op == "sign" else 1
        moved = base_len * es + n * out_es
        copies = max(1, min(MAX_COPIES, -(-ROTATE_BYTES // moved)))
        calls = []
        for _ in range(copies):
            base = self.random(base_len * es, dtype)
            x = self.layout_view(base, layout, rows, cols)
            out_shape = (n,) if layout == "contiguous" else (rows, cols)
            if op == "sign":
                out = self.empty(out_shape, dtype)
                calls.append(lambda x=x, out=out: self.sign(x, out))
            else:
                out = self.empty(out_shape, self.bool_dtype())
                calls.append(lambda x=x, out=out: self.isinf(x, out))
        return calls, moved

    def copy_case(self, nbytes):
        """Calls that copy `nbytes` between rotated device buffers: the CUDA copy limit."""
        copies = max(1, min(MAX_COPIES, -(-ROTATE_BYTES // (2 * nbytes))))
        u8 = self.dtype("uint8")
        pairs = [(self.random(nbytes, u8), self.empty((nbytes,), u8)) for _ in range(copies)]
        return [lambda s=s, d=d: self.copy(d, s) for s, d in pairs], 2 * nbytes

    def time(self, calls, moved, rounds):
        """Median seconds per call over `rounds` batches of back-to-back calls."""
        batch = max(1, min(MAX_BATCH, len(calls), -(-BATCH_BYTES // moved)))
        at = 0
        for _ in range(2):
            for k in range(batch):
                calls[(at + k) % len(calls)]()
            at += batch
        self.synchronize()
        times = []
        for _ in range(rounds):
            start, end = self.events()
            start.record()
            for k in range(batch):
                calls[(at + k) % len(calls)]()
            end.record()
            end.synchronize()
            at += batch
            times.append(self.elapsed_ms(start, end) / 1e3 / batch)
        return statistics.median(times)

    def one_call_wall(self, calls, repeat):
        """Median wall seconds of one call on 4096 float32 elements plus a synchronize."""
        times = []
        for _ in range(repeat + 2):
            t0 = time.perf_counter()
            calls[0]()
            self.synchronize()
            times.append(time.perf_counter() - t0)
        return statistics.median(times[2:])


class TorchPeer(Peer):
    name = "torch"

    def dtype(self, name):
        return getattr(self.lib, name, None)

    def itemsize(self, dtype):
        return self.lib.empty((), dtype=dtype).element_size()

    def bool_dtype(self):
        return self.lib.bool

    def random(self, nbytes, dtype):
        t = self.lib
        raw = t.randint(0, 256, (nbytes,), dtype=t.uint8, device="cuda")
        return raw.view(dtype)

    def layout_view(self, base, layout, rows, cols):
        if layout == "transposed":
            return base.reshape(cols, rows).t()
        if layout == "broadcast":
            return base.expand(rows, cols)
        return base

    def empty(self, shape, dtype):
        return self.lib.empty(shape, dtype=dtype, device="cuda")

    def sign(self, x, out):
        self.lib.sign(x, out=out)

    def isinf(self, x, out):
        self.lib.isinf(x)  # torch.isinf has no out=: its result is allocated per call

    def copy(self, dst, src):
        dst.copy_(src)

    def events(self):
        e = self.lib.cuda.Event
        return e(enable_timing=True), e(enable_timing=True)

    def elapsed_ms(self, start, end):
        return start.elapsed_time(end)

    def synchronize(self):
        self.lib.cuda.synchronize()


class CupyPeer(Peer):
    name = "cupy"

    def dtype(self, name):
        if name == "bfloat16":
            return None
        try:
            return self.lib.dtype(name)
        except TypeError:
            return None

    def itemsize(self, dtype):
        return dtype.itemsize

    def bool_dtype(self):
        return self.lib.bool_

    def random(self, nbytes, dtype):
        cp = self.lib
        raw = cp.random.randint(0, 256, size=nbytes, dtype=cp.uint8)
        return raw.view(dtype)

    def layout_view(self, base, layout, rows, cols):
        if layout == "transposed":
            return base.reshape(cols, rows).T
        if layout == "broadcast":
            return self.lib.broadcast_to(base, (rows, cols))
        return base

    def empty(self, shape, dtype):
        return self.lib.empty(shape, dtype=dtype)

    def sign(self, x, out):
        self.lib.sign(x, out=out)

    def isinf(self, x, out):
        self.lib.isinf(x, out=out)

    def copy(self, dst, src):
        self.lib.copyto(dst, src)

    def events(self):
        return self.lib.cuda.Event(), self.lib.cuda.Event()

    def elapsed_ms(self, start, end):
        return self.lib.cuda.get_elapsed_time(start, end)

    def synchronize(self):
        self.lib.cuda.Device().synchronize()


def find_peers():
    """The peers that import and see a CUDA device, and a line per one that does not."""
    peers, notes = [], []
    try:
        import torch

        if torch.cuda.is_available():
            peers.append(TorchPeer(torch))
            notes.append(f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}")
        else:
            notes.append(f"torch {torch.__version__} sees no CUDA device")
    except ImportError:
        notes.append("torch is not installed")
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            peers.append(CupyPeer(cupy))
            notes.append(f"cupy {cupy.__version__}")
        else:
            notes.append(f"cupy {cupy.__version__} sees no CUDA device")
    except ImportError:
        notes.append("cupy is not installed")
    except Exception as e:  # cupy imports but the CUDA runtime is missing or broken
        notes.append(f"cupy cannot use CUDA: {type(e).__name__}: {e}")
    return peers, notes


def load_ewise(args):
    """ewise's JSON rows from --ewise-json, filtered by --op, --dtype, --layout and
    --sizes as a run of ewise would select them; else from running ewise."""
    if not args.ewise_json:
        return run_ewise(args)
    with open(args.ewise_json) as f:
        rows = json.load(f)
    dtypes = None if args.dtype == "all" else {d.strip().upper() for d in args.dtype.split(",")}
    sizes = None
    if args.sizes:
        units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}
        sizes = set()
        for s in args.sizes:
            scale = units.get(s[-2:], 1)
            sizes.add(int(s[:-2] if scale > 1 else s) * scale)

    def keep(r):
        if r.get("kind", "case") != "case":
            return True
        return (
            (args.op == "all" or r["op"] == args.op)
            and (dtypes is None or r["dtype"] in dtypes)
            and (args.layout == "all" or r["layout"] == args.layout)
            and (sizes is None or r["elements"] in sizes)
        )

    return [r for r in rows if keep(r)]


def run_ewise(args):
    cmd = [args.ewise, "bench", "--device", "gpu", "--json", "--op", args.op, "--dtype", args.dtype]
    cmd += ["--layout", args.layout, "--samples", str(args.samples)]
    if args.sizes:
        cmd += ["--sizes", *args.sizes]
    if args.nan:
        cmd += ["--nan", args.nan]
    print("running: " + " ".join(cmd), file=sys.stderr)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        sys.exit(f"gpu_peers: {args.ewise} not found (cargo build --release -p ewise-cli, or --ewise PATH)")
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        sys.exit(f"gpu_peers: {args.ewise} bench --device gpu failed (exit {done.returncode})")
    for line in done.stderr.splitlines():
        if line.startswith("ewise:") and "XDG_RUNTIME_DIR" not in line:
            print(line, file=sys.stderr)
    return json.loads(done.stdout)


def measure_peer(peer, row, rounds):
    """GB/s of `peer` on the case of `row`, or None when it cannot run it."""
    dtype = DTYPES.get(row["dtype"])
    if dtype is None:
        return None
    try:
        case = peer.case(row["op"], dtype, row["elements"], row["layout"])
        if case is None:
            return None
        calls, moved = case
        seconds = peer.time(calls, moved, rounds)
    except Exception as e:  # a dtype the library has but no kernel for, or no memory
        print(f"{peer.name}: {row['op']} {dtype} {row['layout']}: {type(e).__name__}: {e}", file=sys.stderr)
        return None
    return moved / seconds / 1e9


def cell(value, fmt):
    return "-" if value is None else format(value, fmt)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ewise", default="target/release/ewise", help="the ewise binary")
    parser.add_argument("--sizes", nargs="+", help="element counts as ewise takes them (4096, 64Ki, 16Mi)")
    parser.add_argument("--op", default="all", choices=["sign", "is-infinity", "all"])
    parser.add_argument("--dtype", default="all", help="one ewise data type name, or all")
    parser.add_argument("--layout", default="all", choices=["contiguous", "transposed", "broadcast", "rows", "all"])
    parser.add_argument("--nan", choices=["zero", "propagate"], help="ewise's SIGN NaN policy")
    parser.add_argument("--samples", type=int, default=15, help="timed rounds per case (median)")
    parser.add_argument("--save-json", metavar="PATH", help="also write ewise's JSON rows to PATH")
    parser.add_argument("--ewise-json", metavar="PATH", help="take ewise's rows from this JSON (written by "
                        "`ewise bench --device gpu --json` or --save-json) instead of running ewise")
    args = parser.parse_args()

    rows = load_ewise(args)
    if args.save_json:
        with open(args.save_json, "w") as f:
            json.dump(rows, f, indent=1)
    cases = [r for r in rows if r.get("kind", "case") == "case"]
    overheads = [r for r in rows if r.get("kind") == "overhead"]
    peers, notes = find_peers()
    adapter = cases[0]["adapter"] if cases else "?"
    print(f"ewise on {adapter} (timer: {cases[0]['timer'] if cases else '?'}); " + "; ".join(notes))
    if not peers:
        print("no CUDA: only the ewise column is shown")

    header = ["op", "dtype", "elements", "layout", "ewise GB/s", "ewise copy", "ratio"]
    for p in peers:
        header += [f"{p.name} GB/s", f"ewise/{p.name}"]
    if peers:
        header.append("cuda copy GB/s")
    table = [header]
    for r in cases:
        line = [r["op"], r["dtype"].lower(), str(r["elements"]), r["layout"]]
        line += [f"{r['gbps']:.1f}", f"{r['best_copy_gbps']:.1f}", f"{r['ratio']:.2f}"]
        for p in peers:
            g = measure_peer(p, r, args.samples)
            line += [cell(g, ".1f"), cell(None if g is None else r["gbps"] / g, ".2f")]
        if peers:
            in_es = SIZES.get(r["dtype"], 1)
            n = r["elements"]
            cols = transposed_shape(n)[1]
            in_bytes = (cols if r["layout"] == "broadcast" else n) * in_es
            out_bytes = n * (in_es if r["op"] == "sign" else 1)
            copied = max(16, (in_bytes + out_bytes) // 2)
            try:
                calls, moved = peers[0].copy_case(copied)
                line.append(f"{moved / peers[0].time(calls, moved, args.samples) / 1e9:.1f}")
            except Exception as e:
                print(f"{peers[0].name} copy: {type(e).__name__}: {e}", file=sys.stderr)
                line.append("-")
            calls = None
        table.append(line)
        print("measured: " + "  ".join(line), file=sys.stderr, flush=True)
    widths = [max(len(row[k]) for row in table) for k in range(len(header))]
    for row in table:
        print("  ".join(c.rjust(w) if k >= 2 else c.ljust(w) for k, (c, w) in enumerate(zip(row, widths))).rstrip())

    print("\nOne call, wall time (us): ewise execute vs a bare wgpu submit + wait; peers: call + synchronize")
    by = {(o["what"], o["elements"]): o for o in overheads}
    peer_wall = {}
    for p in peers:
        try:
            calls, _ = p.case("sign", "float32", 4096, "contiguous")
            peer_wall[p.name] = p.one_call_wall(calls[:1], 10 * args.samples)
        except Exception as e:
            print(f"{p.name} one call: {type(e).__name__}: {e}", file=sys.stderr)
    for key, label in [
        (("execute", 1), "ewise execute, 1 float32"),
        (("execute", 4096), "ewise execute, 4096 float32"),
        (("bare-submit-wait", 4), "bare wgpu submit + wait"),
        (("record", 4096), "ewise record one dispatch (CPU)"),
    ]:
        o = by.get(key)
        print(f"  {label:<34} {cell(None if o is None else o['ns'] / 1e3, '10.1f')}")
    for name, seconds in peer_wall.items():
        print(f"  {name + ' sign, 4096 float32':<34} {seconds * 1e6:10.1f}")
    print(
        "\nGB/s = (bytes read + bytes written) / second, median per call of batches of back-to-back calls;"
        "\nratio = ewise over its best copy (WGSL copy kernel or copy_buffer_to_buffer) in its run;"
        "\newise/peer = ewise's GB/s over the peer's; cuda copy = a device copy of the same bytes in "
        + (peers[0].name if peers else "-")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
