"""ewise.onnx.run(..., out=...): outputs written into the caller's arrays, the model run
in chunks read straight from the inputs, bit for bit as the whole-array run (and the
oracle), for every type, layout, byte order and graph shape; memory shared between
arrays; bounded resident memory over 1 GiB memory-mapped files; Ctrl-C between chunks;
and every error raised before anything is written."""

from __future__ import annotations

import re
import shutil
import threading
import time

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import ewise
import ewise.onnx
import oracle
from oracle import EDGE_BITS, INFINITY_TYPES, SIGN_TYPES, all_patterns, assert_same_bits
from test_long_calls import GIB, MIB, STATUS, needs_memory, run_child
from test_onnx import model
from test_shared_out import LAYOUTS, shared_out

onnx = pytest.importorskip("onnx", reason="the onnx package is a test dependency")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

#: ONNX element types by the oracle's type names.
ELEM = {
    "float32": TensorProto.FLOAT,
    "float16": TensorProto.FLOAT16,
    "float64": TensorProto.DOUBLE,
    "bfloat16": TensorProto.BFLOAT16,
    "int8": TensorProto.INT8,
    "int16": TensorProto.INT16,
    "int32": TensorProto.INT32,
    "int64": TensorProto.INT64,
    "uint8": TensorProto.UINT8,
    "uint16": TensorProto.UINT16,
    "uint32": TensorProto.UINT32,
    "uint64": TensorProto.UINT64,
    "float8_e4m3fn": TensorProto.FLOAT8E4M3FN,
    "float8_e4m3fnuz": TensorProto.FLOAT8E4M3FNUZ,
    "float8_e5m2": TensorProto.FLOAT8E5M2,
    "float8_e5m2fnuz": TensorProto.FLOAT8E5M2FNUZ,
}

#: Elements of the type tests: several 4 MiB chunks for every type, and a short last one.
N = 2**21 + 4099


def graph(nodes, inputs, outputs, initializers=(), opset=20) -> bytes:
    """A model of ``nodes`` ((op, [inputs], [outputs], attributes)); ``inputs`` and
    ``outputs`` are (name, elem type) pairs with undeclared shapes."""
    g = helper.make_graph(
        [helper.make_node(op, i, o, **attrs) for op, i, o, attrs in nodes],
        "g",
        [helper.make_tensor_value_info(name, elem, None) for name, elem in inputs],
        [helper.make_tensor_value_info(name, elem, None) for name, elem in outputs],
        list(initializers),
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]).SerializeToString()


def values(name: str, n: int, seed: int = 0) -> np.ndarray:
    """``n`` elements of type ``name``: every bit pattern of a narrow type, repeated;
    random bits with the edge patterns spliced in for 32- and 64-bit types."""
    dt = oracle.dtype(name)
    if dt.itemsize <= 2:
        patterns = all_patterns(name)
        return np.resize(patterns, n)
    u = oracle.uint_of(dt)
    bits = np.random.default_rng(seed).integers(0, np.iinfo(u).max, n, dtype=u, endpoint=True)
    edges = np.array(EDGE_BITS.get(name, [0, 1]), u)[:n]
    bits[: len(edges)] = edges
    bits[n - len(edges) :] = edges
    return bits.view(dt)


def whole(m, inputs, **kw):
    """The run without ``out``: the reference for every streamed run."""
    return ewise.onnx.run(m, inputs, **kw)


# --------------------------------------------------------------- bits, every type


@pytest.mark.parametrize("nan", ["propagate", "zero"])
@pytest.mark.parametrize("name", SIGN_TYPES)
def test_sign_into_out_every_type(name, nan, ml_dtypes):
    m = model("Sign", ELEM[name], ELEM[name], 20)
    x = values(name, N)
    y = np.empty(N, oracle.dtype(name))
    y.view(np.uint8)[:] = 0x5A
    got = ewise.onnx.run(m, {"x": x}, nan=nan, out={"y": y})
    assert got["y"] is y
    assert_same_bits(y, whole(m, {"x": x}, nan=nan)["y"], f"Sign {name} nan={nan}")
    assert_same_bits(y, oracle.sign(x, nan), f"Sign {name} nan={nan} (oracle)")


