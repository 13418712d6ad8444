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
import sys
from typing import TYPE_CHECKING, Any, Iterator, Literal, Mapping, Optional, TypeGuard, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _ewise

if TYPE_CHECKING:
    from onnx import GraphProto, ModelProto, TensorProto

__all__ = ["run"]


def run(
    model: Union[str, os.PathLike[str], bytes, "ModelProto"],
    inputs: Mapping[str, ArrayLike],
    *,
    nan: Literal["zero", "propagate"] = "propagate",
    out: Optional[Mapping[str, NDArray[Any]]] = None,
) -> dict[str, NDArray[Any]]:
    """Runs an ONNX model on numpy inputs; returns its outputs by name, in order.

    Parameters
    ----------
    model
        A path to a ``.onnx`` file (external data is read beside it, never outside
        its folder), the model's bytes, or an ``onnx.ModelProto`` (serialized in
        memory; nothing is written to disk). Bytes and a ``ModelProto`` have no
        folder, so a model whose tensors keep their data in external files is
        refused (``OnnxError``): pass its path, or load it with ``onnx.load(path)``,
        which reads the external data into the ``ModelProto``.
    inputs
        Each graph input without an initializer, by name, as an array-like.
    nan
        Sign's NaN policy: ``"propagate"`` (ONNX's reference behaviour, the front
        end's default) or ``"zero"`` (DirectML's).
    out
        Arrays to write outputs into, by output name: each a writable
        ``numpy.ndarray`` (``numpy.memmap`` included) of exactly the output's shape
        and dtype (the dtype ``run`` returns for it, in either byte order), of any
        layout. Those arrays themselves are returned for their outputs; the other
        outputs get new arrays. With ``out`` (even ``{}``), the model is computed in
        chunks on the CPU, each of about 4 MiB (input, outputs and intermediate
        values together): inputs are read chunk by chunk straight from their arrays
        and each chunk of the outputs is written straight into its array, so memory
        beyond the arrays themselves stays a few MiB whatever their size. Elements
        are visited in the input array's memory order (C or Fortran order,
        reversed axes; in tiles where an output's layout differs); an array packed
        in that order and in the machine's byte order is read or written in place,
        others a chunk at a time through a buffer. Pages of
        ``numpy.memmap`` arrays opened with mode ``"r"``, ``"r+"`` or ``"w+"`` are
        unmapped from the process once a chunk is done with them (they stay in the
        file's page cache), so resident memory stays bounded too, except for an
        array walked across its layout (a Fortran-order output of a C-order input),
        whose pages stay mapped as numpy's own access would leave them. The bits
        are those of the run without ``out``. The GIL is released while chunks
        run.

        Arrays may share memory, with the result of arrays that share none: an
        output array that is its own input's memory, element for element
        (``out={"y": x}`` for ``y = Sign(x)``), is computed in place; an output
        array overlapping an input in any other way makes ewise copy that input
        first (memory of the input's size), unless that input is read completely
        before the output is written. Two output arrays that share memory are
        refused.

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
        An input's dtype has no ONNX tensor type in ewise; ``out`` is not a mapping
        of names to numpy arrays, or holds a masked array or a ``numpy.matrix``.
    ValueError
        An ``out`` name that is not an output of the model, or an ``out`` array that
        is read-only, of another dtype or shape than its output, or sharing memory
        with another ``out`` array. Every check is made before anything is written.
    KeyboardInterrupt
        Ctrl-C while a run with ``out`` computes: signals are checked between
        chunks (every 64 MiB or so); the ``out`` arrays then hold the results of the
        chunks done and their old values elsewhere.

    Examples
    --------
    >>> import numpy as np, ewise.onnx
    >>> from onnx import helper, TensorProto
    >>> graph = helper.make_graph(
    ...     [helper.make_node("IsInf", ["x"], ["y"])], "g",
    ...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
    ...     [helper.make_tensor_value_info("y", TensorProto.BOOL, [4])])
    >>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    >>> y = np.zeros(4, bool)
    >>> result = ewise.onnx.run(model.SerializeToString(),
    ...                         {"x": np.array([1, np.inf, -np.inf, np.nan], np.float32)},
    ...                         out={"y": y})
    >>> result["y"] is y, y
    (True, array([False,  True,  True, False]))
    """
    model_arg: Union[str, bytes]
    if isinstance(model, (bytes, bytearray, memoryview)):
        model_arg = bytes(model)
    elif _is_model_proto(model):
        model_arg = _serialized(model)
    else:
        model_arg = os.fspath(model)
    if out is not None:
        targets = _targets(out)
        arrays = [(name, np.asarray(value)) for name, value in inputs.items()]
        return dict(_ewise.onnx_run_into(model_arg, arrays, nan, targets))
    arrays = []
    for name, value in inputs.items():
        array = np.asarray(value)
        if not array.dtype.isnative:
            array = array.astype(array.dtype.newbyteorder("="))
        if not array.flags.c_contiguous:  # ascontiguousarray would make 0-d arrays 1-d
            array = np.ascontiguousarray(array)
        arrays.append((name, array))
    return dict(_ewise.onnx_run(model_arg, arrays, nan))


