"""Dask arrays in, lazy Dask arrays out (local scheduler); xarray's apply_ufunc.

The cluster test is ``test_distributed.py`` (marked slow)."""

from __future__ import annotations

import functools
import re

import numpy as np
import pytest

import ewise
import oracle
from oracle import assert_same_bits

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")


def random_bits(name, shape, seed=0):
    u = oracle.uint_of(name)
    w = 8 * np.dtype(u).itemsize
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2**w, size=shape, dtype=np.uint64 if w == 64 else u).astype(u)
    a.reshape(-1)[: len(oracle.EDGE_BITS.get(name, []))] = oracle.EDGE_BITS.get(name, [])
    return a.view(oracle.dtype(name))


def compute(x):
    return x.compute(scheduler="synchronous")


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16", "int16", "float64", "uint64"])
@pytest.mark.parametrize("nan", ["zero", "propagate"])
def test_sign_dask_is_lazy_and_exact(name, nan, ml_dtypes):
    x = random_bits(name, (37, 53), seed=1)
    dx = da.from_array(x, chunks=(10, 20))
    got = ewise.sign(dx, nan=nan)
    assert isinstance(got, da.Array)
    assert got.dtype == x.dtype
    assert type(got._meta) is np.ndarray and got._meta.dtype == x.dtype
    assert got.chunks == dx.chunks
    result = compute(got)
    assert type(result) is np.ndarray
    assert_same_bits(result, ewise.sign(x, nan=nan))
    assert_same_bits(result, oracle.sign(x, nan))


@pytest.mark.parametrize("out_dtype", [None, np.uint8, bool])
def test_is_infinity_dask(out_dtype):
    x = random_bits("float32", (100, 7), seed=2)
    x[::9, 3] = np.inf
    x[4::11, 5] = -np.inf
    dx = da.from_array(x, chunks=(13, 4))
    got = ewise.is_infinity(dx, mode="negative", dtype=out_dtype)
    want = ewise.is_infinity(x, mode="negative", dtype=out_dtype)
    assert isinstance(got, da.Array) and got.dtype == want.dtype
    assert got._meta.dtype == want.dtype
    assert_same_bits(compute(got), want)
    assert_same_bits(compute(got).astype(bool), oracle.is_infinity(x, "negative"))


def test_isinf_dask():
    x = random_bits("float64", (64,), seed=3)
    x[::5] = -np.inf
    dx = da.from_array(x, chunks=16)
    got = ewise.isinf(dx, detect_positive=False, threads=1)
    assert isinstance(got, da.Array) and got.dtype == np.bool_
    assert_same_bits(compute(got), oracle.is_infinity(x, "negative"))
    none = ewise.isinf(dx, detect_positive=False, detect_negative=False)
    assert not compute(none).any()


def test_dask_call_does_not_compute():
    """The result is lazy: nothing upstream runs until .compute()."""
    calls = []

    def upstream(block):
        calls.append(block.shape)
        return block

    x = da.from_array(np.arange(-5, 5, dtype=np.float32), chunks=5)
    lazy = x.map_blocks(upstream, meta=np.empty((0,), np.float32))
    got = ewise.sign(lazy, nan="zero")
    assert calls == []
    assert compute(got).tolist() == [-1.0] * 5 + [0.0] + [1.0] * 4
    assert len(calls) == 2


def test_dask_blocks_of_any_layout():
    """Blocks that Dask hands out as views (transposed, reversed, rechunked)."""
    x = random_bits("float32", (30, 40), seed=4)
    dx = da.from_array(x, chunks=(7, 9)).T[::-1, ::2].rechunk((5, 6))
    assert_same_bits(compute(ewise.sign(dx, nan="propagate")), oracle.sign(x.T[::-1, ::2], "propagate"))


def test_dask_zero_dimensional_and_empty():
    s = da.from_array(np.array(-3.0, np.float32))
    got = compute(ewise.sign(s))
    assert np.ndim(got) == 0 and float(got) == -1.0
    e = da.from_array(np.zeros((0, 4), np.float16), chunks=2)
    got = compute(ewise.sign(e))
    assert got.shape == (0, 4) and got.dtype == np.float16


def test_dask_out_is_refused():
    dx = da.ones(4, dtype=np.float32, chunks=2)
    with pytest.raises(ValueError, match=re.escape(
        "out= is not supported with a Dask array: the result is a new lazy Dask array"
    )):
        ewise.sign(dx, out=np.empty(4, np.float32))
    with pytest.raises(ValueError, match="out= is not supported with a Dask array"):
        ewise.isinf(dx, out=np.empty(4, bool))


def test_dask_bad_calls_fail_at_call_time():
    """An unsupported dtype or a bad keyword raises when ewise is called, not at compute
    (where a worker would raise it)."""
    computed = []

    def upstream(block):
        computed.append(1)
        return block

    c = da.ones(4, dtype=np.complex64, chunks=2).map_blocks(upstream, meta=np.empty((0,), np.complex64))
    with pytest.raises(TypeError, match=re.escape("sign: unsupported dtype complex64 (accepted: ")):
        ewise.sign(c)
    i = da.ones(4, dtype=np.int32, chunks=2).map_blocks(upstream, meta=np.empty((0,), np.int32))
    with pytest.raises(TypeError, match=re.escape("unsupported dtype int32 (accepted: ")):
        ewise.is_infinity(i)
    with pytest.raises(TypeError, match="unsupported dtype int32"):
        ewise.isinf(i)
    f = da.ones(4, dtype=np.float32, chunks=2)
    with pytest.raises(ValueError, match=re.escape('nan="NaN" is not a NaN policy')):
        ewise.sign(f, nan="NaN")
    with pytest.raises(ValueError, match=re.escape('mode="up" is not an infinity mode')):
        ewise.is_infinity(f, mode="up")
    with pytest.raises(ValueError, match="threads=0"):
        ewise.sign(f, threads=0)
    assert computed == []


