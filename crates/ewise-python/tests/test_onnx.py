"""ewise.onnx.run: ONNX's own conformance cases for Sign and IsInf, bit for bit, plus the
cases they lack (NaN, -0, integers, bfloat16, float8, (0,0) flags) and the errors.

The conformance cases come from the onnx wheel: as files under
``onnx/backend/test/data`` (onnx 1.15-1.22), or built in memory by
``onnx.backend.test.loader.load_model_tests`` (onnx >= 1.23). Where neither has a case,
the same model is built with ``onnx.helper`` (never skipped).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import numpy as np
import pytest

import ewise
import ewise.onnx
import oracle
from oracle import all_patterns, assert_same_bits

onnx = pytest.importorskip("onnx", reason="the onnx package is a test dependency")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

CONFORMANCE = [
    ("node", "test_sign"),
    ("node", "test_isinf"),
    ("node", "test_isinf_positive"),
    ("node", "test_isinf_negative"),
    ("node", "test_isinf_float16"),
    ("simple", "test_sign_model"),
]


def model(op, elem_type, out_type, opset, shape=None, **attributes) -> bytes:
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"], **attributes)],
        "g",
        [helper.make_tensor_value_info("x", elem_type, shape)],
        [helper.make_tensor_value_info("y", out_type, shape)],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return m.SerializeToString()


def helper_case(name):
    """ONNX's case rebuilt with onnx.helper: (model bytes, [(inputs, outputs)])."""
    f32, f16 = np.float32, np.float16
    if name in ("test_sign", "test_sign_model"):
        x = np.array(range(-5, 6)).astype(f32)
        return model("Sign", TensorProto.FLOAT, TensorProto.FLOAT, 13, [11]), [([x], [np.sign(x)])]
    special = [-1.2, np.nan, np.inf, 2.8, -np.inf, np.inf]
    kinds = {
        "test_isinf": (f32, TensorProto.FLOAT, 10, {}, "either"),
        "test_isinf_float16": (f16, TensorProto.FLOAT16, 20, {}, "either"),
        "test_isinf_positive": (f32, TensorProto.FLOAT, 10, {"detect_negative": 0}, "positive"),
        "test_isinf_negative": (f32, TensorProto.FLOAT, 10, {"detect_positive": 0}, "negative"),
    }
    dt, elem, opset, attrs, mode = kinds[name]
    x = np.array(special, dt)
    want = {"either": np.isinf, "positive": np.isposinf, "negative": np.isneginf}[mode](x)
    return model("IsInf", elem, TensorProto.BOOL, opset, [6], **attrs), [([x], [want])]


@functools.lru_cache(maxsize=None)
def loader_cases(kind):
    try:
        from onnx.backend.test.loader import load_model_tests
    except ImportError:
        return {}
    return {case.name: case for case in load_model_tests(kind=kind)}


def read_pb(path):
    return numpy_helper.to_array(onnx.load_tensor(str(path)))


def conformance_case(kind, name):
    """(source, model bytes or path, data sets): the wheel's files, the loader's
    in-memory case, or the helper-built one."""
    case = loader_cases(kind).get(name)
    if case is not None and case.model_dir and (Path(case.model_dir) / "model.onnx").is_file():
        directory = Path(case.model_dir)
        sets = []
        for data in sorted(directory.glob("test_data_set_*")):
            inputs = [read_pb(p) for p in sorted(data.glob("input_*.pb"))]
            outputs = [read_pb(p) for p in sorted(data.glob("output_*.pb"))]
            sets.append((inputs, outputs))
        assert sets, f"{directory} has no data sets"
        return "files", directory / "model.onnx", sets
    if case is not None and case.model is not None and case.data_sets:
        return "memory", case.model.SerializeToString(), [
            (list(i), list(o)) for i, o in case.data_sets
        ]
    model_bytes, sets = helper_case(name)
    return "helper", model_bytes, sets


def names(model_bytes_or_path):
    if isinstance(model_bytes_or_path, (bytes, bytearray)):
        m = onnx.load_model_from_string(bytes(model_bytes_or_path))
    else:
        m = onnx.load(str(model_bytes_or_path))
    initialized = {i.name for i in m.graph.initializer}
    inputs = [i.name for i in m.graph.input if i.name not in initialized]
    return inputs, [o.name for o in m.graph.output]


