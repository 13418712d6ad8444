"""ewise.onnx.run on external tensor data: a data file that is a symbolic link to a file
outside the model's folder is refused (naming the link, never reading the target), a
1 TiB claim on a sparse file raises an exception instead of aborting, and with ``out=``
an external initializer streams from its file in chunks: the right bits, in memory that
does not grow with the data.
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
import oracle
from test_long_calls import MIB, STATUS, run_child

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


def external_float_model(n: int, offset: int, shape: tuple[int, ...] | None = None) -> bytes:
    """Sign of a float32 initializer "w" of ``n`` elements (of ``shape``, 1-d without
    one) stored in "w.bin" from ``offset``, with its length given, as
    ``onnx.save(..., save_as_external_data=True)`` stores large tensors."""
    shape = shape or (n,)
    w = TensorProto()
    w.name = "w"
    w.data_type = TensorProto.FLOAT
    w.dims.extend(shape)
    w.data_location = TensorProto.EXTERNAL
    for key, value in [("location", "w.bin"), ("offset", str(offset)), ("length", str(4 * n))]:
        entry = w.external_data.add()
        entry.key = key
        entry.value = value
    graph = helper.make_graph(
        [helper.make_node("Sign", ["w"], ["y"])],
        "g",
        [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))],
        initializer=[w],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return m.SerializeToString()


def external_block(k: int) -> np.ndarray:
    """Block ``k`` of the external tensor: 1 MiB of float32 bit patterns, different in
    every block, with infinities, NaNs, zeros and subnormals among them."""
    bits = np.random.default_rng(k).integers(0, 2**32, MIB // 4, dtype=np.uint32)
    bits[: 8] = [0x7F800000, 0xFF800000, 0x7FC00001, 0xFFC00000, 0, 0x80000000, 1, 0x80000001]
    return bits.view(np.float32)


EXTERNAL_PEAK = STATUS + """
import numpy as np, ewise.onnx
ewise.onnx.run({warm!r}, {{}}, out={{"y": np.empty(4, np.float32)}})
y = np.memmap({target!r}, np.float32, "w+", shape=({n},))
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
before = status("VmRSS")
assert ewise.onnx.run({model!r}, {{}}, out={{"y": y}})["y"] is y
print(status("VmHWM") - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmHWM and clear_refs are Linux's")
def test_onnx_run_out_streams_an_external_initializer_from_its_file(tmp_path):
    """512 MiB of external data through Sign into a np.memmap: every bit right, and the
    process grows by a few chunks, not by the data (VmHWM in a fresh interpreter). A
    run that read the data whole would grow by all of it."""
    blocks, offset = 512, 4096 + 4
    n = blocks * MIB // 4
    with open(tmp_path / "w.bin", "wb") as f:
        f.write(b"\xee" * offset)
        for k in range(blocks):
            f.write(external_block(k).tobytes())
        f.write(b"\xee" * 64)
    (tmp_path / "model.onnx").write_bytes(external_float_model(n, offset))
    warm = tmp_path / "warm"
    warm.mkdir()
    (warm / "w.bin").write_bytes(np.ones(4, np.float32).tobytes())
    (warm / "model.onnx").write_bytes(external_float_model(4, 0))
    child = run_child(
        EXTERNAL_PEAK.format(
            warm=str(warm / "model.onnx"), model=str(tmp_path / "model.onnx"),
            target=str(tmp_path / "y"), n=n,
        )
    )
    assert child.returncode == 0, child.stderr
    grown = int(child.stdout.split()[-1])
    assert grown < 48 * MIB, f"resident memory grew by {grown / MIB:.0f} MiB for 512 MiB of external data"
    y = np.memmap(tmp_path / "y", np.float32, "r", shape=(n,))
    per = MIB // 4
    for k in range(blocks):
        want = oracle.sign(external_block(k), "propagate")
        assert np.array_equal(y[k * per : (k + 1) * per].view(np.uint32), want.view(np.uint32)), k


def test_onnx_run_out_gives_the_bits_of_the_whole_run_for_external_data(tmp_path):
    n = 3 * MIB // 4 + 5
    data = np.concatenate([external_block(0), external_block(1), external_block(2), external_block(3)])[:n]
    (tmp_path / "w.bin").write_bytes(b"\x01" * 12 + data.tobytes())
    path = tmp_path / "model.onnx"
    path.write_bytes(external_float_model(n, 12))
    y = np.full(n, 7.0, np.float32)
    assert ewise.onnx.run(path, {}, out={"y": y})["y"] is y
    whole = ewise.onnx.run(path, {})["y"]
    assert np.array_equal(y.view(np.uint32), whole.view(np.uint32))
    streamed = ewise.onnx.run(path, {}, out={})["y"]
    assert np.array_equal(streamed.view(np.uint32), whole.view(np.uint32))


@pytest.mark.parametrize("layout", ["fortran", "swapped", "strided", "reversed"])
def test_an_external_initializer_into_out_of_any_layout(tmp_path, layout):
    """A 2-d external tensor walked across its file (in tiles for a Fortran-order out):
    every element read from its place, the bits of the whole run."""
    shape = (1031, 1029)
    n = shape[0] * shape[1]
    data = np.concatenate([external_block(k) for k in range(5)])[:n]
    (tmp_path / "w.bin").write_bytes(b"\x02" * 20 + data.tobytes())
    path = tmp_path / "model.onnx"
    path.write_bytes(external_float_model(n, 20, shape))
    y = {
        "fortran": np.full(shape, 7.0, np.float32, order="F"),
        "swapped": np.full(shape, 7.0, ">f4"),
        "strided": np.full((shape[0] * 2, shape[1] + 3), 7.0, np.float32)[::2, 1:-2],
        "reversed": np.full(shape, 7.0, np.float32)[::-1, ::-1],
    }[layout]
    assert ewise.onnx.run(path, {}, out={"y": y})["y"] is y
    whole = ewise.onnx.run(path, {})["y"]
    bits = y.view(y.dtype.str.replace("f", "u")).astype(np.uint32)
    assert np.array_equal(bits, whole.view(np.uint32))


MANY_FILES_CHILD = textwrap.dedent(
    """
    import resource, sys
    import numpy as np
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    import ewise, ewise.onnx
    n = int(sys.argv[2])
    out = {f"y{i}": np.full(4, 7, np.float32) for i in range(n)}
    ewise.onnx.run(sys.argv[1], {}, out=out)
    for i in range(n):
        want = np.sign(np.array([-i - 1, 0, i + 1, -0.5], np.float32))
        assert out[f"y{i}"].tobytes() == want.tobytes(), (i, out[f"y{i}"])
    print("ran", n)
    """
)


def test_onnx_out_with_one_data_file_per_tensor_runs_under_a_small_open_file_limit(tmp_path):
    """A model saved with one file per tensor (``all_tensors_to_one_file=False``) runs with
    ``out=`` in a process that may hold 64 files open: ewise keeps a bounded number of data
    files open, not one per file for the whole run."""
    n = 300
    initializers = [
        helper.make_tensor(
            f"w{i}", TensorProto.FLOAT, [4], np.array([-i - 1, 0, i + 1, -0.5], np.float32).tobytes(), raw=True
        )
        for i in range(n)
    ]
    graph = helper.make_graph(
        [helper.make_node("Sign", [f"w{i}"], [f"y{i}"]) for i in range(n)],
        "g",
        [],
        [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [4]) for i in range(n)],
        initializer=initializers,
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path = tmp_path / "model.onnx"
    onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=False, size_threshold=0)
    data_files = [p for p in tmp_path.iterdir() if p.name != "model.onnx"]
    assert len(data_files) == n
    run = subprocess.run(
        [sys.executable, "-c", MANY_FILES_CHILD, str(path), str(n)], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, f"the child ended with {run.returncode}:\n{run.stdout}{run.stderr}"
    assert run.stdout.strip() == f"ran {n}", run.stdout + run.stderr
