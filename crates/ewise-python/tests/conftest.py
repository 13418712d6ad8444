"""Shared settings for ewise's Python tests.

Nothing here hides failures: ``filterwarnings = error`` (pyproject) stays in force, and
tests that need numpy's own NaN loops wrap exactly those calls in ``np.errstate``.
"""

from __future__ import annotations

import os
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
