"""A set of rank traces analysed as one job on Dask (`dask.distributed`): a local cluster sized to the
machine by default, or a running one (`--scheduler ADDRESS`), so a thousand ranks spread over many
machines. Each task reads one rank into columns and returns its small summary (analysis/rank_steps.py),
so a worker holds one rank at a time; the job's view is combined from those (analysis/rank_skew.py).
A rank that cannot be read comes back as its error: the others are analysed all the same.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from graphscope.core.errors import BadInputError, GraphscopeError, ToolMissingError

TRACE_SUFFIXES = (".sqlite", ".nsys-rep", ".json", ".json.gz")


def rank_files(items: list[Path]) -> list[Path]:
    """The trace files named, a folder standing for the traces directly in it (sorted by name)."""
    files: list[Path] = []
    for item in items:
        if item.is_dir():
            found = sorted(p for p in item.iterdir() if p.is_file() and p.name.endswith(TRACE_SUFFIXES))
            if not found:
                raise BadInputError(f"{item}: a folder with no traces (.sqlite, .nsys-rep, .json, .json.gz)")
            files += found
        elif item.is_file():
            files.append(item)
        else:
            raise BadInputError(f"{item}: no such file or folder")
    return files


def rank_row(path: str, step: str | None = None) -> dict[str, Any]:
    """One rank, reduced (runs in a Dask worker): its steps, verdict and GPU use, or why it could not be read."""
    from graphscope.analysis.rank_steps import rank_of, rank_steps
    from graphscope.analysis.summary import summarize
    from graphscope.core.process import keep_freed_memory
    from graphscope.trace import load_trace

    keep_freed_memory()  # mallopt: cheap to repeat, and a worker may be one graphscope did not start
    try:
        trace = load_trace(path)
        summary = summarize(trace, 5)
        gpus = summary.get("gpu") or []
        capture = trace.info.capture
        return {
            "path": path,
            "rank": rank_of(trace),
            "job": {k: capture.get(k) for k in ("world_size", "backend", "pg_config")},
            "events": sum(len(t) for t in (trace.api, trace.kernels, trace.memcpy, trace.memset, trace.nvtx)),
            "verdict": summary["launch"]["verdict"],
            "launch_bound": summary["launch"].get("launch_bound"),
            "gpu_utilization": sum(g["utilization"] for g in gpus) / len(gpus) if gpus else None,
            "graph_launches": summary["graphs"]["launches"],
            **rank_steps(trace, step),
        }
    except GraphscopeError as exc:
        return {"path": path, "error": exc.message}
    except Exception as exc:  # a rank the reader cannot make sense of: named, the others go on
        return {"path": path, "error": f"{type(exc).__name__}: {exc}".splitlines()[0]}


def client_for(scheduler: str | None, workers: int | None) -> Any:
    """A Dask client: of the running scheduler at `scheduler`, or of a local cluster of one single-threaded
    worker process per core (each rank is numpy work that holds the GIL)."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise ToolMissingError("several rank traces are analysed on Dask: pip install -e '.[ranks]'") from None
    if scheduler:
        try:
            return Client(scheduler, timeout="10s")
        except (OSError, TimeoutError) as exc:
            raise BadInputError(f"cannot reach the Dask scheduler at {scheduler}: {exc}".splitlines()[0]) from None
    count = workers or os.cpu_count() or 1
    cluster = LocalCluster(
        n_workers=count, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
    )
    return Client(cluster)


def analyse_job(
    items: list[Path], step: str | None = None, scheduler: str | None = None, workers: int | None = None
) -> dict[str, Any]:
    """The job's cross-rank view, with how it was computed (cluster, workers, seconds)."""
    from graphscope.analysis.rank_skew import combine

    files = rank_files(items)
    started = time.perf_counter()
    client = client_for(scheduler, workers)
    try:
        engine = {"scheduler": scheduler or "local", "workers": len(client.scheduler_info()["workers"])}
        futures = client.map(rank_row, [str(p) for p in files], step=step, pure=False)
        rows = client.gather(futures)
    finally:
        cluster = getattr(client, "cluster", None)
        client.close()
        if cluster is not None and scheduler is None:
            cluster.close()
    result = combine(rows)
    result["engine"] = {**engine, "files": len(files), "seconds": time.perf_counter() - started}
    return result
