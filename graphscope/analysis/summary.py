"""The summary of one export: counts, launch overhead and its verdict, GPU utilisation, top kernels.

The keys follow the JSON contract of ARCHITECTURE.md; extra keys add what a user needs to trust it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from graphscope.analysis.correlation import Correlation, correlate
from graphscope.analysis.gpu_time import DeviceTime, device_time, gpu_work, idle_gaps
from graphscope.analysis.graphs import GraphLaunches, graph_launches, node_activities
from graphscope.analysis.kernel_stats import kernel_stats
from graphscope.analysis.launch import LaunchMetrics, launch_metrics
from graphscope.analysis.verdict import launch_verdict
from graphscope.core.table import Table
from graphscope.trace.model import Trace
from graphscope.trace.schema import ApiKind


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


def _median(values: np.ndarray) -> float:
    values = values[~np.isnan(values)] if values.dtype.kind == "f" else values
    return float(np.median(values)) if len(values) else 0.0


def _total(table) -> int:
    return int((table.end - table.start).sum()) if len(table) else 0


def summarize(trace: Trace, top: int = 10, analysis: TraceAnalysis | None = None) -> dict[str, Any]:
    """Everything `graphscope summary` prints, as plain JSON-ready values."""
    analysis = analyze(trace) if analysis is None else analysis
    work, launches, devices, nodes, graphs = (
        analysis.work,
        analysis.launches,
        analysis.devices,
        analysis.nodes,
        analysis.graphs,
    )

    kernel_calls = launches.of_kind(ApiKind.KERNEL_LAUNCH)
    graph_calls = launches.of_kind(ApiKind.GRAPH_LAUNCH)
    kernel_launch_ns = int(launches.api_ns[kernel_calls].sum())
    graph_launch_ns = int(launches.api_ns[graph_calls].sum())
    busy_ns = sum(d.busy_ns for d in devices)
    launch_ns = kernel_launch_ns + graph_launch_ns
    verdict = launch_verdict(launch_ns, busy_ns, len(launches.rows))

    stats = kernel_stats(trace, by="short_name")
    top_kernels = [
        {
            "name": trace.symbols.name(int(stats.key[i])),
            "count": int(stats.count[i]),
            "total_ns": int(stats.total_ns[i]),
            "median_ns": float(stats.median_ns[i]),
            "mean_ns": float(stats.mean_ns[i]),
            "min_ns": int(stats.min_ns[i]),
            "max_ns": int(stats.max_ns[i]),
        }
        for i in range(min(top, len(stats)))
    ]
    gpus = []
    for d in devices:
        gaps = idle_gaps(trace, work, d.device)
        gpu = trace.gpu(d.device)
        gpus.append(
            {
                "device": d.device,
                "name": gpu.name if gpu else None,
                "busy_ns": d.busy_ns,
                "idle_ns": d.idle_ns,
                "utilization": round(d.utilization, 6),
                "host_wait_idle_ns": gaps.host_wait_ns,
                "idle_gaps": len(gaps.start),
            }
        )
    start, end = trace.span()
    info = trace.info
    return {
        "file": str(info.path),
        "nsys_version": info.nsys_version,
        "schema_version": info.schema_version,
        "platform": info.platform,
        "span_ns": end - start,
        "kernels": {"count": len(trace.kernels), "total_ns": _total(trace.kernels)},
        "memcpy": {
            "count": len(trace.memcpy),
            "total_ns": _total(trace.memcpy),
            "bytes": int(trace.memcpy.bytes.sum()) if len(trace.memcpy) else 0,
        },
        "memset": {"count": len(trace.memset), "total_ns": _total(trace.memset)},
        "sync": {"count": len(trace.sync), "total_ns": _total(trace.sync)},
        "api": {
            "count": len(trace.api),
            "launches": int(kernel_calls.sum()),
            "graph_launches": int(graph_calls.sum()),
            "backtrace_duplicates": info.backtrace_duplicates,
        },
        "nvtx": {"count": len(trace.nvtx)},
        "graph_trace_mode": info.graph_trace_mode,
        "graphs": {
            "launches": len(graphs),
            "node_activities": len(nodes),
            "median_span_ns": _median(graphs.span_ns),
            "median_nodes": _median(graphs.nodes[graphs.nodes >= 0]),
        },
        "top_kernels": top_kernels,
        "launch": {
            "calls": len(launches.rows),
            "median_api_ns": _median(launches.api_ns[kernel_calls]),
            "median_latency_ns": _median(launches.latency_ns[kernel_calls]),
            "median_graph_launch_api_ns": _median(launches.api_ns[graph_calls]),
            "kernel_launch_ns": kernel_launch_ns,
            "graph_launch_ns": graph_launch_ns,
            "overhead_ratio": round(launch_ns / busy_ns, 6) if busy_ns else 0.0,
            "launch_bound": verdict.launch_bound,
            "verdict": verdict.text,
        },
        "gpu": gpus,
        "processes": len(trace.processes),
        "threads": len(trace.threads),
        "holds": info.holds,
        "lacks": info.lacks,
        "warnings": info.warnings,
    }
