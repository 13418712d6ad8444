"""The GIL is released, calls from many threads are independent, the functions pickle,
and ``ewise.support()`` is the CLI's ``ewise support --json``."""

from __future__ import annotations

import functools
import json
import os
import pickle
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import ewise
import oracle
from oracle import assert_same_bits

REPO = Path(__file__).resolve().parents[3]

# ------------------------------------------------------------------------------ GIL


def stamps_inside(call, x) -> tuple[int, float]:
    """Runs ``call(x)`` while a Python thread counts, stamping the time every 256
    increments; returns how many stamps fell in the middle 80% of the call, and its
    duration. Were the GIL held for the whole call, none could: the interpreter cannot
    switch threads in the middle of a C call that holds it, whatever the scheduling."""
    stop = threading.Event()
    started = threading.Event()
    stamps: list[float] = []

    def count():
        n = 0
        started.set()
        while not stop.is_set():
            n += 1
            if n % 256 == 0:
                stamps.append(time.perf_counter())

    thread = threading.Thread(target=count, daemon=True)
    thread.start()
    started.wait()
    try:
        begin = time.perf_counter()
        call(x)
        end = time.perf_counter()
    finally:
        stop.set()
        thread.join()
    span = end - begin
    return len([t for t in stamps if begin + 0.1 * span < t < end - 0.1 * span]), span


def test_gil_harness_sees_a_held_gil():
    """Control: a long C call that holds the GIL (builtin sum over a range) lets the
    counting thread stamp nothing inside it."""
    inside, span = stamps_inside(lambda n: sum(range(n)), 30_000_000)
    assert span > 0.05
    assert inside == 0


@pytest.mark.parametrize(
    "call",
    [
        lambda x: ewise.sign(x, threads=1),
        lambda x: ewise.is_infinity(x, threads=1),
        lambda x: ewise.sign(x, out=x, threads=1),
    ],
    ids=["sign", "is_infinity", "sign-in-place"],
)
def test_gil_is_released_during_the_kernel(call):
    """A Python thread keeps running while one call works through 256 MiB on one thread."""
    x = np.random.default_rng(0).integers(0, 2**32, size=64 << 20, dtype=np.uint32).view(np.float32)
    inside, span = stamps_inside(call, x)
    assert inside > 100, (
        f"the counting thread stamped {inside} times (x256 increments) during the "
        f"middle 80% of a {span * 1e3:.0f} ms call: the GIL was not released"
    )


