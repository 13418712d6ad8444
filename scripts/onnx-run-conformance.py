#!/usr/bin/env python3
"""ONNX's backend test cases through `ewise run`, the streaming path users take.

For every case directory given (model.onnx and test_data_set_N/ of input_N.pb and
output_N.pb), writes each data set's inputs as .npy files, runs
`ewise run model.onnx -i NAME=FILE ... -o OUTDIR [ARGS]`, and requires every output file
to hold the expected tensor's dtype, shape and bytes exactly. Prints PASS or FAIL per
data set and exits 1 if any failed.

    python3 scripts/onnx-run-conformance.py --ewise target/release/ewise \\
        [--args "--device gpu --chunk-size 4Ki"] CASE_DIR...

Needs numpy and onnx (scripts/onnx-conformance.sh installs both in target/onnx-venv).
"""

import argparse
import glob
import os
import shlex
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper


def load_tensor(path):
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


def check_data_set(ewise, extra, model_path, graph, data_set, scratch):
    inputs = []
    for k, value in enumerate(graph.input):
        pb = os.path.join(data_set, f"input_{k}.pb")
        if not os.path.exists(pb):
            continue
        npy = os.path.join(scratch, f"input_{k}.npy")
        np.save(npy, load_tensor(pb))
        inputs += ["-i", f"{value.name}={npy}"]
    out_dir = os.path.join(scratch, "out")
    command = [ewise, "run", model_path, *inputs, "-o", out_dir, *extra]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        return f"ewise run failed: {done.stderr.strip()}"
    for k, value in enumerate(graph.output):
        expected = load_tensor(os.path.join(data_set, f"output_{k}.pb"))
        got = np.load(os.path.join(out_dir, f"{value.name}.npy"))
        if got.dtype != expected.dtype or got.shape != expected.shape:
            return (f"output {value.name!r}: {got.dtype}{list(got.shape)}, expected "
                    f"{expected.dtype}{list(expected.shape)}")
        if got.tobytes() != np.ascontiguousarray(expected).tobytes():
            return f"output {value.name!r}: bytes differ"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ewise", default="target/release/ewise")
    parser.add_argument("--args", default="", help="more arguments for ewise run")
    parser.add_argument("cases", nargs="+")
    args = parser.parse_args()
    extra = shlex.split(args.args)
    failed = 0
    passed = 0
    for case in args.cases:
        model_path = os.path.join(case, "model.onnx")
        graph = onnx.load(model_path).graph
        name = os.path.basename(os.path.normpath(case))
        for data_set in sorted(glob.glob(os.path.join(case, "test_data_set_*"))):
            with tempfile.TemporaryDirectory() as scratch:
                why = check_data_set(args.ewise, extra, model_path, graph, data_set, scratch)
            label = f"{name}/{os.path.basename(data_set)}"
            if why is None:
                passed += 1
                print(f"PASS {label}")
            else:
                failed += 1
                print(f"FAIL {label}: {why}")
    print(f"{passed} passed, {failed} failed (ewise run {' '.join(extra)})")
    if failed or not passed:
        sys.exit(1)


if __name__ == "__main__":
    main()
