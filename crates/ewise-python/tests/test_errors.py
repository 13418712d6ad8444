"""Every error class, with its message: TypeError for types, ValueError for values and
out=, ewise.ValidationError (a ValueError) for DirectML's rules under feature_level=."""

from __future__ import annotations

import re

import numpy as np
import pytest

import ewise
import oracle
from oracle import assert_same_bits

SIGN_ACCEPTED = (
    "float32, float16, float64, bfloat16, int64, int32, int16, int8, "
    "uint64, uint32, uint16, uint8"
)
INFINITY_ACCEPTED = (
    "float32, float16, float64, bfloat16, float8_e4m3fn, float8_e4m3fnuz, "
    "float8_e5m2, float8_e5m2fnuz"
)


def unsupported(function: str, dtype_str: str, accepted: str) -> str:
    return re.escape(f"{function}: unsupported dtype {dtype_str} (accepted: {accepted})")


# ----------------------------------------------------------------------- TypeError

COMMON_UNSUPPORTED = [
    np.complex64,
    np.complex128,
    object,
    "U3",
    "S2",
    "M8[s]",
    "m8[ns]",
    np.longdouble,
    [("a", "<f4")],
]


@pytest.mark.parametrize("dt", COMMON_UNSUPPORTED + [bool], ids=str)
def test_sign_unsupported_dtypes(dt):
    x = np.zeros(3, dtype=dt)
    with pytest.raises(TypeError, match=unsupported("sign", str(x.dtype), SIGN_ACCEPTED)):
        ewise.sign(x)


@pytest.mark.parametrize("name", oracle.FLOAT8_TYPES)
def test_sign_rejects_float8(name, ml_dtypes):
    with pytest.raises(TypeError, match=unsupported("sign", name, SIGN_ACCEPTED)):
        ewise.sign(np.zeros(3, oracle.dtype(name)))


def test_sign_rejects_other_ml_dtypes(ml_dtypes):
    with pytest.raises(TypeError, match=unsupported("sign", "int4", SIGN_ACCEPTED)):
        ewise.sign(np.zeros(3, ml_dtypes.int4))
    with pytest.raises(TypeError, match=unsupported("sign", "float8_e4m3b11fnuz", SIGN_ACCEPTED)):
        ewise.sign(np.zeros(3, ml_dtypes.float8_e4m3b11fnuz))


INTEGERS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


@pytest.mark.parametrize("dt", COMMON_UNSUPPORTED + INTEGERS + [bool], ids=str)
def test_is_infinity_unsupported_dtypes(dt):
    x = np.zeros(3, dtype=dt)
    text = str(x.dtype)
    with pytest.raises(TypeError, match=unsupported("is_infinity", text, INFINITY_ACCEPTED)):
        ewise.is_infinity(x)
    # isinf: the same check, named for the function called
    with pytest.raises(TypeError, match=unsupported("isinf", text, INFINITY_ACCEPTED)):
        ewise.isinf(x)


def test_array_likes_of_unsupported_types():
    with pytest.raises(TypeError, match=unsupported("sign", "complex128", SIGN_ACCEPTED)):
        ewise.sign([1j, 2])
    with pytest.raises(TypeError, match=unsupported("is_infinity", "int64", INFINITY_ACCEPTED)):
        ewise.is_infinity([1, 2])
    with pytest.raises(TypeError, match=unsupported("sign", "bool", SIGN_ACCEPTED)):
        ewise.sign(True)


