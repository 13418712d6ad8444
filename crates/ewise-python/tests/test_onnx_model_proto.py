"""``ewise.onnx.run`` given an ``onnx.ModelProto``: serialized in memory, nothing written
to disk, the same results as its bytes and its path; a ModelProto whose tensors keep
their data in external files has no folder to confine them to, so it is refused with a
message that says what to pass instead."""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ewise
import ewise.onnx
from oracle import assert_same_bits


def sign_of_weights_plus_input() -> onnx.ModelProto:
    """``y = Sign(x)``, ``z = IsInf(w)`` with ``w`` an initializer of 64 floats."""
    w = np.array([np.inf, -np.inf, 1.0, np.nan] * 16, np.float32)
    graph = helper.make_graph(
        [helper.make_node("Sign", ["x"], ["y"]), helper.make_node("IsInf", ["w"], ["z"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [3]),
            helper.make_tensor_value_info("z", TensorProto.BOOL, [64]),
        ],
        initializer=[numpy_helper.from_array(w, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


X = {"x": np.array([-2.0, np.nan, 3.0], np.float32)}
Z = np.array([True, True, False, False] * 16)


def test_a_model_proto_runs_as_its_bytes_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    model = sign_of_weights_plus_input()
    from_proto = ewise.onnx.run(model, X)
    from_bytes = ewise.onnx.run(model.SerializeToString(), X)
    assert list(from_proto) == ["y", "z"]
    for name in from_proto:
        assert_same_bits(from_proto[name], from_bytes[name])
    assert_same_bits(from_proto["y"], np.array([-1.0, np.nan, 1.0], np.float32))
    assert_same_bits(from_proto["z"], Z)
    z = np.zeros(64, bool)
    assert ewise.onnx.run(model, X, out={"z": z})["z"] is z
    assert_same_bits(z, Z)
    assert os.listdir(tmp_path) == []


def test_external_data_needs_the_path_or_a_loaded_proto(tmp_path):
    path = tmp_path / "model.onnx"
    onnx.save_model(
        sign_of_weights_plus_input(),
        path,
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="w.bin",
        size_threshold=0,
    )
    assert (tmp_path / "w.bin").exists()
    unloaded = onnx.load(path, load_external_data=False)
    message = "tensor 'w' keeps its data in the external file 'w.bin'.*pass the model's path"
    with pytest.raises(ewise.OnnxError, match=message):
        ewise.onnx.run(unloaded, X)
    with pytest.raises(ewise.OnnxError, match=message):
        ewise.onnx.run(unloaded, X, out={})
    # Its bytes are refused by the front end itself (no folder was given).
    with pytest.raises(ewise.OnnxError, match="needs the model's directory"):
        ewise.onnx.run(unloaded.SerializeToString(), X)
    # The path, and the proto with its data loaded, run.
    assert_same_bits(ewise.onnx.run(path, X)["z"], Z)
    assert_same_bits(ewise.onnx.run(onnx.load(path), X)["z"], Z)


def test_other_objects_are_still_refused_as_paths():
    with pytest.raises(TypeError):
        ewise.onnx.run(12, X)  # type: ignore[arg-type]