@pytest.mark.parametrize(("detect_positive", "detect_negative"), [(1, 1), (1, 0), (0, 1), (0, 0)])
@pytest.mark.parametrize("name", INFINITY_TYPES)
def test_isinf_into_out_every_type(name, detect_positive, detect_negative, ml_dtypes):
    m = model(
        "IsInf", ELEM[name], TensorProto.BOOL, 20,
        detect_positive=detect_positive, detect_negative=detect_negative,
    )
    x = values(name, N, seed=1)
    y = np.ones(N, bool)
    assert ewise.onnx.run(m, {"x": x}, out={"y": y})["y"] is y
    mode = oracle.onnx_mode(detect_positive, detect_negative)
    assert_same_bits(y, whole(m, {"x": x})["y"], f"IsInf {name} {mode}")
    assert_same_bits(y, oracle.is_infinity(x, mode), f"IsInf {name} {mode} (oracle)")


# ------------------------------------------------------------------------- layouts


def layout(a: np.ndarray, kind: str) -> np.ndarray:
    """``a`` (2-d, C-contiguous) in another layout with the same values."""
    if kind == "c":
        return a.copy()
    if kind == "fortran":
        return np.asfortranarray(a)
    if kind == "reversed":
        return a[::-1, ::-1].copy()[::-1, ::-1]
    if kind == "strided":
        wide = np.zeros((a.shape[0], 2 * a.shape[1]), a.dtype)
        wide[:, 1::2] = a
        return wide[:, 1::2]
    if kind == "swapped":
        return a.astype(a.dtype.newbyteorder("S"))
    if kind == "swapped-fortran":
        return np.asfortranarray(a.astype(a.dtype.newbyteorder("S")))
    raise ValueError(kind)


KINDS = ["c", "fortran", "reversed", "strided", "swapped", "swapped-fortran"]


@pytest.mark.parametrize("out_kind", KINDS)
@pytest.mark.parametrize("in_kind", KINDS + ["broadcast"])
def test_layouts_and_byte_orders(in_kind, out_kind):
    """1500 x 1100 float32 (three chunks): any layout of input and output."""
    m = graph(
        [("Sign", ["x"], ["s"], {}), ("IsInf", ["x"], ["i"], {"detect_negative": 0})],
        [("x", TensorProto.FLOAT)],
        [("s", TensorProto.FLOAT), ("i", TensorProto.BOOL)],
    )
    base = values("float32", 1500 * 1100).reshape(1500, 1100)
    if in_kind == "broadcast":
        x = np.broadcast_to(base[:1], base.shape)
    else:
        x = layout(base, in_kind)
    s = layout(np.full(base.shape, 9.0, np.float32), out_kind)
    i = layout(np.ones(base.shape, np.uint8), out_kind).view(bool)
    got = ewise.onnx.run(m, {"x": x}, out={"s": s, "i": i})
    assert got["s"] is s and got["i"] is i
    want = whole(m, {"x": x})
    assert_same_bits(s, want["s"], f"{in_kind} -> {out_kind}")
    assert_same_bits(i, want["i"], f"{in_kind} -> {out_kind}")
    assert_same_bits(s, oracle.sign(x, "propagate"))


@pytest.mark.parametrize("out_axes", [(0, 1, 2), (2, 1, 0), (1, 2, 0)])
@pytest.mark.parametrize("in_axes", [(0, 1, 2), (2, 0, 1), (1, 0, 2)])
def test_three_dimensional_layouts_that_disagree(in_axes, out_axes):
    """Input and output laid out along different axis orders (walked in tiles), with
    sizes that leave partial tiles, one axis reversed in the output."""
    shape = (97, 1031, 23)
    m = model("Sign", TensorProto.INT16, TensorProto.INT16, 13)
    x = np.ascontiguousarray(values("int16", int(np.prod(shape))).reshape(shape).transpose(in_axes))
    x = x.transpose(np.argsort(in_axes))
    base = np.empty([shape[k] for k in out_axes], np.int16).transpose(np.argsort(out_axes))
    y = base[:, ::-1][:, ::-1] if out_axes == (0, 1, 2) else base[:, ::-1]
    got = ewise.onnx.run(m, {"x": x}, out={"y": y})
    assert got["y"] is y
    assert_same_bits(y, oracle.sign(x))


