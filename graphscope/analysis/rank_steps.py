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


def _names_of(trace: Trace, ids: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """(the distinct name ids, their strings): names are looked up once each, never once per event."""
    distinct = np.unique(ids)
    return distinct, [trace.symbols.name(int(i)) if i >= 0 else "" for i in distinct.tolist()]


def step_ranges(trace: Trace, name: str | None = None) -> tuple[str | None, np.ndarray, np.ndarray]:
    """(the step name used, starts, ends) of the step ranges in start order."""
    nvtx = trace.nvtx
    empty = np.empty(0, np.int64)
    if not len(nvtx):
        return None, empty, empty
    text, start, end = np.asarray(nvtx.text), np.asarray(nvtx.start, np.int64), np.asarray(nvtx.end, np.int64)
    ranged = end > start
    ids, names = _names_of(trace, text[ranged])
    if name is None:
        if any(fnmatch.fnmatchcase(n, PROFILER_STEP) for n in names):
            name = PROFILER_STEP
        else:
            counts = dict(zip(names, np.bincount(np.searchsorted(ids, text[ranged]), minlength=len(ids)).tolist()))
            common = sorted(((c, n) for n, c in counts.items() if n and c >= 2), reverse=True)
            name = common[0][1] if common else None
    if name is None:
        return None, empty, empty
    matched = ids[[fnmatch.fnmatchcase(n, name) for n in names]] if len(ids) else ids
    chosen = ranged & np.isin(text, matched)
    order = np.argsort(start[chosen], kind="stable")
    return name, start[chosen][order], end[chosen][order]


def _clipped_sum(starts: np.ndarray, ends: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Per window [low, high): the summed length of the intervals clipped to it (intervals sorted by start).
    Only intervals starting after `low` minus the longest interval can reach into a window."""
    result = np.zeros(len(low), dtype=np.int64)
    if not len(starts):
        return result
    reach = int((ends - starts).max())
    firsts, lasts = np.searchsorted(starts, low - reach), np.searchsorted(starts, high)
    for i, (a, b, first, last) in enumerate(zip(low.tolist(), high.tolist(), firsts.tolist(), lasts.tolist())):
        s, e = np.maximum(starts[first:last], a), np.minimum(ends[first:last], b)
        result[i] = int(np.clip(e - s, 0, None).sum())
    return result


def rank_steps(trace: Trace, step: str | None = None) -> dict[str, Any]:
    """The rank's steps and their parts (see the module docstring), as lists of integers (ns)."""
    name, starts, ends = step_ranges(trace, step)
    kernels = trace.kernels
    k_start, k_end = np.asarray(kernels.start, np.int64), np.asarray(kernels.end, np.int64)
    name_ids = np.asarray(kernels.short_name if "short_name" in kernels else kernels.name)
    ids, names = _names_of(trace, name_ids)
    comm = np.isin(name_ids, ids[[is_communication(n) for n in names]]) if len(ids) else np.zeros(0, bool)
    comm_starts = np.sort(k_start[comm])  # a step's arrival: the first communication kernel it starts
    arrive = ends.copy()
    if len(comm_starts):
        after = comm_starts[np.minimum(np.searchsorted(comm_starts, starts), len(comm_starts) - 1)]
        arrive = np.where((after >= starts) & (after < ends), after, ends)
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
