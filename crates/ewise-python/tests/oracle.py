"""An independent numpy oracle for ewise's Sign and IsInfinity, written from
``docs/SEMANTICS.md`` alone.

It works on raw bits (the unsigned-integer view of each element) and never calls
``np.sign``, ``np.isinf``, ``np.isnan`` or float comparisons on float types, so that
it cannot share a bug (or a denormals-are-zero CPU mode, or a NaN quirk) with numpy,
ml_dtypes or ewise. Integers are compared as integers, which is their bit meaning.

The module is also imported by the Dask/distributed tests on worker processes (it is
pickled by value there), so it depends on numpy only; ml_dtypes is imported lazily.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format, as its bit fields."""

    name: str
    bits: int
    exponent_bits: int
    mantissa_bits: int
    #: whether the all-ones exponent with a zero mantissa is an infinity
    has_infinity: bool
    #: +1.0's encoding (only for the formats Sign takes)
    one: int | None = None

    @property
    def uint(self) -> type[np.unsignedinteger]:
        return {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[self.bits]

    @property
    def sign_mask(self) -> int:
        return 1 << (self.bits - 1)

    @property
    def exponent_mask(self) -> int:
        return ((1 << self.exponent_bits) - 1) << self.mantissa_bits

    @property
    def magnitude_mask(self) -> int:
        return self.sign_mask - 1


#: The formats with infinities are IEEE-like: exponent all ones + mantissa zero is an
#: infinity, exponent all ones + mantissa non-zero is NaN. The float8 "fn"/"fnuz"
#: formats have no infinity (docs/SEMANTICS.md §1): IsInf is always false for them.
FORMATS: dict[str, FloatFormat] = {
    "float16": FloatFormat("float16", 16, 5, 10, True, 0x3C00),
    "bfloat16": FloatFormat("bfloat16", 16, 8, 7, True, 0x3F80),
    "float32": FloatFormat("float32", 32, 8, 23, True, 0x3F800000),
    "float64": FloatFormat("float64", 64, 11, 52, True, 0x3FF0000000000000),
    "float8_e5m2": FloatFormat("float8_e5m2", 8, 5, 2, True),
    "float8_e4m3fn": FloatFormat("float8_e4m3fn", 8, 4, 3, False),
    "float8_e4m3fnuz": FloatFormat("float8_e4m3fnuz", 8, 4, 3, False),
    "float8_e5m2fnuz": FloatFormat("float8_e5m2fnuz", 8, 5, 2, False),
}

SIGN_FLOATS = ("float16", "bfloat16", "float32", "float64")
SIGN_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
SIGN_TYPES = SIGN_FLOATS + SIGN_INTS
INFINITY_TYPES = (
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
)
FLOAT8_TYPES = ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz")
MODES = ("either", "positive", "negative")


def dtype(name: str) -> np.dtype:
    """numpy's dtype of that name (ml_dtypes' types through ml_dtypes)."""
    if name in FORMATS and name not in ("float16", "float32", "float64"):
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, name))
    return np.dtype(name)


