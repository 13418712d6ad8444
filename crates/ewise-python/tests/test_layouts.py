"""Layouts: every result equals the oracle and the contiguous-copy result, bit for bit,
for strided, reversed, transposed, broadcast, Fortran, misaligned, big-endian,
read-only and subclassed inputs; ``out=`` layouts never touch a byte outside ``out``'s
elements; overlapping input and output behave as if the input were copied first."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ewise
import oracle
from oracle import INFINITY_TYPES, SIGN_TYPES, assert_same_bits, bits

SENTINEL_BYTE = 0xA5


def dense(x):
    """A C-ordered copy that keeps 0-d arrays 0-d (``np.ascontiguousarray`` makes them 1-d)."""
    return np.array(x, order="C", copy=True)


def specials(name: str) -> list[int]:
    """Bit patterns of every class of a type: zeros, ones, infinities, NaNs, extremes."""
    if name in oracle.SIGN_INTS:
        w = 8 * np.dtype(name).itemsize
        return [0, 1, 2 ** (w - 1), 2 ** (w - 1) - 1, 2**w - 1]
    f = oracle.FORMATS[name]
    s, e = f.sign_mask, f.exponent_mask
    return [0, s, 1, s | 1, e, s | e, e | 1, s | e | 1, s - 1, 2 * s - 1, e - 1]


def random_array(seed: int, shape, name: str, order: str = "C") -> np.ndarray:
    """Random bit patterns of ``name``, about a quarter replaced by special values."""
    rng = np.random.default_rng(seed)
    u = oracle.uint_of(name)
    w = 8 * np.dtype(u).itemsize
    a = rng.integers(0, 2**w, size=shape, dtype=u) if w < 64 else rng.integers(
        0, 2**64, size=shape, dtype=np.uint64
    )
    sp = np.array(specials(name), dtype=u)
    pick = rng.random(size=shape) < 0.25
    a[pick] = sp[rng.integers(0, len(sp), size=int(pick.sum()))]
    a = a.view(oracle.dtype(name))
    return np.asfortranarray(a) if order == "F" else a


def misaligned_copy(a):
    """``a``'s elements (same shape and order) at an odd address, in a writable buffer."""
    order = "F" if a.flags.f_contiguous and not a.flags.c_contiguous else "C"
    raw = np.asarray(a, order=order).reshape(-1, order=order).view(np.uint8)
    buf = bytearray(1 + raw.size)
    buf[1:] = raw.tobytes()
    flat = np.frombuffer(buf, dtype=a.dtype, count=a.size, offset=1)
    return flat.reshape(a.shape, order=order)


@st.composite
def slices_for(draw, shape):
    index = []
    for n in shape:
        step = draw(st.sampled_from([1, 1, 2, 3, -1, -2]))
        start = draw(st.integers(0, n)) if n else 0
        stop = draw(st.integers(0, n)) if n else 0
        if step < 0:
            start, stop = max(start, stop), min(start, stop)
            index.append(slice(start, None if stop == 0 else stop - 1, step) if n else slice(None, None, step))
        else:
            start, stop = min(start, stop), max(start, stop)
            index.append(slice(start, stop, step))
    return tuple(index)


@st.composite
def input_views(draw, names, max_dims=6):
    """(name, view): a random array of a drawn dtype, then slicing with steps
    (negative too), a transpose, and a broadcast (zero strides), each optional."""
    name = draw(st.sampled_from(names))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=0, max_side=5))
    order = draw(st.sampled_from("CF"))
    base = random_array(draw(st.integers(0, 2**32 - 1)), shape, name, order)
    storage = draw(st.sampled_from(["native", "native", "misaligned", "big-endian"]))
    if storage == "misaligned" and base.size:
        base = misaligned_copy(base)
    elif storage == "big-endian" and base.dtype.isbuiltin and base.dtype.itemsize > 1:
        base = base.astype(base.dtype.newbyteorder(">"))
    v = base
    if draw(st.booleans()):
        v = v[draw(slices_for(v.shape))]
    if v.ndim > 1 and draw(st.booleans()):
        v = v.transpose(draw(st.permutations(range(v.ndim))))
    if draw(st.booleans()) and v.ndim < 7:
        axis = draw(st.integers(0, v.ndim))
        size = draw(st.integers(0, 4))
        v = np.broadcast_to(np.expand_dims(v, axis), v.shape[:axis] + (size,) + v.shape[axis:])
    if draw(st.booleans()) and v.ndim and all(v.shape) and 1 in v.shape:
        # broadcast an existing size-1 axis too
        axis = v.shape.index(1)
        v = np.broadcast_to(v, v.shape[:axis] + (3,) + v.shape[axis + 1 :])
    return name, v


