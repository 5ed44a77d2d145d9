"""One rank of a distributed job, reduced to what a cross-rank view needs: its steps and what each spent.

A step is one instance of the step range (`ProfilerStep#*` in a PyTorch-profiler trace, else the NVTX
range name with the most instances, or the one asked for). Within a step: when the rank arrived at its
first collective (the first communication kernel to start: NCCL/RCCL names, core.events), the GPU time
of its other kernels before that, its host's API time before that, and its communication kernel time.
The rest of the row is the rank's own summary: the steady-state launch verdict, GPU utilisation, graph
launches. Plain numbers: this runs in a Dask worker and travels back to the scheduler.
"""

from __future__ import annotations

import fnmatch
import re
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from graphscope.core.events import is_communication
from graphscope.trace import Trace

PROFILER_STEP = "ProfilerStep#*"
_RANK_IN_NAME = re.compile(r"(?:rank|_r|-r)[_-]?(\d+)", re.IGNORECASE)


def rank_of(trace: Trace) -> int | None:
    """The rank the trace says it is (PyTorch's distributedInfo), else a number in its file name."""
    said = trace.info.capture.get("rank")
    if said is not None and str(said).lstrip("-").isdigit():
        return int(said)
    found = _RANK_IN_NAME.findall(Path(trace.path).name) or re.findall(r"(\d+)", Path(trace.path).stem)
    return int(found[-1]) if found else None


def step_ranges(trace: Trace, name: str | None = None) -> tuple[str | None, np.ndarray, np.ndarray]:
    """(the step name used, starts, ends) of the step ranges in start order."""
    nvtx = trace.nvtx
    if not len(nvtx):
        return None, np.empty(0, np.int64), np.empty(0, np.int64)
    texts = np.asarray([trace.symbols.name(int(t)) if t >= 0 else "" for t in nvtx.text.tolist()], dtype=object)
    ranged = np.asarray(nvtx.end) > np.asarray(nvtx.start)
    if name is None:
        if any(fnmatch.fnmatchcase(t, PROFILER_STEP) for t in set(texts[ranged].tolist())):
            name = PROFILER_STEP
        else:
            counts = Counter(texts[ranged].tolist())
            common = [(n, c) for n, c in counts.most_common() if n and c >= 2]
            name = common[0][0] if common else None
    if name is None:
        return None, np.empty(0, np.int64), np.empty(0, np.int64)
    names = set(texts[ranged].tolist())
    matched = {n for n in names if fnmatch.fnmatchcase(n, name)}
    chosen = ranged & np.isin(texts, list(matched))
    order = np.argsort(np.asarray(nvtx.start)[chosen], kind="stable")
    return (
        name,
        np.asarray(nvtx.start)[chosen][order].astype(np.int64),
        np.asarray(nvtx.end)[chosen][order].astype(np.int64),
    )


def _clipped_sum(starts: np.ndarray, ends: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Per window [low, high): the summed length of the intervals clipped to it (intervals sorted by start)."""
    result = np.zeros(len(low), dtype=np.int64)
    for i, (a, b) in enumerate(zip(low.tolist(), high.tolist())):
        first, last = np.searchsorted(starts, a - (1 << 40)), np.searchsorted(starts, b)
        s, e = np.maximum(starts[first:last], a), np.minimum(ends[first:last], b)
        result[i] = int(np.clip(e - s, 0, None).sum())
    return result


def rank_steps(trace: Trace, step: str | None = None) -> dict[str, Any]:
    """The rank's steps and their parts (see the module docstring), as lists of integers (ns)."""
    name, starts, ends = step_ranges(trace, step)
    kernels = trace.kernels
    k_start, k_end = np.asarray(kernels.start, np.int64), np.asarray(kernels.end, np.int64)
    names = [
        trace.symbols.name(int(n))
        for n in np.asarray(kernels.short_name if "short_name" in kernels else kernels.name).tolist()
    ]
    comm = np.fromiter((is_communication(n) for n in names), bool, len(names))
    arrive = ends.copy()
    for i, (a, b) in enumerate(zip(starts.tolist(), ends.tolist())):
        inside = comm & (k_start >= a) & (k_start < b)
        if inside.any():
            arrive[i] = int(k_start[inside].min())
    order = np.argsort(k_start, kind="stable")
    k_start, k_end, comm = k_start[order], k_end[order], comm[order]
    compute_busy = _clipped_sum(k_start[~comm], k_end[~comm], starts, arrive)
    comm_ns = _clipped_sum(k_start[comm], k_end[comm], starts, ends)
    api = trace.api
    a_order = np.argsort(np.asarray(api.start), kind="stable")
    host_ns = _clipped_sum(
        np.asarray(api.start, np.int64)[a_order], np.asarray(api.end, np.int64)[a_order], starts, arrive
    )
    return {
        "step_name": name,
        "start": starts.tolist(),
        "end": ends.tolist(),
        "arrive": arrive.tolist(),
        "compute_busy_ns": compute_busy.tolist(),
        "host_ns": host_ns.tolist(),
        "comm_ns": comm_ns.tolist(),
        "communication_kernels": int(comm.sum()),
    }