@pytest.mark.parametrize(("kind", "name"), CONFORMANCE, ids=[c[1] for c in CONFORMANCE])
def test_onnx_conformance_case(kind, name, tmp_path):
    source, m, sets = conformance_case(kind, name)
    in_names, out_names = names(m)
    as_bytes = Path(m).read_bytes() if source == "files" else m
    path = m if source == "files" else tmp_path / "model.onnx"
    if source != "files":
        path.write_bytes(m)
    for inputs, outputs in sets:
        feeds = dict(zip(in_names, inputs))
        for given in (as_bytes, str(path), Path(path)):
            got = ewise.onnx.run(given, feeds)
            assert list(got) == out_names
            for out_name, want in zip(out_names, outputs):
                assert_same_bits(got[out_name], want, f"{name} ({source}) {out_name}")


def test_conformance_cases_come_from_the_onnx_wheel_when_it_has_them():
    """Report where the cases came from; the wheel's own data must be used when the
    loader knows the case (files or in memory), never silently replaced."""
    sources = {name: conformance_case(kind, name)[0] for kind, name in CONFORMANCE}
    for kind, name in CONFORMANCE:
        if name in loader_cases(kind):
            assert sources[name] in ("files", "memory"), (name, sources[name])


@pytest.mark.parametrize("name", [c[1] for c in CONFORMANCE])
def test_helper_built_cases(name):
    """The onnx.helper fallback itself runs (so that it is known to work)."""
    m, sets = helper_case(name)
    for inputs, outputs in sets:
        got = ewise.onnx.run(m, {"x": inputs[0]})
        assert_same_bits(got["y"], outputs[0], name)


# ------------------------------------------------------------ beyond the ONNX cases


@pytest.mark.parametrize("nan", ["propagate", "zero"])
@pytest.mark.parametrize(
    ("name", "elem"), [("float16", TensorProto.FLOAT16), ("bfloat16", TensorProto.BFLOAT16)]
)
def test_onnx_sign_every_16_bit_pattern(name, elem, nan, ml_dtypes):
    x = all_patterns(name)
    got = ewise.onnx.run(model("Sign", elem, elem, 13), {"x": x}, nan=nan)["y"]
    assert_same_bits(got, oracle.sign(x, nan), f"onnx Sign {name} nan={nan}")


def test_onnx_default_nan_policy_is_propagate():
    x = np.array([np.nan, -0.0, -np.nan], np.float32)
    got = ewise.onnx.run(model("Sign", TensorProto.FLOAT, TensorProto.FLOAT, 13), {"x": x})["y"]
    assert_same_bits(got, oracle.sign(x, "propagate"))


@pytest.mark.parametrize(
    ("name", "elem"),
    [
        ("int8", TensorProto.INT8),
        ("uint8", TensorProto.UINT8),
        ("int16", TensorProto.INT16),
        ("uint16", TensorProto.UINT16),
    ],
)
def test_onnx_sign_integers(name, elem):
    x = all_patterns(name)
    got = ewise.onnx.run(model("Sign", elem, elem, 9), {"x": x})["y"]
    assert_same_bits(got, oracle.sign(x))


@pytest.mark.parametrize(
    ("detect_positive", "detect_negative"), [(1, 1), (1, 0), (0, 1), (0, 0)]
)
@pytest.mark.parametrize(
    ("name", "elem"),
    [
        ("float16", TensorProto.FLOAT16),
        ("bfloat16", TensorProto.BFLOAT16),
        ("float8_e4m3fn", TensorProto.FLOAT8E4M3FN),
        ("float8_e4m3fnuz", TensorProto.FLOAT8E4M3FNUZ),
        ("float8_e5m2", TensorProto.FLOAT8E5M2),
        ("float8_e5m2fnuz", TensorProto.FLOAT8E5M2FNUZ),
    ],
)
def test_onnx_isinf_20_every_pattern(name, elem, detect_positive, detect_negative, ml_dtypes):
    x = all_patterns(name)
    m = model(
        "IsInf", elem, TensorProto.BOOL, 20,
        detect_positive=detect_positive, detect_negative=detect_negative,
    )
    got = ewise.onnx.run(m, {"x": x})["y"]
    want = oracle.is_infinity(x, oracle.onnx_mode(detect_positive, detect_negative))
    assert_same_bits(got, want, f"IsInf {name} ({detect_positive},{detect_negative})")


