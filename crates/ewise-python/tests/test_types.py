"""The stubs' types, checked by running mypy: ``stub_types/cases.py`` holds calls whose
result types ``assert_type`` pins (NDArray of the input's dtype for ``sign``, uint8 or
bool for ``is_infinity``, Dask in and Dask out, ``out=``'s type), ``stub_types/wrong.py``
calls the stubs must refuse. Without mypy (``pip install mypy``) the test skips, and
fails under ``CI=true``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "stub_types"


def mypy_errors() -> dict[str, set[int]]:
    """Lines with a mypy error, by file name, from one ``mypy --strict`` run over both
    files (about 10 s: numpy's stubs are read once)."""
    try:
        import mypy  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("mypy is not installed, which CI requires")
        pytest.skip("mypy is not installed (pip install mypy)")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--show-error-codes",
         "--no-error-summary", "--cache-dir", os.devnull,
         str(HERE / "cases.py"), str(HERE / "wrong.py")],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode in (0, 1) and not done.stderr, done.stdout + done.stderr
    found: dict[str, set[int]] = {"cases.py": set(), "wrong.py": set()}
    for m in re.finditer(r"(cases|wrong)\.py:(\d+): error", done.stdout):
        found[m.group(1) + ".py"].add(int(m.group(2)))
    MYPY_OUTPUT.append(done.stdout)
    return found


MYPY_OUTPUT: list[str] = []


@pytest.fixture(scope="module")
def errors() -> dict[str, set[int]]:
    return mypy_errors()


def test_the_stubs_give_the_promised_types(errors):
    assert errors["cases.py"] == set(), MYPY_OUTPUT


def test_the_stubs_refuse_wrong_calls(errors):
    lines = (HERE / "wrong.py").read_text().splitlines()
    expected = {i + 1 for i, line in enumerate(lines) if line.endswith("# E")}
    assert errors["wrong.py"] == expected, MYPY_OUTPUT
