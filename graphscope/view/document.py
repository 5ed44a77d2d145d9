"""An opened trace with everything the window shows, built off the GUI thread (no Qt here)."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphscope.analysis.focus import activity_window
from graphscope.analysis.kernel_stats import kernel_identity, kernel_stats
from graphscope.analysis.scope import Scope, measured_scope, scoped_rows
from graphscope.analysis.summary import TraceAnalysis, analyze, summarize
from graphscope.core import sets
from graphscope.core.events import ApiKind
from graphscope.core.progress import CancelToken, ProgressCallback, no_progress
from graphscope.core.table import Table
from graphscope.export.dags import trace_dags
from graphscope.graph.model import Dag
from graphscope.trace import Trace
from graphscope.trace.reader import load_for_view
from graphscope.trace.window import Window
from graphscope.view import saved
from graphscope.view.layout import TimelineLayout, add_graph_brackets, build_layout

ALIGN_FOCUS = "<focus>"


@dataclass
class ScopedView:
    """What the side panels show for one scope (None: the document's default)."""

    scope: Scope | None
    summary: dict[str, Any]
    stats: Table  # per kernel identity, labelled by short name
    latency_ns: np.ndarray  # kernel launch latencies in scope
    duration_ns: np.ndarray  # kernel durations in scope


@dataclass
class TraceDocument:
    trace: Trace
    analysis: TraceAnalysis
    view: ScopedView | None  # the panels' contents for the default scope (None until `finish_document`)
    layout: TimelineLayout
    dags: list[Dag]  # one per executed graph (node trace mode); edges unknown
    default_scope: Scope | None  # graphscope's measured repetitions, when the trace is a run's
    focus: tuple[int, int]  # trace time (ns) of the window the first view shows
    window: Window | None = None  # the part of a file too large to hold whole that was read
    align_to: str | None = None  # what time 0 is aligned to (open_document's `align_to`)
    restored: bool = False  # its parts came from the file's saved view (view/saved.py), not computed
    gaps: dict[str, Any] | None = None  # GPU lane key -> its idle gaps (view/gaps.py), once first shown
    _identity: np.ndarray | None = None

    @property
    def summary(self) -> dict[str, Any]:
        return self.view.summary

    @property
    def stats(self) -> Table:
        return self.view.stats

    def kernels_of(self, identity: int) -> np.ndarray:
        """Kernel rows with one full identity (a row of the statistics table)."""
        return np.flatnonzero(self._identities() == identity)

    def identity_of(self, kernel_row: int) -> int:
        """The statistics table's identity of one kernel row."""
        return int(self._identities()[kernel_row])

    def _identities(self) -> np.ndarray:
        if self._identity is None:
            self._identity = kernel_identity(self.trace.kernels)
        return self._identity


def load_remaining_columns(trace: Trace, progress: ProgressCallback = no_progress, cancel: CancelToken | None = None):
    """Read every column the first frame did not need (a background task after the first frame)."""
    tables = [t for t in trace.tables().values() if t.deferred]  # the tables read in part (trace/tables.py)
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
    rows = np.flatnonzero(sets.isin(trace.nvtx.text, matching)) if matching else []
    return int(trace.nvtx.start[rows[0]]) if len(rows) else None


_LAYOUT_BESIDE_BELOW = 16_000_000  # kernels; measured at 10M + 10M (warm, fresh processes, 3 interleaved
# rounds): first frame 2.73-2.84 s with the lanes laid out beside the analysis, 4.0-4.4 s one after the
# other, peak 1.82-1.92 GiB against 1.79 (the narrow id columns made room). Larger windows keep the order.


def open_document(
    path: str | os.PathLike[str],
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    align_to: str | None = None,
    panels: bool = True,
    window_start: int | None = None,
    max_events: int | None = None,
) -> TraceDocument:
    """Load, analyse and lay out a trace; progress runs 0..1 across all of it.

    With `align_to`, time 0 is the start of the first NVTX range whose text starts with it (two
    runs' timelines line up at their first measured repetition), or, for ALIGN_FOCUS, the start of
    the activity the first view shows; otherwise the start of the trace.
    Without `panels`, only what the timeline draws is made: `finish_document` adds the summary, the
    kernel table and the DAGs (the window shows the lanes first and fills the panels in after).
    A file with more events than this machine's memory holds (`max_events`, by default from
    trace/window.py's budget) is read a time window at a time, from `window_start`.
    """
    trace, window = load_for_view(path, lambda f, m: progress(0.7 * f, m), cancel, window_start, max_events)
    return build_document(trace, window, progress, cancel, align_to, panels)


def build_document(
    trace: Trace,
    window: Window | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    align_to: str | None = None,
    panels: bool = True,
) -> TraceDocument:
    """Analyse and lay out a loaded trace (`open_document` without the read); a whole file opened before
    gets every part, the panels' too, from its saved view."""
    restored = saved.load(trace, align_to) if window is None else None
    if restored is not None:
        progress(1.0, "ready")
        parts = {**restored, "focus": tuple(restored["focus"])}
        return TraceDocument(trace, **parts, window=window, align_to=align_to, restored=True)
    progress(0.75, "analysing launches, laying out lanes")
    if align_to == ALIGN_FOCUS:  # the lanes start where the focus does: one after the other
        analysis, default_scope, focus = _analysis_and_focus(trace, cancel)
        layout = build_layout(trace, focus[0])
    else:  # the lanes need no analysis: built alongside it (numpy releases the GIL), unless memory is short
        # a window of a large file keeps the file's clock: its axis reads as --range and the header do
        origin = nvtx_start(trace, align_to) if align_to else (window.first if window is not None else None)
        pool = ThreadPoolExecutor(max_workers=1) if len(trace.kernels) < _LAYOUT_BESIDE_BELOW else None
        lanes = pool.submit(build_layout, trace, origin) if pool else None
        try:
            analysis, default_scope, focus = _analysis_and_focus(trace, cancel)
        finally:
            if pool:
                pool.shutdown()
        layout = lanes.result() if lanes else build_layout(trace, origin)
    add_graph_brackets(layout, analysis.graphs, analysis.nodes)
    document = TraceDocument(trace, analysis, None, layout, [], default_scope, focus, window, align_to)
    if panels:
        finish_document(document)
    progress(1.0, "ready")
    return document


def _analysis_and_focus(
    trace: Trace, cancel: CancelToken | None
) -> tuple[TraceAnalysis, Scope | None, tuple[int, int]]:
    """The launch analysis, the default scope and the window the first view shows."""
    analysis = analyze(trace)
    if cancel is not None:
        cancel.check()
    default_scope = measured_scope(trace)
    focus = (default_scope.first, default_scope.last) if default_scope else activity_window(trace, analysis)
    return analysis, default_scope, focus


def finish_document(document: TraceDocument, progress=no_progress, cancel=None) -> TraceDocument:
    """The panels' contents: summary and kernel table of the default scope, and the trace's DAGs; then
    every part is saved for the next open of the file (a whole file's, in the background)."""
    if document.view is None:
        document.view = scoped_view(document.trace, document.analysis, document.default_scope)
        document.dags = trace_dags(document.trace, document.analysis.nodes)
    if document.window is None and not document.restored:
        parts = {name: getattr(document, name) for name in saved.PARTS}
        saved.save_in_background(document.trace, parts, document.align_to)
    return document


def scoped_view(
    trace: Trace, analysis: TraceAnalysis, scope: Scope | None, progress=no_progress, cancel=None
) -> ScopedView:
    """Summary, kernel statistics and histogram inputs for one scope (the whole trace when None)."""
    summary = summarize(trace, analysis=analysis, scope=scope, whole=scope is None)
    if scope is None:
        stats = kernel_stats(trace)
        kernels_in = slice(None)
        calls_in = np.ones(len(analysis.launches.rows), dtype=bool)
    else:
        rows = scoped_rows(trace, analysis.correlation, analysis.work, scope)
        kernels_in = np.flatnonzero(rows.gpu["kernels"])
        stats = kernel_stats(trace, rows=kernels_in)
        calls_in = rows.api[analysis.launches.rows]
    launches = analysis.launches
    latency = launches.latency_ns[launches.of_kind(ApiKind.KERNEL_LAUNCH) & calls_in]
    kernels = trace.kernels
    durations = (kernels.end[kernels_in] - kernels.start[kernels_in]).astype(np.float64)
    return ScopedView(scope, summary, stats, latency[~np.isnan(latency)], durations)
