"""The README's Python examples run as written, from the repository's root (where the
model they name lies), and give what their comments say."""

import pathlib
import re

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
BLOCKS = re.findall(r"^```python\n(.*?)^```", (ROOT / "README.md").read_text(), re.S | re.M)


def run_block(index: int, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(BLOCKS[index], f"README.md python block {index + 1}", "exec"), scope)
    return scope


def test_the_readme_has_its_two_python_examples() -> None:
    assert len(BLOCKS) == 2


def test_first_example(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = run_block(0, tmp_path, monkeypatch)
    ewise, x = s["ewise"], s["x"]
    bits = lambda a: a.view(np.uint16).tolist()  # noqa: E731
    one, minus_one = 0x3C00, 0xBC00
    assert bits(ewise.sign(x)) == [minus_one, 0, 0, one]
    propagated = ewise.sign(x, nan="propagate")
    assert bits(propagated) == [minus_one, 0, bits(x)[2], one]
    assert ewise.is_infinity(x).tolist() == [0, 0, 0, 1]
    assert ewise.isinf(x, detect_negative=False).tolist() == [False, False, False, True]
    assert bits(s["z"]) == [minus_one, 0, 0, one]
    result = ewise.onnx.run(s["model"], {"x": x.astype(np.float32)})
    assert list(result) == ["y", "inf"]
    assert result["y"].view(np.uint32).tolist()[:2] == [0xBF800000, 0]
    assert np.isnan(result["y"][2]) and result["y"][3] == 1
    assert result["inf"].tolist() == [False, False, False, True]
    big, y, inf = s["big"], s["y"], s["inf"]
    assert (y[::7] == -1).all() and inf[::7].all()
    assert int(np.count_nonzero(inf)) == len(range(0, big.size, 7))
    assert (tmp_path / "y.npy").stat().st_size > 4 * big.size


def test_dask_example(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("xarray")
    s = run_block(1, tmp_path, monkeypatch)
    y = s["y"]
    assert y.shape == (100_000, 10_000) and y.dtype == np.float64
    corner = y[:100, :100].compute()
    assert set(np.unique(corner).tolist()) == {-1.0, 1.0}
