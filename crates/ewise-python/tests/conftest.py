"""Shared settings for ewise's Python tests.

Nothing here hides failures: ``filterwarnings = error`` (pyproject) stays in force, and
tests that need numpy's own NaN loops wrap exactly those calls in ``np.errstate``.
"""

from __future__ import annotations

import os
import shutil
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# `import oracle` from every test module (pytest's rootdir import mode also does this;
# being explicit keeps `python -m pytest path/to/one_file.py` working).
sys.path.insert(0, os.path.dirname(__file__))

# Hypothesis: no per-example deadline (the first call of a kernel, thread pool start-up
# and a loaded 2-core CI machine make timings noisy); a bounded number of examples keeps
# the suite within its time budget. EWISE_HYPOTHESIS_EXAMPLES raises it for soak runs.
settings.register_profile(
    "ewise",
    deadline=None,
    max_examples=int(os.environ.get("EWISE_HYPOTHESIS_EXAMPLES", "100")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.load_profile("ewise")


@pytest.fixture(scope="session")
def ml_dtypes():
    """ml_dtypes (bfloat16, float8): a hard requirement of this suite, not a skip."""
    import ml_dtypes as module

    return module


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)


@pytest.fixture
def tmp_path(tmp_path):
    """pytest's ``tmp_path``, emptied when the test ends, pass or fail.

    Several tests write gigabytes (1 GiB memmaps, files of more than 2**31 elements);
    pytest keeps the last three runs' directories, and two runs of this suite (the build
    tree's and the installed wheel's) would leave about 9 GiB each on a shared disk.
    """
    yield tmp_path
    shutil.rmtree(tmp_path, ignore_errors=True)


def pytest_configure(config):
    """A software renderer opened by the GPU tests gives ``ewise.SoftwareRendererWarning``
    once per process; ``filterwarnings = error`` would turn it into the failure of
    whichever test opened the device first. test_defaults.py checks the warning itself,
    in new processes. (CI names its adapter with EWISE_GPU_ADAPTER, so gives none.)"""
    config.addinivalue_line("filterwarnings", "ignore::ewise.SoftwareRendererWarning")
