"""The steady-state launch account of a scope: what the CPU spends launching, without one-off calls.

Kept out of the steady state, each counted and named on its own:

- capture calls: launch calls made while a stream captured a graph (analysis/capture.py); they build a
  graph and run nothing.
- calls without work: launch calls with no GPU work in the trace (not captured): nothing to set their
  cost against.
- one-off calls (below).

Of the steady calls, a *blocked* call (core.rules.BLOCKED_FACTOR) spent its time above the median call of
its kind waiting behind queued work or an implicit sync, not submitting: that excess is blocked time, and
the rest is submission cost, which the 15% rule judges.

A one-off call is the first launch of a kernel (or of a graph) that took far longer than the steady
launches of its kind: the first call loads the module lazily, JIT-compiles or sets up, once. It is
named separately and kept out of the ratio, with the GPU work it launched. The rule: the first
launch of its kernel (by mangled name, else full name, else short name; or of its graph id), slower
than ONE_OFF_FACTOR x the median launch call of its kind in the scope, and at least ONE_OFF_MIN_NS
slower.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from graphscope.analysis import intervals
from graphscope.analysis.graphs import GraphLaunches
from graphscope.analysis.kernel_stats import distinct_groups
from graphscope.analysis.launch import LaunchMetrics
from graphscope.core import sets, stats
from graphscope.core.bounds import exact_total
from graphscope.core.events import Activity, ApiKind
from graphscope.core.rules import BLOCKED_FACTOR, BLOCKED_MIN_NS
from graphscope.core.symbols import display_api_name
from graphscope.core.table import Table
from graphscope.trace.entities import distinct
from graphscope.trace.model import Trace

ONE_OFF_FACTOR = 4.0
ONE_OFF_MIN_NS = 10_000
_GRAPH_KEY = 1 << 30  # above every symbol id: keys fit 32 bits (symbol ids are int32)


@dataclass
class LaunchAccount:
    """Launch calls and GPU time of one scope, split into steady state and one-off first calls."""

    eager_calls: int
    eager_ns: int
    graph_calls: int
    graph_ns: int
    graph_replay_ns: int  # GPU span of the graph launches (their nodes' first start to last end)
    one_off_calls: int
    one_off_ns: int
    one_off_names: list[str]
    busy_ns: int  # GPU busy time of the steady-state work
    busy_all_ns: int  # GPU busy time of all work in scope, one-off included
    max_repeats: int  # steady launch calls of the most-launched kernel (or graph): the evidence rule's number
    eager_blocked_ns: int = 0  # of eager_ns: blocked calls' time above their kind's median
    graph_blocked_ns: int = 0  # of graph_ns: the same
    blocked_calls: int = 0
    capture_calls: int = 0  # launch calls inside a stream capture (not in the steady state)
    capture_ns: int = 0
    without_work_calls: int = 0  # launch calls with no GPU work in the trace, not captured (not in it either)
    without_work_ns: int = 0
    without_work_names: dict[str, int] = field(default_factory=dict)  # API name -> calls

    @property
    def steady_ns(self) -> int:
        return self.eager_ns + self.graph_ns

    @property
    def blocked_ns(self) -> int:
        return self.eager_blocked_ns + self.graph_blocked_ns

    @property
    def submit_ns(self) -> int:
        """Steady-state CPU time in launch calls less the blocked time: the submission cost."""
        return self.steady_ns - self.blocked_ns

    @property
    def eager_submit_ns(self) -> int:
        return self.eager_ns - self.eager_blocked_ns

    @property
    def ratio(self) -> float:
        """Steady-state submission cost over steady-state GPU busy time (0 without GPU work)."""
        return self.submit_ns / self.busy_ns if self.busy_ns else 0.0

    @property
    def eager_ratio(self) -> float:
        return self.eager_submit_ns / self.busy_ns if self.busy_ns else 0.0

    def to_json(self) -> dict[str, object]:
        return {
            "eager_launch_calls": self.eager_calls,
            "eager_launch_ns": self.eager_ns,
            "graph_launch_calls": self.graph_calls,
            "graph_launch_ns": self.graph_ns,
            "graph_replay_ns": self.graph_replay_ns,
            "one_off_calls": self.one_off_calls,
            "one_off_ns": self.one_off_ns,
            "one_off_kernels": self.one_off_names,
            "gpu_busy_ns": self.busy_ns,
            "submit_ns": self.submit_ns,
            "eager_submit_ns": self.eager_submit_ns,
            "blocked_calls": self.blocked_calls,
            "blocked_ns": self.blocked_ns,
            "capture_calls": self.capture_calls,
            "capture_ns": self.capture_ns,
            "calls_without_work": self.without_work_calls,
            "without_work_ns": self.without_work_ns,
            "without_work_by_name": self.without_work_names,
            "overhead_ratio": round(self.ratio, 6) if self.busy_ns else None,  # undefined without GPU work
            "eager_overhead_ratio": round(self.eager_ratio, 6) if self.busy_ns else None,
            "max_repeats": self.max_repeats,
        }


def launch_keys(
    trace: Trace, launches: LaunchMetrics, work: Table, graphs: GraphLaunches
) -> tuple[np.ndarray, list[int]]:
    """Per launch call: its kernel's identity (mangled name, else short name), or _GRAPH_KEY + the index
    of its graph id in the list returned beside (graph ids span all of int64); -1 when it launched nothing.
    In the narrowest integer type that holds them (a byte a call for an eager trace of few kernels)."""
    first = launches.first_work
    wanted = (first >= 0) & (launches.kind == ApiKind.KERNEL_LAUNCH)
    calls = None if wanted.all() else np.flatnonzero(wanted)  # None: every call (the usual eager trace)
    work_rows = first if calls is None else first[calls]
    on_kernel = work.kind[work_rows] == Activity.KERNEL
    if not on_kernel.all():
        calls = np.flatnonzero(on_kernel) if calls is None else calls[on_kernel]
        work_rows = work_rows[on_kernel]
    rows = work.source_row[work_rows]
    mangled = trace.kernels.mangled[rows]  # a kernel's identity: template instances share a short name
    identity = np.where(mangled >= 0, mangled, trace.kernels.short_name[rows])  # symbol ids, narrow
    if "name" in trace.kernels and not (mangled >= 0).all():
        # no mangled name (PyTorch-profiler traces): the full name tells template instances apart, as the
        # mangled one would (the MI250 toy's first CUDAFunctor_add instance took 6.5 ms to launch, lazily
        # loaded, against a 6 us median, and was not its short name's first launch)
        full = trace.kernels.name[rows]
        identity = np.where(mangled >= 0, mangled, np.where(full >= 0, full, identity))
    dtype = np.int32 if len(graphs) else identity.dtype  # graph keys need 32 bits
    if calls is None:
        keys = identity.astype(dtype, copy=False)
    else:
        keys = np.full(len(first), -1, dtype=dtype)
        keys[calls] = identity
    graph_ids: list[int] = []
    if len(graphs):
        linked = graphs.api_row >= 0
        graph_of = dict(zip(graphs.api_row[linked].tolist(), graphs.graph_id[linked].tolist()))
        index: dict[int, int] = {}
        graph_calls = np.flatnonzero(launches.kind == ApiKind.GRAPH_LAUNCH)
        for i in graph_calls.tolist():
            graph = graph_of.get(int(launches.rows[i]))
            if graph is not None:
                if graph not in index:
                    index[graph] = len(graph_ids)
                    graph_ids.append(graph)
                keys[i] = _GRAPH_KEY + index[graph]
    return keys, graph_ids


def one_off_calls(launches: LaunchMetrics, keys: np.ndarray, considered: np.ndarray) -> np.ndarray:
    """Mask over launch calls: first calls of their key that were far slower than the steady ones."""
    one_off = np.zeros(len(keys), dtype=bool)
    slow = np.zeros(len(keys), dtype=bool)
    for kind in (ApiKind.KERNEL_LAUNCH, ApiKind.GRAPH_LAUNCH):
        mine = considered & (launches.kind == kind) & (keys >= 0)
        if mine.sum() < 2:
            continue
        median = stats.median(launches.api_ns[mine])
        slow |= mine & (launches.api_ns > ONE_OFF_FACTOR * median) & (launches.api_ns - median >= ONE_OFF_MIN_NS)
    candidates = np.flatnonzero(slow)  # few: set-up calls, not the steady state
    if not len(candidates):
        return one_off
    watched = np.flatnonzero(considered & sets.isin(keys, keys[candidates]))
    _, group = distinct_groups(keys[watched])
    order = np.argsort(group, kind="stable")  # a radix sort: few distinct keys
    first_of_group = watched[order[np.r_[True, group[order][1:] != group[order][:-1]]]]
    one_off[sets.intersect(candidates, first_of_group)] = True
    return one_off


def launch_account(
    trace: Trace,
    launches: LaunchMetrics,
    work: Table,
    graphs: GraphLaunches,
    api_in: np.ndarray,
    work_in: np.ndarray,
    busy_all_ns: int | None = None,
    keys: tuple[np.ndarray, list[int]] | None = None,
) -> LaunchAccount:
    """The account of the launch calls whose rows `api_in` marks, and of the work `work_in` marks.

    `busy_all_ns`, if known, is the busy time of all the work `work_in` marks (it is not computed again);
    `keys`, if known, is `launch_keys(...)` (accounts of several GPUs share it).
    """
    in_scope = api_in[launches.rows]
    capture = in_scope & launches.capture
    without_work = in_scope & ~launches.capture & (launches.first_work < 0)
    considered = in_scope & ~capture & ~without_work
    key_of, graph_ids = keys if keys is not None else launch_keys(trace, launches, work, graphs)
    one_off = one_off_calls(launches, key_of, considered)
    steady = considered & ~one_off
    blocked, slow, excess = blocked_calls(launches, work, steady)
    eager = steady & (launches.kind == ApiKind.KERNEL_LAUNCH)
    graph = steady & (launches.kind == ApiKind.GRAPH_LAUNCH)
    one_off_rows = launches.rows[one_off]
    busy_all = _busy(work, work_in) if busy_all_ns is None else busy_all_ns
    busy = busy_all if not len(one_off_rows) else _busy(work, work_in & ~sets.isin(work.api_row, one_off_rows))
    in_graphs = sets.isin(graphs.api_row, launches.rows[graph]) if len(graphs) else np.zeros(0, bool)
    kernel_rows = work.source_row[launches.first_work[one_off & (key_of < _GRAPH_KEY)]]
    names = sorted({trace.symbols.name(int(k)) for k in trace.kernels.short_name[kernel_rows]})
    names += [f"graph {graph_ids[k - _GRAPH_KEY]}" for k in key_of[one_off & (key_of >= _GRAPH_KEY)].tolist()]
    steady_keys = key_of[steady & (key_of >= 0)]
    max_repeats = int(np.bincount(distinct_groups(steady_keys)[1]).max()) if len(steady_keys) else 0
    return LaunchAccount(
        eager_calls=int(eager.sum()),
        eager_ns=exact_total(launches.api_ns[eager]),
        graph_calls=int(graph.sum()),
        graph_ns=exact_total(launches.api_ns[graph]),
        graph_replay_ns=exact_total(graphs.span_ns[in_graphs]) if len(graphs) else 0,
        one_off_calls=int(one_off.sum()),
        one_off_ns=exact_total(launches.api_ns[one_off]),
        one_off_names=names,
        busy_ns=busy,
        busy_all_ns=busy_all,
        max_repeats=max_repeats,
        eager_blocked_ns=int(excess[blocked[slow] & eager[slow]].sum()),
        graph_blocked_ns=int(excess[blocked[slow] & graph[slow]].sum()),
        blocked_calls=int(blocked.sum()),
        capture_calls=int(capture.sum()),
        capture_ns=int(launches.api_ns[capture].sum()),
        without_work_calls=int(without_work.sum()),
        without_work_ns=int(launches.api_ns[without_work].sum()),
        without_work_names=_names(trace, launches.rows[without_work]),
    )


def submission_ns(launches: LaunchMetrics, work: Table) -> np.ndarray:
    """Per launch call, its submission cost: its CPU time, less the excess of a blocked call over the median
    of its kind (judged among the calls that ran work and were not captured); int64."""
    ran = (launches.first_work >= 0) & ~launches.capture
    blocked, slow, excess = blocked_calls(launches, work, ran)
    submitted = launches.api_ns.astype(np.int64)
    waited = blocked[slow]
    submitted[slow[waited]] -= excess[waited]
    return submitted


def blocked_calls(
    launches: LaunchMetrics, work: Table, steady: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mask over launch calls: steady calls that blocked (core.rules.BLOCKED_FACTOR); and the slow calls (the
    candidates: indices of launch calls) with each one's time above the median call of its kind among
    `steady` (int64). Per slow call, not per call: a full int64 column of mostly zeros took 80 MB of
    touched memory at 10M calls."""
    blocked = np.zeros(len(steady), dtype=bool)
    slow_parts, excess_parts = [np.empty(0, np.int64)], [np.empty(0, np.int64)]
    for kind in (ApiKind.KERNEL_LAUNCH, ApiKind.GRAPH_LAUNCH):
        mine = steady & (launches.kind == kind)
        if not mine.any():
            continue
        median = stats.median(launches.api_ns[mine])
        slow = np.flatnonzero(mine & (launches.api_ns > BLOCKED_FACTOR * median) & (launches.api_ns > BLOCKED_MIN_NS))
        if len(slow):  # few: the steady state's outliers
            progressed = _gpu_progressed(launches, work, slow)
            blocked[slow[progressed]] = True
            slow_parts.append(slow.astype(np.int64))
            excess_parts.append(launches.api_ns[slow].astype(np.int64) - int(median))
    return blocked, np.concatenate(slow_parts), np.concatenate(excess_parts)


