"""Calls of ewise's public functions with the types the stubs promise, checked by mypy
(``test_types.py`` runs ``mypy --strict`` on this file; it is never imported)."""

from __future__ import annotations

from typing import Any

import dask.array as da
import numpy as np
from numpy.typing import NDArray
from typing_extensions import assert_type

import ewise
import ewise.onnx

f32: NDArray[np.float32] = np.zeros(3, np.float32)
f64: NDArray[np.float64] = np.zeros(3)
i8: NDArray[np.int8] = np.zeros(3, np.int8)
flags: NDArray[np.bool_] = np.zeros(3, bool)
lazy: da.Array = da.zeros(3, chunks=2)

assert_type(ewise.sign(f32), NDArray[np.float32])
assert_type(ewise.sign(f64, nan="propagate"), NDArray[np.float64])
assert_type(ewise.sign(i8, feature_level="6_4", threads=None), NDArray[np.int8])
assert_type(ewise.sign([1.0, -2.0]), NDArray[Any])
assert_type(ewise.sign(f32, out=f32), NDArray[np.float32])
assert_type(ewise.sign(lazy), da.Array)

assert_type(ewise.is_infinity(f32), NDArray[np.uint8])
assert_type(ewise.is_infinity(f32, mode="neither"), NDArray[np.uint8])
assert_type(ewise.is_infinity(f64, dtype=np.uint8), NDArray[np.uint8])
assert_type(ewise.is_infinity(f64, dtype=bool), NDArray[np.bool_])
assert_type(ewise.is_infinity(f64, dtype=np.bool_), NDArray[np.bool_])
assert_type(ewise.is_infinity(f64, out=flags), NDArray[np.bool_])
assert_type(ewise.is_infinity(lazy), da.Array)

assert_type(ewise.isinf(f32), NDArray[np.bool_])
assert_type(ewise.isinf(f32, detect_negative=False, device="gpu"), NDArray[np.bool_])
assert_type(ewise.isinf(lazy), da.Array)

assert_type(ewise.onnx.run(b"", {"x": f32}), dict[str, NDArray[Any]])
assert_type(ewise.instruction_set(), str)
assert issubclass(ewise.SoftwareRendererWarning, RuntimeWarning)
