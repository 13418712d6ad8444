"""DirectML's SIGN and IS_INFINITY and ONNX's Sign and IsInf, bit-exact, on numpy arrays.

Every function takes a numpy array of any layout (strided, transposed, reversed,
broadcast, misaligned, read-only) and runs on its memory without copying it; an
array-like (a list, a scalar) goes through ``numpy.asarray`` first, and a Dask array
gives a lazy Dask array computed block by block (on a cluster, if the Dask scheduler
is one). The results are those of the repository's ``docs/SEMANTICS.md``, bit for bit:

- ``sign``: -1, +0 or +1 in the input's type; -0 gives +0; NaN gives +0 under
  ``nan="zero"`` (DirectML's formula, the default) or the input NaN, payload and sign
  kept, under ``nan="propagate"`` (numpy's and ONNX's behaviour).
- ``is_infinity`` / ``isinf``: 1 (True) where the element is an infinity of the
  selected sign; NaN and every finite value give 0.

Without options the functions accept everything the extended rules accept (float64,
int64, bfloat16, 0-d and empty arrays, ``mode="neither"``) with DirectML's results
(``nan="zero"``, ``mode="either"``, uint8 output) on the CPU; ``feature_level=`` asks
for DirectML's strict rules at that level instead (``docs/SEMANTICS.md`` section 8).
``device="gpu"`` on a machine without a GPU runs on a software renderer and says so with
an ``ewise.SoftwareRendererWarning``, unless ``EWISE_GPU_ADAPTER`` names it; adapters
that cannot be used (a broken driver or shader compiler) are passed over for the next
one, with an ``ewise.AdapterFallbackWarning`` that names each and why.

Types: float32, float16, float64, int8-int64, uint8-uint64, and ml_dtypes' bfloat16
for ``sign``; the float types plus ml_dtypes' float8_e4m3fn, float8_e4m3fnuz,
float8_e5m2 and float8_e5m2fnuz for the infinity tests. ml_dtypes is only needed to
make such arrays; ewise never imports it unless a result has one of its types.

>>> import numpy as np, ewise
>>> ewise.sign(np.array([-2.5, -0.0, 0.0, 7.0, np.nan], dtype=np.float32))
array([-1.,  0.,  0.,  1.,  0.], dtype=float32)
>>> ewise.isinf(np.array([np.inf, -np.inf, np.nan, 1e308]))
array([ True,  True, False, False])
"""

from __future__ import annotations

from typing import Any

from . import _ewise, onnx
from ._ewise import (
    AdapterFallbackWarning,
    GpuError,
    OnnxError,
    SoftwareRendererWarning,
    ValidationError,
    gpu_adapter,
    is_infinity,
    isinf,
    sign,
)

__all__ = [
    "FEATURE_LEVELS",
    "AdapterFallbackWarning",
    "GpuError",
    "OnnxError",
    "SoftwareRendererWarning",
    "ValidationError",
    "__version__",
    "gpu_adapter",
    "instruction_set",
    "is_infinity",
    "isinf",
    "onnx",
    "sign",
    "support",
]

__version__: str = _ewise.__version__

FEATURE_LEVELS: tuple[str, ...] = tuple(_ewise.feature_levels())
"""DirectML's feature levels, lowest first: ``"1_0"`` ... ``"6_4"``."""


def support(feature_level: str | None = None) -> dict[str, Any]:
    """The operators' support tables, as ``ewise support --json`` prints them.

    Without a level: every DirectML row of each operator and its ``extended`` row
    (what ewise accepts without ``feature_level=``). With one: the row in force at
    that level and whether the operator exists there.

    >>> import ewise
    >>> t = ewise.support("2_1")
    >>> [(op["name"], op["available"]) for op in t["operators"]]
    [('ELEMENT_WISE_SIGN', True), ('ELEMENT_WISE_IS_INFINITY', True)]
    >>> t["operators"][0]["rows"][0]["input_types"][:3]
    ['FLOAT32', 'FLOAT16', 'INT32']
    """
    return _ewise.support(feature_level)


def instruction_set() -> str:
    """The CPU kernels' instruction set in this process, one of:

    - ``"avx512"``: x86-64 with AVX-512 F, BW, DQ and VL;
    - ``"avx2"``: x86-64 with AVX2 (and not all four AVX-512 subsets);
    - ``"neon"``: aarch64;
    - ``"portable"``: any other CPU, or where the environment asks for it
      (``EWISE_FORCE_PORTABLE=1``, or ``EWISE_ISA`` naming a narrower set, read once
      per process).

    >>> import ewise
    >>> ewise.instruction_set() in ("avx512", "avx2", "neon", "portable")
    True
    """
    return _ewise.instruction_set()
