"""One rank of a distributed job, reduced to what a cross-rank view needs: its steps and what each spent.

A rank is the GPU work of one process on one GPU: a file whose GPU work comes from several processes
or several GPUs holds several ranks (`rank_units`), each reduced on its own (its process's step ranges
and calls, its GPU's work). A step is one instance of the step ranges: the glob asked for, else the
family the one rule for steps chooses (analysis/step_ranges.py: `ProfilerStep#*` in a PyTorch-profiler
trace; op-level ranges such as `aten::to, op_id = 317177` never, asked for or not), timed from the
range's start to the later of its end and the end of the GPU work launched inside it (the calls of the
rank's process that start in the range, matched to their GPU rows by correlation id): a step whose GPU
work runs on after its CPU range is as long as that work. Within a step: when the rank arrived at its
first collective (the first communication kernel to start: NCCL/RCCL names, core.events; else the
step's end), the GPU time of its other work before that, its host's API time before that, its
communication kernel time, and its GPU busy time (the union of its GPU's rows, so overlapping streams
count once). Plain numbers: this runs in a Dask worker and travels back to the scheduler.
"""

from __future__ import annotations

import fnmatch
from typing import Any

import numpy as np

from graphscope.analysis.step_ranges import chosen, families, is_op_range
from graphscope.core import sets
from graphscope.core.errors import BadInputError
from graphscope.core.events import GPU_WORK, call_key, is_communication
from graphscope.core.table import Table
from graphscope.trace import Trace

WHOLE = (-1, -1)  # the unit of a file without GPU work: every process, every device