def test_an_initializer_into_a_fortran_order_out():
    c = values("float32", 3000 * 700, seed=11).reshape(3000, 700)
    g = helper.make_graph(
        [helper.make_node("Sign", ["c"], ["y"])], "g", [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(c, "c")],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
    y = np.empty(c.shape, np.float32, order="F")
    assert ewise.onnx.run(m, {}, out={"y": y})["y"] is y
    assert_same_bits(y, oracle.sign(c, "propagate"))


@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 5), (1,), (2,) * 10, (1, 1, 7, 1)])
def test_zero_dimensional_empty_and_many_dimensions(shape):
    m = model("Sign", TensorProto.DOUBLE, TensorProto.DOUBLE, 13)
    x = np.asarray(values("float64", max(1, int(np.prod(shape))))[: int(np.prod(shape))].reshape(shape))
    y = np.full(shape, 5.0)
    got = ewise.onnx.run(m, {"x": x}, out={"y": y})
    assert got["y"] is y and y.shape == shape
    assert_same_bits(y, whole(m, {"x": x})["y"])


@pytest.mark.parametrize("layout_", LAYOUTS, ids=[entry[0] for entry in LAYOUTS])
def test_out_whose_elements_share_memory_is_written_as_numpy_writes(layout_):
    _, offset, shape, strides = layout_
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32) * 3
    mine, out = shared_out(np.float32, offset, shape, strides)
    theirs, reference = shared_out(np.float32, offset, shape, strides)
    np.sign(x, out=reference)
    m = model("Sign", TensorProto.FLOAT, TensorProto.FLOAT, 13)
    assert ewise.onnx.run(m, {"x": x}, out={"y": out})["y"] is out
    assert mine.tobytes() == theirs.tobytes()


# -------------------------------------------------------------------------- graphs


SEVERAL = graph(
    [
        ("Sign", ["a"], ["sa"], {}),
        ("IsInf", ["a"], ["ia"], {}),
        ("Sign", ["sa"], ["ssa"], {}),
        ("IsInf", ["b"], ["ib"], {"detect_positive": 0}),
        ("Sign", ["c"], ["sc"], {}),
    ],
    [("a", TensorProto.FLOAT), ("b", TensorProto.DOUBLE)],
    [
        ("sa", TensorProto.FLOAT),
        ("ia", TensorProto.BOOL),
        ("ssa", TensorProto.FLOAT),
        ("ib", TensorProto.BOOL),
        ("a", TensorProto.FLOAT),
        ("sc", TensorProto.INT16),
        ("c", TensorProto.INT16),
    ],
    [numpy_helper.from_array(np.arange(-300, 300, 5, dtype=np.int16).reshape(4, -1), "c")],
)


def several_inputs():
    return {
        "a": values("float32", 5 * 629_146).reshape(-1, 5)[::-1],
        "b": values("float64", 700_001, seed=2).astype(">f8"),
    }


@pytest.mark.parametrize(
    "given",
    [
        ["sa", "ia", "ssa", "ib", "a", "sc", "c"],
        ["ssa", "ib"],
        ["a"],
        ["sc"],
        [],
    ],
    ids=["all", "two", "unchanged-input", "initializer", "none"],
)
def test_several_outputs_two_inputs_an_unchanged_input_and_an_initializer(given):
    inputs = several_inputs()
    want = whole(SEVERAL, inputs)
    assert list(want) == ["sa", "ia", "ssa", "ib", "a", "sc", "c"]
    out = {name: np.empty_like(want[name]) for name in given}
    got = ewise.onnx.run(SEVERAL, inputs, out=out)
    assert list(got) == list(want)
    for name in want:
        if name in out:
            assert got[name] is out[name], name
        else:
            assert type(got[name]) is np.ndarray and got[name].flags.c_contiguous, name
        assert_same_bits(got[name], want[name], name)


