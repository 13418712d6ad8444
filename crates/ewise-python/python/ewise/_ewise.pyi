from typing import Any, Literal, TypeVar, overload

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

_A = TypeVar("_A", bound=NDArray[Any])

__version__: str
DEFAULT_NAN_POLICY: str

class ValidationError(ValueError): ...
class OnnxError(ValueError): ...
class GpuError(RuntimeError): ...

@overload
def sign(
    x: ArrayLike,
    *,
    nan: Literal["zero", "propagate"] = "zero",
    out: None = None,
    feature_level: str | None = None,
    threads: int | None = None,
    device: Literal["cpu", "gpu"] = "cpu",
) -> Any: ...
@overload
def sign(
    x: ArrayLike,
    *,
    nan: Literal["zero", "propagate"] = "zero",
    out: _A,
    feature_level: str | None = None,
    threads: int | None = None,
    device: Literal["cpu", "gpu"] = "cpu",
) -> _A: ...
@overload
def is_infinity(
    x: ArrayLike,
    *,
    mode: Literal["either", "positive", "negative"] = "either",
    out: None = None,
    dtype: DTypeLike | None = None,
    feature_level: str | None = None,
    threads: int | None = None,
    device: Literal["cpu", "gpu"] = "cpu",
) -> Any: ...
@overload
def is_infinity(
    x: ArrayLike,
    *,
    mode: Literal["either", "positive", "negative"] = "either",
    out: _A,
    dtype: DTypeLike | None = None,
    feature_level: str | None = None,
    threads: int | None = None,
    device: Literal["cpu", "gpu"] = "cpu",
) -> _A: ...
@overload
def isinf(
    x: ArrayLike,
    *,
    detect_positive: bool = True,
    detect_negative: bool = True,
    out: None = None,
    threads: int | None = None,
    device: Literal["cpu", "gpu"] = "cpu",
) -> Any: ...
@overload
def isinf(
    x: ArrayLike,
    *,
    detect_positive: bool = True,
    detect_negative: bool = True,
    out: NDArray[np.bool_],
    threads: int | None = None,
    device: Literal["cpu", "gpu"] = "cpu",
) -> NDArray[np.bool_]: ...
def onnx_run(
    model: str | bytes, inputs: list[tuple[str, NDArray[Any]]], nan: str
) -> list[tuple[str, NDArray[Any]]]: ...
def onnx_run_into(
    model: str | bytes,
    inputs: list[tuple[str, NDArray[Any]]],
    nan: str,
    out: list[tuple[str, NDArray[Any]]],
) -> list[tuple[str, NDArray[Any]]]: ...
def support(feature_level: str | None = None) -> dict[str, Any]: ...
def feature_levels() -> list[str]: ...
def instruction_set() -> str: ...
def gpu_adapter() -> str: ...
