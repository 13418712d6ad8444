#!/usr/bin/env python3
"""`ewise run` against `ewise sign` on the same .npy file, with peak memory.

Writes a float32 input of SIZE MiB (values through every sign, with infinities and NaNs),
a one-Sign ONNX model and a two-node model (Sign, then IsInf of its result), and times,
in interleaved rounds:
  sign      ewise sign --semantics onnx x.npy out.npy
  run-1     ewise run sign.onnx -i x=x.npy -o out/      (the same bytes as sign)
  run-2     ewise run two.onnx -i x=x.npy -o out/       (Sign -> IsInf: bool output)
  copy      dd if=x.npy of=out.npy bs=8M conv=fsync     (the host-copy limit: the same
            bytes read and written, synced as ewise syncs its outputs)
each with a warm page cache (the input read just before) and a cold one (the input's
pages dropped with posix_fadvise(DONTNEED) first, which needs no root; the outputs are
removed and synced away before every command). Reports the median wall time, the ratio
to sign's median, and the peak resident set (VmHWM, Linux) of each.

    python3 bench/run_vs_sign.py [--size-mib 1024] [--rounds 5] [--device cpu]
        [--ewise target/release/ewise] [--dir /tmp/ewise-run-bench] [--keep]
        [--models DIR]
    python3 bench/run_vs_sign.py --write-models DIR

Needs numpy, and onnx to write the models; `--write-models DIR` writes them (and
exits) for `--models DIR` on a machine without onnx.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np


def write_input(path, mib):
    n = mib * (1 << 20) // 4
    x = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n,))
    block = 1 << 22
    for start in range(0, n, block):
        end = min(start + block, n)
        x[start:end] = np.linspace(-8, 8, end - start, dtype=np.float32)
        x[start : end : 97] = np.inf
        x[start + 1 : end : 89] = -np.inf
        x[start + 2 : end : 83] = np.nan
    x.flush()
    del x


def write_models(directory):
    import onnx
    from onnx import TensorProto, helper

    os.makedirs(directory, exist_ok=True)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, None)
    one = helper.make_graph(
        [helper.make_node("Sign", ["x"], ["y"])],
        "sign",
        [x],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    two = helper.make_graph(
        [helper.make_node("Sign", ["x"], ["t"]), helper.make_node("IsInf", ["t"], ["y"])],
        "sign then isinf",
        [x],
        [helper.make_tensor_value_info("y", TensorProto.BOOL, None)],
    )
    paths = {}
    for name, graph in [("run-1", one), ("run-2", two)]:
        path = os.path.join(directory, f"{name}.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]), path)
        paths[name] = path
    return paths


def drop_cache(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fdatasync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def warm(path):
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


def peak_kib(pid):
    """The process's peak resident set (VmHWM) in KiB, or None once it has exited."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def timed(command):
    """Wall seconds and peak resident KiB of one child. The peak is VmHWM, read every
    millisecond while the child runs: the child's own after exec, where the rusage of a
    child spawned from this (large) process would report this process's peak."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    while child.poll() is None:
        peak = max(peak, peak_kib(child.pid) or 0)
        time.sleep(0.001)
    seconds = time.perf_counter() - start
    err = child.stderr.read().decode()
    child.stderr.close()
    if child.returncode != 0:
        sys.exit(f"{' '.join(command)} failed: {err}")
    return seconds, peak


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    parser.add_argument("--ewise", default="target/release/ewise")
    parser.add_argument("--dir", default="/tmp/ewise-run-bench")
    parser.add_argument("--keep", action="store_true", help="keep the input and models")
    parser.add_argument("--models", help="the models' folder (written there if missing)")
    parser.add_argument("--write-models", metavar="DIR", help="write the models and exit")
    args = parser.parse_args()
    if args.write_models:
        write_models(args.write_models)
        return

    os.makedirs(args.dir, exist_ok=True)
    x = os.path.join(args.dir, "x.npy")
    if not os.path.exists(x) or os.path.getsize(x) < args.size_mib << 20:
        write_input(x, args.size_mib)
    models_dir = args.models or args.dir
    models = {name: os.path.join(models_dir, f"{name}.onnx") for name in ("run-1", "run-2")}
    if not all(os.path.exists(m) for m in models.values()):
        models = write_models(models_dir)
    out_file = os.path.join(args.dir, "out.npy")
    out_dir = os.path.join(args.dir, "out")
    device = ["--device", args.device]
    commands = {
        "sign": [args.ewise, "sign", "--semantics", "onnx", *device, x, out_file],
        **{
            name: [args.ewise, "run", model, "-i", f"x={x}", "-o", out_dir, *device]
            for name, model in models.items()
        },
        "copy": ["dd", f"if={x}", f"of={out_file}", "bs=8M", "conv=fsync", "status=none"],
    }

    results = {(name, cache): [] for name in commands for cache in ("warm", "cold")}
    for _ in range(args.rounds):
        for cache in ("warm", "cold"):
            for name, command in commands.items():
                shutil.rmtree(out_dir, ignore_errors=True)
                if os.path.exists(out_file):
                    os.remove(out_file)
                os.sync()
                if cache == "cold":
                    drop_cache(x)
                else:
                    warm(x)
                results[(name, cache)].append(timed(command))

    size = os.path.getsize(x)
    print(f"input: {size / (1 << 20):.0f} MiB float32, device {args.device}, "
          f"{args.rounds} rounds, median wall time")
    print(f"{'case':8} {'cache':5} {'seconds':>8} {'vs sign':>8} {'GB/s in':>8} {'peak RSS':>10}")
    for cache in ("warm", "cold"):
        base = statistics.median(t for t, _ in results[("sign", cache)])
        for name in commands:
            runs = results[(name, cache)]
            seconds = statistics.median(t for t, _ in runs)
            peak = max(k for _, k in runs)
            print(f"{name:8} {cache:5} {seconds:8.3f} {seconds / base:8.2f} "
                  f"{size / seconds / 1e9:8.2f} {peak / 1024:7.1f} MiB")
    shutil.rmtree(out_dir, ignore_errors=True)
    if os.path.exists(out_file):
        os.remove(out_file)
    if not args.keep:
        shutil.rmtree(args.dir, ignore_errors=True)


if __name__ == "__main__":
    main()