def test_onnx_layouts_of_inputs():
    """Inputs of any layout and byte order, empty, and with more than 8 dimensions."""
    m = model("Sign", TensorProto.FLOAT, TensorProto.FLOAT, 13)
    x = np.linspace(-3, 3, 2**10, dtype=np.float32).reshape((2,) * 10)
    for feed in (x, x[..., ::-1].T, x.astype(">f4"), np.ones((0, 3), np.float32)):
        got = ewise.onnx.run(m, {"x": feed})["y"]
        assert_same_bits(got, oracle.sign(feed, "propagate"))
    # an array-like input goes through numpy.asarray
    got = ewise.onnx.run(m, {"x": [np.float32(-2.0), np.float32(3.0)]})["y"]
    assert_same_bits(got, np.array([-1.0, 1.0], np.float32))


@pytest.mark.parametrize("declared", [None, []], ids=["undeclared", "declared-scalar"])
def test_onnx_zero_dimensional_input(declared):
    m = model("Sign", TensorProto.FLOAT, TensorProto.FLOAT, 13, declared)
    got = ewise.onnx.run(m, {"x": np.array(-2.0, np.float32)})["y"]
    assert got.shape == ()
    assert int(oracle.bits(got)) == 0xBF800000


# ------------------------------------------------------------------------- errors


def test_onnx_unknown_input_name():
    m = model("Sign", TensorProto.FLOAT, TensorProto.FLOAT, 13)
    with pytest.raises(ewise.OnnxError, match=re.escape('input "nope" is not an input of the model (accepted: x)')):
        ewise.onnx.run(m, {"nope": np.ones(3, np.float32)})


def test_onnx_missing_input():
    m = model("Sign", TensorProto.FLOAT, TensorProto.FLOAT, 13)
    with pytest.raises(ewise.OnnxError, match=re.escape('input "x" is required but was not given (required: x)')):
        ewise.onnx.run(m, {})


def test_onnx_wrong_input_type():
    m = model("Sign", TensorProto.FLOAT, TensorProto.FLOAT, 13)
    with pytest.raises(ewise.OnnxError, match=re.escape('input "x" is declared as float, but is double')):
        ewise.onnx.run(m, {"x": np.ones(3)})
    with pytest.raises(TypeError, match=re.escape('input "x": dtype complex64 has no ONNX tensor type in ewise')):
        ewise.onnx.run(m, {"x": np.ones(3, np.complex64)})


def test_onnx_type_not_in_the_operator_version(ml_dtypes):
    m = model("Sign", TensorProto.BFLOAT16, TensorProto.BFLOAT16, 9)
    with pytest.raises(
        ewise.OnnxError,
        match=re.escape(
            "node #0 (Sign): Sign-9 does not accept input type bfloat16 (accepted: float16, "
            "float, double, int8, int16, int32, int64, uint8, uint16, uint32, uint64)"
        ),
    ):
        ewise.onnx.run(m, {"x": np.ones(3, ml_dtypes.bfloat16)})
    m = model("IsInf", TensorProto.FLOAT8E5M2, TensorProto.BOOL, 10)
    with pytest.raises(
        ewise.OnnxError,
        match=re.escape("node #0 (IsInf): IsInf-10 does not accept input type float8e5m2 (accepted: float, double)"),
    ):
        ewise.onnx.run(m, {"x": np.ones(3, ml_dtypes.float8_e5m2)})


def test_onnx_invalid_model_bytes():
    with pytest.raises(ewise.OnnxError, match="model bytes is not a valid ONNX ModelProto"):
        ewise.onnx.run(b"garbage", {})


def test_onnx_missing_file(tmp_path):
    missing = tmp_path / "missing.onnx"
    with pytest.raises(OSError, match=re.escape(f"cannot read {missing}: No such file or directory")):
        ewise.onnx.run(missing, {"x": np.ones(2, np.float32)})
    with pytest.raises(OSError, match="cannot read"):
        ewise.onnx.run(str(tmp_path), {"x": np.ones(2, np.float32)})  # a directory


def test_onnx_bad_nan_policy():
    m = model("Sign", TensorProto.FLOAT, TensorProto.FLOAT, 13)
    with pytest.raises(ValueError, match=re.escape('nan="bogus" is not a NaN policy')):
        ewise.onnx.run(m, {"x": np.ones(1, np.float32)}, nan="bogus")


def test_onnx_model_as_bytearray_and_memoryview():
    m = model("Sign", TensorProto.FLOAT, TensorProto.FLOAT, 13)
    x = np.array([-4.0, 0.0, 9.0], np.float32)
    for given in (bytearray(m), memoryview(m)):
        assert_same_bits(ewise.onnx.run(given, {"x": x})["y"], oracle.sign(x))