def test_an_input_default_streams_from_the_model():
    g = helper.make_graph(
        [helper.make_node("Sign", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.INT32, None)],
        [helper.make_tensor_value_info("y", TensorProto.INT32, None)],
        [numpy_helper.from_array(np.array([-5, 0, 9], np.int32), "x")],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
    y = np.zeros(3, np.int32)
    assert ewise.onnx.run(m, {}, out={"y": y})["y"] is y
    assert y.tolist() == [-1, 0, 1]
    x = np.array([[3, -3]], np.int32)
    y = np.zeros((1, 2), np.int32)
    ewise.onnx.run(m, {"x": x}, out={"y": y})
    assert y.tolist() == [[1, -1]]


def test_a_model_file_and_memmaps(tmp_path):
    path = tmp_path / "m.onnx"
    path.write_bytes(model("Sign", TensorProto.FLOAT16, TensorProto.FLOAT16, 13))
    x = np.memmap(tmp_path / "x", np.float16, "w+", shape=(300, 300))
    x[:] = values("float16", 90_000).reshape(300, 300)
    y = np.memmap(tmp_path / "y", np.float16, "w+", shape=(300, 300))
    got = ewise.onnx.run(path, {"x": x}, out={"y": y})
    assert got["y"] is y
    assert_same_bits(y, oracle.sign(x, "propagate"))


# ------------------------------------------------------------------- shared memory


def sign_model():
    return model("Sign", TensorProto.FLOAT, TensorProto.FLOAT, 13)


@pytest.mark.parametrize(
    "kind", ["c", "reversed", "swapped", "strided", "fortran"]
)
def test_in_place_on_the_input_itself(kind):
    x = layout(values("float32", 3 * MIB).reshape(1024, -1), kind)
    want = oracle.sign(x, "propagate")
    got = ewise.onnx.run(sign_model(), {"x": x}, out={"y": x})
    assert got["y"] is x
    assert_same_bits(x, want, kind)


@pytest.mark.parametrize(
    "views",
    [
        (slice(1, None), slice(None, -1)),
        (slice(None, -1), slice(1, None)),
        (slice(None, None, -1), slice(None)),
        (slice(None, None, 2), slice(1, None, 2)),
    ],
    ids=["out-behind", "out-ahead", "reversed", "interleaved"],
)
def test_out_overlapping_its_own_input(views):
    buf = values("float32", 3 * MIB + 2)
    x, y = buf[views[0]], buf[views[1]]
    n = min(len(x), len(y))
    x, y = x[:n], y[:n]
    want = oracle.sign(x.copy(), "propagate")
    ewise.onnx.run(sign_model(), {"x": x}, out={"y": y})
    assert_same_bits(y, want)


def test_bool_out_over_the_float_input():
    x = values("float32", 2 * MIB)
    y = x.view(np.uint8)[1 : 1 + x.size].view(bool)
    want = oracle.is_infinity(x.copy())
    ewise.onnx.run(model("IsInf", TensorProto.FLOAT, TensorProto.BOOL, 10), {"x": x}, out={"y": y})
    assert_same_bits(y, want)


TWO = graph(
    [("Sign", ["x1"], ["y1"], {}), ("Sign", ["x2"], ["y2"], {})],
    [("x1", TensorProto.FLOAT), ("x2", TensorProto.FLOAT)],
    [("y1", TensorProto.FLOAT), ("y2", TensorProto.FLOAT)],
)


@pytest.mark.parametrize("swap", [False, True], ids=["y1-into-x2", "y2-into-x1"])
def test_out_into_another_sources_input(swap):
    """An output written into the input of another source, read before (no copy
    needed) or after it (copied first): the same bits either way."""
    x1, x2 = values("float32", 3 * MIB, 4), values("float32", 3 * MIB, 5)
    want = whole(TWO, {"x1": x1, "x2": x2})
    spare = np.empty_like(x1)
    out = {"y1": spare, "y2": x1} if swap else {"y1": x2, "y2": spare}
    got = ewise.onnx.run(TWO, {"x1": x1, "x2": x2}, out=out)
    assert_same_bits(got["y1"], want["y1"])
    assert_same_bits(got["y2"], want["y2"])


def test_each_output_into_the_other_input():
    x1, x2 = values("float32", 3 * MIB, 6), values("float32", 3 * MIB, 7)
    want = whole(TWO, {"x1": x1, "x2": x2})
    ewise.onnx.run(TWO, {"x1": x1, "x2": x2}, out={"y1": x2, "y2": x1})
    assert_same_bits(x2, want["y1"])
    assert_same_bits(x1, want["y2"])


def test_one_array_as_both_inputs_and_an_output():
    x = values("float32", 3 * MIB, 8)
    want = whole(TWO, {"x1": x, "x2": x})
    spare = np.empty_like(x)
    ewise.onnx.run(TWO, {"x1": x, "x2": x}, out={"y1": x, "y2": spare})
    assert_same_bits(x, want["y1"])
    assert_same_bits(spare, want["y2"])


def test_interleaved_outputs_of_one_buffer_are_accepted():
    buf = np.zeros(2 * 1000, np.float32)
    x1, x2 = values("float32", 1000, 9), values("float32", 1000, 10)
    ewise.onnx.run(TWO, {"x1": x1, "x2": x2}, out={"y1": buf[::2], "y2": buf[1::2]})
    assert_same_bits(buf[::2], oracle.sign(x1, "propagate"))
    assert_same_bits(buf[1::2], oracle.sign(x2, "propagate"))


@pytest.mark.parametrize("how", ["same array", "overlapping views", "same memory, other view"])
def test_outputs_sharing_memory_are_refused_before_anything_is_written(how):
    buf = np.full(2000, 4.0, np.float32)
    y1, y2 = {
        "same array": (buf[:1000], buf[:1000]),
        "overlapping views": (buf[:1000], buf[500:1500]),
        "same memory, other view": (buf[:1000], buf[:1000][::-1]),
    }[how]
    x = np.ones(1000, np.float32)
    with pytest.raises(ValueError, match=re.escape('out["y1"] and out["y2"] share memory')):
        ewise.onnx.run(TWO, {"x1": x, "x2": x}, out={"y1": y1, "y2": y2})
    assert np.all(buf == 4.0)


# ------------------------------------------------------------------------- errors


def test_errors_name_the_output_and_what_is_accepted(ml_dtypes):
    m = graph(
        [("Sign", ["x"], ["y"], {}), ("IsInf", ["x"], ["z"], {})],
        [("x", TensorProto.FLOAT)],
        [("y", TensorProto.FLOAT), ("z", TensorProto.BOOL)],
    )
    x = np.ones((2, 3), np.float32)
    good = np.full((2, 3), 3.0, np.float32)

    def refused(error, message, **out):
        with pytest.raises(error, match=re.escape(message)):
            ewise.onnx.run(m, {"x": x}, out={"y": good, **out})
        assert np.all(good == 3.0), "written before the error"

    refused(ValueError, 'out: "w" is not an output of the model (outputs: y, z)', w=np.empty(6, bool))
    refused(ValueError, 'out["z"] has dtype uint8, expected bool', z=np.empty((2, 3), np.uint8))
    refused(ValueError, 'out["z"] has dtype bfloat16, expected bool', z=np.empty((2, 3), ml_dtypes.bfloat16))
    refused(ValueError, 'out["z"] has shape (3, 2), expected (2, 3)', z=np.empty((3, 2), bool))
    refused(ValueError, 'out["z"] has shape (1, 2, 3), expected (2, 3)', z=np.empty((1, 2, 3), bool))
    refused(ValueError, 'out["z"] has shape (), expected (2, 3)', z=np.empty((), bool))
    readonly = np.empty((2, 3), bool)
    readonly.flags.writeable = False
    refused(ValueError, 'out["z"] is read-only', z=readonly)
    refused(ValueError, 'out["z"] is read-only', z=np.broadcast_to(np.zeros(3, bool), (2, 3)))
    refused(TypeError, 'out["z"] must be a numpy.ndarray (numpy.memmap included), not list', z=[[0] * 3] * 2)
    refused(TypeError, 'out["z"] must be a numpy.ndarray', z=None)
    refused(TypeError, 'out["z"] is a masked array', z=np.ma.masked_array(np.zeros((2, 3), bool)))
    with pytest.warns(PendingDeprecationWarning):
        matrix = np.matrix(np.zeros((2, 3), bool))
    refused(TypeError, 'out["z"] is a numpy.matrix', z=matrix)
    with pytest.raises(TypeError, match=re.escape("out must be a dict of output name -> numpy array, not list")):
        ewise.onnx.run(m, {"x": x}, out=[("y", good)])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=re.escape("out: keys are output names (str), not int")):
        ewise.onnx.run(m, {"x": x}, out={0: good})  # type: ignore[dict-item]