def test_bad_argument_types_and_keywords():
    x = np.ones(3, np.float32)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        ewise.sign(x, bogus=1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'where'"):
        ewise.sign(x, where=True)
    with pytest.raises(TypeError, match="positional"):
        ewise.sign(x, x)  # out is keyword-only
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'x'"):
        ewise.sign()
    with pytest.raises(TypeError, match=re.escape('nan=1 is not a NaN policy (accepted: "zero", "propagate")')):
        ewise.sign(x, nan=1)
    with pytest.raises(TypeError, match=re.escape("threads='2' is not a thread count")):
        ewise.sign(x, threads="2")
    with pytest.raises(TypeError, match="unexpected keyword argument 'feature_level'"):
        ewise.isinf(x, feature_level="3_0")  # ONNX's operator has no DirectML level


# ---------------------------------------------------------------------- ValueError


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda x: ewise.sign(x, nan="bogus"),
            'nan="bogus" is not a NaN policy (accepted: "zero", "propagate")',
        ),
        (
            lambda x: ewise.sign(x, nan="Zero"),
            'nan="Zero" is not a NaN policy (accepted: "zero", "propagate")',
        ),
        (
            lambda x: ewise.is_infinity(x, mode="both"),
            'mode="both" is not an infinity mode (accepted: "either", "positive", "negative", "neither")',
        ),
        (
            lambda x: ewise.is_infinity(x, dtype=np.float32),
            "dtype=<class 'numpy.float32'> is not an is_infinity output type (accepted: uint8, bool)",
        ),
        (
            lambda x: ewise.is_infinity(x, dtype="int8"),
            "dtype='int8' is not an is_infinity output type (accepted: uint8, bool)",
        ),
        (
            lambda x: ewise.is_infinity(x, dtype="no such type"),
            "dtype='no such type' is not an is_infinity output type (accepted: uint8, bool)",
        ),
        (
            lambda x: ewise.sign(x, threads=0),
            "threads=0: give a count of at least 1, or None for one per core",
        ),
        (
            lambda x: ewise.isinf(x, threads=-2),
            "threads=-2: give a count of at least 1, or None for one per core",
        ),
        (
            lambda x: ewise.sign(x, feature_level="9_9"),
            "feature_level: unknown feature level '9_9' (accepted: 1_0, 2_0, 2_1, 3_0, 3_1, "
            "4_0, 4_1, 5_0, 5_1, 5_2, 6_0, 6_1, 6_2, 6_3, 6_4, also written 6.4 or 0x6400)",
        ),
        (
            lambda x: ewise.is_infinity(x, feature_level="7"),
            "feature_level: unknown feature level '7'",
        ),
        (
            lambda x: ewise.sign(x, out=[0.0, 0.0, 0.0]),
            "sign: out must be a numpy.ndarray, not list",
        ),
        (
            lambda x: ewise.sign(x, out=(np.zeros(3, np.float32),)),
            "sign: out must be a numpy.ndarray, not tuple",
        ),
        (
            lambda x: ewise.sign(x, out=np.zeros(3, np.float64)),
            "sign: out has dtype float64, expected float32",
        ),
        (
            lambda x: ewise.is_infinity(x, out=np.zeros(3, np.float32)),
            "is_infinity: out has dtype float32, expected uint8",
        ),
        (
            lambda x: ewise.is_infinity(x, out=np.zeros(3, bool), dtype=np.uint8),
            "is_infinity: out has dtype bool, expected uint8",
        ),
        (
            lambda x: ewise.isinf(x, out=np.zeros(3, np.uint8)),
            "isinf: out has dtype uint8, expected bool",
        ),
        (
            lambda x: ewise.sign(x, out=np.zeros(4, np.float32)),
            "sign: x of shape (3,) does not broadcast to out's shape (4,)",
        ),
        (
            lambda x: ewise.sign(x, out=np.zeros((), np.float32)),
            "sign: x of shape (3,) does not broadcast to out's shape ()",
        ),
        (
            lambda x: ewise.isinf(x, out=np.zeros((3, 2), bool)),
            "isinf: x of shape (3,) does not broadcast to out's shape (3, 2)",
        ),
    ],
)
def test_value_errors(call, message):
    x = np.array([1.0, -np.inf, np.nan], np.float32)
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        call(x)
    assert not isinstance(info.value, ewise.ValidationError)


