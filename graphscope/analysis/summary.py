"""The summary of one export: counts, launch overhead and its verdict, GPU utilisation, top kernels.

The keys follow the JSON contract of docs/json.md; extra keys add what a user needs to trust it.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphscope.analysis.accounting import EMPTY, Account, device_timelines
from graphscope.analysis.anatomy import anatomy
from graphscope.analysis.correlation import Correlation, correlate
from graphscope.analysis.fusion import anatomy_json
from graphscope.analysis.gpu_time import DeviceTime, device_time, gpu_work
from graphscope.analysis.graphs import GraphLaunches, graph_launches, node_activities
from graphscope.analysis.kernel_stats import kernel_stats
from graphscope.analysis.launch import LaunchMetrics, launch_metrics
from graphscope.analysis.launch_judge import graph_launch_cost
from graphscope.analysis.overlap import stream_overlap
from graphscope.analysis.scope import Scope, ScopedRows, measured_scope, scoped_rows
from graphscope.analysis.steady import launch_account, launch_keys
from graphscope.analysis.verdict import Waited, steady_verdict
from graphscope.core.bounds import exact_total
from graphscope.core.events import NODE_WORK, ApiKind
from graphscope.core.process import heap_only
from graphscope.core.stats import median
from graphscope.core.symbols import elide
from graphscope.core.table import Table
from graphscope.trace.model import Trace


@dataclass
class TraceAnalysis:
    """The analyses every view of a trace starts from, computed once."""

    correlation: Correlation
    work: Table  # all GPU work sorted by start, with its launching call
    launches: LaunchMetrics
    devices: list[DeviceTime]
    nodes: Table  # graph node activities (node trace mode)
    graphs: GraphLaunches


def analyze(trace: Trace) -> TraceAnalysis:
    """Correlate calls with GPU work and derive launches, device time and graph launches."""
    correlation = correlate(trace)
    work = gpu_work(trace, correlation)
    nodes = node_activities(trace)
    return TraceAnalysis(
        correlation=correlation,
        work=work,
        launches=launch_metrics(trace, work),
        devices=device_time(work),
        nodes=nodes,
        graphs=graph_launches(trace, correlation, nodes),
    )


CONCURRENT_BELOW = 4_000_000  # kernels


def _median(values: np.ndarray, own: bool = False) -> float:
    """The median of `values` without NaN (0 when none); `own`: values is a temporary, partitioned in place."""
    if values.dtype.kind == "f" and np.isnan(values).any():
        values, own = values[~np.isnan(values)], True
    return median(values, overwrite=own) if len(values) else 0.0


def _total(table) -> int:
    return exact_total(table.end - table.start) if len(table) else 0  # never wraps past 2**63


def summarize(
    trace: Trace,
    top: int = 10,
    analysis: TraceAnalysis | None = None,
    scope: Scope | None = None,
    whole: bool = False,
) -> dict[str, Any]:
    """Everything `graphscope summary` prints, as plain JSON-ready values.

    `scope` restricts it to some windows of the trace; without one, a trace written by graphscope's
    runner is summarised over its measured repetitions (unless `whole`), any other over all of it.
    Counts and `launch.overhead_ratio` follow docs/counting.md for the scope; the
    verdict uses the steady state (`launch.steady_state`, see analysis/steady.py).
    """
    if scope is None and not whole:
        scope = measured_scope(trace)
    # numpy releases the GIL, so the kernel table and idle gaps build alongside the launch analysis and
    # account; on very large traces one after the other, so that their temporary arrays do not add up
    pool = ThreadPoolExecutor(max_workers=1) if len(trace.kernels) < CONCURRENT_BELOW else None
    try:
        with heap_only():  # its temporaries reused, not fresh pages (core/process.py)
            whole_kernels = None  # the whole trace's kernel table needs no launch analysis
            if pool and scope is None and analysis is None:
                whole_kernels = pool.submit(kernel_stats, trace, "short_name")
            analysis = analyze(trace) if analysis is None else analysis
            return _summarize(trace, top, analysis, scope, pool, whole_kernels)
    finally:
        if pool:
            pool.shutdown()


def _summarize(
    trace: Trace,
    top: int,
    analysis: TraceAnalysis,
    scope: Scope | None,
    pool: ThreadPoolExecutor | None,
    whole_kernels: Future | None,
) -> dict[str, Any]:
    work, launches, graphs = analysis.work, analysis.launches, analysis.graphs
    rows = scoped_rows(trace, analysis.correlation, work, scope) if scope is not None else None

    def inside(mask: np.ndarray | None, length: int) -> np.ndarray:
        return mask if mask is not None else np.ones(length, dtype=bool)

    api_in = inside(rows.api if rows is not None else None, len(trace.api))
    work_in = inside(rows.work if rows is not None else None, len(work))
    kernels_in = inside(rows.gpu["kernels"] if rows is not None else None, len(trace.kernels))
    calls_in = api_in[launches.rows]
    kernel_calls = launches.of_kind(ApiKind.KERNEL_LAUNCH) & calls_in
    graph_calls = launches.of_kind(ApiKind.GRAPH_LAUNCH) & calls_in
    kernel_launch_ns = exact_total(launches.api_ns[kernel_calls])
    graph_launch_ns = exact_total(launches.api_ns[graph_calls])
    kernel_rows = None if rows is None else np.flatnonzero(kernels_in)
    scoped_work = work if rows is None else work.take(work_in)
    devices = device_time(scoped_work) if rows is not None else analysis.devices

    origin, finish = trace.span()
    windows = (scope.start, scope.end) if scope is not None else (np.array([origin]), np.array([finish]))

    def side_tables() -> tuple[Table, dict[int, Account], dict[int, Account]]:
        timelines = device_timelines(trace, work)
        accounts = {device: sum(timeline.accounts(*windows), EMPTY) for device, timeline in timelines.items()}
        # what the verdicts judge: each GPU from its first work to its last, start-up and tail left out
        active = {device: timeline.active(*windows) for device, timeline in timelines.items()}
        stats = whole_kernels.result() if whole_kernels else kernel_stats(trace, "short_name", kernel_rows)
        return stats, accounts, active

    side = pool.submit(side_tables) if pool else None
    account = launch_account(trace, launches, work, graphs, api_in, work_in, sum(d.busy_ns for d in devices))
    launch_ns = kernel_launch_ns + graph_launch_ns
    stats, accounts, active = side.result() if side else side_tables()
    top_kernels = [
        {
            "name": elide(trace.symbols.name(int(stats.key[i]))),
            "count": int(stats.count[i]),
            "total_ns": int(stats.total_ns[i]),
            "median_ns": float(stats.median_ns[i]),
            "mean_ns": float(stats.mean_ns[i]),
            "min_ns": int(stats.min_ns[i]),
            "max_ns": int(stats.max_ns[i]),
        }
        for i in range(min(top, len(stats)))
    ]
    gpus: list[dict[str, Any]] = []
    waited = Waited(0, 0)  # the GPUs with work in scope: how long they waited for the CPU, of their time
    for device, time in accounts.items():
        if scope is not None and time.busy_ns == 0:
            continue  # a device with no work in the scope
        mine = active[device]
        waited = Waited(
            waited.host_wait_ns + mine.host_wait_ns, waited.wall_ns + mine.wall_ns, (waited.busy_ns or 0) + mine.busy_ns
        )
        named = trace.gpu(device)
        gpus.append(
            {
                "device": device,
                "name": named.name if named else None,
                "busy_ns": time.busy_ns,
                "idle_ns": time.idle_ns,
                "utilization": round(time.utilization, 6),
                "host_wait_idle_ns": time.host_wait_ns,
                "other_idle_ns": time.other_ns,
                "idle_gaps": time.gaps,
                "active_ns": mine.wall_ns,  # from its first work to its last, inside the scope
                "active_host_wait_ns": mine.host_wait_ns,
            }
        )
    # graph nodes traced one by one slow the graph launch calls: Nsight's --cuda-graph-trace=node, and a
    # PyTorch-profiler trace whose replays recorded their kernels (CUPTI traced each node: a 1,000-node
    # launch call took 1.56 ms against 4.4 us unprofiled, core.rules.PROFILER_DISTORTS)
    mode = trace.info.graph_trace_mode
    node_traced = mode == "node" or (mode is None and len(analysis.nodes) > 0)
    verdict = steady_verdict(account, node_traced=node_traced, waited=waited)
    if len(gpus) > 1:  # one export of several GPUs: each judged on its own launches and its own work
        keys = launch_keys(trace, launches, work, graphs)  # the calls' kernels and graphs, found once
        for gpu in gpus:
            own = active[gpu["device"]]
            gpu["launch"] = _device_verdict(
                trace,
                analysis,
                api_in,
                work_in,
                gpu["device"],
                node_traced,
                keys,
                Waited(own.host_wait_ns, own.wall_ns, own.busy_ns),
            )
    graphs_in = _graphs_in(graphs, api_in, scope)
    node_rows = inside(None if rows is None else nodes_in(analysis.nodes, rows), len(analysis.nodes))
    busy_ns = account.busy_all_ns
    start, end = origin, finish
    info = trace.info

    def counted(table, mask) -> dict[str, int]:
        mine = table if rows is None else table.take(mask)
        return {"count": len(mine), "total_ns": _total(mine)}

    memcpy = counted(trace.memcpy, rows and rows.gpu["memcpy"])
    latency = launches.latency_ns[kernel_calls]
    latency_calls = int(np.count_nonzero(~np.isnan(latency)))
    median_latency_ns = _median(latency, own=True)
    del latency
    memcpy_rows = trace.memcpy.bytes if rows is None else trace.memcpy.bytes[rows.gpu["memcpy"]]
    return {
        "file": str(info.path),
        "nsys_version": info.nsys_version,
        "schema_version": info.schema_version,
        "platform": info.platform,
        "span_ns": end - start,
        "scope": scope.to_json(start) if scope is not None else None,
        "kernels": counted(trace.kernels, kernels_in),
        "memcpy": {**memcpy, "bytes": int(memcpy_rows.sum()) if len(memcpy_rows) else 0},
        "memset": counted(trace.memset, rows and rows.gpu["memset"]),
        "sync": counted(trace.sync, rows and rows.gpu["sync"]),
        "api": {
            "count": int(api_in.sum()),
            "launches": int(kernel_calls.sum()),
            "graph_launches": int(graph_calls.sum()),
            "backtrace_duplicates": info.backtrace_duplicates,
        },
        "nvtx": {"count": int(rows.nvtx.sum()) if rows is not None else len(trace.nvtx)},
        "graph_trace_mode": info.graph_trace_mode,
        "graphs": {
            "launches": int(graphs_in.sum()),
            "node_activities": int(node_rows.sum()),
            "median_span_ns": _median(graphs.span_ns[graphs_in]),
            "median_nodes": _median(graphs.nodes[graphs_in & (graphs.nodes >= 0)]),
        },
        "top_kernels": top_kernels,
        "launch": {
            "calls": int(calls_in.sum()),
            "median_api_ns": _median(launches.api_ns[kernel_calls & ~launches.capture]),  # eager calls
            "median_latency_ns": median_latency_ns,
            "latency_calls": latency_calls,
            "median_graph_launch_api_ns": _median(launches.api_ns[graph_calls]),
            "kernel_launch_ns": kernel_launch_ns,
            "graph_launch_ns": graph_launch_ns,
            "overhead_ratio": round(launch_ns / busy_ns, 6) if busy_ns else None,  # undefined without GPU work
            "steady_state": account.to_json(),
            "launch_bound": verdict.launch_bound,
            "judged": verdict.judged.to_json() if verdict.judged else None,
            "verdict": verdict.text,
        },
        "gpu": gpus,
        "stream_overlap": stream_overlap(scoped_work).to_json(),  # analysis/overlap.py
        "anatomy": anatomy_json(anatomy(trace, work, graphs, launches), origin),
        "graph_launch_cost": graph_launch_cost(trace, analysis, node_traced),  # analysis/launch_judge.py
        "processes": len(trace.processes),
        "threads": len(trace.threads),
        "holds": info.holds,
        "lacks": info.lacks,
        "warnings": info.warnings,
    }


def _device_verdict(
    trace: Trace,
    analysis: TraceAnalysis,
    api_in: np.ndarray,
    work_in: np.ndarray,
    device: int,
    node_traced: bool,
    keys: tuple[np.ndarray, list[int]],
    waited: Waited,
) -> dict[str, Any]:
    """The launch verdict of one GPU: the launch calls whose first work ran on it, against its busy time."""
    launches, work = analysis.launches, analysis.work
    ran = launches.first_work >= 0
    on_device = np.zeros(len(launches.rows), dtype=bool)
    on_device[ran] = work.device[launches.first_work[ran]] == device
    api_mine = np.zeros(len(api_in), dtype=bool)
    api_mine[launches.rows[on_device]] = True
    api_mine &= api_in
    mine = work_in & (work.device == device)
    account = launch_account(trace, launches, work, analysis.graphs, api_mine, mine, keys=keys)
    verdict = steady_verdict(account, node_traced=node_traced, waited=waited)
    launch_ns = account.eager_ns + account.graph_ns
    return {
        "calls": int(on_device.sum()),
        "overhead_ratio": round(launch_ns / account.busy_ns, 6) if account.busy_ns else None,
        "launch_bound": verdict.launch_bound,
        "verdict": verdict.text,
        "steady_state": account.to_json(),
    }


def _graphs_in(graphs: GraphLaunches, api_in: np.ndarray, scope: Scope | None) -> np.ndarray:
    """Graph launches in scope: by their launch call, or by their start when the call is not recorded."""
    if scope is None:
        return np.ones(len(graphs), dtype=bool)
    linked = graphs.api_row >= 0
    found = np.empty(len(graphs), dtype=bool)
    found[linked] = api_in[graphs.api_row[linked]]
    found[~linked] = scope.contains(graphs.start[~linked])
    return found


def nodes_in(nodes: Table, rows: ScopedRows) -> np.ndarray:
    """Node activities in scope (by the scope of their row in their own table)."""
    found = np.zeros(len(nodes), dtype=bool)
    for kind in NODE_WORK:
        mine = nodes.kind == kind
        found[mine] = rows.gpu[kind.table][nodes.source_row[mine]]
    return found