def test_model_and_input_errors_come_first_and_write_nothing():
    m = sign_model()
    y = np.full(3, 3.0, np.float32)
    with pytest.raises(ewise.OnnxError, match=re.escape('input "x" is declared as float, but is double')):
        ewise.onnx.run(m, {"x": np.ones(3)}, out={"y": y})
    with pytest.raises(TypeError, match=re.escape('input "x": dtype complex64 has no ONNX tensor type')):
        ewise.onnx.run(m, {"x": np.ones(3, np.complex64)}, out={"y": y})
    with pytest.raises(ewise.OnnxError, match="not a valid ONNX ModelProto"):
        ewise.onnx.run(b"garbage", {}, out={"y": y})
    with pytest.raises(ValueError, match=re.escape('nan="bogus" is not a NaN policy')):
        ewise.onnx.run(m, {"x": np.ones(3, np.float32)}, nan="bogus", out={"y": y})  # type: ignore[arg-type]
    assert np.all(y == 3.0)


def test_read_only_memmap_is_refused(tmp_path):
    np.zeros(4, np.float32).tofile(tmp_path / "y")
    y = np.memmap(tmp_path / "y", np.float32, "r", shape=(4,))
    with pytest.raises(ValueError, match=re.escape('out["y"] is read-only')):
        ewise.onnx.run(sign_model(), {"x": np.ones(4, np.float32)}, out={"y": y})