def check_sign(x, nan):
    got = ewise.sign(x, nan=nan)
    assert isinstance(got, np.ndarray) or x.ndim == 0
    want = oracle.sign(dense(x), nan)
    assert_same_bits(got, want, f"sign of {x.dtype} shape {x.shape} strides {x.strides}")
    assert_same_bits(got, ewise.sign(dense(x), nan=nan), "vs contiguous")
    return got


def check_is_infinity(x, mode, out_dtype):
    got = ewise.is_infinity(x, mode=mode, dtype=out_dtype)
    want = oracle.is_infinity(dense(x), mode).astype(out_dtype)
    assert_same_bits(got, want, f"is_infinity of {x.dtype} shape {x.shape} strides {x.strides}")


# ------------------------------------------------------------------- input layouts


@given(view=input_views(SIGN_TYPES), nan=st.sampled_from(["zero", "propagate"]))
def test_sign_input_layouts(view, nan, ml_dtypes):
    _, x = view
    check_sign(x, nan)


@given(
    view=input_views(INFINITY_TYPES),
    mode=st.sampled_from(oracle.MODES),
    out_dtype=st.sampled_from([np.uint8, np.bool_]),
)
def test_is_infinity_input_layouts(view, mode, out_dtype, ml_dtypes):
    _, x = view
    check_is_infinity(x, mode, out_dtype)


@given(view=input_views(["float32", "float16", "bfloat16", "float8_e5m2"]))
def test_isinf_input_layouts(view, ml_dtypes):
    _, x = view
    got = ewise.isinf(x, detect_negative=False)
    assert_same_bits(got, oracle.is_infinity(dense(x), "positive"), "isinf")


@pytest.mark.parametrize("rank", [33, 40, 64])
def test_rank_above_32(rank):
    """numpy allows 64 dimensions; ewise (without feature_level=) takes them all."""
    shape = (1,) * (rank - 3) + (2, 3, 2)
    x = random_array(rank, shape, "float32")
    check_sign(x, "propagate")
    check_sign(x[..., ::-1, :, ::2], "zero")
    check_sign(np.broadcast_to(x[..., :1], shape), "zero")
    check_is_infinity(x, "either", np.bool_)


@pytest.mark.parametrize("name", SIGN_TYPES)
def test_empty_and_zero_dimensional(name, ml_dtypes):
    for shape in [(0,), (3, 0), (0, 5, 2), (2, 0, 0, 1)]:
        x = random_array(1, shape, name)
        got = ewise.sign(x)
        assert isinstance(got, np.ndarray) and got.shape == shape and got.dtype == x.dtype
    x = random_array(2, (), name)
    got = ewise.sign(x, nan="propagate")
    assert np.ndim(got) == 0 and np.asarray(got).dtype == x.dtype
    assert_same_bits(np.asarray(got), oracle.sign(x, "propagate"))


@pytest.mark.parametrize("name", SIGN_TYPES)
@pytest.mark.parametrize("offset", [1, 3])
def test_misaligned_input(name, offset, ml_dtypes):
    d = oracle.dtype(name)
    src = random_array(7, (6, 7), name)
    buf = bytearray(b"\x00" * offset) + bytearray(src.tobytes())
    x = np.frombuffer(buf, dtype=d, count=src.size, offset=offset).reshape(6, 7)
    assert not x.flags.aligned or d.itemsize == 1
    assert_same_bits(x, src)
    for view in (x, x[::-1, 1::2], x.T):
        check_sign(view, "propagate")
    if name in INFINITY_TYPES:
        check_is_infinity(x[:, ::-2], "either", np.uint8)


