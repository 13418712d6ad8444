"""Zero copy (measured with tracemalloc, where numpy reports its data allocations) and
the shape, order and type of fresh results."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import ewise
import oracle
from oracle import assert_same_bits

MIB = 1 << 20
N = 2 * MIB  # float32 elements: 8 MiB


def peak_bytes(call):
    """Peak bytes newly allocated (numpy's data included) while ``call()`` runs."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        result = call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak - before


def layouts():
    """Name -> an 8 MiB-element float32 input of that layout (made outside any trace)."""
    rng = np.random.default_rng(0)
    square = rng.standard_normal((1024, 2048), dtype=np.float32)
    return {
        "contiguous": square,
        "strided": np.repeat(square, 2, axis=1)[:, ::2],
        "reversed": square[::-1, ::-1],
        "transposed": square.T,
        "broadcast": np.broadcast_to(square[:1], square.shape),
        "fortran": np.asfortranarray(square),
        "strided-reversed-transposed": np.repeat(square, 3, axis=0)[::-3].T,
    }


def test_tracemalloc_sees_numpy_allocations():
    """The measurement itself: an 8 MiB np.empty shows up."""
    a, peak = peak_bytes(lambda: np.empty(N, np.float32))
    assert peak >= a.nbytes


@pytest.mark.parametrize("layout", list(layouts()))
def test_fresh_result_costs_one_output(layout):
    x = layouts()[layout]
    assert x.size == N
    out, peak = peak_bytes(lambda: ewise.sign(x))
    assert out.nbytes == 4 * N
    assert out.nbytes <= peak < 1.5 * out.nbytes, f"{layout}: peak {peak} for {out.nbytes}"
    assert_same_bits(out, oracle.sign(x))
    flags, peak = peak_bytes(lambda: ewise.is_infinity(x))
    assert peak < 1.5 * flags.nbytes


@pytest.mark.parametrize(
    "layout", ["contiguous", "strided", "reversed", "transposed", "broadcast", "fortran"]
)
def test_out_costs_nothing(layout):
    x = layouts()[layout]
    out = np.empty(x.shape, np.float32)
    result, peak = peak_bytes(lambda: ewise.sign(x, out=out))
    assert result is out
    if layout == "reversed":
        # out runs against x along both axes, and ewise strides are never negative:
        # the documented cost is one temporary of out's size, never a copy of x too.
        assert out.nbytes <= peak < 1.25 * out.nbytes, f"{layout}: {peak} bytes with out="
    else:
        assert peak < 64 * 1024, f"{layout}: {peak} bytes allocated with out="
    assert_same_bits(out, oracle.sign(x))


def test_out_in_matching_direction_costs_nothing():
    """A reversed input into an out reversed the same way maps without a temporary."""
    x = layouts()["reversed"]
    out = np.empty(x.shape, np.float32)[::-1, ::-1]
    _, peak = peak_bytes(lambda: ewise.sign(x, out=out))
    assert peak < 64 * 1024
    assert_same_bits(out, oracle.sign(x))


def test_in_place_costs_nothing():
    x = layouts()["strided"].copy()
    want = oracle.sign(x)
    _, peak = peak_bytes(lambda: ewise.sign(x, out=x))
    assert peak < 64 * 1024
    assert_same_bits(x, want)


# --------------------------------------------------------------- fresh results


def test_result_keeps_memory_order():
    x = np.random.default_rng(1).standard_normal((6, 7, 8)).astype(np.float32)
    assert ewise.sign(x).flags.c_contiguous
    f = np.asfortranarray(x)
    assert ewise.sign(f).flags.f_contiguous
    assert ewise.is_infinity(f).flags.f_contiguous
    t = x.transpose(2, 0, 1)
    assert ewise.sign(t).strides == t.strides
    assert ewise.isinf(t).strides == tuple(s // 4 for s in t.strides)
    # strided input: a dense result in the same axis order
    s = x[::2, :, ::3]
    r = ewise.sign(s)
    assert r.flags.c_contiguous and r.shape == s.shape
    # reversed axes are walked the same way in the result
    rev = x[::-1, :, ::-1]
    r = ewise.sign(rev)
    assert [st < 0 for st in r.strides] == [True, False, True]
    assert_same_bits(r, oracle.sign(rev))


@pytest.mark.parametrize(
    ("function", "kwargs", "dtype", "scalar_type"),
    [
        (ewise.sign, {}, np.float32, np.float32),
        (ewise.sign, {}, np.int16, np.int16),
        (ewise.sign, {}, np.uint64, np.uint64),
        (ewise.is_infinity, {}, np.float64, np.uint8),
        (ewise.is_infinity, {"dtype": bool}, np.float16, np.bool_),
        (ewise.isinf, {}, np.float32, np.bool_),
    ],
)
def test_zero_dimensional_results_are_numpy_scalars(function, kwargs, dtype, scalar_type):
    x = np.array({"f": -np.inf, "i": -7, "u": 7}[np.dtype(dtype).kind], dtype=dtype)
    r = function(x, **kwargs)
    assert type(r) is scalar_type
    assert not isinstance(r, np.ndarray)
    # with out=, the 0-d out itself
    out = np.zeros((), dtype=np.dtype(scalar_type))
    assert function(x, out=out, **kwargs) is out
    assert out.ndim == 0 and out == r


def test_zero_dimensional_bfloat16_scalar(ml_dtypes):
    r = ewise.sign(np.array(-0.0, ml_dtypes.bfloat16))
    assert type(r) is ml_dtypes.bfloat16
    assert int(oracle.bits(r)) == 0


def test_out_is_returned_itself():
    x = np.arange(-3, 4, dtype=np.float32)
    out = np.empty_like(x)
    assert ewise.sign(x, out=out) is out
    u8 = np.empty(x.shape, np.uint8)
    assert ewise.is_infinity(x, out=u8) is u8
    b = np.empty(x.shape, bool)
    assert ewise.isinf(x, out=b) is b
    assert ewise.is_infinity(x, out=b, dtype=bool) is b


def test_is_infinity_takes_out_dtype_when_dtype_is_not_given():
    x = np.array([np.inf, -np.inf, 1.0], np.float32)
    b = np.zeros(3, bool)
    assert ewise.is_infinity(x, out=b) is b
    assert b.tolist() == [True, True, False]


def test_result_is_a_new_array_never_the_input():
    x = np.zeros(5, np.float32)
    r = ewise.sign(x)
    assert r is not x and not np.shares_memory(r, x)
