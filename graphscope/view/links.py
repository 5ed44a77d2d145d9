"""What a selection links to, decoded from the tables (no Qt): a GPU row's launch call and the work a
call caused, a graph launch's bracket, a graph node's activities and the node of a node's activity,
the kernels of a Kernels-table row and the next one of them in time, the scope an NVTX range or a
window dragged along the time axis stands for.

The window's widgets (TimelineView, MainWindow, GraphPanel) only draw what these return.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from graphscope.analysis.scope import Scope
from graphscope.core import sets
from graphscope.core.events import GPU_WORK, NODE_WORK, Activity, graph_of, index_in_graph
from graphscope.core.units import format_ns
from graphscope.trace import Trace
from graphscope.trace.schema import NVTX_RANGE_TYPES
from graphscope.view.document import TraceDocument
from graphscope.view.layout import API, DRAWN, GRAPH_GROUP, TimelineLayout


@dataclass
class Linked:
    """What one selected event lights up: rows per source (`rows`), and the launch call a line is drawn
    from (`call`, an API row; -1 for none, and for a selected call itself)."""

    rows: dict[int, np.ndarray] = field(default_factory=dict)
    call: int = -1


def linked(document: TraceDocument, source: int, row: int) -> Linked:
    """A GPU row (kernel, copy, memset, whole-graph launch): its launch call. A CUDA call: the work it
    caused and the graph launches it made. A graph launch's bracket: its call and that call's work."""
    correlation = document.analysis.correlation
    graphs = document.analysis.graphs
    found = Linked()
    if source in GPU_WORK:
        found.call = int(correlation.api_row[Activity(source).table][row])
        if found.call >= 0:
            found.rows[API] = np.array([found.call])
    elif source == API:
        found.rows.update(_drawn_work(document, row))
        groups = np.flatnonzero(graphs.api_row == row)
        if len(groups):
            found.rows[GRAPH_GROUP] = groups
    elif source == GRAPH_GROUP:
        found.call = int(graphs.api_row[row])
        if found.call >= 0:
            found.rows[API] = np.array([found.call])
            found.rows.update(_drawn_work(document, found.call))
    return found


def _drawn_work(document: TraceDocument, call: int) -> dict[int, np.ndarray]:
    """The rows of the drawn kinds of work one CUDA call caused."""
    caused = document.analysis.correlation.activities_of(call)
    return {Activity.of_table(kind): rows for kind, rows in caused.items() if Activity.of_table(kind) in DRAWN}


def locate(document: TraceDocument, source: int, row: int) -> tuple[int, int, bool] | None:
    """(lane, event index, is a bracket) of an event on the timeline; a graph launch is its bracket, or in
    a whole-graph export (graph trace mode 'graph') its whole-graph row, found by its start."""
    layout = document.layout
    found = layout.find(source, np.array([row]))
    if found:
        return found[0][0], int(found[0][1][0]), source == GRAPH_GROUP
    if source == GRAPH_GROUP:
        whole, start = document.trace.graph_launches, int(document.analysis.graphs.start[row])
        at = int(np.searchsorted(whole.start, start)) if len(whole) else 0
        if at < len(whole) and int(whole.start[at]) == start:
            found = layout.find(int(Activity.GRAPH), np.array([at]))
            if found:
                return found[0][0], int(found[0][1][0]), False
    return None


def node_of(trace: Trace, source: int, row: int) -> int | None:
    """The index within its graph of the node a kernel, copy or memset ran as (None: not a node's work)."""
    if source not in NODE_WORK:
        return None
    node = int(getattr(trace, Activity(source).table).graph_node[row])
    return int(index_in_graph(node)) if node >= 0 else None


def node_work(trace: Trace, indices: Iterable[int], graph_id: int | None = None) -> tuple[int, np.ndarray] | None:
    """The rows (source, rows) of the work of these nodes (indices within their graph), of graph
    `graph_id` only when given: the first kind of node work that has any; None when none has."""
    wanted = list(indices)
    for source in NODE_WORK:
        nodes = getattr(trace, source.table).graph_node
        mine = (nodes >= 0) & sets.isin(index_in_graph(nodes), wanted)
        if graph_id is not None:
            mine &= graph_of(nodes) == graph_id
        rows = np.flatnonzero(mine)
        if len(rows):
            return source, rows
    return None


def kernels_of(document: TraceDocument, identities: Iterable[int]) -> np.ndarray:
    """Kernel rows of some Kernels-table rows (full identities: name and launch configuration)."""
    parts = [document.kernels_of(int(identity)) for identity in identities]
    return np.concatenate(parts) if parts else np.empty(0, np.int64)


@dataclass(frozen=True)
class Instance:
    """One kernel of an identity: its row, its place in time among them (from 0) and how many there are."""

    row: int
    number: int
    count: int


def next_instance(document: TraceDocument, identity: int, after_x: float) -> Instance | None:
    """The first kernel of an identity that starts after timeline x `after_x` (the view's centre), in
    start order, wrapping round to the first; None when the identity has no kernel."""
    rows = document.kernels_of(identity)
    if not len(rows):
        return None
    starts = document.layout.x_of(document.trace.kernels.start[rows])
    order = np.argsort(starts, kind="stable")
    at = int(np.searchsorted(starts[order], after_x, "right")) % len(rows)
    return Instance(int(rows[order[at]]), at, len(rows))


def range_scope(trace: Trace, row: int) -> Scope | None:
    """The scope a clicked NVTX range stands for (None: a mark, or a range of no length)."""
    nvtx = trace.nvtx
    start, end = int(nvtx.start[row]), int(nvtx.end[row])
    if int(nvtx.event_type[row]) not in NVTX_RANGE_TYPES or end <= start:
        return None
    name = trace.symbols.name(int(nvtx.text[row]))
    return Scope.of(f"NVTX range {name!r}", np.array([start]), np.array([end]))


def window_scope(layout: TimelineLayout, x0: float, x1: float) -> Scope | None:
    """The scope of a window dragged along the time axis, from x0 to x1 either way (None: no width)."""
    low, high = sorted((x0, x1))
    if high - low <= 0:
        return None
    label = f"{format_ns(low)} to {format_ns(high)}"
    return Scope.of(label, np.array([layout.ns_of(low)]), np.array([layout.ns_of(high)]))