@pytest.mark.parametrize("name", ["float16", "float32", "float64", "int16", "uint32", "int64"])
def test_big_endian_input(name):
    src = random_array(11, (5, 8), name)
    big = src.astype(src.dtype.newbyteorder(">"))
    assert not big.dtype.isnative
    for view in (big, big[::-1, ::3], big.T):
        got = ewise.sign(view, nan="propagate")
        assert got.dtype.isnative and got.dtype == src.dtype
        assert_same_bits(got, oracle.sign(dense(view), "propagate"))
        assert_same_bits(got, ewise.sign(dense(view).astype(src.dtype), nan="propagate"))
    if name.startswith("float"):
        assert_same_bits(ewise.isinf(big), oracle.is_infinity(src))


def test_read_only_inputs():
    x = random_array(3, (40, 30), "float32")
    x.flags.writeable = False
    check_sign(x, "zero")
    check_sign(x[::2, ::-3], "propagate")
    check_is_infinity(x.T, "negative", np.bool_)
    # a read-only buffer (bytes), as pandas 3 and Ray hand out
    y = np.frombuffer(x.tobytes(), dtype=np.float32).reshape(40, 30)
    assert not y.flags.writeable
    assert_same_bits(ewise.sign(y), oracle.sign(x))


class Tagged(np.ndarray):
    """An ndarray subclass with its own attribute."""

    def __array_finalize__(self, obj):
        self.tag = getattr(obj, "tag", "tagged")


def test_ndarray_subclasses(tmp_path):
    x = random_array(5, (20, 10), "float32")
    sub = x.view(Tagged)
    assert_same_bits(ewise.sign(sub), oracle.sign(x))
    assert_same_bits(ewise.sign(sub[::-1]), oracle.sign(x[::-1]))
    assert_same_bits(ewise.isinf(sub.T), oracle.is_infinity(x.T))
    # np.memmap, a subclass over a file
    m = np.memmap(tmp_path / "x.bin", dtype=np.float32, mode="w+", shape=x.shape)
    m[...] = x
    assert_same_bits(ewise.sign(m, nan="propagate"), oracle.sign(x, "propagate"))
    out = np.memmap(tmp_path / "y.bin", dtype=np.float32, mode="w+", shape=x.shape)
    assert ewise.sign(m, out=out) is out
    assert_same_bits(out, oracle.sign(x))
    # a subclass as out
    o = np.zeros(x.shape, np.float32).view(Tagged)
    assert ewise.sign(x, out=o) is o
    assert_same_bits(np.asarray(o), oracle.sign(x))


def test_array_likes_and_scalars():
    assert_same_bits(ewise.sign([-3.0, 0.0, 2.0]), np.array([-1.0, 0.0, 1.0]))
    assert_same_bits(ewise.sign([[-3, 5]]), np.array([[-1, 1]]))
    s = ewise.sign(-2.5)
    assert type(s) is np.float64 and int(bits(s)) == 0xBFF0000000000000
    s = ewise.sign(np.float16(-0.0))
    assert type(s) is np.float16 and int(bits(s)) == 0
    assert ewise.isinf(float("-inf")) is np.True_
    assert ewise.is_infinity(np.float32("inf"), mode="negative") == np.uint8(0)


def test_interleaved_and_fancy_strides():
    # a stride that is not a multiple of the item size (a structured field view)
    rec = np.zeros(50, dtype=[("a", "u1"), ("b", "<f4")])
    rec["b"] = random_array(9, (50,), "float32")
    field = rec["b"]
    assert field.strides == (5,)
    check_sign(field, "propagate")
    check_is_infinity(field[::-1], "either", np.uint8)
    # complex numbers' real parts: stride 8 for float32
    c = np.zeros(30, np.complex64)
    c.real[...] = random_array(1, (30,), "float32")
    assert c.real.strides == (8,)
    check_sign(c.real, "zero")
    check_sign(c.imag[::-3], "propagate")


# --------------------------------------------------------------------- out layouts


