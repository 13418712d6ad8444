"""Calls of any size: axes longer than one ewise tensor dimension, arrays larger than one
GPU buffer, host memory bounded by a piece rather than the array, allocation failures
that raise instead of aborting, and Ctrl-C honoured between pieces."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ewise
from gpu_support import adapter_or_skip

GIB = 1 << 30
MIB = 1 << 20


def available_memory() -> int:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def needs_memory(nbytes: int) -> None:
    free = available_memory()
    if free < nbytes:
        pytest.skip(f"needs {nbytes / GIB:.1f} GiB of available memory, this host has {free / GIB:.1f}")


def run_child(code: str, timeout: float = 300, **kwargs) -> subprocess.CompletedProcess[str]:
    """Runs ``code`` in a fresh interpreter with this one's environment."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        **kwargs,
    )


# ------------------------------------------------------------- axes over 2**32 elements

@pytest.mark.skipif(sys.maxsize < 2**40, reason="a 64-bit address space is needed")
def test_one_dimension_over_2_32_elements_on_the_cpu():
    n = 2**32 + 3
    needs_memory(n + 2 * GIB)
    x = np.broadcast_to(np.float32(np.inf), (n,))
    result = ewise.isinf(x)
    assert result.shape == (n,) and result.dtype == np.bool_
    for i in (0, 1, 2**31, 2**32 - 1, 2**32, n - 1):
        assert result[i], i
    assert np.count_nonzero(result[2**32 - 8:]) == 11
    del result
    out = np.zeros(n, np.int8)[::-1]
    ewise.sign(np.broadcast_to(np.int8(-7), (n,)), out=out)
    base = out[::-1]
    assert base[:16].tolist() == [-1] * 16 and base[-16:].tolist() == [-1] * 16
    assert base[2**32 - 2 : 2**32 + 2].tolist() == [-1] * 4


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("shape", [(0, 2**33), (2**40, 0), (3, 0, 2**34)])
def test_empty_arrays_with_long_axes(device, shape):
    if device == "gpu":
        adapter_or_skip()
    x = np.empty(shape, np.float32)
    assert ewise.sign(x, device=device).shape == shape
    assert ewise.isinf(x, device=device).shape == shape
    out = np.empty(shape, np.uint8)
    assert ewise.is_infinity(x, out=out, device=device) is out


def test_gpu_array_larger_than_a_gpu_buffer():
    """lavapipe binds at most 2 GiB per buffer; this output is larger."""
    adapter_or_skip()
    n = 2 * GIB + 7
    needs_memory(n + GIB)
    x = np.broadcast_to(np.float32(-np.inf), (n,))
    result = ewise.is_infinity(x, mode="negative", device="gpu")
    assert result.dtype == np.uint8 and result.shape == (n,)
    for i in (0, 2**31 - 1, 2**31, n - 1):
        assert result[i] == 1, i
    assert int(result[::4096].sum()) == len(range(0, n, 4096))


# ------------------------------------------------------------------ bounded host memory

# A child's helper: a line of /proc/self/status in bytes.
STATUS = """
def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
"""

PEAK = STATUS + """
import numpy as np, ewise

x = np.random.default_rng(0).integers(-128, 128, {n}, dtype=np.int8)[{index}]
out = np.ones(x.shape, np.int8)
ewise.sign(x[:4096].copy(), device="{device}")  # device and threads up
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
before = status("VmRSS")
ewise.sign(x, out=out, device="{device}")
peak = status("VmHWM")
assert np.array_equal(out, np.sign(x)), "wrong result"
print(peak - before)
"""


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize(
    "index", ["...", "::-1", "1:"], ids=["contiguous", "reversed", "misaligned"]
)
def test_host_memory_is_bounded_by_a_piece(device, index):
    """A 512 MiB call grows the process by a bounded amount, not by the array: about
    4 x GPU_PIECE_BYTES (32 MiB) on the GPU, at most half of CPU_PIECE_BYTES (64 MiB)
    for a temporary on the CPU."""
    if device == "gpu":
        adapter_or_skip()
    n = 512 * MIB
    needs_memory(3 * n)
    child = run_child(PEAK.format(n=n, index=index, device=device))
    assert child.returncode == 0, child.stderr
    grown = int(child.stdout.split()[-1])
    bound = 160 * MIB if device == "gpu" else 48 * MIB
    assert grown < bound, f"{device} {index}: resident memory grew by {grown / MIB:.0f} MiB"