# ------------------------------------------------------- memory, size, GIL, Ctrl-C


MEMMAP_PEAK = STATUS + """
import numpy as np, ewise.onnx
m = open({model!r}, "rb").read()
x = np.memmap({source!r}, np.dtype({dtype!r}), "r", shape={shape}, order={order!r})
y = np.memmap({target!r}, np.float32, "w+", shape={shape}, order={order!r})
ewise.onnx.run(m, {{"x": np.ones(4096, np.float32)}}, out={{"y": np.empty(4096, np.float32)}})
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
before = status("VmRSS")
ewise.onnx.run(m, {{"x": x}}, out={{"y": y}})
print(status("VmHWM") - before)
"""


def write_repeated(path, block: bytes, times: int) -> None:
    with open(path, "wb") as f:
        for _ in range(times):
            f.write(block)


@pytest.mark.parametrize(
    ("dtype", "order"), [("<f4", "C"), (">f4", "C"), ("<f4", "F")],
    ids=["contiguous", "byte-swapped", "fortran"],
)
def test_a_1_gib_memmap_runs_in_bounded_resident_memory(tmp_path, dtype, order):
    """1 GiB in and 1 GiB out through np.memmap: the process grows by a few chunks, not
    by the arrays (VmHWM after clear_refs, in a fresh interpreter)."""
    if shutil.disk_usage(tmp_path).free < 3 * GIB:
        pytest.skip("needs 3 GiB of free disk")
    block = values("float32", MIB).astype(np.dtype(dtype))
    times = GIB // block.nbytes
    write_repeated(tmp_path / "x", block.tobytes(), times)
    (tmp_path / "m.onnx").write_bytes(sign_model())
    shape = (times * 1024, 1024)
    child = run_child(
        MEMMAP_PEAK.format(
            model=str(tmp_path / "m.onnx"), source=str(tmp_path / "x"), target=str(tmp_path / "y"),
            dtype=dtype, shape=shape, order=order,
        )
    )
    assert child.returncode == 0, child.stderr
    grown = int(child.stdout.split()[-1])
    assert grown < 48 * MIB, f"resident memory grew by {grown / MIB:.0f} MiB for 1 GiB arrays"
    # Sign is element-wise and both files have one layout: the output file is the
    # block's signs, repeated.
    want = oracle.sign(block, "propagate").astype(np.float32).tobytes()
    got = bytearray(len(want))
    with open(tmp_path / "y", "rb") as f:
        for k in range(times):
            assert f.readinto(got) == len(want)
            assert got == want, f"block {k} differs"


