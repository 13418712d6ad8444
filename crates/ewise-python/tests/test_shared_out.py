"""An ``out`` whose elements share memory (a zero stride, or steps that overlap) is
written as numpy writes it: through a temporary, each shared place ending with the
value of its last element in C order. One behaviour on every device and layout."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import ewise
from gpu_support import devices


# (name, first element's offset in items, shape, strides in items)
LAYOUTS = [
    ("zero stride, outer axis", 0, (3, 4), (0, 1)),
    ("zero stride, inner axis", 0, (4, 3), (1, 0)),
    ("every element one place", 0, (3, 4), (0, 0)),
    ("zero stride, middle axis", 0, (2, 3, 4), (4, 0, 1)),
    ("rows overlapping rows", 0, (5, 4), (2, 1)),
    ("zero stride, reversed inner", 11, (3, 4), (0, -1)),
    ("zero stride, transposed", 0, (4, 3), (0, 1)),
    ("one axis of one element", 0, (1, 5), (0, 0)),
]


def shared_out(dtype, offset, shape, strides):
    base = np.zeros(64, dtype)
    item = base.itemsize
    return base, as_strided(base[offset:], shape, [s * item for s in strides])


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.float64, np.uint16])
@pytest.mark.parametrize("layout", LAYOUTS, ids=[layout[0] for layout in LAYOUTS])
def test_sign_into_shared_out_matches_numpy(device, dtype, layout):
    _, offset, shape, strides = layout
    rng = np.random.default_rng(abs(hash((shape, strides))) % 2**32)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    mine, out = shared_out(dtype, offset, shape, strides)
    theirs, reference = shared_out(dtype, offset, shape, strides)
    np.sign(x, out=reference)
    assert ewise.sign(x, out=out, device=device) is out
    assert mine.tobytes() == theirs.tobytes()


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("layout", LAYOUTS, ids=[layout[0] for layout in LAYOUTS])
def test_isinf_into_shared_out_matches_numpy(device, layout):
    _, offset, shape, strides = layout
    x = np.zeros(shape, np.float32)
    x.reshape(-1)[::3] = np.inf
    x.reshape(-1)[1::5] = -np.inf
    mine, out = shared_out(bool, offset, shape, strides)
    theirs, reference = shared_out(bool, offset, shape, strides)
    np.isinf(x, out=reference)
    ewise.isinf(x, out=out, device=device)
    assert mine.tobytes() == theirs.tobytes()
    mine, out = shared_out(np.uint8, offset, shape, strides)
    theirs, reference = shared_out(np.uint8, offset, shape, strides)
    np.isinf(x, out=reference, casting="unsafe")
    ewise.is_infinity(x, out=out, device=device)
    assert mine.tobytes() == theirs.tobytes()


@pytest.mark.parametrize("device", devices())
def test_shared_out_under_a_feature_level(device):
    """DirectML's rules apply to the tensors ewise runs, the temporary's, so a level
    that takes the shape takes a shared out too."""
    mine, out = shared_out(np.float32, 0, (2, 2, 2, 3), (0, 0, 3, 1))
    theirs, reference = shared_out(np.float32, 0, (2, 2, 2, 3), (0, 0, 3, 1))
    x = np.linspace(-2, 2, 24, dtype=np.float32).reshape(2, 2, 2, 3)
    np.sign(x, out=reference)
    ewise.sign(x, out=out, feature_level="2_1", device=device)
    assert mine.tobytes() == theirs.tobytes()