def uint_of(name_or_dtype) -> type[np.unsignedinteger]:
    """The unsigned integer type of the same size (for bit views)."""
    size = np.dtype(dtype(name_or_dtype) if isinstance(name_or_dtype, str) else name_or_dtype).itemsize
    return {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[size]


def bits(a) -> np.ndarray:
    """A C-contiguous native-order unsigned-integer copy of ``a``'s element bits."""
    a = np.asarray(a)
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    return np.asarray(a, order="C").view(uint_of(a.dtype))


def type_name(dt) -> str:
    """The oracle's name of a dtype (``bfloat16``, ``float8_e5m2``, ``int8``...)."""
    dt = np.dtype(dt)
    return dt.name if dt.name in FORMATS or dt.name in SIGN_INTS else dt.type.__name__


def is_nan_bits(u: np.ndarray, f: FloatFormat) -> np.ndarray:
    """NaN patterns of format ``f``, from bits (IEEE-like formats only)."""
    return (u & f.magnitude_mask) > f.exponent_mask


def sign_bits(u: np.ndarray, name: str, nan: str = "zero") -> np.ndarray:
    """docs/SEMANTICS.md §1 ELEMENT_WISE_SIGN on the bit patterns ``u`` of type ``name``;
    returns the result's bit patterns (same unsigned type)."""
    u = np.asarray(u)
    if name in SIGN_INTS:
        v = u.view(np.dtype(name))
        zero = np.zeros((), v.dtype)
        one = np.ones((), v.dtype)
        if name.startswith("u"):
            out = np.where(v != zero, one, zero).astype(v.dtype)
        else:
            out = np.where(v < zero, -one, np.where(v > zero, one, zero)).astype(v.dtype)
        return out.view(u.dtype)
    f = FORMATS[name]
    if name not in SIGN_FLOATS:
        raise TypeError(f"Sign does not take {name}")
    t = f.uint
    u = u.astype(t, copy=False)
    negative = (u & t(f.sign_mask)) != 0
    magnitude = u & t(f.magnitude_mask)
    one = t(f.one)
    minus_one = t(f.one | f.sign_mask)
    out = np.where(negative, minus_one, one).astype(t)
    out = np.where(magnitude == 0, t(0), out)  # +0 and -0 give +0 (all-zero bits)
    nan_mask = magnitude > t(f.exponent_mask)
    if nan == "zero":
        out = np.where(nan_mask, t(0), out)
    elif nan == "propagate":
        out = np.where(nan_mask, u, out)  # the input NaN, sign and payload kept
    else:
        raise ValueError(nan)
    return out.astype(t)


def is_infinity_bits(u: np.ndarray, name: str, mode: str = "either") -> np.ndarray:
    """docs/SEMANTICS.md §1 ELEMENT_WISE_IS_INFINITY on bit patterns; returns bool."""
    f = FORMATS[name]
    t = f.uint
    u = np.asarray(u).astype(t, copy=False)
    if not f.has_infinity or mode == "none":
        return np.zeros(u.shape, bool)
    infinite = (u & t(f.magnitude_mask)) == t(f.exponent_mask)
    negative = (u & t(f.sign_mask)) != 0
    if mode == "either":
        return infinite
    if mode == "positive":
        return infinite & ~negative
    if mode == "negative":
        return infinite & negative
    raise ValueError(mode)


def onnx_mode(detect_positive: bool, detect_negative: bool) -> str:
    """ONNX IsInf's flags as a mode; (False, False) is "none": all false."""
    return {
        (True, True): "either",
        (True, False): "positive",
        (False, True): "negative",
        (False, False): "none",
    }[(bool(detect_positive), bool(detect_negative))]


def sign(x, nan: str = "zero") -> np.ndarray:
    """The oracle's Sign of an array (any layout/byte order): a new native array."""
    x = np.asarray(x)
    name = type_name(x.dtype)
    native = x.dtype.newbyteorder("=")
    return sign_bits(bits(x), name, nan).view(native).reshape(x.shape)


def is_infinity(x, mode: str = "either") -> np.ndarray:
    """The oracle's IsInfinity of an array: a new bool array."""
    x = np.asarray(x)
    return is_infinity_bits(bits(x), type_name(x.dtype), mode).reshape(x.shape)


def all_patterns(name: str) -> np.ndarray:
    """Every bit pattern of an 8- or 16-bit type, as an array of that type."""
    d = dtype(name)
    n = 1 << (8 * d.itemsize)
    assert n <= 1 << 16
    return np.arange(n, dtype=np.uint32).astype(uint_of(d)).view(d)


# Edge bit patterns for the 32- and 64-bit types (mixed into random draws).
EDGE_BITS: dict[str, list[int]] = {
    "float32": [
        0x00000000, 0x80000000,  # +-0
        0x00000001, 0x80000001,  # smallest subnormals
        0x007FFFFF, 0x807FFFFF,  # largest subnormals
        0x00800000, 0x80800000,  # smallest normals
        0x3F800000, 0xBF800000,  # +-1
        0x7F7FFFFF, 0xFF7FFFFF,  # +-max
        0x7F800000, 0xFF800000,  # +-inf
        0x7F800001, 0xFF800001,  # signalling NaNs
        0x7FC00000, 0xFFC00000,  # quiet NaNs
        0x7FFFFFFF, 0xFFFFFFFF,  # all-ones NaNs
        0x7FA5A5A5, 0xFFB0B0B0,  # payloads
    ],
    "float64": [
        0x0000000000000000, 0x8000000000000000,
        0x0000000000000001, 0x8000000000000001,
        0x000FFFFFFFFFFFFF, 0x800FFFFFFFFFFFFF,
        0x0010000000000000, 0x8010000000000000,
        0x3FF0000000000000, 0xBFF0000000000000,
        0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF,
        0x7FF0000000000000, 0xFFF0000000000000,
        0x7FF0000000000001, 0xFFF0000000000001,
        0x7FF8000000000000, 0xFFF8000000000000,
        0x7FFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF,
        0x7FF4DEADBEEF0000, 0xFFFABCDEF0123456,
    ],
    "int32": [0, 1, 2**31 - 1, 2**31, 2**32 - 1, 2**31 + 1],
    "uint32": [0, 1, 2**31 - 1, 2**31, 2**32 - 1],
    "int64": [0, 1, 2**63 - 1, 2**63, 2**64 - 1, 2**63 + 1],
    "uint64": [0, 1, 2**63 - 1, 2**63, 2**64 - 1],
}

# ----------------------------------------------------------------------------------
# Helpers for the Dask/distributed tests: module-level so that they pickle by value
# once the tests register this module with cloudpickle.

#: one of every special float32 class, spliced into block 0
SPECIAL_F32_BITS = np.array(EDGE_BITS["float32"], dtype=np.uint32)


def random_f32_block(block_id=None, block_info=None, chunk=None):
    """A block of random float32 bit patterns made on the worker, seeded by block id;
    block (0, ...) starts with every special value."""
    (index,) = block_info[None]["chunk-location"]
    shape = block_info[None]["chunk-shape"]
    rng = np.random.default_rng(12345 + index)
    u = rng.integers(0, 2**32, size=shape, dtype=np.uint32)
    # bias some elements towards the special classes so that they appear often
    special = rng.integers(0, len(SPECIAL_F32_BITS), size=shape[0] // 64)
    where = rng.integers(0, shape[0], size=shape[0] // 64)
    u[where] = SPECIAL_F32_BITS[special]
    if index == 0:
        u[: len(SPECIAL_F32_BITS)] = SPECIAL_F32_BITS
    return u.view(np.float32)


def sign_block(x, nan="propagate"):
    return sign(x, nan)


def is_infinity_block(x, mode="either"):
    return is_infinity(x, mode)


def mismatches(got, want):
    """Number of elements whose bits differ (a 1-element int64 array per block)."""
    return np.array([np.count_nonzero(bits(got) != bits(want))], dtype=np.int64)


def block_pid(x):
    """Which process computed this block: one int64 per block."""
    import os

    return np.array([os.getpid()], dtype=np.int64)


def assert_same_bits(got, want, context: str = "") -> None:
    """Same shape, same dtype (byte order aside) and the same bits, element by element;
    the message lists the first few differing elements in hex."""
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, f"{context}: shape {got.shape} != {want.shape}"
    assert got.dtype.newbyteorder("=") == want.dtype.newbyteorder("="), (
        f"{context}: dtype {got.dtype} != {want.dtype}"
    )
    g, w = bits(got), bits(want)
    bad = np.flatnonzero(g.ravel() != w.ravel())
    if bad.size:
        width = 2 * got.dtype.itemsize
        rows = ", ".join(
            f"[{np.unravel_index(i, got.shape) if got.ndim else ()}] "
            f"got 0x{int(g.ravel()[i]):0{width}x} want 0x{int(w.ravel()[i]):0{width}x}"
            for i in bad[:8]
        )
        raise AssertionError(f"{context}: {bad.size} of {g.size} elements differ: {rows}")
