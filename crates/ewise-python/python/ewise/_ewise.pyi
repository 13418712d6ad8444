from typing import Any

import numpy as np
from numpy.typing import NDArray

__version__: str
DEFAULT_NAN_POLICY: str

class ValidationError(ValueError): ...
class OnnxError(ValueError): ...

def sign(
    x: Any,
    out: NDArray[Any] | None = None,
    nan: str = "zero",
    feature_level: str | None = None,
    threads: int | None = None,
) -> Any: ...
def is_infinity(
    x: Any,
    out: NDArray[Any] | None = None,
    mode: str = "either",
    dtype: Any = None,
    feature_level: str | None = None,
    threads: int | None = None,
) -> Any: ...
def isinf(
    x: Any,
    out: NDArray[np.bool_] | None = None,
    detect_positive: bool = True,
    detect_negative: bool = True,
    threads: int | None = None,
) -> Any: ...
def onnx_run(
    model: str | bytes, inputs: list[tuple[str, NDArray[Any]]], nan: str
) -> list[tuple[str, NDArray[Any]]]: ...
def support(feature_level: str | None = None) -> dict[str, Any]: ...
def feature_levels() -> list[str]: ...
def instruction_set() -> str: ...
