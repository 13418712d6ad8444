"""ewise.onnx.run on hostile external tensor data: a data file that is a symbolic link
to a file outside the model's folder is refused (naming the link, never reading the
target), and a 1 TiB claim on a sparse file raises an exception instead of aborting.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ewise
import ewise.onnx

onnx = pytest.importorskip("onnx", reason="the onnx package is a test dependency")
from onnx import TensorProto, helper  # noqa: E402

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink") or sys.platform == "win32", reason="POSIX only")

SECRET = b"EWISE-PYTHON-SECRET-OUTSIDE-91b2"


def external_sign_model(length: int, location: str) -> bytes:
    """Sign of a uint8 initializer "w" of `length` elements stored at `location`."""
    w = TensorProto()
    w.name = "w"
    w.data_type = TensorProto.UINT8
    w.dims.append(length)
    w.data_location = TensorProto.EXTERNAL
    entry = w.external_data.add()
    entry.key = "location"
    entry.value = location
    graph = helper.make_graph(
        [helper.make_node("Sign", ["w"], ["y"])],
        "g",
        [],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, None)],
        initializer=[w],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return m.SerializeToString()


def test_onnx_external_data_as_a_link_to_outside_is_refused(tmp_path):
    outside = tmp_path / "outside"
    folder = tmp_path / "model"
    outside.mkdir()
    folder.mkdir()
    (outside / "secret.bin").write_bytes(SECRET)
    os.symlink(outside / "secret.bin", folder / "w.bin")
    path = folder / "model.onnx"
    path.write_bytes(external_sign_model(len(SECRET), "w.bin"))
    message = 'external data location "w.bin" of tensor "w" is a symbolic link'
    with pytest.raises(ewise.OnnxError, match=message) as raised:
        ewise.onnx.run(path, {})
    assert SECRET.decode() not in str(raised.value)

    (folder / "w.bin").unlink()
    (folder / "w.bin").write_bytes(bytes([0, 7, 255]))
    path.write_bytes(external_sign_model(3, "w.bin"))
    assert ewise.onnx.run(path, {})["y"].tolist() == [0, 1, 1]


CHILD = textwrap.dedent(
    """
    import resource, sys
    limit = 4 << 30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import ewise, ewise.onnx
    try:
        ewise.onnx.run(sys.argv[1], {})
    except MemoryError as e:
        print("raised:", e)
    else:
        print("no exception")
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is enforced on Linux")
def test_onnx_sparse_terabyte_claim_raises_instead_of_aborting(tmp_path):
    with open(tmp_path / "huge.bin", "wb") as f:
        f.truncate(1 << 40)
    path = tmp_path / "model.onnx"
    path.write_bytes(external_sign_model(1 << 40, "huge.bin"))
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    run = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, timeout=120, env=env
    )
    assert run.returncode == 0, f"the child ended with {run.returncode}:\n{run.stdout}{run.stderr}"
    assert run.stdout.startswith(
        'raised: cannot allocate 1099511627776 bytes for the external data of tensor "w"'
    ), run.stdout + run.stderr


def test_onnx_unused_external_initializers_are_not_read(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    m = onnx.load_model_from_string(external_sign_model(4, "w.bin"))
    (tmp_path / "w.bin").write_bytes(bytes([1, 0, 2, 0]))
    unused = TensorProto()
    unused.CopyFrom(m.graph.initializer[0])
    unused.name = "unused"
    unused.external_data[0].value = "pipe"
    m.graph.initializer.append(unused)
    path = tmp_path / "model.onnx"
    path.write_bytes(m.SerializeToString())
    got = ewise.onnx.run(path, {})["y"]
    assert got.dtype == np.uint8
    assert got.tolist() == [1, 0, 1, 0]