def _targets(out: object) -> list[tuple[str, NDArray[Any]]]:
    """``out=`` as (name, array) pairs; ``TypeError`` for anything but a mapping of
    names to numpy arrays (subclasses such as ``numpy.memmap`` included, masked arrays
    and matrices refused as ewise's other functions refuse them)."""
    if not isinstance(out, Mapping):
        raise TypeError(
            f"out must be a dict of output name -> numpy array, not {type(out).__name__}"
        )
    targets = []
    for name, array in out.items():
        if not isinstance(name, str):
            raise TypeError(f"out: keys are output names (str), not {type(name).__name__}")
        if isinstance(array, np.ma.MaskedArray):
            raise TypeError(
                f'out["{name}"] is a masked array: ewise has no masks; pass '
                "numpy.ma.getdata(a) and apply the mask afterwards"
            )
        if isinstance(array, np.matrix):
            raise TypeError(f'out["{name}"] is a numpy.matrix: pass numpy.asarray(a)')
        if not isinstance(array, np.ndarray):
            raise TypeError(
                f'out["{name}"] must be a numpy.ndarray (numpy.memmap included), '
                f"not {type(array).__name__}"
            )
        targets.append((name, array))
    return targets


def _is_model_proto(model: object) -> TypeGuard["ModelProto"]:
    """Whether ``model`` is an ``onnx.ModelProto`` (onnx is loaded if one exists)."""
    onnx = sys.modules.get("onnx")
    return onnx is not None and isinstance(model, onnx.ModelProto)


def _serialized(model: "ModelProto") -> bytes:
    """The model's bytes; ``OnnxError`` naming the first tensor whose data is in an
    external file, which a model without a folder cannot be confined to."""
    for tensor in _tensors(model.graph):
        if tensor.data_location == 1:  # onnx.TensorProto.EXTERNAL
            where = {entry.key: entry.value for entry in tensor.external_data}
            raise _ewise.OnnxError(
                f"tensor {tensor.name!r} keeps its data in the external file "
                f"{where.get('location', '?')!r}, which a ModelProto has no folder to "
                "read from: pass the model's path to ewise.onnx.run, or load it with "
                "onnx.load(path) (load_external_data=True, the default)"
            )
    return bytes(model.SerializeToString())


def _tensors(graph: "GraphProto") -> Iterator["TensorProto"]:
    """Every tensor of ``graph``: initializers, sparse ones' values and indices, and
    those in node attributes, subgraphs included."""
    yield from graph.initializer
    for sparse in graph.sparse_initializer:
        yield sparse.values
        yield sparse.indices
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.HasField("t"):
                yield attribute.t
            yield from attribute.tensors
            if attribute.HasField("g"):
                yield from _tensors(attribute.g)
            for subgraph in attribute.graphs:
                yield from _tensors(subgraph)