@pytest.mark.skipif(np.intp(0).itemsize < 8, reason="a 64-bit address space is needed")
def test_more_than_2_31_elements_through_sparse_files(tmp_path):
    n = 2**31 + 5
    if shutil.disk_usage(tmp_path).free < n + GIB:
        pytest.skip("needs 3 GiB of free disk")
    x = np.memmap(tmp_path / "x", np.int8, "w+", shape=(n,))
    marks = {0: -5, 2**31 - 2: 7, 2**31 - 1: -128, 2**31: 1, 2**31 + 3: -1, n - 1: 127}
    for i, v in marks.items():
        x[i] = v
    x.flush()
    del x
    x = np.memmap(tmp_path / "x", np.int8, "r", shape=(n,))
    y = np.memmap(tmp_path / "y", np.int8, "w+", shape=(n,))
    y[2**31 + 1] = 99
    got = ewise.onnx.run(model("Sign", TensorProto.INT8, TensorProto.INT8, 13), {"x": x}, out={"y": y})
    assert got["y"] is y
    for i, v in marks.items():
        assert y[i] == np.sign(v), i
    assert y[2**31 + 1] == 0
    assert np.count_nonzero(y[2**31 - 4096 : n - 1]) == 4


def test_the_gil_is_released_while_chunks_run():
    """The calling thread holds the GIL only between groups of chunks: another Python
    thread never waits for a large part of the run."""
    x = np.broadcast_to(np.float32(np.inf), (128 * MIB,))
    y = np.empty(x.shape, bool)
    m = model("IsInf", TensorProto.FLOAT, TensorProto.BOOL, 10)
    worker = threading.Thread(target=ewise.onnx.run, args=(m, {"x": x}), kwargs={"out": {"y": y}})
    longest = 0.0
    started = last = time.perf_counter()
    worker.start()
    while worker.is_alive():
        now = time.perf_counter()
        longest, last = max(longest, now - last), now
    took = time.perf_counter() - started
    worker.join()
    assert y.all()
    assert longest < took / 3, f"this thread waited {longest:.3f} s of a {took:.3f} s run"


INTERRUPTED = """
import os, signal, threading, time, numpy as np, ewise.onnx
# Ctrl-C raises KeyboardInterrupt even where SIGINT came ignored (a background job).
signal.signal(signal.SIGINT, signal.default_int_handler)
m = open({model!r}, "rb").read()
n = {n}
x = np.broadcast_to(np.float32(-3.0), (n,))
out = np.full(n, 5.0, np.float32)
started = time.monotonic()
ewise.onnx.run(m, {{"x": x}}, out={{"y": out}})
whole = time.monotonic() - started
out[:] = 5.0
timer = threading.Timer(whole / 3, os.kill, (os.getpid(), signal.SIGINT))
started = time.monotonic()
timer.start()
try:
    ewise.onnx.run(m, {{"x": x}}, out={{"y": out}})
    print("completed", whole)
except KeyboardInterrupt:
    took = time.monotonic() - started
    done = int(np.count_nonzero(out == -1.0))
    assert np.all(out[:done] == -1.0) and np.all(out[done:] == 5.0), "out is not a done prefix"
    print("interrupted", whole, took, done)
"""


def test_ctrl_c_raises_keyboard_interrupt_between_chunks(tmp_path):
    n = GIB // 4
    needs_memory(2 * GIB)
    (tmp_path / "m.onnx").write_bytes(sign_model())
    child = run_child(INTERRUPTED.format(model=str(tmp_path / "m.onnx"), n=n))
    assert child.returncode == 0, child.stderr
    words = child.stdout.split()
    assert words[0] == "interrupted", child.stdout
    whole_s, took, done = float(words[1]), float(words[2]), int(words[3])
    assert 0 < done < n, child.stdout
    assert took < whole_s, f"KeyboardInterrupt after {took:.2f} s of a {whole_s:.2f} s run"
