"""ewise on a real two-process Dask cluster: 512 MiB of float32 made on the workers,
each worker allowed less memory than the array, results checked on the workers
against the oracle; only mismatch counts come back to the client."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import ewise
import oracle

pytestmark = pytest.mark.slow

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")

MIB = 1 << 20
TOTAL_BYTES = 512 * MIB
CHUNK_BYTES = 32 * MIB
WORKER_MEMORY = 480 * MIB  # below the array's 512 MiB: it never sits whole on one worker
CHUNK = CHUNK_BYTES // 4
BLOCKS = TOTAL_BYTES // CHUNK_BYTES


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    """A LocalCluster of two single-threaded worker processes on the loopback interface.

    The oracle (and this module) are pickled by value: spawned workers cannot import
    test modules by reference."""
    modules = [oracle, sys.modules[__name__]]
    for m in modules:
        cloudpickle.register_pickle_by_value(m)
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        memory_limit=WORKER_MEMORY,
        local_directory=str(tmp_path_factory.mktemp("dask-worker-space")),
    )
    c = distributed.Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()
        for m in modules:
            cloudpickle.unregister_pickle_by_value(m)


def random_float32():
    """512 MiB of random float32 bit patterns, every block made on its worker."""
    return da.map_blocks(
        oracle.random_f32_block,
        chunks=((CHUNK,) * BLOCKS,),
        dtype=np.float32,
        meta=np.empty((0,), np.float32),
    )


def mismatch_count(got, want):
    counts = da.map_blocks(
        oracle.mismatches, got, want, chunks=((1,) * BLOCKS,), dtype=np.int64,
        meta=np.empty((0,), np.int64),
    )
    return counts.sum()


def test_cluster_has_two_worker_processes(client):
    pids = client.run(os.getpid)
    assert len(pids) == 2
    assert len(set(pids.values())) == 2
    assert os.getpid() not in pids.values()
    for info in client.scheduler_info()["workers"].values():
        assert info["memory_limit"] == WORKER_MEMORY < TOTAL_BYTES
    # ewise on a worker is the same build as here
    versions = client.run(lambda: __import__("ewise").__version__)
    assert set(versions.values()) == {ewise.__version__}


@pytest.mark.parametrize("form", ["ewise.sign(x)", "x.map_blocks(ewise.sign)"])
def test_sign_on_the_cluster(client, form):
    x = random_float32()
    assert x.nbytes == TOTAL_BYTES and x.npartitions == BLOCKS
    if form == "ewise.sign(x)":
        got = ewise.sign(x, nan="propagate", threads=1)
    else:
        got = x.map_blocks(ewise.sign, nan="propagate", threads=1, dtype=np.float32)
    want = x.map_blocks(oracle.sign_block, nan="propagate", dtype=np.float32)
    with distributed.get_task_stream(client) as stream:
        bad = mismatch_count(got, want).compute()
    assert bad == 0, f"{bad} elements differ from the oracle"
    workers = {task["worker"] for task in stream.data}
    assert len(workers) == 2, f"tasks ran on {workers}"


def test_sign_nan_zero_on_the_cluster(client):
    x = random_float32()
    got = ewise.sign(x, threads=1)  # the default policy: NaN gives +0
    want = x.map_blocks(oracle.sign_block, nan="zero", dtype=np.float32)
    assert mismatch_count(got, want).compute() == 0


def test_isinf_on_the_cluster(client):
    x = random_float32()
    got = ewise.isinf(x, threads=1)
    want = x.map_blocks(oracle.is_infinity_block, mode="either", dtype=bool)
    assert mismatch_count(got, want).compute() == 0
    # the special values really occur: count infinities on the workers
    infinities = int(got.sum().compute())
    assert infinities > 2 * BLOCKS


def test_worker_errors_come_back_typed(client):
    x = da.ones(8, dtype=np.float32, chunks=4)
    with pytest.raises(ewise.ValidationError, match="DimensionCount 1 is not supported at feature level 2_1"):
        ewise.sign(x, feature_level="2_1").compute()
