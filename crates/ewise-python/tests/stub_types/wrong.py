"""Calls the stubs refuse: each line must give exactly one mypy error (``test_types.py``
counts them by line)."""

from __future__ import annotations

import numpy as np

import ewise

x = np.zeros(3, np.float32)
ewise.sign(x, nan="Zero")  # E
ewise.sign(x, nan=None)  # E
ewise.is_infinity(x, mode="both")  # E
ewise.sign(x, device="tpu")  # E
ewise.isinf(x, out=np.zeros(3, np.uint8))  # E
