"""32- and 64-bit types: random bit patterns plus edge values, against the oracle."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ewise
import oracle
from oracle import EDGE_BITS, MODES, assert_same_bits, bits

WIDE_SIGN = ["float32", "float64", "int32", "uint32", "int64", "uint64"]
WIDE_FLOAT = ["float32", "float64"]


def patterns(name: str):
    """Arrays of ``name`` drawn as raw bits: uniform patterns mixed with edge values."""
    u = oracle.uint_of(name)
    width = 8 * np.dtype(u).itemsize
    elements = st.one_of(
        st.integers(0, 2**width - 1),
        st.sampled_from(EDGE_BITS[name]),
    )
    return hnp.arrays(
        u, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=40), elements=elements
    ).map(lambda a: a.view(np.dtype(name)))


@pytest.mark.parametrize("name", WIDE_SIGN)
@given(data=st.data(), nan=st.sampled_from(["zero", "propagate"]))
def test_sign_random_bits(name, data, nan):
    x = data.draw(patterns(name), label="x")
    want = oracle.sign_bits(bits(x), name, nan).view(x.dtype).reshape(x.shape)
    assert_same_bits(ewise.sign(x, nan=nan), want, f"sign {name} nan={nan}")


@pytest.mark.parametrize("name", WIDE_FLOAT)
@given(data=st.data(), mode=st.sampled_from(MODES), out=st.sampled_from([np.uint8, np.bool_]))
def test_is_infinity_random_bits(name, data, mode, out):
    x = data.draw(patterns(name), label="x")
    want = oracle.is_infinity_bits(bits(x), name, mode).reshape(x.shape)
    got = ewise.is_infinity(x, mode=mode, dtype=out)
    assert got.dtype == np.dtype(out)
    assert_same_bits(got.view(np.uint8), want.view(np.uint8), f"is_infinity {name} {mode}")


@pytest.mark.parametrize("name", WIDE_FLOAT)
@given(data=st.data(), flags=st.tuples(st.booleans(), st.booleans()))
def test_isinf_random_bits(name, data, flags):
    x = data.draw(patterns(name), label="x")
    want = oracle.is_infinity_bits(bits(x), name, oracle.onnx_mode(*flags)).reshape(x.shape)
    got = ewise.isinf(x, detect_positive=flags[0], detect_negative=flags[1])
    assert got.dtype == np.bool_
    assert_same_bits(got.view(np.uint8), want.view(np.uint8), f"isinf {name} {flags}")


@pytest.mark.parametrize("name", WIDE_SIGN)
@pytest.mark.parametrize("nan", ["zero", "propagate"])
def test_sign_edge_values_and_large_random_block(name, nan, rng):
    """Every edge value, then 1 Mi random patterns (large enough for the threaded,
    GIL-released path and any vector kernel's tail handling)."""
    u = oracle.uint_of(name)
    edges = np.array(EDGE_BITS[name], dtype=u)
    width = 8 * np.dtype(u).itemsize
    randoms = rng.integers(0, 2**width, size=(1 << 20) + 13, dtype=u, endpoint=False)
    x = np.concatenate([edges, randoms]).view(np.dtype(name))
    want = oracle.sign_bits(bits(x), name, nan).view(x.dtype)
    assert_same_bits(ewise.sign(x, nan=nan), want, f"sign {name}")
    assert_same_bits(ewise.sign(x, nan=nan, threads=1), want, f"sign {name} threads=1")
    assert_same_bits(ewise.sign(x, nan=nan, threads=3), want, f"sign {name} threads=3")


@pytest.mark.parametrize("name", WIDE_FLOAT)
@pytest.mark.parametrize("mode", MODES)
def test_is_infinity_edge_values_and_large_random_block(name, mode, rng):
    u = oracle.uint_of(name)
    edges = np.array(EDGE_BITS[name], dtype=u)
    width = 8 * np.dtype(u).itemsize
    randoms = rng.integers(0, 2**width, size=(1 << 20) + 7, dtype=u)
    # make infinities common enough to matter in a random block
    randoms[::997] = edges[12]
    randoms[5::991] = edges[13]
    x = np.concatenate([edges, randoms]).view(np.dtype(name))
    want = oracle.is_infinity_bits(bits(x), name, mode)
    for threads in (None, 1, 2):
        got = ewise.is_infinity(x, mode=mode, dtype=bool, threads=threads)
        assert_same_bits(got, want, f"is_infinity {name} {mode} threads={threads}")