def _gpu_progressed(launches: LaunchMetrics, work: Table, calls: np.ndarray) -> np.ndarray:
    """Per call (indices of launch calls that ran work): did some GPU work on the device of the call's work
    end while the call ran (its return followed GPU progress)?"""
    start = launches.call_start[launches.rows[calls]].astype(np.int64)
    end = start + launches.api_ns[calls].astype(np.int64)
    device = work.device[launches.first_work[calls]]
    progressed = np.zeros(len(calls), dtype=bool)
    for d in sets.unique(device).tolist():
        ends = np.sort(work.end[work.device == d].astype(np.int64), kind="stable")  # nearly sorted: a merge
        mine = device == d
        ended = np.searchsorted(ends, end[mine], side="right") - np.searchsorted(ends, start[mine], side="left")
        progressed[mine] = ended > 0
    return progressed


def _names(trace: Trace, rows: np.ndarray) -> dict[str, int]:
    """API rows counted by their call's name (version suffix dropped), most first."""
    if not len(rows):
        return {}
    ids, counts = np.unique(trace.api.name[rows], return_counts=True)
    named: dict[str, int] = {}
    for symbol, count in zip(ids.tolist(), counts.tolist()):
        name = display_api_name(trace.symbols.name(int(symbol))) if symbol >= 0 else "(unnamed call)"
        named[name] = named.get(name, 0) + int(count)
    return dict(sorted(named.items(), key=lambda item: -item[1]))


def _busy(work: Table, rows: np.ndarray) -> int:
    """Busy time summed over devices (the union of work per device)."""
    total = 0
    for device in distinct(work.device[rows]):
        mine = rows & (work.device == device)
        total += intervals.covered_ns(work.start[mine], work.end[mine])
    return total
