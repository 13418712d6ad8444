"""Every 8- and 16-bit pattern, bit for bit against the oracle (docs/SEMANTICS.md §1).

Each test runs the whole pattern space as one array (65536 or 256 elements).
"""

from __future__ import annotations

import numpy as np
import pytest

import ewise
import oracle
from oracle import FLOAT8_TYPES, MODES, all_patterns, assert_same_bits, bits

# ---------------------------------------------------------------------------------
# The oracle itself, against hand-written rows of docs/SEMANTICS.md's tables, so that an
# oracle bug cannot silently agree with an ewise bug.


@pytest.mark.parametrize(
    ("name", "inputs", "zero", "propagate"),
    [
        # float16: -2, -0, +0, +inf, -inf, smallest subnormal, -smallest, qNaN, -sNaN
        (
            "float16",
            [0xC000, 0x8000, 0x0000, 0x7C00, 0xFC00, 0x0001, 0x8001, 0x7E00, 0xFC01],
            [0xBC00, 0x0000, 0x0000, 0x3C00, 0xBC00, 0x3C00, 0xBC00, 0x0000, 0x0000],
            [0xBC00, 0x0000, 0x0000, 0x3C00, 0xBC00, 0x3C00, 0xBC00, 0x7E00, 0xFC01],
        ),
        (
            "bfloat16",
            [0xC000, 0x8000, 0x0000, 0x7F80, 0xFF80, 0x0001, 0x8001, 0x7FC0, 0xFF81],
            [0xBF80, 0x0000, 0x0000, 0x3F80, 0xBF80, 0x3F80, 0xBF80, 0x0000, 0x0000],
            [0xBF80, 0x0000, 0x0000, 0x3F80, 0xBF80, 0x3F80, 0xBF80, 0x7FC0, 0xFF81],
        ),
        (
            "float32",
            [0xC0200000, 0x80000000, 0x00000001, 0x7F800000, 0xFF800000, 0xFFC00001],
            [0xBF800000, 0x00000000, 0x3F800000, 0x3F800000, 0xBF800000, 0x00000000],
            [0xBF800000, 0x00000000, 0x3F800000, 0x3F800000, 0xBF800000, 0xFFC00001],
        ),
        (
            "float64",
            [0x8000000000000000, 0x0000000000000001, 0xFFF0000000000000, 0x7FF0000000000001],
            [0x0000000000000000, 0x3FF0000000000000, 0xBFF0000000000000, 0x0000000000000000],
            [0x0000000000000000, 0x3FF0000000000000, 0xBFF0000000000000, 0x7FF0000000000001],
        ),
        ("int8", [0x80, 0xFF, 0x00, 0x01, 0x7F], [0xFF, 0xFF, 0x00, 0x01, 0x01], None),
        ("uint8", [0x80, 0xFF, 0x00, 0x01], [0x01, 0x01, 0x00, 0x01], None),
        ("int16", [0x8000, 0xFFFF, 0x0000, 0x7FFF], [0xFFFF, 0xFFFF, 0x0000, 0x0001], None),
        (
            "int64",
            [2**63, 2**64 - 1, 0, 2**63 - 1],
            [2**64 - 1, 2**64 - 1, 0, 1],
            None,
        ),
        ("uint64", [2**63, 2**64 - 1, 0], [1, 1, 0], None),
    ],
)
def test_oracle_sign_rows(name, inputs, zero, propagate):
    u = np.array(inputs, dtype=oracle.uint_of(name))
    assert oracle.sign_bits(u, name, "zero").tolist() == zero
    assert oracle.sign_bits(u, name, "propagate").tolist() == (propagate or zero)


