"""The steady-state launch account of a scope: what the CPU spends launching, without one-off calls.

A one-off call is the first launch of a kernel (or of a graph) that took far longer than the steady
launches of its kind: the first call loads the module lazily, JIT-compiles or sets up, once. It is
named separately and kept out of the ratio, with the GPU work it launched. The rule: the first
launch of its kernel short name (or graph id), slower than ONE_OFF_FACTOR x the median launch call
of its kind in the scope, and at least ONE_OFF_MIN_NS slower.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphscope.analysis import intervals
from graphscope.analysis.graphs import GraphLaunches
from graphscope.analysis.kernel_stats import distinct_groups
from graphscope.analysis.launch import LaunchMetrics
from graphscope.core import stats
from graphscope.core.bounds import exact_total
from graphscope.core.events import Activity, ApiKind
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

    @property
    def steady_ns(self) -> int:
        return self.eager_ns + self.graph_ns

    @property
    def ratio(self) -> float:
        """Steady-state CPU time in launch calls over steady-state GPU busy time."""
        return self.steady_ns / self.busy_ns if self.busy_ns else 0.0

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
            "overhead_ratio": round(self.ratio, 6),
            "eager_overhead_ratio": round(self.eager_ns / self.busy_ns, 6) if self.busy_ns else 0.0,
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
    watched = np.flatnonzero(considered & np.isin(keys, keys[candidates]))
    _, group = distinct_groups(keys[watched])
    order = np.argsort(group, kind="stable")  # a radix sort: few distinct keys
    first_of_group = watched[order[np.r_[True, group[order][1:] != group[order][:-1]]]]
    one_off[np.intersect1d(candidates, first_of_group)] = True
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
    considered = api_in[launches.rows]
    keys, graph_ids = keys if keys is not None else launch_keys(trace, launches, work, graphs)
    one_off = one_off_calls(launches, keys, considered)
    steady = considered & ~one_off
    eager = steady & (launches.kind == ApiKind.KERNEL_LAUNCH)
    graph = steady & (launches.kind == ApiKind.GRAPH_LAUNCH)
    one_off_rows = launches.rows[one_off]
    busy_all = _busy(work, work_in) if busy_all_ns is None else busy_all_ns
    busy = busy_all if not len(one_off_rows) else _busy(work, work_in & ~np.isin(work.api_row, one_off_rows))
    in_graphs = np.isin(graphs.api_row, launches.rows[graph]) if len(graphs) else np.zeros(0, bool)
    kernel_rows = work.source_row[launches.first_work[one_off & (keys < _GRAPH_KEY)]]
    names = sorted({trace.symbols.name(int(k)) for k in trace.kernels.short_name[kernel_rows]})
    names += [f"graph {graph_ids[k - _GRAPH_KEY]}" for k in keys[one_off & (keys >= _GRAPH_KEY)].tolist()]
    steady_keys = keys[steady & (keys >= 0)]
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
    )


def _busy(work: Table, rows: np.ndarray) -> int:
    """Busy time summed over devices (the union of work per device)."""
    total = 0
    for device in distinct(work.device[rows]):
        mine = rows & (work.device == device)
        total += intervals.covered_ns(work.start[mine], work.end[mine])
    return total
