"""numpy (and ml_dtypes' loops) as a second oracle where its policy is ewise's, and a
pinned table of where they differ (probed with numpy 2.4 / ml_dtypes 0.6).

numpy's NaN loops raise "invalid value" RuntimeWarnings for ml_dtypes types; those
calls run under ``np.errstate(invalid="ignore")``, nothing else is silenced.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ewise
import oracle
from oracle import FLOAT8_TYPES, all_patterns, assert_same_bits, bits


def numpy_sign(x):
    with np.errstate(invalid="ignore"):
        return np.sign(x)


def numpy_isinf(x, mode="either"):
    f = {"either": np.isinf, "positive": np.isposinf, "negative": np.isneginf}[mode]
    with np.errstate(invalid="ignore"):
        return f(x)


def non_nan(x):
    u = bits(x)
    return x[~oracle.is_nan_bits(u, oracle.FORMATS[oracle.type_name(x.dtype)])]


# ------------------------------------------------------------------------- agreement


@pytest.mark.parametrize("name", ["float16", "int8", "uint8", "int16", "uint16"])
def test_sign_agrees_with_numpy_on_every_non_nan_pattern(name):
    x = all_patterns(name)
    if name.startswith("float"):
        x = non_nan(x)
    assert_same_bits(ewise.sign(x, nan="propagate"), numpy_sign(x), name)


def test_sign_bfloat16_agrees_with_ml_dtypes_except_at_minus_zero(ml_dtypes):
    x = non_nan(all_patterns("bfloat16"))
    x = x[bits(x) != 0x8000]  # -0: see the disagreement table
    assert_same_bits(ewise.sign(x, nan="propagate"), numpy_sign(x), "bfloat16")


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_sign_nan_propagate_agrees_with_numpy_on_every_nan(name, ml_dtypes):
    """numpy's and ml_dtypes' sign loops return a NaN input itself (signalling NaNs
    included, not quieted: probed), which is exactly nan="propagate"."""
    x = all_patterns(name)
    x = x[oracle.is_nan_bits(bits(x), oracle.FORMATS[name])]
    assert x.size == {"float16": 2046, "bfloat16": 254}[name]
    assert_same_bits(ewise.sign(x, nan="propagate"), numpy_sign(x), name)
    assert_same_bits(ewise.sign(x, nan="propagate"), x, name)


@pytest.mark.parametrize("name", ["float32", "float64", "int32", "uint32", "int64", "uint64"])
@given(data=st.data())
def test_sign_agrees_with_numpy_random_bits(name, data):
    w = 8 * np.dtype(name).itemsize
    elements = st.one_of(st.integers(0, 2**w - 1), st.sampled_from(oracle.EDGE_BITS[name]))
    u = data.draw(hnp.arrays(oracle.uint_of(name), st.integers(0, 100), elements=elements))
    x = u.view(np.dtype(name))
    # With nan="propagate" numpy agrees everywhere (NaNs returned as they are).
    assert_same_bits(ewise.sign(x, nan="propagate"), numpy_sign(x), name)


@pytest.mark.parametrize("mode", ["either", "positive", "negative"])
@pytest.mark.parametrize("name", ["float16", "bfloat16", *FLOAT8_TYPES])
def test_is_infinity_agrees_with_numpy_on_every_pattern(name, mode, ml_dtypes):
    x = all_patterns(name)
    want = numpy_isinf(x, mode)
    assert_same_bits(ewise.is_infinity(x, mode=mode, dtype=bool), want, f"{name} {mode}")


@pytest.mark.parametrize("name", ["float32", "float64"])
@given(data=st.data(), mode=st.sampled_from(["either", "positive", "negative"]))
def test_is_infinity_agrees_with_numpy_random_bits(name, data, mode):
    w = 8 * np.dtype(name).itemsize
    u = data.draw(
        hnp.arrays(
            oracle.uint_of(name),
            st.integers(0, 100),
            elements=st.one_of(st.integers(0, 2**w - 1), st.sampled_from(oracle.EDGE_BITS[name])),
        )
    )
    x = u.view(np.dtype(name))
    assert_same_bits(ewise.is_infinity(x, mode=mode, dtype=bool), numpy_isinf(x, mode), name)


# ---------------------------------------------------------------------- disagreement

BF16_MINUS_ZERO = 0x8000

# (case id, dtype name, input bits, ewise call keywords, numpy's result bits, ewise's)
DISAGREEMENTS = [
    # nan="zero": DirectML's formula gives +0; numpy returns the NaN.
    ("nan-zero-f16-qnan", "float16", 0x7E00, {"nan": "zero"}, 0x7E00, 0x0000),
    ("nan-zero-f16-snan", "float16", 0x7C01, {"nan": "zero"}, 0x7C01, 0x0000),
    ("nan-zero-f16-neg", "float16", 0xFE00, {"nan": "zero"}, 0xFE00, 0x0000),
    ("nan-zero-bf16", "bfloat16", 0x7FC0, {"nan": "zero"}, 0x7FC0, 0x0000),
    ("nan-zero-bf16-neg-payload", "bfloat16", 0xFF81, {"nan": "zero"}, 0xFF81, 0x0000),
    ("nan-zero-f32", "float32", 0x7FC00000, {"nan": "zero"}, 0x7FC00000, 0),
    ("nan-zero-f32-snan", "float32", 0xFF800001, {"nan": "zero"}, 0xFF800001, 0),
    ("nan-zero-f64", "float64", 0x7FF8000000000000, {"nan": "zero"}, 0x7FF8000000000000, 0),
    ("nan-default-f32", "float32", 0x7FC00000, {}, 0x7FC00000, 0),
    # ml_dtypes' Sign returns +-0 unchanged: bfloat16 -0 stays -0 there; ewise gives +0.
    ("bf16-minus-zero-zero", "bfloat16", BF16_MINUS_ZERO, {"nan": "zero"}, 0x8000, 0x0000),
    ("bf16-minus-zero-prop", "bfloat16", BF16_MINUS_ZERO, {"nan": "propagate"}, 0x8000, 0),
]


@pytest.mark.parametrize(
    ("name", "pattern", "keywords", "numpy_bits", "ewise_bits"),
    [pytest.param(*row[1:], id=row[0]) for row in DISAGREEMENTS],
)
def test_disagreement_table(name, pattern, keywords, numpy_bits, ewise_bits, ml_dtypes):
    x = np.array([pattern], dtype=oracle.uint_of(name)).view(oracle.dtype(name))
    assert int(bits(numpy_sign(x))[0]) == numpy_bits, "numpy's behaviour changed: re-probe"
    assert int(bits(ewise.sign(x, **keywords))[0]) == ewise_bits
    # and the oracle sides with ewise
    assert int(oracle.sign_bits(bits(x), name, keywords.get("nan", "zero"))[0]) == ewise_bits


@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_builtin_minus_zero_is_an_agreement(name):
    """numpy's builtin float loops give +0 for -0 (unlike ml_dtypes'): no table row."""
    x = np.array([-0.0], dtype=name)
    assert int(bits(numpy_sign(x))[0]) == 0
    assert int(bits(ewise.sign(x))[0]) == 0


@pytest.mark.parametrize("name", FLOAT8_TYPES)
def test_disagreement_float8_sign(name, ml_dtypes):
    """ml_dtypes has a float8 sign loop; ewise has no float8 Sign (ONNX has none)."""
    x = np.array([-2.0, 0.0, 1.0], dtype=oracle.dtype(name))
    assert np.sign(x).dtype == x.dtype  # numpy works...
    assert np.sign(x).astype(np.float32).tolist() == [-1.0, 0.0, 1.0]
    with pytest.raises(TypeError, match=rf"sign: unsupported dtype {name} \(accepted: "):
        ewise.sign(x)  # ...ewise refuses