def test_dask_feature_level_validates_each_block():
    """feature_level= applies to the blocks: a 4-D float32 array passes at 2_1; a 1-D
    one is rejected when the lazy array is made."""
    x = np.linspace(-1, 1, 2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    dx = da.from_array(x, chunks=(1, 3, 2, 5))
    assert_same_bits(compute(ewise.sign(dx, feature_level="2_1")), oracle.sign(x))
    with pytest.raises(ewise.ValidationError, match=re.escape(
        "ELEMENT_WISE_SIGN: InputTensor DimensionCount 1 is not supported at feature level 2_1 (supported: 4)"
    )):
        ewise.sign(da.ones(4, dtype=np.float32, chunks=2), feature_level="2_1")


def test_dask_map_blocks_with_partial():
    """The documented manual form: x.map_blocks(ewise.sign, ...) and a partial."""
    x = random_bits("float16", (500,), seed=5)
    dx = da.from_array(x, chunks=128)
    a = dx.map_blocks(ewise.sign, nan="propagate", dtype=dx.dtype)
    b = dx.map_blocks(functools.partial(ewise.sign, nan="propagate"), dtype=dx.dtype)
    for got in (a, b):
        assert_same_bits(compute(got), oracle.sign(x, "propagate"))


def test_dask_threaded_scheduler():
    x = random_bits("float32", (400, 300), seed=6)
    dx = da.from_array(x, chunks=(50, 100))
    got = ewise.sign(dx, nan="propagate", threads=1).compute(scheduler="threads", num_workers=4)
    assert_same_bits(got, oracle.sign(x, "propagate"))


# ---------------------------------------------------------------------------- xarray


def test_xarray_apply_ufunc_parallelized():
    xr = pytest.importorskip("xarray")
    x = random_bits("float32", (24, 36), seed=7)
    arr = xr.DataArray(x, dims=("y", "x"), attrs={"units": "m"}).chunk({"y": 5, "x": 12})
    got = xr.apply_ufunc(
        ewise.sign,
        arr,
        dask="parallelized",
        output_dtypes=[arr.dtype],
        kwargs={"nan": "zero"},
        keep_attrs=True,
    )
    assert isinstance(got.data, da.Array)
    assert got.attrs == {"units": "m"} and got.dims == ("y", "x")
    assert_same_bits(got.compute(scheduler="synchronous").values, oracle.sign(x, "zero"))
    flags = xr.apply_ufunc(
        ewise.is_infinity, arr, dask="parallelized", output_dtypes=[np.uint8],
        kwargs={"mode": "positive"},
    )
    assert_same_bits(flags.compute(scheduler="synchronous").values, oracle.is_infinity(x, "positive").view(np.uint8))


def test_xarray_numpy_backed():
    xr = pytest.importorskip("xarray")
    x = random_bits("float64", (6, 5), seed=8)
    arr = xr.DataArray(x, dims=("a", "b"))
    got = xr.apply_ufunc(ewise.sign, arr, kwargs={"nan": "propagate"})
    assert_same_bits(got.values, oracle.sign(x, "propagate"))


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda dx: ewise.sign(dx, feature_level="9_9"), ValueError, "feature_level"),
        (lambda dx: ewise.sign(dx, feature_level="2_1"), ewise.ValidationError, "DimensionCount 2"),
        (lambda dx: ewise.sign(dx, nan="sometimes"), ValueError, "nan="),
        (lambda dx: ewise.sign(dx, threads=0), ValueError, "threads=0"),
        (lambda dx: ewise.sign(dx, device="tpu"), ValueError, "device="),
        (lambda dx: ewise.is_infinity(dx, mode="both"), ValueError, "mode="),
        (lambda dx: ewise.is_infinity(dx, dtype=np.int8), ValueError, "dtype="),
        (lambda dx: ewise.is_infinity(dx.astype(np.int32)), TypeError, "is_infinity: unsupported dtype"),
        (lambda dx: ewise.isinf(dx.astype(np.int32)), TypeError, "isinf: unsupported dtype"),
        (
            lambda dx: ewise.is_infinity(dx, dtype=bool, feature_level="3_0"),
            ewise.ValidationError,
            "BOOL",
        ),
    ],
)
def test_dask_bad_calls_fail_at_once(call, error, message):
    """Every argument is checked when the lazy array is made, not at .compute() in a
    worker: bad values, types, and what the feature level refuses for the blocks."""
    calls = []

    def upstream(block):
        calls.append(block.shape)
        return block

    dx = da.from_array(np.ones((8, 6), np.float32), chunks=(4, 3)).map_blocks(
        upstream, meta=np.empty((0, 0), np.float32)
    )
    with pytest.raises(error, match=re.escape(message)):
        call(dx)
    assert calls == []
