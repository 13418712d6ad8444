"""Dask arrays: the functions applied block by block, lazily.

The native functions call ``map_blocks`` when given a Dask array. Nothing here imports
dask: a Dask array reaching these functions means dask is loaded.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np


def map_blocks(function: Callable[..., Any], x: Any, out: object, **keywords: Any) -> Any:
    """``function(block, **keywords)`` over every block of ``x``, as a lazy Dask array.

    The keywords and ``x``'s dtype are checked now, on an empty array of that dtype,
    which also gives the result's dtype (``meta``): a bad call fails here, not inside
    a worker.
    """
    if out is not None:
        raise ValueError(
            "out= is not supported with a Dask array: the result is a new lazy Dask array"
        )
    probe = {k: v for k, v in keywords.items() if k != "feature_level"}
    meta = np.asarray(function(np.empty((0,) * x.ndim, dtype=x.dtype), **probe))
    return x.map_blocks(
        functools.partial(function, **keywords), dtype=meta.dtype, meta=meta
    )
