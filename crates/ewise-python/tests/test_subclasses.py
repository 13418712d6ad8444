"""ndarray subclasses: masked arrays and matrices are refused with a TypeError that says
why (ewise would drop the mask, or the matrix type); other subclasses, such as
``numpy.memmap``, are read and written as the ndarrays they are."""

from __future__ import annotations

import re

import numpy as np
import pytest

import ewise


CALLS = {
    "sign": lambda x, **kw: ewise.sign(x, **kw),
    "is_infinity": lambda x, **kw: ewise.is_infinity(x, **kw),
    "isinf": lambda x, **kw: ewise.isinf(x, **kw),
}


@pytest.mark.parametrize("function", list(CALLS))
def test_masked_array_is_refused(function):
    x = np.ma.masked_array([1.0, -np.inf, 3.0], mask=[False, True, False])
    with pytest.raises(TypeError, match=re.escape(f"{function}: x is a masked array")):
        CALLS[function](x)


@pytest.mark.parametrize("function", list(CALLS))
def test_matrix_is_refused(function):
    with pytest.warns(PendingDeprecationWarning):
        x = np.matrix([[1.0, -2.0], [np.inf, 0.0]])
    with pytest.raises(TypeError, match=re.escape(f"{function}: x is a numpy.matrix")):
        CALLS[function](x)


def test_masked_out_is_refused_and_untouched():
    out = np.ma.masked_array(np.full(3, 9.0), mask=[False, True, False])
    with pytest.raises(TypeError, match=re.escape("sign: out is a masked array")):
        ewise.sign(np.ones(3), out=out)
    assert out.data.tolist() == [9.0, 9.0, 9.0]


def test_the_message_says_what_to_do():
    x = np.ma.masked_array([1.0], mask=[True])
    with pytest.raises(TypeError, match=r"filled\(value\)"):
        ewise.sign(x)


def test_memmap_in_and_out(tmp_path):
    x = np.memmap(tmp_path / "x", np.float32, "w+", shape=(1000,))
    x[:] = np.linspace(-5, 5, 1000, dtype=np.float32)
    out = np.memmap(tmp_path / "o", np.float32, "w+", shape=(1000,))
    assert ewise.sign(x, out=out) is out
    assert np.array_equal(np.asarray(out), np.sign(np.asarray(x)))
    result = ewise.sign(x)
    assert type(result) is np.ndarray


def test_masked_data_is_accepted():
    x = np.ma.masked_array([1.0, -2.0], mask=[False, True])
    assert ewise.sign(np.ma.getdata(x)).tolist() == [1.0, -1.0]