RLIMIT = STATUS + """
import resource, numpy as np, ewise

x = np.ones({n}, np.dtype("{dtype}"))
out = np.empty({n}, np.dtype("{dtype}").newbyteorder("="))
ewise.sign(x[:1 << 20], out=out[:1 << 20], device="{device}")
room = status("VmSize") + {room}
resource.setrlimit(resource.RLIMIT_AS, (room, room))
try:
    ewise.sign(x, out=out, device="{device}")
    print("completed")
except MemoryError as e:
    print("MemoryError", e)
except ewise.GpuError as e:
    print("GpuError", e)
"""


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("dtype", [">f4", "<f4"], ids=["byte-swapped", "native"])
def test_allocation_failure_raises_instead_of_aborting(device, dtype):
    """Under RLIMIT_AS with a few MiB to spare, a call that needs more either completes
    or raises MemoryError / GpuError: the interpreter is never aborted."""
    if device == "gpu":
        adapter_or_skip()
    child = run_child(RLIMIT.format(n=256 * MIB // 4, dtype=dtype, device=device, room=4 * MIB))
    assert child.returncode == 0, f"exit {child.returncode}: {child.stderr[-2000:]}"
    outcome = child.stdout.strip()
    assert outcome.startswith(("completed", "MemoryError", "GpuError")), outcome
    if dtype == ">f4":
        assert outcome.startswith("MemoryError"), outcome


# ------------------------------------------------------------------------ Ctrl-C

INTERRUPTED = """
import os, signal, threading, time, numpy as np, ewise
# Ctrl-C raises KeyboardInterrupt even where SIGINT came ignored (a background job).
signal.signal(signal.SIGINT, signal.default_int_handler)
n = {n}
x = np.broadcast_to(np.float32(-3.0), (n,))
out = np.full(n, 5.0, np.float32)
started = time.monotonic()
ewise.sign(x, out=out, device="{device}", threads=1)
whole = time.monotonic() - started
out[:] = 5.0
timer = threading.Timer(whole / 3, os.kill, (os.getpid(), signal.SIGINT))
started = time.monotonic()
timer.start()
try:
    ewise.sign(x, out=out, device="{device}", threads=1)
    print("completed", whole)
except KeyboardInterrupt:
    took = time.monotonic() - started
    done = int(np.count_nonzero(out == -1.0))
    assert np.all(out[:done] == -1.0) and np.all(out[done:] == 5.0), "out is not a done prefix"
    print("interrupted", whole, took, done)
"""


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_ctrl_c_raises_keyboard_interrupt_between_pieces(device):
    """SIGINT a third of the way through a call that takes `whole` seconds: the call
    raises KeyboardInterrupt before it is done, and out holds a done prefix."""
    if device == "gpu":
        adapter_or_skip()
    n = (2 * GIB if device == "cpu" else 256 * MIB) // 4
    needs_memory(4 * n + GIB)
    child = run_child(INTERRUPTED.format(n=n, device=device))
    assert child.returncode == 0, child.stderr
    words = child.stdout.split()
    assert words[0] == "interrupted", child.stdout
    whole, took, done = float(words[1]), float(words[2]), int(words[3])
    assert 0 < done < n, child.stdout
    assert took < whole, f"KeyboardInterrupt after {took:.2f} s of a {whole:.2f} s call"
