"""Rank-job helpers for tests: the job without Dask (each file through the same reader, numbering and
combining), copies of a shipped Nsight export as ranks, and readers that misbehave inside a worker."""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

from graphscope.ranks.job import analyse_serially, rank_rows

FORKJOIN = Path(__file__).resolve().parents[1] / "data" / "h200_forkjoin_node.sqlite"


def serial_job(items: list[Path], step: str | None = None) -> dict[str, Any]:
    """What analyse_job computes, in this process: every file read by rank_rows, numbered, combined."""
    return analyse_serially(items, step)


def forkjoin_ranks(folder: Path, count: int, sql: dict[int, str] | None = None) -> list[Path]:
    """`count` copies of the shipped fork-join export named rank{r}.sqlite, `sql[r]` run on rank r's."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for rank in range(count):
        path = folder / f"rank{rank}.sqlite"
        shutil.copyfile(FORKJOIN, path)
        if sql and rank in sql:
            with sqlite3.connect(path) as db:
                db.executescript(sql[rank])
        paths.append(path)
    return paths


def dying_reader(path: str, step: str | None = None) -> list[dict[str, Any]]:
    """rank_rows, except that reading a file named rank3.* kills the worker process outright."""
    if Path(path).name.startswith("rank3."):
        os._exit(1)
    return rank_rows(path, step)


def slow_reader(path: str, step: str | None = None) -> list[dict[str, Any]]:
    """rank_rows after a minute: a job that is still running when the test interrupts it."""
    time.sleep(60)
    return rank_rows(path, step)


def once_dying_reader(path: str, step: str | None = None) -> list[dict[str, Any]]:
    """rank_rows, except that the first reading of a file named rank1.* kills its worker (a marker file
    beside it remembers the death): the retry on another worker reads it."""
    marker = Path(path).with_name(Path(path).name + ".died")
    if Path(path).name.startswith("rank1.") and not marker.exists():
        marker.touch()
        os._exit(1)
    return rank_rows(path, step)


def worker_facts(path: str, step: str | None = None) -> list[dict[str, Any]]:
    """Not a rank: which process read the file, and with how many SQLite reader threads."""
    from graphscope.trace.bulk import read_threads

    return [{"path": path, "pid": os.getpid(), "threads": read_threads()}]


def graph_ranks(folder: Path, world: int, eager: dict[int, set[int] | None]) -> list[Path]:
    """A generated rank set (tests/synthetic_ranks.py) whose ranks replay each step's compute kernels as
    one CUDA graph: the step's launch calls folded into one `cudaGraphLaunch` whose correlation id the
    kernels share (as torch.profiler records a replay). `eager[r]`: the steps rank r runs eagerly instead
    (None: every step, the rank's graph launches removed)."""
    import json

    from tests.synthetic_ranks import write_rank_set

    paths = write_rank_set(folder, world=world, steps=6)
    for rank, path in enumerate(paths):
        skip = eager.get(rank, set())
        if skip is None:
            continue
        document = json.loads(path.read_text())
        events = document["traceEvents"]
        steps = sorted((e for e in events if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
        kernels = {e["args"]["correlation"]: e for e in events if e["cat"] == "kernel" and "nccl" not in e["name"]}
        drop = set()
        for index, step in enumerate(steps):
            if index in skip:
                continue
            lo, hi = step["ts"], step["ts"] + step["dur"]
            calls = [e for e in events if e["cat"] == "cuda_runtime" and lo <= e["ts"] < hi
                     and e["args"]["correlation"] in kernels]  # fmt: skip
            calls[0]["name"] = "cudaGraphLaunch"
            for call in calls[1:]:
                kernels[call["args"]["correlation"]]["args"]["correlation"] = calls[0]["args"]["correlation"]
                drop.add(id(call))
        document["traceEvents"] = [e for e in events if id(e) not in drop]
        path.write_text(json.dumps(document))
    return paths
