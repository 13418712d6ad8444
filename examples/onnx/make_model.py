#!/usr/bin/env python3
"""Writes sign_isinf.onnx beside this file: the model the README's Python and CLI examples
run. One input ``x`` (float32, any length ``n``) and two outputs: ``y = Sign(x)`` and
``inf = IsInf(x)`` (bool). Needs the ``onnx`` package; the committed file is its output.
"""

import pathlib

import onnx
from onnx import TensorProto, helper


def model() -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Sign", ["x"], ["y"]), helper.make_node("IsInf", ["x"], ["inf"])],
        "sign_isinf",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"]),
            helper.make_tensor_value_info("inf", TensorProto.BOOL, ["n"]),
        ],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], producer_name="ewise")
    m.ir_version = 9
    onnx.checker.check_model(m, full_check=True)
    return m


if __name__ == "__main__":
    path = pathlib.Path(__file__).with_name("sign_isinf.onnx")
    path.write_bytes(model().SerializeToString())
    print(path)