def test_concurrent_calls_from_many_threads(ml_dtypes):
    """Threads calling with different types, shapes, policies and layouts at once each
    get their own correct result (no shared compiled-operator or scratch state)."""
    rng = np.random.default_rng(3)
    jobs = []
    for i, name in enumerate(["float32", "float16", "bfloat16", "int8", "float64", "uint32"] * 2):
        u = oracle.uint_of(name)
        w = 8 * np.dtype(u).itemsize
        shape = (50 + i, 30 + 3 * i)
        x = rng.integers(0, 2**w, size=shape, dtype=np.uint64 if w == 64 else u).astype(u).view(oracle.dtype(name))
        jobs.append((x if i % 2 else x[::-1, ::2].T, "propagate" if i % 3 else "zero"))
    failures: list[str] = []

    def work(x, nan):
        want = oracle.sign(x, nan)
        for _ in range(40):
            got = ewise.sign(x, nan=nan, threads=1 + (x.size % 2))
            if not np.array_equal(oracle.bits(got), oracle.bits(want)):
                failures.append(f"{x.dtype} {x.shape} {nan}")
                return

    threads = [threading.Thread(target=work, args=job) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


# ------------------------------------------------------------------------ pickling


@pytest.mark.parametrize("function", [ewise.sign, ewise.is_infinity, ewise.isinf])
def test_functions_pickle_by_reference(function):
    assert pickle.loads(pickle.dumps(function)) is function


def test_partial_round_trip():
    x = np.array([np.nan, -0.0, -3.0, 2.0], np.float32)
    for p in (
        functools.partial(ewise.sign, nan="zero"),
        functools.partial(ewise.sign, nan="propagate", threads=1),
        functools.partial(ewise.is_infinity, mode="negative", dtype=bool),
        functools.partial(ewise.isinf, detect_positive=False),
    ):
        q = pickle.loads(pickle.dumps(p, protocol=pickle.HIGHEST_PROTOCOL))
        assert q.func is p.func and q.keywords == p.keywords
        assert_same_bits(q(x), p(x))
    assert oracle.bits(pickle.loads(pickle.dumps(functools.partial(ewise.sign, nan="zero")))(x)).tolist() == [
        0, 0, 0xBF800000, 0x3F800000
    ]


def test_exceptions_pickle():
    """Errors raised on a Dask worker travel back pickled."""
    try:
        ewise.sign(np.ones(3, np.float32), feature_level="2_1")
    except ewise.ValidationError as e:
        back = pickle.loads(pickle.dumps(e))
        assert type(back) is ewise.ValidationError and str(back) == str(e)
    else:
        pytest.fail("no ValidationError")


# ------------------------------------------------------------------ support tables


def test_support_shape():
    table = ewise.support()
    names = [op["name"] for op in table["operators"]]
    assert names == ["ELEMENT_WISE_SIGN", "ELEMENT_WISE_IS_INFINITY"]
    sign, isinf = table["operators"]
    assert (sign["value"], sign["introduced"], sign["in_place"]) == (79, "2_0", True)
    assert (isinf["value"], isinf["introduced"], isinf["in_place"]) == (100, "2_1", False)
    assert [r["from_level"] for r in sign["rows"]] == ["2_0", "2_1", "3_0", "4_1"]
    assert [r["from_level"] for r in isinf["rows"]] == ["2_1", "3_0"]
    assert sign["rows"][-1]["input_types"] == [
        "FLOAT32", "FLOAT16", "INT64", "INT32", "INT16", "INT8", "UINT64", "UINT32", "UINT16", "UINT8"
    ]
    assert isinf["extended"]["output_types"] == ["UINT8", "BOOL"]
    assert "feature_level" not in table


def test_support_at_a_level():
    t = ewise.support("2_0")
    assert t["feature_level"] == "2_0"
    sign, isinf = t["operators"]
    assert sign["available"] and not isinf["available"]
    assert isinf["rows"] == []
    assert ewise.support("6.4")["feature_level"] == "6_4"
    with pytest.raises(ValueError, match="feature_level: unknown feature level '2_2'"):
        ewise.support("2_2")


def cli() -> str:
    explicit = os.environ.get("EWISE_CLI")
    if explicit:
        assert os.access(explicit, os.X_OK), f"EWISE_CLI={explicit} is not an executable"
        return explicit
    for profile in ("release", "debug"):
        candidate = REPO / "target" / profile / "ewise"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    pytest.skip(
        "no ewise CLI binary: set EWISE_CLI or build it (cargo build -p ewise-cli) into "
        f"{REPO / 'target'}/{{debug,release}}/ewise"
    )


def cli_json(*args: str):
    run = subprocess.run([cli(), "support", "--json", *args], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_support_equals_cli():
    assert ewise.support() == cli_json()


@pytest.mark.parametrize("level", ["2_0", "2_1", "3_0", "4_1", "6_4"])
def test_support_at_level_equals_cli(level):
    assert ewise.support(level) == cli_json("--feature-level", level)


# ----------------------------------------------------------------------- metadata


def test_version_and_instruction_set():
    assert ewise.__version__ == ewise._ewise.__version__
    assert ewise.__version__.count(".") == 2
    assert ewise.instruction_set() in {"avx2", "portable", "neon", "avx512"}
    assert set(ewise.__all__) <= set(dir(ewise))


def test_gpu_warnings_are_runtime_warnings_of_their_own():
    # AdapterFallbackWarning: adapters passed over because they could not open a device
    # or compile the kernels (only seen where such an adapter exists: under wine, the C
    # and CLI front ends are tested against one by scripts/windows-test.sh).
    for name in ("SoftwareRendererWarning", "AdapterFallbackWarning"):
        cls = getattr(ewise, name)
        assert issubclass(cls, RuntimeWarning) and cls is not RuntimeWarning
        assert name in ewise.__all__
        assert cls.__doc__
    assert ewise.AdapterFallbackWarning is not ewise.SoftwareRendererWarning
