from typing import Any, Literal, Protocol, TypeVar, overload

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

_A = TypeVar("_A", bound=NDArray[Any])
_B = TypeVar("_B", bound=NDArray[np.bool_])
_S = TypeVar("_S", bound=np.generic)

class _DaskArray(Protocol):
    """What a ``dask.array.Array`` has and a numpy array has not: the functions give a
    lazy array of the same class back."""

    def __dask_graph__(self) -> Any: ...
    @property
    def chunks(self) -> Any: ...

_D = TypeVar("_D", bound=_DaskArray)
_Bool = type[bool] | type[np.bool_] | np.dtype[np.bool_] | Literal["bool", "?", "b1"]
_Uint8 = type[np.uint8] | np.dtype[np.uint8] | Literal["uint8", "u1", "B"]
_Nan = Literal["zero", "propagate"]
_Mode = Literal["either", "positive", "negative", "neither"]
_Device = Literal["cpu", "gpu"]

__version__: str
DEFAULT_NAN_POLICY: str

class ValidationError(ValueError): ...
class OnnxError(ValueError): ...
class GpuError(RuntimeError): ...
class SoftwareRendererWarning(RuntimeWarning): ...
class AdapterFallbackWarning(RuntimeWarning): ...

@overload
def sign(
    x: ArrayLike | _DaskArray,
    *,
    nan: _Nan = "zero",
    out: _A,
    feature_level: str | None = None,
    threads: int | None = None,
    device: _Device = "cpu",
) -> _A: ...
@overload
def sign(
    x: _D,
    *,
    nan: _Nan = "zero",
    out: None = None,
    feature_level: str | None = None,
    threads: int | None = None,
    device: _Device = "cpu",
) -> _D: ...
@overload
def sign(
    x: NDArray[_S],
    *,
    nan: _Nan = "zero",
    out: None = None,
    feature_level: str | None = None,
    threads: int | None = None,
    device: _Device = "cpu",
) -> NDArray[_S]: ...
@overload
def sign(
    x: ArrayLike,
    *,
    nan: _Nan = "zero",
    out: None = None,
    feature_level: str | None = None,
    threads: int | None = None,
    device: _Device = "cpu",
) -> NDArray[Any]: ...
@overload
def is_infinity(
    x: ArrayLike | _DaskArray,
    *,
    mode: _Mode = "either",
    out: _A,
    dtype: _Bool | _Uint8 | None = None,
    feature_level: str | None = None,
    threads: int | None = None,
    device: _Device = "cpu",
) -> _A: ...
@overload
def is_infinity(
    x: _D,
    *,
    mode: _Mode = "either",
    out: None = None,
    dtype: _Bool | _Uint8 | None = None,
    feature_level: str | None = None,
    threads: int | None = None,
    device: _Device = "cpu",
) -> _D: ...
@overload
def is_infinity(
    x: ArrayLike,
    *,
    mode: _Mode = "either",
    out: None = None,
    dtype: _Bool,
    feature_level: str | None = None,
    threads: int | None = None,
    device: _Device = "cpu",
) -> NDArray[np.bool_]: ...
@overload
def is_infinity(
    x: ArrayLike,
    *,
    mode: _Mode = "either",
    out: None = None,
    dtype: _Uint8 | None = None,
    feature_level: str | None = None,
    threads: int | None = None,
    device: _Device = "cpu",
) -> NDArray[np.uint8]: ...
@overload
def is_infinity(
    x: ArrayLike,
    *,
    mode: _Mode = "either",
    out: None = None,
    dtype: DTypeLike,
    feature_level: str | None = None,
    threads: int | None = None,
    device: _Device = "cpu",
) -> NDArray[np.uint8] | NDArray[np.bool_]: ...
@overload
def isinf(
    x: ArrayLike | _DaskArray,
    *,
    detect_positive: bool = True,
    detect_negative: bool = True,
    out: _B,
    threads: int | None = None,
    device: _Device = "cpu",
) -> _B: ...
@overload
def isinf(
    x: _D,
    *,
    detect_positive: bool = True,
    detect_negative: bool = True,
    out: None = None,
    threads: int | None = None,
    device: _Device = "cpu",
) -> _D: ...
@overload
def isinf(
    x: ArrayLike,
    *,
    detect_positive: bool = True,
    detect_negative: bool = True,
    out: None = None,
    threads: int | None = None,
    device: _Device = "cpu",
) -> NDArray[np.bool_]: ...
def onnx_run(
    model: str | bytes, inputs: list[tuple[str, NDArray[Any]]], nan: _Nan
) -> list[tuple[str, NDArray[Any]]]: ...
def onnx_run_into(
    model: str | bytes,
    inputs: list[tuple[str, NDArray[Any]]],
    nan: _Nan,
    out: list[tuple[str, NDArray[Any]]],
) -> list[tuple[str, NDArray[Any]]]: ...
def support(feature_level: str | None = None) -> dict[str, Any]: ...
def feature_levels() -> list[str]: ...
def instruction_set() -> str: ...
def gpu_adapter() -> str: ...
