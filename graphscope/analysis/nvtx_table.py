"""One row per NVTX range name: what the CPU and GPU did inside its instances, side by side.

The H200 traces hold eager_0..2 and graph_0..2: this table shows the eager steps' launch overhead
next to the graph replays', each row a scope of its own (analysis/scope.py). A range's ratio is its
steady-state submission cost over its GPU busy time (analysis/steady.py), None where it ran no GPU work
(a capture range): undefined, not 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphscope.analysis.scope import Scope, nvtx_ranges, scoped_rows
from graphscope.analysis.steady import launch_account
from graphscope.analysis.summary import TraceAnalysis
from graphscope.core import stats
from graphscope.core.bounds import exact_total
from graphscope.core.symbols import elide
from graphscope.trace.model import Trace

MAX_NAMES = 60


def nvtx_table(trace: Trace, analysis: TraceAnalysis, limit: int = MAX_NAMES) -> list[dict[str, Any]]:
    """Per range name (the `limit` names with the most time in them, in order of first appearance)."""
    texts, starts, ends = nvtx_ranges(trace)
    if not len(texts):
        return []
    names, first = np.unique(texts, return_index=True)
    totals = np.array([(ends[texts == n] - starts[texts == n]).sum() for n in names])
    keep = np.argsort(-totals, kind="stable")[:limit]
    rows = []
    for name in names[keep][np.argsort(first[keep])].tolist():
        mine = texts == name
        scope = Scope.of(trace.symbols.name(int(name)), starts[mine], ends[mine])
        inside = scoped_rows(trace, analysis.correlation, analysis.work, scope)
        account = launch_account(trace, analysis.launches, analysis.work, analysis.graphs, inside.api, inside.work)
        durations = ends[mine] - starts[mine]
        rows.append(
            {
                "name": elide(scope.label),
                "instances": int(mine.sum()),
                "start_ns": int(starts[mine][0] - trace.span()[0]),
                "median_duration_ns": float(stats.median_of(durations)),
                "total_duration_ns": exact_total(durations),
                "kernels": int(inside.gpu["kernels"].sum()),
                "launch_calls": account.eager_calls + account.graph_calls,
                "graph_launches": account.graph_calls,
                "launch_ns": account.steady_ns,
                "submit_ns": account.submit_ns,
                "blocked_calls": account.blocked_calls,
                "capture_calls": account.capture_calls,
                "capture_ns": account.capture_ns,
                "calls_without_work": account.without_work_calls,
                "gpu_busy_ns": account.busy_ns,
                "overhead_ratio": round(account.ratio, 6) if account.busy_ns else None,  # undefined: no GPU work
                "one_off_calls": account.one_off_calls,
            }
        )
    return rows