def _names_of(trace: Trace, ids: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """(the distinct name ids, their strings): names are looked up once each, never once per event."""
    distinct = sets.unique(ids)
    return distinct, [trace.symbols.name(int(i)) if i >= 0 else "" for i in distinct.tolist()]


def _gpu_tables(trace: Trace) -> list[Table]:
    return [getattr(trace, kind.table) for kind in GPU_WORK]


def rank_units(trace: Trace) -> list[tuple[int, int]]:
    """The (process index, device) pairs that ran GPU work, in process id then device order; [WHOLE]
    for a file without GPU work."""
    pairs_of = [
        sets.unique_rows(np.stack([np.asarray(t.process, np.int64), np.asarray(t.device, np.int64)], axis=1))
        for t in _gpu_tables(trace)
        if len(t) and "process" in t and "device" in t
    ]
    if not pairs_of:
        return [WHOLE]
    pairs = [(int(p), int(d)) for p, d in sets.unique_rows(np.concatenate(pairs_of)).tolist()]
    pids = np.asarray(trace.processes.pid) if len(trace.processes) else np.empty(0, np.int64)

    def pid(process: int) -> int:
        return int(pids[process]) if 0 <= process < len(pids) else process

    return sorted(pairs, key=lambda pair: (pid(pair[0]), pair[1]))


def unit_label(trace: Trace, unit: tuple[int, int]) -> str:
    """'pid 4242, GPU 1': where in its file a rank's work is."""
    process, device = unit
    pids = trace.processes.pid if len(trace.processes) else np.empty(0, np.int64)
    pid = int(pids[process]) if 0 <= process < len(pids) else process
    return f"pid {pid}, GPU {device}"


CANDIDATES = 4  # repeated families of ranges reduced per file, so that a job can cut every rank by one


def step_candidates(trace: Trace, asked: str | None = None) -> tuple[list[str], list[str]]:
    """(the globs that may name the steps, those of them that pass the one rule for steps in this file,
    its own choice first): the glob asked for, else the best CANDIDATES repeated families of ranges
    (analysis/step_ranges.py: never op-level ranges). A job takes the family most of its files chose
    (ranks/job.py): one rank's slower kernels shift the GPU shares that choose a file's family (the
    fork-join export's graph_* launched 56% of its GPU busy time, 48% with its kernels three times as
    long), and every rank must be cut by the same ranges."""
    if asked is not None:
        return [asked], [asked]
    ranked = families(trace)
    first = chosen(ranked)
    ranked = ranked[:CANDIDATES]
    passing = [first.pattern] if first is not None else []
    passing += [f.pattern for f in ranked if f.is_step and f.pattern not in passing]
    return [f.pattern for f in ranked], passing


def step_ranges(trace: Trace, name: str | None, process: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of the ranges named `name` (a glob; of `process`, unless -1), in start order.
    Op-level ranges (`aten::to, op_id = 317177`) are never steps, whatever the glob: a glob that names
    only those is refused."""
    nvtx = trace.nvtx
    empty = np.empty(0, np.int64)
    if not len(nvtx) or name is None:
        return empty, empty
    text, start, end = np.asarray(nvtx.text), np.asarray(nvtx.start, np.int64), np.asarray(nvtx.end, np.int64)
    ranged = end > start
    if process >= 0 and "process" in nvtx:
        ranged &= np.asarray(nvtx.process) == process
    ids, names = _names_of(trace, text[ranged])
    named = [fnmatch.fnmatchcase(n, name) for n in names]
    steps = [match and not is_op_range(n) for match, n in zip(named, names)]
    if any(named) and not any(steps):
        raise BadInputError(f"--step {name!r} names only op-level ranges (such as {names[named.index(True)]!r}): "
                            "never steps")  # fmt: skip
    chosen = ranged & sets.isin(text, ids[steps] if len(ids) else ids)
    order = np.argsort(start[chosen], kind="stable")
    return start[chosen][order], end[chosen][order]


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


def union_busy(starts: np.ndarray, ends: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Per window [low, high): how long at least one interval covers it (overlaps counted once), from
    the prefix sums of the intervals' union: no loop over windows or intervals."""
    if not len(starts) or not len(low):
        return np.zeros(len(low), dtype=np.int64)
    order = np.argsort(starts, kind="stable")
    s, e = starts[order].astype(np.int64), np.maximum(ends[order], starts[order]).astype(np.int64)
    reach = np.maximum.accumulate(e)
    new = np.ones(len(s), dtype=bool)
    new[1:] = s[1:] > reach[:-1]
    first = np.flatnonzero(new)
    block_start = s[first]
    block_end = reach[np.append(first[1:] - 1, len(s) - 1)]
    before = np.concatenate([[0], np.cumsum(block_end - block_start)])

    def covered(t: np.ndarray) -> np.ndarray:  # union length before t
        i = np.searchsorted(block_start, t, side="right")
        j = np.maximum(i - 1, 0)
        inside = np.clip(np.minimum(t, block_end[j]) - block_start[j], 0, None)
        return np.where(i > 0, before[j] + inside, 0)

    high = np.maximum(high, low)
    return (covered(high.astype(np.int64)) - covered(low.astype(np.int64))).astype(np.int64)


def _unit_rows(table: Table, unit: tuple[int, int]) -> np.ndarray:
    if not len(table):
        return np.zeros(0, dtype=bool)
    keep = np.ones(len(table), dtype=bool)
    if unit[0] >= 0 and "process" in table:
        keep &= np.asarray(table.process) == unit[0]
    if unit[1] >= 0 and "device" in table:
        keep &= np.asarray(table.device) == unit[1]
    return keep


def file_work(trace: Trace) -> dict[str, np.ndarray]:
    """Every GPU row of the file as flat columns: start, end, process, device, communication or not, and
    `launched`, the start of the call that launched it (-1 where the trace recorded none). Built once
    per file: its ranks and candidate step families select from it."""
    columns: dict[str, list[np.ndarray]] = {k: [] for k in ("start", "end", "process", "device", "key", "comm")}
    for table in _gpu_tables(trace):
        count = len(table)
        if not count:
            continue
        process = np.asarray(table.process, np.int64) if "process" in table else np.zeros(count, np.int64)
        correlation = np.asarray(table.correlation, np.int64) if "correlation" in table else np.full(count, -1)
        columns["start"].append(np.asarray(table.start, np.int64))
        columns["end"].append(np.asarray(table.end, np.int64))
        columns["process"].append(process)
        columns["device"].append(np.asarray(table.device, np.int64) if "device" in table else np.full(count, -1))
        columns["key"].append(np.where(correlation >= 0, call_key(process, correlation), -1))
        comm = np.zeros(count, dtype=bool)
        if table is trace.kernels:
            name_ids = np.asarray(table.short_name if "short_name" in table else table.name)
            ids, names = _names_of(trace, name_ids)
            comm = sets.isin(name_ids, ids[[is_communication(n) for n in names]]) if len(ids) else comm
        columns["comm"].append(comm)
    work = {k: np.concatenate(v) if v else np.zeros(0, dtype=bool if k == "comm" else np.int64)
            for k, v in columns.items()}  # fmt: skip
    work["launched"] = np.full(len(work["start"]), -1, dtype=np.int64)
    api = trace.api
    if len(api) and "correlation" in api and len(work["key"]):
        process = np.asarray(api.process) if "process" in api else np.zeros(len(api), np.int32)
        keys = call_key(process, np.asarray(api.correlation))
        order = np.argsort(keys, kind="stable")
        keys, call_start = keys[order], np.asarray(api.start, np.int64)[order]
        at = np.minimum(np.searchsorted(keys, work["key"]), len(keys) - 1)
        found = (keys[at] == work["key"]) & (work["key"] >= 0)
        work["launched"][found] = call_start[at[found]]
    return work


def _launched_end(launched: np.ndarray, end: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Per step: the later of its range's end and the latest end of the GPU work whose launching call
    started inside the range."""
    result = ends.copy()
    if not len(starts) or not len(launched):
        return result
    step = np.searchsorted(starts, launched, side="right") - 1  # the latest step started before the call
    inside = (launched >= 0) & (step >= 0) & (launched < ends[np.maximum(step, 0)])
    np.maximum.at(result, step[inside], end[inside])
    return result


def rank_steps(
    trace: Trace, name: str | None, unit: tuple[int, int] = WHOLE, work: dict[str, np.ndarray] | None = None
) -> dict[str, Any]:
    """The unit's steps (the ranges `name`, a glob; step_candidates offers them) and their parts (see the
    module docstring), as lists of integers (ns). `work`: file_work(trace), built when not given."""
    starts, range_ends = step_ranges(trace, name, unit[0])
    work = file_work(trace) if work is None else work
    mine = np.ones(len(work["start"]), dtype=bool)
    if unit[0] >= 0:
        mine &= work["process"] == unit[0]
    if unit[1] >= 0:
        mine &= work["device"] == unit[1]
    w_start, w_end, comm = work["start"][mine], work["end"][mine], work["comm"][mine]
    ends = _launched_end(work["launched"][mine], w_end, starts, range_ends)
    comm_starts = np.sort(w_start[comm])  # a step's arrival: the first communication kernel it starts
    arrive = ends.copy()
    if len(comm_starts) and len(starts):
        after = comm_starts[np.minimum(np.searchsorted(comm_starts, starts), len(comm_starts) - 1)]
        arrive = np.where((after >= starts) & (after < ends), after, ends)
    compute_busy = union_busy(w_start[~comm], w_end[~comm], starts, arrive)
    comm_ns = union_busy(w_start[comm], w_end[comm], starts, ends)
    gpu_busy = union_busy(w_start, w_end, starts, ends)
    api = trace.api
    keep = _unit_rows(api, (unit[0], -1))
    a_start, a_end = np.asarray(api.start, np.int64)[keep], np.asarray(api.end, np.int64)[keep]
    if len(a_start) > 1 and bool((np.diff(a_start) < 0).any()):  # tables come sorted by start; if not, sort
        a_order = np.argsort(a_start, kind="stable")
        a_start, a_end = a_start[a_order], a_end[a_order]
    host_ns = _clipped_sum(a_start, a_end, starts, arrive)
    return {
        "step_name": name,
        "start": starts.tolist(),
        "end": ends.tolist(),
        "range_end": range_ends.tolist(),
        "arrive": arrive.tolist(),
        "compute_busy_ns": compute_busy.tolist(),
        "host_ns": host_ns.tolist(),
        "comm_ns": comm_ns.tolist(),
        "gpu_busy_ns": gpu_busy.tolist(),
        "communication_kernels": int(comm.sum()),
    }
