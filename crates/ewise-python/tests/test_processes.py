"""Long-lived processes: fork() after ewise has run (multiprocessing's fork context,
gunicorn, Celery prefork), and many thread counts over the life of one process."""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
import time

import numpy as np
import pytest

import ewise
from gpu_support import adapter_or_skip

pytestmark = [
    pytest.mark.skipif(
        not hasattr(os, "fork") or sys.platform == "darwin", reason="fork() is a Linux/BSD story"
    ),
    # Python 3.12+ warns that forking a process with threads may deadlock: the very
    # situation under test.
    pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning"),
]

SIZES = [1 << 16, 1 << 18, 1 << 22, 1 << 24]  # float32 elements: helpers and pools


def work(n: int) -> bool:
    x = np.linspace(-3, 3, n, dtype=np.float32)
    return bool(np.array_equal(ewise.sign(x), np.sign(x)) and np.array_equal(
        ewise.sign(x, threads=3), np.sign(x)
    ))


def warm_up() -> None:
    for n in SIZES:
        assert work(n)




def test_cpu_calls_complete_in_forked_children():
    warm_up()
    pool = multiprocessing.get_context("fork").Pool(2)
    try:
        results = pool.map_async(work, SIZES * 2).get(timeout=120)
    except multiprocessing.TimeoutError:
        pool.terminate()
        pytest.fail("a forked child hung in ewise")
    finally:
        pool.terminate()
        pool.join()
    assert all(results)


def test_os_fork_while_another_thread_computes():
    """The fork lands while a parent thread is inside a parallel call: the child still
    completes its own calls."""
    stop = threading.Event()

    def busy():
        while not stop.is_set():
            work(1 << 22)

    thread = threading.Thread(target=busy)
    thread.start()
    try:
        for _ in range(3):
            pid = os.fork()
            if pid == 0:
                code = 0 if all(work(n) for n in SIZES) else 3
                os._exit(code)
            deadline = 120
            start = time.monotonic()
            while True:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                if time.monotonic() - start > deadline:
                    os.kill(pid, 9)
                    os.waitpid(pid, 0)
                    pytest.fail("the forked child hung in ewise")
                time.sleep(0.02)
            assert os.waitstatus_to_exitcode(status) == 0
    finally:
        stop.set()
        thread.join()


def gpu_in_child(_: int) -> str:
    try:
        ewise.sign(np.ones(1 << 16, np.float32), device="gpu")
        return "ran"
    except ewise.GpuError as e:
        return f"GpuError: {e}"


def test_gpu_after_fork_raises_promptly():
    adapter_or_skip()
    assert ewise.sign(np.ones(1 << 16, np.float32), device="gpu").all()
    pool = multiprocessing.get_context("fork").Pool(1)
    try:
        (result,) = pool.map_async(gpu_in_child, [0]).get(timeout=60)
        (cpu,) = pool.map_async(work, [1 << 22]).get(timeout=60)
    except multiprocessing.TimeoutError:
        pytest.fail("a forked child hung on the GPU")
    finally:
        pool.terminate()
        pool.join()
    assert result.startswith("GpuError: ") and "fork" in result, result
    assert cpu
    assert ewise.sign(np.ones(1 << 16, np.float32), device="gpu").all()


def wait_child(pid: int, deadline: float) -> int:
    """The exit code of child `pid`; killed, and the test failed, past `deadline` s."""
    start = time.monotonic()
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() - start > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung on the GPU")
        time.sleep(0.01)


def test_gpu_after_fork_while_a_thread_streams_raises_at_once():
    """The fork lands while a parent thread is inside a streaming GPU call, holding the
    stream's lock: the child's GPU calls raise GpuError at once instead of waiting for a
    lock no thread of the child will release."""
    adapter_or_skip()
    x = np.linspace(-3, 3, 1 << 22, dtype=np.float32)
    stop = threading.Event()

    def busy():
        while not stop.is_set():
            ewise.sign(x, device="gpu")

    thread = threading.Thread(target=busy)
    thread.start()
    try:
        for _ in range(5):
            time.sleep(0.05)
            pid = os.fork()
            if pid == 0:
                code = 4
                try:
                    start = time.monotonic()
                    for _ in range(3):
                        try:
                            ewise.sign(x[:4096], device="gpu")
                            code = 3
                            break
                        except ewise.GpuError as e:
                            code = 0 if "fork" in str(e) else 5
                    if code == 0 and time.monotonic() - start > 5:
                        code = 6
                    if code == 0 and not np.array_equal(ewise.sign(x), np.sign(x)):
                        code = 7
                finally:
                    os._exit(code)
            assert wait_child(pid, 60) == 0
    finally:
        stop.set()
        thread.join()


def os_threads() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    raise AssertionError("no Threads: line")


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="Linux /proc")
def test_thread_counts_do_not_grow_with_distinct_threads_values():
    x = np.linspace(-1, 1, 1 << 22, dtype=np.float32)
    ewise.sign(x)
    before = os_threads()
    for n in range(2, 34):
        assert np.array_equal(ewise.sign(x, threads=n), np.sign(x))
    for n in (1000, 10**9):
        assert np.array_equal(ewise.sign(x, threads=n), np.sign(x))
    after = os_threads()
    cores = len(os.sched_getaffinity(0))
    cap = min(4 * cores, 256)
    assert after <= before + cap, f"{before} threads before, {after} after threads=2..33"
    for n in range(2, 34):
        ewise.sign(x, threads=n)
    assert os_threads() <= after, "threads grew on a second round of the same counts"
