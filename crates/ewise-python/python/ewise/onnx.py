"""ONNX models using Sign and IsInf, run by ewise's ONNX front end.

>>> import numpy as np, onnx, ewise.onnx
>>> from onnx import helper, TensorProto
>>> graph = helper.make_graph(
...     [helper.make_node("Sign", ["x"], ["y"])], "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
>>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
>>> ewise.onnx.run(model.SerializeToString(), {"x": np.array([-2.0, np.nan, 3.0], np.float32)})
{'y': array([-1., nan,  1.], dtype=float32)}
"""

from __future__ import annotations

import os
from typing import Any, Literal, Mapping, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _ewise

__all__ = ["run"]


def run(
    model: Union[str, os.PathLike[str], bytes],
    inputs: Mapping[str, ArrayLike],
    *,
    nan: Literal["zero", "propagate"] = "propagate",
) -> dict[str, NDArray[Any]]:
    """Runs an ONNX model on numpy inputs; returns its outputs by name, in order.

    Parameters
    ----------
    model
        A path to a ``.onnx`` file (external data is read beside it) or the model's
        bytes.
    inputs
        Each graph input without an initializer, by name, as an array-like.
    nan
        Sign's NaN policy: ``"propagate"`` (ONNX's reference behaviour, the front
        end's default) or ``"zero"`` (DirectML's).

    Raises
    ------
    ewise.OnnxError
        The model or the inputs are rejected (the message says what and why).
    OSError
        The file cannot be read.
    MemoryError
        The model's data or the inputs' copies cannot be allocated (a claim larger
        than memory allows raises this, never aborts the interpreter).
    TypeError
        An input's dtype has no ONNX tensor type in ewise.
    """
    model_arg: Union[str, bytes]
    if isinstance(model, (bytes, bytearray, memoryview)):
        model_arg = bytes(model)
    else:
        model_arg = os.fspath(model)
    arrays = []
    for name, value in inputs.items():
        array = np.asarray(value)
        if not array.dtype.isnative:
            array = array.astype(array.dtype.newbyteorder("="))
        if not array.flags.c_contiguous:  # ascontiguousarray would make 0-d arrays 1-d
            array = np.ascontiguousarray(array)
        arrays.append((name, array))
    return dict(_ewise.onnx_run(model_arg, arrays, nan))