@pytest.mark.parametrize(
    ("function", "out_dtype"),
    [(ewise.sign, np.float32), (ewise.is_infinity, np.uint8), (ewise.isinf, np.bool_)],
    ids=["sign", "is_infinity", "isinf"],
)
def test_read_only_out(function, out_dtype):
    x = np.ones((2, 3), np.float32)
    o = ro(np.zeros((2, 3), out_dtype))
    with pytest.raises(ValueError, match=re.escape(f"{function.__name__}: out is read-only")):
        function(x, out=o)
    assert not o.any()


def ro(a):
    a.flags.writeable = False
    return a


def test_broadcast_view_as_out_is_read_only():
    x = np.ones(3, np.float32)
    with pytest.raises(ValueError, match="sign: out is read-only"):
        ewise.sign(x, out=np.broadcast_to(np.zeros(1, np.float32), (3,)))


def test_errors_leave_out_untouched():
    out = np.full(3, 5.0, np.float32)
    with pytest.raises(TypeError):
        ewise.sign(np.zeros(3, np.complex64), out=out)
    with pytest.raises(ewise.ValidationError):
        ewise.sign(np.ones(3, np.float32), out=out, feature_level="2_1")
    assert out.tolist() == [5.0, 5.0, 5.0]


# ------------------------------------------------------------------ ValidationError


def test_validation_error_is_a_value_error():
    assert issubclass(ewise.ValidationError, ValueError)
    assert issubclass(ewise.OnnxError, ValueError)
    assert ewise.ValidationError is ewise._ewise.ValidationError


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: ewise.sign(np.ones(3, np.float32), feature_level="2_1"),
            "ELEMENT_WISE_SIGN: InputTensor DimensionCount 1 is not supported at feature "
            "level 2_1 (supported: 4)",
        ),
        (
            lambda: ewise.sign(np.ones(3), feature_level="6_4"),
            "ELEMENT_WISE_SIGN: InputTensor data type FLOAT64 is not supported at feature "
            "level 6_4 (supported: FLOAT32, FLOAT16, INT64, INT32, INT16, INT8, UINT64, "
            "UINT32, UINT16, UINT8)",
        ),
        (
            lambda: ewise.sign(np.ones((1, 1, 1, 3), np.int32), feature_level="2_0"),
            "ELEMENT_WISE_SIGN: InputTensor data type INT32 is not supported at feature "
            "level 2_0 (supported: FLOAT32, FLOAT16)",
        ),
        (
            lambda: ewise.sign(np.ones((1,) * 8, np.int64), feature_level="4_0"),
            "ELEMENT_WISE_SIGN: InputTensor data type INT64 is not supported at feature "
            "level 4_0 (supported: FLOAT32, FLOAT16, INT32, INT16, INT8, UINT32, UINT16, UINT8)",
        ),
        (
            lambda: ewise.sign(np.ones((1, 1, 1, 3), np.float32), feature_level="1_0"),
            "ELEMENT_WISE_SIGN is not supported at feature level 1_0 (introduced at "
            "feature level 2_0)",
        ),
        (
            lambda: ewise.sign(np.ones((2,) * 9, np.float32), feature_level="6_4"),
            "ELEMENT_WISE_SIGN: InputTensor DimensionCount 9 is not supported at feature "
            "level 6_4 (supported: 1 to 8)",
        ),
        (
            lambda: ewise.sign(np.float32(1.0), feature_level="6_4"),
            "ELEMENT_WISE_SIGN: InputTensor DimensionCount 0 is not supported at feature "
            "level 6_4 (supported: 1 to 8)",
        ),
        (
            lambda: ewise.sign(np.ones((2, 0), np.float32), feature_level="6_4"),
            "ELEMENT_WISE_SIGN: InputTensor Sizes[1] is 0 in Sizes [2, 0] (every size must "
            "be at least 1)",
        ),
        (
            lambda: ewise.sign(np.ones((1, 1, 1, 3), ml_bfloat16()), feature_level="6_4"),
            "ELEMENT_WISE_SIGN: InputTensor data type BFLOAT16 is not supported at feature level 6_4",
        ),
        (
            lambda: ewise.is_infinity(np.ones((1, 1, 1, 3), np.float32), feature_level="2_0"),
            "ELEMENT_WISE_IS_INFINITY is not supported at feature level 2_0 (introduced at "
            "feature level 2_1)",
        ),
        (
            lambda: ewise.is_infinity(
                np.ones((1, 1, 1, 3), np.float32), feature_level="2_1", dtype=bool
            ),
            "ELEMENT_WISE_IS_INFINITY: OutputTensor data type BOOL is not supported at "
            "feature level 2_1 (supported: UINT8)",
        ),
        (
            lambda: ewise.is_infinity(np.ones(3), feature_level="6_4"),
            "ELEMENT_WISE_IS_INFINITY: InputTensor data type FLOAT64 is not supported at "
            "feature level 6_4 (supported: FLOAT32, FLOAT16)",
        ),
    ],
)
def test_validation_errors(call, message):
    with pytest.raises(ewise.ValidationError, match=re.escape(message)):
        call()