@st.composite
def out_views(draw, shape, dtype):
    """(base, out, mask): ``out`` of ``shape`` and ``dtype`` as a strided, possibly
    reversed and transposed view into a sentinel-filled ``base``; ``mask`` marks the
    base elements that ``out`` covers."""
    n = len(shape)
    perm = draw(st.permutations(range(n))) if n > 1 else list(range(n))
    steps = [draw(st.sampled_from([1, 2, 3, -1, -2])) for _ in range(n)]
    pre = [shape[p] for p in perm]
    pads = [draw(st.integers(0, 2)) for _ in range(n)]
    base_shape = tuple(size * abs(step) + pad for size, step, pad in zip(pre, steps, pads))
    base = np.empty(base_shape, dtype)
    fill_sentinel(base)
    index = []
    for size, step, pad in zip(pre, steps, pads):
        lo = draw(st.integers(0, pad))
        if size == 0:
            index.append(slice(lo, lo, step))
        elif step > 0:
            index.append(slice(lo, lo + size * step, step))
        else:
            first = lo + (size - 1) * abs(step)
            index.append(slice(first, (first + size * step) if first + size * step >= 0 else None, step))
    index = tuple(index) if n else ...  # base[()] of a 0-d array is a scalar, not a view
    inverse = np.argsort(perm) if n else ()
    out = base[index].transpose(inverse)
    mask = np.zeros(base_shape, bool)
    mask[index].transpose(inverse)[...] = True
    assert out.shape == tuple(shape)
    return base, out, mask


def fill_sentinel(base):
    base.reshape(-1).view(np.uint8)[...] = SENTINEL_BYTE


def assert_outside_untouched(base, mask):
    raw = dense(base).view(oracle.uint_of(base.dtype.newbyteorder("=")))
    sentinel = np.full((), SENTINEL_BYTE, np.uint8).repeat(base.dtype.itemsize).view(raw.dtype)[0]
    outside = raw[~mask]
    assert np.all(outside == sentinel), f"{np.count_nonzero(outside != sentinel)} bytes outside out changed"


@given(
    data=st.data(),
    name=st.sampled_from(SIGN_TYPES),
    nan=st.sampled_from(["zero", "propagate"]),
    big_endian=st.booleans(),
)
def test_sign_out_layouts(data, name, nan, big_endian, ml_dtypes):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=5, min_side=0, max_side=5), label="shape")
    x = random_array(data.draw(st.integers(0, 2**32 - 1)), shape, name)
    if data.draw(st.booleans(), label="reverse x") and x.ndim:
        x = x[::-1]
    d = x.dtype
    if big_endian and d.itemsize > 1 and d.isbuiltin:
        d = d.newbyteorder(">")
    base, out, mask = data.draw(out_views(shape, d), label="out")
    got = ewise.sign(x, out=out, nan=nan)
    assert got is out
    assert_same_bits(out, oracle.sign(x, nan), f"sign into out strides {out.strides}")
    assert_outside_untouched(base, mask)


@given(
    data=st.data(),
    name=st.sampled_from(INFINITY_TYPES),
    mode=st.sampled_from(oracle.MODES),
    out_dtype=st.sampled_from([np.uint8, np.bool_]),
)
def test_is_infinity_out_layouts(data, name, mode, out_dtype, ml_dtypes):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=5, min_side=0, max_side=5), label="shape")
    x = random_array(data.draw(st.integers(0, 2**32 - 1)), shape, name)
    base, out, mask = data.draw(out_views(shape, np.dtype(out_dtype)), label="out")
    assert ewise.is_infinity(x, mode=mode, out=out, dtype=out_dtype) is out
    assert_same_bits(out, oracle.is_infinity(x, mode).astype(out_dtype))
    assert_outside_untouched(base, mask)
    # isinf into a bool out
    if out_dtype is np.bool_:
        fill_sentinel(base)
        assert ewise.isinf(x, detect_positive=False, out=out) is out
        assert_same_bits(out, oracle.is_infinity(x, "negative"))
        assert_outside_untouched(base, mask)