@pytest.mark.parametrize(
    ("name", "positive_inf", "negative_inf", "not_inf"),
    [
        ("float16", 0x7C00, 0xFC00, [0x7C01, 0x7BFF, 0xFE00, 0x0000]),
        ("bfloat16", 0x7F80, 0xFF80, [0x7F81, 0x7F7F, 0xFFC0, 0x8000]),
        ("float32", 0x7F800000, 0xFF800000, [0x7F800001, 0x7F7FFFFF, 0xFFC00000]),
        ("float64", 0x7FF0 << 48, 0xFFF0 << 48, [(0x7FF0 << 48) + 1, 0x7FEF << 48]),
        ("float8_e5m2", 0x7C, 0xFC, [0x7D, 0x7B, 0xFE, 0x80]),
    ],
)
def test_oracle_is_infinity_rows(name, positive_inf, negative_inf, not_inf):
    u = np.array([positive_inf, negative_inf, *not_inf], dtype=oracle.uint_of(name))
    tail = [False] * len(not_inf)
    assert oracle.is_infinity_bits(u, name, "either").tolist() == [True, True, *tail]
    assert oracle.is_infinity_bits(u, name, "positive").tolist() == [True, False, *tail]
    assert oracle.is_infinity_bits(u, name, "negative").tolist() == [False, True, *tail]
    assert not oracle.is_infinity_bits(u, name, "none").any()


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2fnuz"])
def test_oracle_float8_without_infinities(name):
    u = np.arange(256, dtype=np.uint8)
    for mode in MODES:
        assert not oracle.is_infinity_bits(u, name, mode).any()


def test_oracle_counts_of_16_bit_classes():
    """Class sizes that follow from the formats alone."""
    u = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    # float16: 2 * (2^10 - 1) NaNs; bfloat16: 2 * (2^7 - 1)
    for name, nans in (("float16", 2 * 1023), ("bfloat16", 2 * 127)):
        s = oracle.sign_bits(u, name, "zero")
        assert np.count_nonzero(s == 0) == nans + 2  # NaNs and +-0
        p = oracle.sign_bits(u, name, "propagate")
        assert np.count_nonzero(p == 0) == 2
        assert np.count_nonzero(p != s) == nans


# ---------------------------------------------------------------------------------
# ewise, every pattern.

SIGN_16 = ["float16", "bfloat16", "int8", "uint8", "int16", "uint16"]


@pytest.mark.parametrize("nan", ["zero", "propagate"])
@pytest.mark.parametrize("name", SIGN_16)
def test_sign_every_pattern(name, nan, ml_dtypes):
    x = all_patterns(name)
    want = oracle.sign_bits(bits(x), name, nan).view(x.dtype)
    got = ewise.sign(x, nan=nan)
    assert got.dtype == x.dtype
    assert_same_bits(got, want, f"sign {name} nan={nan}")


@pytest.mark.parametrize("name", SIGN_16)
def test_sign_every_pattern_default_policy_is_zero(name, ml_dtypes):
    x = all_patterns(name)
    assert_same_bits(ewise.sign(x), ewise.sign(x, nan="zero"), name)


@pytest.mark.parametrize("out_dtype", [np.uint8, np.bool_])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["float16", "bfloat16", *FLOAT8_TYPES])
def test_is_infinity_every_pattern(name, mode, out_dtype, ml_dtypes):
    x = all_patterns(name)
    want = oracle.is_infinity_bits(bits(x), name, mode)
    got = ewise.is_infinity(x, mode=mode, dtype=out_dtype)
    assert got.dtype == np.dtype(out_dtype)
    # 0 or 1 bytes, whichever the dtype
    assert_same_bits(got.view(np.uint8), want.view(np.uint8), f"is_infinity {name} {mode}")


@pytest.mark.parametrize("name", ["float16", "bfloat16", *FLOAT8_TYPES])
def test_is_infinity_default_dtype_is_uint8(name, ml_dtypes):
    got = ewise.is_infinity(all_patterns(name))
    assert got.dtype == np.uint8


@pytest.mark.parametrize(
    ("detect_positive", "detect_negative"),
    [(True, True), (True, False), (False, True), (False, False)],
)
@pytest.mark.parametrize("name", ["float16", "bfloat16", *FLOAT8_TYPES])
def test_isinf_every_pattern(name, detect_positive, detect_negative, ml_dtypes):
    x = all_patterns(name)
    mode = oracle.onnx_mode(detect_positive, detect_negative)
    want = oracle.is_infinity_bits(bits(x), name, mode)
    got = ewise.isinf(x, detect_positive=detect_positive, detect_negative=detect_negative)
    assert got.dtype == np.bool_
    assert_same_bits(got.view(np.uint8), want.view(np.uint8), f"isinf {name} {mode}")


def test_float8_e5m2_has_exactly_two_infinities(ml_dtypes):
    x = all_patterns("float8_e5m2")
    assert np.flatnonzero(ewise.isinf(x)).tolist() == [0x7C, 0xFC]
    assert np.flatnonzero(ewise.is_infinity(x, mode="positive")).tolist() == [0x7C]
    assert np.flatnonzero(ewise.is_infinity(x, mode="negative")).tolist() == [0xFC]
