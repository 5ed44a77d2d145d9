"""How a rank job's files are spread: local worker processes sized to the cores and the files, one SQLite
reader thread each on a machine of few cores; small ranks read in one process when workers would not
repay their start; a worker that dies once has its file read by another; a running Dask scheduler (named,
or in DASK_SCHEDULER_ADDRESS) gives the same job."""

from __future__ import annotations

import os

import pytest

from graphscope.ranks import pool
from graphscope.ranks.job import analyse_job
from graphscope.trace.bulk import read_threads
from tests.ranks.helpers import forkjoin_ranks, once_dying_reader, serial_job, worker_facts
from tests.synthetic_ranks import write_rank_set


def test_each_worker_reads_with_its_share_of_the_cores(tmp_path):
    paths = [str(p) for p in forkjoin_ranks(tmp_path, 4)]
    rows = pool.read_in_processes(paths, None, worker_facts, 2)
    assert sorted(r["path"] for r in rows) == sorted(paths)
    assert len({r["pid"] for r in rows}) == 2 and os.getpid() not in {r["pid"] for r in rows}
    assert {r["threads"] for r in rows} == {max(1, pool.cores() // 2)}
    one = pool.read_in_processes(paths[:1], None, worker_facts, 1)
    assert one[0]["threads"] == min(32, pool.cores())


def test_the_reader_threads_follow_the_variable(monkeypatch):
    monkeypatch.setenv("GRAPHSCOPE_READ_THREADS", "3")
    assert read_threads() == 3
    for junk in ("0", "-1", "two", ""):
        monkeypatch.setenv("GRAPHSCOPE_READ_THREADS", junk)
        assert read_threads() == max(1, min(32, len(os.sched_getaffinity(0))))


def test_small_ranks_are_read_in_one_process_and_large_ones_by_workers(tmp_path):
    small = [str(p) for p in forkjoin_ranks(tmp_path / "small", 8)]  # 0.7 MB exports: tens of ms each
    assert not pool.worth_workers(small, 2) and not pool.worth_workers(small[:1], 8)
    job = analyse_job([tmp_path / "small"], "graph_*")
    assert job["engine"]["scheduler"] == "in-process" and job["engine"]["workers"] == 1
    big = []
    for rank in range(2):  # sparse files: only their size is looked at
        path = tmp_path / f"rank{rank}.json.gz"
        with path.open("wb") as f:
            f.truncate(10**7)
        big.append(str(path))
    assert pool.worth_workers(big, 2) and not pool.worth_workers(big, 1)
    assert pool.worth_workers([*small[:1], str(tmp_path / "rank0.nsys-rep")], 2)  # nsys converts it: seconds


def test_a_worker_that_dies_once_has_its_file_read_by_another(tmp_path):
    write_rank_set(tmp_path, world=3, steps=4)
    job = analyse_job([tmp_path], workers=2, reader=once_dying_reader)
    assert (tmp_path / "rank1.pt.trace.json.died").exists()
    assert [r["rank"] for r in job["ranks"]] == [0, 1, 2] and not job["problems"]
    expected, got = serial_job([tmp_path]), dict(job)
    expected.pop("engine", None), got.pop("engine")
    assert got == expected


def test_a_running_dask_scheduler_gives_the_same_job(tmp_path, monkeypatch):
    distributed = pytest.importorskip("dask.distributed")
    write_rank_set(tmp_path, world=3, steps=4)
    local = analyse_job([tmp_path], workers=2)
    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster:
        named = analyse_job([tmp_path], scheduler=cluster.scheduler_address)
        monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", cluster.scheduler_address)
        from_env = analyse_job([tmp_path])
    assert local["engine"]["scheduler"] == "local" and local["engine"]["workers"] == 2
    for job in (named, from_env):
        assert job["engine"]["scheduler"] == cluster.scheduler_address and job["engine"]["workers"] == 1
        assert {k: v for k, v in job.items() if k != "engine"} == {k: v for k, v in local.items() if k != "engine"}


def test_the_job_reads_each_file_once_with_more_workers_than_files(tmp_path):
    paths = [str(p) for p in forkjoin_ranks(tmp_path, 2)]
    rows = pool.read_in_processes(paths, None, worker_facts, 8)
    assert sorted(r["path"] for r in rows) == sorted(paths) and len({r["pid"] for r in rows}) <= 2
    assert {r["threads"] for r in rows} == {max(1, pool.cores() // 2)}