@pytest.mark.parametrize("name", ["float32", "float64", "int16", "bfloat16", "int8"])
def test_misaligned_out(name, ml_dtypes):
    x = random_array(4, (4, 9), name)
    d = x.dtype
    buf = bytearray([SENTINEL_BYTE]) * (x.nbytes + 2)
    out = np.frombuffer(buf, dtype=d, count=x.size, offset=1).reshape(x.shape)
    assert out.flags.writeable
    assert ewise.sign(x[::-1], out=out, nan="propagate") is out
    assert_same_bits(out, oracle.sign(x[::-1], "propagate"))
    assert buf[0] == SENTINEL_BYTE and buf[-1] == SENTINEL_BYTE
    # a strided misaligned out: every other element
    buf = bytearray([SENTINEL_BYTE]) * (2 * x.nbytes + 1)
    raw = np.frombuffer(buf, dtype=d, count=2 * x.size, offset=1)
    out = raw[::2].reshape(x.shape)
    ewise.sign(x, out=out)
    assert_same_bits(out, oracle.sign(x))
    untouched = np.frombuffer(bytes(buf[1:]), dtype=np.uint8).reshape(-1, d.itemsize)[1::2]
    assert np.all(untouched == SENTINEL_BYTE)


def test_big_endian_out_and_broadcast_input():
    x = random_array(12, (1, 7), "float32")
    out = np.zeros((5, 7), ">f4")
    assert ewise.sign(x, out=out, nan="propagate") is out
    assert out.dtype.str == ">f4"
    assert_same_bits(out, oracle.sign(np.broadcast_to(x, (5, 7)), "propagate"))
    # a 1-d input broadcast to a 3-d out (leading axes added)
    y = random_array(13, (7,), "float16")
    out = np.empty((2, 3, 7), np.float16, order="F")
    ewise.sign(y, out=out)
    assert_same_bits(out, oracle.sign(np.broadcast_to(y, (2, 3, 7))))


# ------------------------------------------------------------ in place and overlap


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16", "int8", "uint64", "float64"])
@pytest.mark.parametrize("view", ["whole", "strided", "reversed", "transposed", "fortran"])
def test_in_place(name, view, ml_dtypes):
    base = random_array(21, (12, 10), name, order="F" if view == "fortran" else "C")
    before = base.copy()
    sel = {
        "whole": np.s_[...],
        "strided": np.s_[1::3, ::2],
        "reversed": np.s_[::-1, ::-2],
        "transposed": np.s_[...],
        "fortran": np.s_[...],
    }[view]
    x = base[sel].T if view == "transposed" else base[sel]
    want = oracle.sign(x.copy(), "propagate")
    assert ewise.sign(x, out=x, nan="propagate") is x
    assert_same_bits(x, want)
    # elements outside the view are untouched
    mask = np.zeros(base.shape, bool)
    mask[sel] = True
    assert_same_bits(base[~mask], before[~mask])


def apply_as_if_copied(buf, x_index, out_index, function):
    """What ``function(buf[x_index], out=buf[out_index])`` must leave in ``buf``."""
    want = buf.copy()
    want[out_index] = function(buf[x_index].copy())
    return want


OVERLAPS = {
    "shift-forward": (np.s_[:-1], np.s_[1:]),
    "shift-back": (np.s_[1:], np.s_[:-1]),
    "shift-by-3": (np.s_[:-3], np.s_[3:]),
    "reversed-onto-itself": (np.s_[::-1], np.s_[:]),
    "reversed-shifted": (np.s_[-2::-1], np.s_[1:]),
    "interleaved": (np.s_[::2], np.s_[1::2]),
    "strided-into-prefix": (np.s_[::2], np.s_[: 50]),
    "prefix-into-strided": (np.s_[:50], np.s_[::2]),
}


@pytest.mark.parametrize("case", list(OVERLAPS))
@pytest.mark.parametrize("name", ["float32", "int16", "float16"])
def test_partial_overlap_1d(case, name):
    buf = random_array(31, (100,), name)
    xi, oi = OVERLAPS[case]
    want = apply_as_if_copied(buf, xi, oi, lambda a: oracle.sign(a, "propagate"))
    ewise.sign(buf[xi], out=buf[oi], nan="propagate")
    assert_same_bits(buf, want, case)


