"""device="gpu": the same bytes as the CPU for every type, layout, out= form and policy.

Runs on whatever adapter ewise.gpu_adapter() names (lavapipe in CI). Without one the
tests skip, unless EWISE_REQUIRE_GPU=1, where they fail.
"""

import os

import numpy as np
import pytest

import ewise

ml_dtypes = pytest.importorskip("ml_dtypes")


def _adapter() -> str | None:
    try:
        return ewise.gpu_adapter()
    except ewise.GpuError as e:
        if os.environ.get("EWISE_REQUIRE_GPU") == "1":
            pytest.fail(f"EWISE_REQUIRE_GPU=1 but no GPU adapter: {e}")
        return None


@pytest.fixture(scope="module", autouse=True)
def gpu() -> str:
    adapter = _adapter()
    if adapter is None:
        pytest.skip("no GPU adapter (install Mesa's lavapipe: scripts/gpu-driver.sh)")
    return adapter


SIGN_TYPES = [
    np.float32, np.float16, np.float64, ml_dtypes.bfloat16,
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
]
INF_TYPES = [
    np.float32, np.float16, np.float64, ml_dtypes.bfloat16,
    ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz,
    ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2fnuz,
]


def random_array(dtype, shape, seed=0):
    itemsize = np.dtype(dtype).itemsize
    n = int(np.prod(shape))
    bits = np.random.default_rng(seed).integers(0, 256, n * itemsize, dtype=np.uint8)
    return bits.view(dtype).reshape(shape)


def layouts(x):
    """The same 3-D array in several layouts (views, never copies)."""
    return {
        "contiguous": x,
        "reversed": x[::-1, :, ::-1],
        "transposed": x.transpose(2, 0, 1),
        "sliced": x[:, 1::2, :5],
        "broadcast": np.broadcast_to(x[:, :1, :], x.shape),
    }


def same_bytes(a, b) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("dtype", SIGN_TYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("nan", ["zero", "propagate"])
def test_sign_matches_cpu(dtype, nan) -> None:
    x = random_array(dtype, (6, 7, 9))
    for name, v in layouts(x).items():
        cpu = ewise.sign(v, nan=nan)
        gpu = ewise.sign(v, nan=nan, device="gpu")
        assert same_bytes(cpu, gpu), name


@pytest.mark.parametrize("dtype", INF_TYPES, ids=lambda d: np.dtype(d).name)
def test_infinity_matches_cpu(dtype) -> None:
    x = random_array(dtype, (5, 8, 6), seed=1)
    for name, v in layouts(x).items():
        for mode in ["either", "positive", "negative", "neither"]:
            for out_type in [np.uint8, bool]:
                cpu = ewise.is_infinity(v, mode=mode, dtype=out_type)
                gpu = ewise.is_infinity(v, mode=mode, dtype=out_type, device="gpu")
                assert same_bytes(cpu, gpu), (name, mode, out_type)
        for flags in [(True, True), (True, False), (False, True), (False, False)]:
            cpu = ewise.isinf(v, detect_positive=flags[0], detect_negative=flags[1])
            gpu = ewise.isinf(v, detect_positive=flags[0], detect_negative=flags[1], device="gpu")
            assert same_bytes(cpu, gpu), (name, flags)


@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.float32, np.float64])
def test_out_leaves_everything_else_alone(dtype) -> None:
    x = random_array(dtype, (4, 6), seed=2)
    want = ewise.sign(x)
    base = np.full((8, 13), 77, dtype=dtype)
    out = base[::2, 1::2][:, :6]
    got = ewise.sign(x, out=out, device="gpu")
    assert got is out
    assert same_bytes(np.ascontiguousarray(out), want)
    mask = np.ones(base.shape, bool)
    mask[::2, 1::2][:, :6] = False
    assert (base[mask] == 77).all()


def test_in_place_and_overlap() -> None:
    y = random_array(np.int16, (1000,), seed=3)
    want = ewise.sign(y)
    assert ewise.sign(y, out=y, device="gpu") is y
    assert same_bytes(y, want)
    z = np.arange(-8, 8, dtype=np.float32)
    want = ewise.sign(z[:-1])
    ewise.sign(z[:-1], out=z[1:], device="gpu")
    assert same_bytes(z[1:], want)


def test_scalars_empty_and_validation() -> None:
    assert ewise.sign(np.float32(-3), device="gpu") == np.float32(-1)
    assert ewise.sign(np.zeros((0, 3), np.float32), device="gpu").shape == (0, 3)
    with pytest.raises(ewise.ValidationError, match="DimensionCount 1 is not supported at feature level 2_1"):
        ewise.sign(np.ones(3, np.float32), feature_level="2_1", device="gpu")
    x4 = np.ones((1, 1, 2, 3), np.float32)
    assert same_bytes(ewise.sign(x4, feature_level="2_1", device="gpu"), x4)
    with pytest.raises(ValueError, match='device="tpu" is not a device'):
        ewise.sign(x4, device="tpu")


def test_adapter_line(gpu: str) -> None:
    assert gpu == ewise.gpu_adapter()
    assert "(" in gpu and "driver" in gpu
