"""An opened trace with everything the window shows, built off the GUI thread (no Qt here)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphscope.analysis.kernel_stats import kernel_identity, kernel_stats
from graphscope.analysis.summary import TraceAnalysis, analyze, summarize
from graphscope.app.layout import TimelineLayout, build_layout
from graphscope.core.progress import CancelToken, ProgressCallback, no_progress
from graphscope.core.table import Table
from graphscope.trace import Trace, load_trace


@dataclass
class TraceDocument:
    trace: Trace
    analysis: TraceAnalysis
    summary: dict[str, Any]
    stats: Table  # per kernel identity, labelled by short name
    layout: TimelineLayout
    _identity: np.ndarray | None = None

    def kernels_of(self, identity: int) -> np.ndarray:
        """Kernel rows with one full identity (a row of the statistics table)."""
        if self._identity is None:
            self._identity = kernel_identity(self.trace.kernels)
        return np.flatnonzero(self._identity == identity)


def open_document(
    path: str | os.PathLike[str], progress: ProgressCallback = no_progress, cancel: CancelToken | None = None
) -> TraceDocument:
    """Load, analyse and lay out a trace; progress runs 0..1 across all of it."""
    trace = load_trace(path, lambda f, m: progress(0.75 * f, m), cancel)
    progress(0.8, "analysing launches")
    analysis = analyze(trace)
    if cancel is not None:
        cancel.check()
    summary = summarize(trace, analysis=analysis)
    stats = kernel_stats(trace)
    progress(0.9, "laying out lanes")
    layout = build_layout(trace, analysis.graphs)
    progress(1.0, "ready")
    return TraceDocument(trace, analysis, summary, stats, layout)
