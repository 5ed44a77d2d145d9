"""An opened trace with everything the window shows, built off the GUI thread (no Qt here)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphscope.analysis.graphs import node_durations
from graphscope.analysis.kernel_stats import kernel_identity, kernel_stats
from graphscope.analysis.summary import TraceAnalysis, analyze, summarize
from graphscope.app.layout import TimelineLayout, build_layout
from graphscope.core.progress import CancelToken, ProgressCallback, no_progress
from graphscope.core.table import Table
from graphscope.graph.from_trace import dags_from_trace
from graphscope.graph.model import Dag
from graphscope.trace import Trace, load_trace, schema


@dataclass
class TraceDocument:
    trace: Trace
    analysis: TraceAnalysis
    summary: dict[str, Any]
    stats: Table  # per kernel identity, labelled by short name
    layout: TimelineLayout
    dags: list[Dag]  # one per executed graph (node trace mode); edges unknown
    _identity: np.ndarray | None = None

    def kernels_of(self, identity: int) -> np.ndarray:
        """Kernel rows with one full identity (a row of the statistics table)."""
        if self._identity is None:
            self._identity = kernel_identity(self.trace.kernels)
        return np.flatnonzero(self._identity == identity)


def load_remaining_columns(trace: Trace, progress: ProgressCallback = no_progress, cancel: CancelToken | None = None):
    """Read every column the first frame did not need (a background task after the first frame)."""
    tables = [t for t in (trace.api, trace.kernels, trace.memcpy, trace.memset) if t.deferred]
    for done, table in enumerate(tables):
        if cancel is not None:
            cancel.check()
        progress(done / max(len(tables), 1), "reading the remaining columns")
        table.load_deferred()
    progress(1.0, "all columns read")
    return trace


def nvtx_start(trace: Trace, prefix: str) -> int | None:
    """Start of the first NVTX range whose text starts with `prefix` (None if there is none)."""
    matching = [i for i in range(len(trace.symbols)) if trace.symbols.name(i).startswith(prefix)]
    rows = np.flatnonzero(np.isin(trace.nvtx.text, matching)) if matching else []
    return int(trace.nvtx.start[rows[0]]) if len(rows) else None


def open_document(
    path: str | os.PathLike[str],
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    align_to: str | None = None,
) -> TraceDocument:
    """Load, analyse and lay out a trace; progress runs 0..1 across all of it.

    With `align_to`, time 0 is the start of the first NVTX range whose text starts with it (two
    runs' timelines line up at their first measured repetition); otherwise the start of the trace.
    """
    trace = load_trace(path, lambda f, m: progress(0.75 * f, m), cancel, columns=schema.TIMELINE_COLUMNS)
    progress(0.8, "analysing launches")
    analysis = analyze(trace)
    if cancel is not None:
        cancel.check()
    summary = summarize(trace, analysis=analysis)
    stats = kernel_stats(trace)
    progress(0.9, "laying out lanes")
    origin = nvtx_start(trace, align_to) if align_to else None
    layout = build_layout(trace, analysis.graphs, origin)
    dags = trace_dags(trace, analysis.nodes)
    progress(1.0, "ready")
    return TraceDocument(trace, analysis, summary, stats, layout, dags)


def trace_dags(trace: Trace, nodes: Table) -> list[Dag]:
    """The DAGs a node-mode trace shows (nodes and durations; edges unknown)."""
    durations = node_durations(trace, nodes)
    if not len(durations):
        return []
    return dags_from_trace(durations, trace.symbols, trace.graph_nodes.node[trace.graph_nodes.original_node >= 0])