def ml_bfloat16():
    import ml_dtypes

    return ml_dtypes.bfloat16


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.linspace(-2, 2, 12, dtype=np.float32).reshape(1, 2, 2, 3),
        lambda: np.linspace(-2, 2, 48, dtype=np.float32).reshape(2, 2, 4, 3)[::-1, :, ::2],
        lambda: np.linspace(-2, 2, 24, dtype=np.float32).reshape(2, 2, 2, 3).transpose(3, 2, 1, 0),
        lambda: np.broadcast_to(np.linspace(-2, 2, 3, dtype=np.float32).reshape(1, 1, 1, 3), (2, 2, 2, 3)),
        lambda: np.linspace(-2, 2, 12, dtype=np.float16).reshape(1, 2, 2, 3),
    ],
)
def test_valid_4d_tensors_accepted_at_2_1(make):
    x = make()
    got = ewise.sign(x, feature_level="2_1")
    assert_same_bits(got, oracle.sign(x))
    assert_same_bits(ewise.is_infinity(x, feature_level="2_1"), oracle.is_infinity(x).view(np.uint8))


def test_feature_level_spellings_and_later_levels():
    x = np.array([-1.5, 0.0, 2.0], np.float32)
    for level in ["3_0", "6_4", "6.4", "0x6400"]:
        assert_same_bits(ewise.sign(x, feature_level=level), oracle.sign(x))
    assert_same_bits(ewise.sign(np.ones((1,) * 8, np.int64), feature_level="4_1"), np.ones((1,) * 8, np.int64))
    assert ewise.FEATURE_LEVELS[0] == "1_0" and ewise.FEATURE_LEVELS[-1] == "6_4"
    assert len(ewise.FEATURE_LEVELS) == 15


def test_device_keyword():
    x = np.array([-1.0, 2.0], np.float32)
    assert_same_bits(ewise.sign(x, device="cpu"), oracle.sign(x))
    with pytest.raises(ValueError, match=re.escape('device="tpu" is not a device (accepted: "cpu", "gpu")')):
        ewise.sign(x, device="tpu")


@pytest.mark.parametrize(
    "call",
    [
        lambda x, s: ewise.sign(x, nan=s),
        lambda x, s: ewise.is_infinity(x, mode=s),
        lambda x, s: ewise.sign(x, device=s),
        lambda x, s: ewise.sign(x, feature_level=s),
        lambda x, s: ewise.is_infinity(x, dtype=s),
    ],
)
def test_hostile_strings_are_cut_in_messages(call):
    long = "x" * (1 << 20)
    with pytest.raises(ValueError) as info:
        call(np.zeros(3, np.float32), long)
    message = str(info.value)
    assert len(message) < 1000, len(message)
    assert "chars)" in message, message
