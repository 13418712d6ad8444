#!/usr/bin/env python3
"""Compare ewise with numpy, ONNX Runtime and PyTorch on the same cases.

Runs `ewise bench --json` (built in release mode) for the contiguous cases, then times each
peer that is installed on the same sizes, and prints one table of GB/s and of ratios to
the best memory copy that `ewise bench` measured in its run. Peers that are not installed
are skipped, and so are the cases a peer lacks (a "-" cell). When the `ewise` Python
package is importable, its calls are timed from Python like the peers' ("ewise (python)"):
the wall time per call a Python user sees, where the "ewise" column is `ewise bench`'s
in-process time. Not part of the tests.

    python3 bench/peers.py [--sizes 65536 16777216] [--ops sign is-infinity]
"""

import argparse
import json
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


def median_seconds(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2]


def numpy_dtype(np, dtype):
    """numpy's dtype for a name; bfloat16 comes from ml_dtypes, when installed."""
    if dtype == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(dtype)


def numpy_case(np, op, dtype, n):
    x = (np.arange(n) % 7 - 3).astype(numpy_dtype(np, dtype))
    if op == "sign":
        out = np.empty_like(x)
        return lambda: np.sign(x, out=out), x.nbytes * 2
    if dtype.startswith(("int", "uint")):
        return None
    out = np.empty(n, dtype=bool)
    return lambda: np.isinf(x, out=out), x.nbytes + n


def torch_case(torch, op, dtype, n):
    tdtype = getattr(torch, dtype, None)
    if tdtype is None:
        return None
    x = (torch.arange(n) % 7 - 3).to(tdtype)
    if op == "sign":
        out = torch.empty_like(x)
        return lambda: torch.sign(x, out=out), x.numel() * x.element_size() * 2
    if not x.is_floating_point():
        return None
    return lambda: torch.isinf(x), x.numel() * (x.element_size() + 1)


def ewise_py_case(ewise, np, op, dtype, n):
    x = (np.arange(n) % 7 - 3).astype(numpy_dtype(np, dtype))
    if op == "sign":
        out = np.empty_like(x)
        return lambda: ewise.sign(x, nan="propagate", out=out), x.nbytes * 2
    if dtype.startswith(("int", "uint")):
        return None
    out = np.empty(n, dtype=bool)
    return lambda: ewise.isinf(x, out=out), x.nbytes + n


def ort_case(ort, onnx, np, op, dtype, n):
    from onnx import TensorProto, helper

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
    x = (np.arange(n) % 7 - 3).astype(numpy_dtype(np, dtype))
    out_bytes = x.nbytes if op == "sign" else n
    return lambda: sess.run(None, {"x": x}), x.nbytes + out_bytes


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ewise", default="target/release/ewise")
    parser.add_argument("--sizes", nargs="+", type=int, default=[65536, 16777216])
    parser.add_argument("--ops", nargs="+", default=["sign", "is-infinity"])
    parser.add_argument("--repeat", type=int, default=21)
    args = parser.parse_args()

    cmd = [args.ewise, "bench", "--json", "--sizes", *map(str, args.sizes), "--op", "all", "--dtype", "all"]
    runs = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    runs = [r for r in runs if r["layout"] == "contiguous" and r["op"] in args.ops]

    peers = {}
    try:
        import ewise
        import numpy

        peers["ewise (python)"] = lambda op, dt, n: ewise_py_case(ewise, numpy, op, dt, n)
    except ImportError:
        pass
    try:
        import numpy as np

        peers["numpy"] = lambda op, dt, n: numpy_case(np, op, dt, n)
    except ImportError:
        np = None
    try:
        import torch

        torch.set_num_threads(max(r["threads"] for r in runs) if runs else 1)
        peers["torch"] = lambda op, dt, n: torch_case(torch, op, dt, n)
    except ImportError:
        pass
    try:
        import onnx
        import onnxruntime as ort

        if np is not None:
            peers["onnxruntime"] = lambda op, dt, n: ort_case(ort, onnx, np, op, dt, n)
    except ImportError:
        pass

    names = ["ewise", *peers]
    print(f"{'op':<12} {'dtype':<8} {'elements':>9} {'copy GB/s':>9} " + " ".join(f"{n:>16}" for n in names))
    for r in runs:
        dtype = DTYPES.get(r["dtype"])
        cells = [f"{r['gbps']:6.1f} ({r['ratio']:.2f})"]
        for name, make in peers.items():
            try:
                case = make(r["op"], dtype, r["elements"]) if dtype else None
                if case is None:
                    cells.append("-")
                    continue
                fn, moved = case
                fn()
            except Exception as e:  # a dtype or kernel the peer lacks (torch: sign of uint64)
                print(f"{name}: {r['op']} {dtype}: {type(e).__name__}: {e}", file=sys.stderr)
                cells.append("-")
                continue
            gbps = moved / median_seconds(fn, args.repeat) / 1e9
            cells.append(f"{gbps:6.1f} ({gbps / r['best_copy_gbps']:.2f})")
        print(
            f"{r['op']:<12} {r['dtype']:<8} {r['elements']:>9} {r['best_copy_gbps']:>9.1f} "
            + " ".join(f"{c:>16}" for c in cells)
        )
    print("\nGB/s = (bytes read + bytes written) / second, median; (ratio to ewise's best copy in its run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