def test_partial_overlap_2d():
    buf = random_array(32, (20, 20), "float32")
    cases = [
        (np.s_[:-1, :], np.s_[1:, :]),
        (np.s_[:, 1:], np.s_[:, :-1]),
        (np.s_[1:, 1:], np.s_[:-1, :-1]),
        (np.s_[::-1, ::-1], np.s_[:, :]),
    ]
    for xi, oi in cases:
        want = apply_as_if_copied(buf, xi, oi, lambda a: oracle.sign(a, "zero"))
        ewise.sign(buf[xi], out=buf[oi])
        assert_same_bits(buf, want, f"{xi} -> {oi}")
    # the transpose of a square matrix into itself
    want = oracle.sign(buf.T.copy(), "zero")
    ewise.sign(buf.T, out=buf)
    assert_same_bits(buf, want, "transpose onto itself")


@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 40),
    x_start=st.integers(0, 60),
    o_start=st.integers(0, 60),
    x_step=st.sampled_from([1, 2, 3, -1, -2]),
    o_step=st.sampled_from([1, 2, -1, -3]),
    name=st.sampled_from(["float32", "float64", "uint8", "bfloat16"]),
)
def test_overlap_property(seed, n, x_start, o_start, x_step, o_step, name, ml_dtypes):
    size = 200
    buf = random_array(seed, (size,), name)

    def index(start, step):
        if step > 0:
            return np.arange(start, start + n * step, step)
        return np.arange(start + (n - 1) * -step, start - 1, step)[:n]

    xi, oi = index(x_start, x_step), index(o_start, o_step)
    assert xi.max() < size and oi.max() < size
    # as basic slices (views), not fancy indices
    def as_slice(idx):
        step = int(idx[1] - idx[0]) if len(idx) > 1 else 1
        stop = int(idx[-1]) + (1 if step > 0 else -1)
        return slice(int(idx[0]), stop if stop >= 0 else None, step)

    xs, os_ = as_slice(xi), as_slice(oi)
    assert np.shares_memory(buf, buf[xs])
    want = apply_as_if_copied(buf, xs, os_, lambda a: oracle.sign(a, "propagate"))
    ewise.sign(buf[xs], out=buf[os_], nan="propagate")
    assert_same_bits(buf, want)


def test_is_infinity_output_overlapping_input():
    """IS_INFINITY has no in-place form: output bytes over the input's read as if the
    input were copied first."""
    raw = np.zeros(64, np.uint8)
    x16 = raw.view(np.float16)
    x16[::3] = np.inf
    x16[1::5] = -np.inf
    original = x16.copy()
    out = raw[:32]  # overlaps x16's first 16 elements, byte-interleaved
    ewise.is_infinity(x16, out=out)
    assert_same_bits(out, oracle.is_infinity(original).view(np.uint8))
    # float8 -> uint8 on exactly the same bytes: same addresses, different types
    import ml_dtypes

    raw = np.arange(256, dtype=np.uint8)
    f8 = raw.view(ml_dtypes.float8_e5m2)
    want = oracle.is_infinity(f8.copy()).view(np.uint8)
    assert ewise.is_infinity(f8, out=raw) is raw
    assert_same_bits(raw, want)


@pytest.mark.parametrize("order", ["C", "F"])
def test_misaligned_copy_helper(order):
    """The strategy's misaligned storage really is misaligned and bit-identical."""
    a = random_array(3, (4, 5), "float64", order)
    m = misaligned_copy(a)
    assert not m.flags.aligned and m.flags.writeable
    assert m.flags.f_contiguous == (order == "F")
    assert_same_bits(m, a)


def test_big_endian_bfloat16_and_in_place_big_endian(ml_dtypes):
    b = random_array(41, (64,), "bfloat16")
    big = b.astype(b.dtype.newbyteorder(">"))
    assert not big.dtype.isnative
    assert_same_bits(ewise.sign(big, nan="propagate"), oracle.sign(b, "propagate"))
    assert_same_bits(ewise.isinf(big[::-1]), oracle.is_infinity(b[::-1]))
    x = random_array(42, (9, 5), "float32").astype(">f4")
    want = oracle.sign(x, "propagate")
    assert ewise.sign(x, out=x, nan="propagate") is x
    assert x.dtype.str == ">f4"
    assert_same_bits(x, want)
