"""Whether the GPU tests can run: an adapter, or a skip (a failure under
``EWISE_REQUIRE_GPU=1``, as scripts/gpu-driver.sh sets on a host with lavapipe)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import ewise


def adapter_or_skip() -> str:
    """The adapter ``device="gpu"`` runs on; skips the test when there is none."""
    try:
        return ewise.gpu_adapter()
    except ewise.GpuError as e:
        if os.environ.get("EWISE_REQUIRE_GPU") == "1":
            pytest.fail(f"EWISE_REQUIRE_GPU=1 but no GPU adapter: {e}")
        pytest.skip(f"no GPU adapter: {e}")


def devices() -> list[str]:
    """``["cpu", "gpu"]``, or ``["cpu"]`` without an adapter (for parametrizing)."""
    try:
        ewise.gpu_adapter()
    except ewise.GpuError as e:
        if os.environ.get("EWISE_REQUIRE_GPU") == "1":
            raise AssertionError(f"EWISE_REQUIRE_GPU=1 but no GPU adapter: {e}") from e
        return ["cpu"]
    return ["cpu", "gpu"]


def child(code: str, **env: str | None) -> subprocess.CompletedProcess[str]:
    """``code`` run by this interpreter in a new process, with ``env`` changed (``None``
    removes a variable)."""
    environment = dict(os.environ)
    for key, value in env.items():
        if value is None:
            environment.pop(key, None)
        else:
            environment[key] = value
    return subprocess.run(
        [sys.executable, "-c", code], env=environment, capture_output=True, text=True, timeout=300
    )
