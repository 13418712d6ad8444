"""What device="gpu" prints and says, in a fresh process with the environment a
service has: no XDG_RUNTIME_DIR, EWISE_GPU_BACKEND set but empty, no adapter."""

from __future__ import annotations

import pytest

from gpu_support import adapter_or_skip, child

CALL = "import numpy as np, ewise; print(ewise.sign(np.array([-2.0, 0.0, 3.0]), device='gpu').tolist())"


def test_a_successful_gpu_call_prints_nothing_without_xdg_runtime_dir():
    # The adapter named, so that a software renderer gives no SoftwareRendererWarning
    # (test_defaults.py checks that warning).
    name = adapter_or_skip().split()[0]
    run = child(CALL, XDG_RUNTIME_DIR=None, EWISE_GPU_ADAPTER=name)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[-1.0, 0.0, 1.0]"
    assert run.stderr == ""


@pytest.mark.parametrize("value", ["", ",", " , "])
def test_an_empty_backend_variable_is_unset(value):
    adapter_or_skip()
    run = child(CALL, EWISE_GPU_BACKEND=value)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[-1.0, 0.0, 1.0]"


def test_no_adapter_names_backends_as_users_write_them():
    run = child(
        "import ewise\ntry:\n    ewise.gpu_adapter()\nexcept ewise.GpuError as e:\n    print(e)",
        EWISE_GPU_ADAPTER="no adapter has this name",
        XDG_RUNTIME_DIR=None,
    )
    assert run.returncode == 0, run.stderr
    message = run.stdout.strip()
    assert message, "gpu_adapter() found an adapter named 'no adapter has this name'"
    assert "Backends(" not in message and "NOOP" not in message and "BROWSER" not in message, message
    assert "\n" not in message, message
    assert run.stderr == ""
