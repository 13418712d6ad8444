"""DirectML's SIGN and IS_INFINITY and ONNX's Sign and IsInf, bit-exact, on numpy arrays.

Every function takes a numpy array of any layout (strided, transposed, reversed,
broadcast, misaligned, read-only) and runs on its memory without copying it; an
array-like (a list, a scalar) goes through ``numpy.asarray`` first, and a Dask array
gives a lazy Dask array computed block by block (on a cluster, if the Dask scheduler
is one). The results are those of ``shared/spec/SEMANTICS.md``, bit for bit:

- ``sign``: -1, +0 or +1 in the input's type; -0 gives +0; NaN gives +0 under
  ``nan="zero"`` (DirectML's formula, the default) or the input NaN, payload and sign
  kept, under ``nan="propagate"`` (numpy's and ONNX's behaviour).
- ``is_infinity`` / ``isinf``: 1 (True) where the element is an infinity of the
  selected sign; NaN and every finite value give 0.

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

from typing import TYPE_CHECKING, Any, Literal, overload

from . import _ewise, onnx
from ._dask import is_dask_array, map_blocks
from ._ewise import OnnxError, ValidationError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike, DTypeLike, NDArray

__all__ = [
    "FEATURE_LEVELS",
    "OnnxError",
    "ValidationError",
    "__version__",
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

NanPolicy = Literal["zero", "propagate"]
InfinityMode = Literal["either", "positive", "negative"]


def sign(
    x: ArrayLike,
    *,
    nan: NanPolicy = "zero",
    out: NDArray[Any] | None = None,
    feature_level: str | None = None,
    threads: int | None = None,
) -> Any:
    """The sign of each element: -1, 0 or +1, in ``x``'s dtype.

    Parameters
    ----------
    x
        A numpy array of any layout, an array-like, or a Dask array.
    nan
        ``"zero"`` (DirectML's formula: NaN gives +0) or ``"propagate"`` (NaN gives
        the input NaN unchanged, bit for bit, as numpy and ONNX do).
    out
        A writable array of ``x``'s dtype and of a shape ``x`` broadcasts to, strided
        or not; ``out=x`` works in place. Only ``out``'s elements are written, and it
        is returned. Input and output may share memory: the result is as if the
        input were read first.
    feature_level
        ``None`` accepts every type and layout the library has (float64, bfloat16,
        0-d, empty, up to 64 dimensions). A DirectML level (``"2_1"``, ``"6_4"``,
        ...) validates exactly as DirectML would, raising ``ValidationError``.
    threads
        Threads for large arrays; ``None`` uses one per core, 1 the calling thread.

    Returns
    -------
    ``out`` when given; else a new array with ``x``'s memory order (and, for axes
    ``x`` walks backwards, the same direction), or a numpy scalar for a 0-d result.

    Raises
    ------
    TypeError
        ``x``'s dtype is not one ``sign`` takes (the message lists them).
    ValueError
        A bad keyword value or ``out=`` (type, dtype, shape, read-only).
    ValidationError
        ``feature_level=`` rejects the tensor.

    Examples
    --------
    >>> import numpy as np, ewise
    >>> x = np.array([-3, 0, 5], dtype=np.int8)
    >>> ewise.sign(x)
    array([-1,  0,  1], dtype=int8)
    >>> ewise.sign(np.array([np.nan, -0.0]), nan="propagate")
    array([nan,  0.])
    >>> ewise.sign(x, out=x)  # in place
    array([-1,  0,  1], dtype=int8)
    >>> ewise.sign(np.ones(3, np.float32), feature_level="2_1")
    Traceback (most recent call last):
    ...
    ewise.ValidationError: ELEMENT_WISE_SIGN: InputTensor DimensionCount 1 is not supported at feature level 2_1 (supported: 4)
    """
    if is_dask_array(x):
        return map_blocks(sign, x, out, nan=nan, feature_level=feature_level, threads=threads)
    return _ewise.sign(x, out, nan, feature_level, threads)


def is_infinity(
    x: ArrayLike,
    *,
    mode: InfinityMode = "either",
    out: NDArray[Any] | None = None,
    dtype: DTypeLike | None = None,
    feature_level: str | None = None,
    threads: int | None = None,
) -> Any:
    """DirectML's IS_INFINITY: 1 where an element is an infinity of the chosen sign.

    Parameters
    ----------
    x
        A floating-point array (float32, float16, float64, bfloat16, or one of the
        four float8 formats) of any layout, an array-like, or a Dask array.
    mode
        ``"either"``, ``"positive"`` or ``"negative"``: which infinities count.
        float8 formats without infinities (all but float8_e5m2) give all zeros.
    out
        A writable uint8 or bool array of a shape ``x`` broadcasts to; returned.
    dtype
        The result's dtype: ``numpy.uint8`` (DirectML's UINT8, the default) or
        ``bool``. Without it, a given ``out``'s dtype is used.
    feature_level, threads
        As for :func:`sign`.

    Raises
    ------
    TypeError
        ``x``'s dtype is not a floating-point type ewise has (integers included).
    ValueError
        A bad keyword value or ``out=``.
    ValidationError
        ``feature_level=`` rejects the tensor.

    Examples
    --------
    >>> import numpy as np, ewise
    >>> x = np.array([np.inf, -np.inf, np.nan, 0.0], dtype=np.float16)
    >>> ewise.is_infinity(x)
    array([1, 1, 0, 0], dtype=uint8)
    >>> ewise.is_infinity(x, mode="negative", dtype=bool)
    array([False,  True, False, False])
    """
    if is_dask_array(x):
        return map_blocks(
            is_infinity,
            x,
            out,
            mode=mode,
            dtype=dtype,
            feature_level=feature_level,
            threads=threads,
        )
    return _ewise.is_infinity(x, out, mode, dtype, feature_level, threads)


def isinf(
    x: ArrayLike,
    *,
    detect_positive: bool = True,
    detect_negative: bool = True,
    out: NDArray[np.bool_] | None = None,
    threads: int | None = None,
) -> Any:
    """ONNX's IsInf: True where an element is an infinity that the flags select.

    Both flags false gives all False. The output is bool; ``out`` must be a writable
    bool array of a shape ``x`` broadcasts to. Types, layouts, errors and ``threads``
    are as for :func:`is_infinity`.

    Examples
    --------
    >>> import numpy as np, ewise
    >>> x = np.array([np.inf, -np.inf, 1.0])
    >>> ewise.isinf(x, detect_negative=False)
    array([ True, False, False])
    >>> ewise.isinf(x, detect_positive=False, detect_negative=False)
    array([False, False, False])
    """
    if is_dask_array(x):
        return map_blocks(
            isinf,
            x,
            out,
            detect_positive=detect_positive,
            detect_negative=detect_negative,
            threads=threads,
        )
    return _ewise.isinf(x, out, detect_positive, detect_negative, threads)


@overload
def support() -> dict[str, Any]: ...
@overload
def support(feature_level: str) -> dict[str, Any]: ...
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
    """The CPU kernels' instruction set in this process: ``"avx2"`` or ``"portable"``."""
    return _ewise.instruction_set()
