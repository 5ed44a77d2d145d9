"""Which lanes the timeline shows and what each holds (numpy only, no Qt).

One group per process (a CUDA API lane and an NVTX lane per thread) and one group per GPU (one lane
per stream with its kernels, copies and memsets). A graph launch is a bracket over its node kernels
on each stream lane it ran on, so eager launches and graph replays read the same way. Times are
float64 nanoseconds from the start of the trace. Every event remembers its source table and row,
and `locate` answers the reverse question, so selections can cross lanes.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np

from graphscope.analysis.graphs import GraphLaunches, launch_of_nodes
from graphscope.analysis.launch import api_kinds
from graphscope.core import sets
from graphscope.core.colours import KERNEL_COLORS, KIND_COLOR, NVTX_COLORS
from graphscope.core.events import GPU_WORK, Activity
from graphscope.core.symbols import SymbolTable
from graphscope.core.table import Table, offsets_from, row_numbers, rows_where
from graphscope.trace.model import Trace
from graphscope.trace.schema import NVTX_DRAWN_TYPES, NVTX_RANGE_TYPES
from graphscope.view.lod import LodLane
from graphscope.view.time_origin import ns_of, x_of

# A lane event's source is an `Activity` (core/events.py); the short names below are those members.
API, KERNEL, MEMCPY, MEMSET, GRAPH_ROW, NVTX, GRAPH_GROUP = (
    Activity.API,
    Activity.KERNEL,
    Activity.MEMCPY,
    Activity.MEMSET,
    Activity.GRAPH,
    Activity.NVTX,
    Activity.GRAPH_BRACKET,
)
DRAWN = (API, KERNEL, MEMCPY, MEMSET, GRAPH_ROW, NVTX, GRAPH_GROUP)
"""Every kind of event a lane can draw (synchronization rows are not drawn)."""


@dataclass
class Lane:
    """One row group of the timeline: events sorted by start, drawn in `depth_rows` sub-rows."""

    key: str
    group: str
    label: str
    kind: str  # "api", "nvtx", "gpu" or "graphs"
    source: np.ndarray  # per event: its Activity (int8)
    row: np.ndarray  # per event: row in that source table
    start: np.ndarray
    end: np.ndarray
    color: np.ndarray
    name: np.ndarray  # per event: symbol id of its label (-1: none)
    depth: np.ndarray  # per event: sub-row (NVTX nesting), 0 elsewhere
    device: int = -1
    stream: int = -1
    lods: list[LodLane] = field(default_factory=list)
    members: list[np.ndarray] = field(default_factory=list)  # per sub-row: event indices of that row
    bracket_rows: np.ndarray | None = None  # graph launches (rows of GraphLaunches) bracketed on this lane
    role: str = ""  # what it holds, as its label names it: "CUDA API", "NVTX", "Python", "operators"...
    brackets: LodLane | None = None  # their spans on this lane, sorted by start

    def __post_init__(self) -> None:
        rows = int(self.depth.max()) + 1 if len(self.depth) else 1
        if rows == 1:  # the usual lane: no copies
            self.members.append(np.arange(len(self.start)))
            self.lods.append(LodLane(self.start, self.end, self.color))
            return
        for d in range(rows):
            mine = np.flatnonzero(self.depth == d)
            self.members.append(mine)
            self.lods.append(LodLane(self.start[mine], self.end[mine], self.color[mine]))

    @property
    def depth_rows(self) -> int:
        return len(self.lods)

    def __len__(self) -> int:
        return len(self.start)


@dataclass
class TimelineLayout:
    origin: int  # trace time (ns) of x = 0
    lanes: list[Lane]
    sizes: dict[int, int]  # rows of each source table
    _locate: dict[int, tuple[np.ndarray, np.ndarray]] | None = field(default=None, repr=False)

    def x_of(self, ns):
        """Timeline x of trace time(s) (view/time_origin.py)."""
        return x_of(ns, self.origin)

    def ns_of(self, x: float) -> int:
        """Trace time of a timeline x."""
        return ns_of(x, self.origin)

    @property
    def locate(self) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """Source -> (lane index, event index) per source row; built on the first selection, not for the
        first frame."""
        if self._locate is None:
            self._locate = _locate(self.sizes, self.lanes)
        return self._locate

    def find(self, source: int, rows: np.ndarray) -> list[tuple[int, np.ndarray]]:
        """Lanes and event indices that show the given rows of a source table."""
        if source not in self.locate or not len(rows):
            return []
        lane_of, index_of = self.locate[source]
        lanes, events = lane_of[rows], index_of[rows]
        shown = lanes >= 0
        lanes, events = lanes[shown], events[shown]
        return [(int(lane), events[lanes == lane]) for lane in sets.unique(lanes)]


def _color_by_name(names: np.ndarray, colors: range, symbols: SymbolTable) -> np.ndarray:
    """A colour per name, the same in every trace: a hash of the name's text (string ids differ from
    one export to another), computed once per distinct id that occurs."""
    if not len(names):
        return np.empty(0, np.int16)
    low, high = int(names.min()), int(names.max())
    if high - low > 4 * len(names):  # ids far apart (a damaged file): hash the distinct ones only
        ids, inverse = np.unique(names, return_inverse=True)
        return _hashed_color(ids, colors, symbols)[inverse]
    offsets = offsets_from(names, low, high)
    used = np.flatnonzero(np.bincount(offsets))  # counting, not sorting: 50M events take one pass
    lookup = np.zeros(high - low + 1, np.int16)
    lookup[used] = _hashed_color(used + low, colors, symbols)
    return lookup[offsets]


def _hashed_color(ids: np.ndarray, colors: range, symbols: SymbolTable) -> np.ndarray:
    hashes = np.array([zlib.crc32(symbols.name(int(i)).encode("utf-8", "replace")) for i in ids.tolist()], np.int64)
    return (colors.start + hashes % len(colors)).astype(np.int16)


def _small_distinct(values: np.ndarray) -> np.ndarray:
    """np.unique of small non-negative ids (streams) by counting, not sorting."""
    if len(values) and values.min() >= 0 and values.max() < 1 << 20:
        return np.flatnonzero(np.bincount(values)).astype(values.dtype)
    return sets.unique(values)


def build_layout(trace: Trace, origin: int | None = None) -> TimelineLayout:
    """Lanes for every thread with CUDA calls or NVTX ranges and every GPU stream with work.

    x = 0 is `origin` (trace time, ns): the start of the trace unless given. The lanes need no launch
    analysis, so they can be built while it runs; `add_graph_brackets` adds the graph launches after.
    """
    origin = trace.span()[0] if origin is None else origin
    lanes: list[Lane] = []
    symbols = trace.symbols
    for process in range(len(trace.processes)):
        group = _process_label(trace, symbols, process)
        for thread in np.flatnonzero(trace.threads.process == process):
            lanes += _thread_lanes(trace, origin, group, int(thread))
    tables = [getattr(trace, kind.table) for kind in GPU_WORK]
    for device in _small_distinct(np.concatenate([_small_distinct(t.device) for t in tables])):
        lanes += _gpu_lanes(trace, origin, int(device))
    sizes = {
        API: len(trace.api),
        KERNEL: len(trace.kernels),
        MEMCPY: len(trace.memcpy),
        MEMSET: len(trace.memset),
        GRAPH_ROW: len(trace.graph_launches),
        NVTX: len(trace.nvtx),
        GRAPH_GROUP: 0,
    }
    return TimelineLayout(origin, lanes, sizes)


def add_graph_brackets(layout: TimelineLayout, graphs: GraphLaunches, nodes: Table) -> TimelineLayout:
    """Bracket each graph launch over its node activities (node trace mode) on every stream lane they ran on."""
    layout.sizes[GRAPH_GROUP] = len(graphs)
    if not len(nodes):
        return layout
    launch = launch_of_nodes(graphs, nodes)
    for lane in layout.lanes:
        if lane.kind == "gpu":
            lane.bracket_rows, lane.brackets = _brackets(nodes, launch, lane.device, lane.stream, layout.origin)
    return layout


def _process_label(trace: Trace, symbols: SymbolTable, process: int) -> str:
    name, pid = symbols.name(int(trace.processes.name[process])), int(trace.processes.pid[process])
    return f"pid {pid}" if name == f"pid {pid}" else f"{name} (pid {pid})"  # a profiler's unnamed process


KINETO_RANGE_ROLES = {2: "annotations", 3: "Python", 1: "operators"}
"""A PyTorch-profiler range's category (kept as its NVTX domain, trace/kineto.py) -> its lane, in the
order they stack: annotations (ProfilerStep#N, record_function) over the Python stack over the operators."""
STACKED_ROLES = ("annotations", "Python", "operators")
"""Lanes whose nesting is a call stack (4-12 rows deep in the shipped PyTorch traces, filling the window's
height and pushing the GPU lanes out of sight): the timeline starts them collapsed to one row, their
outermost ranges (ProfilerStep#N, the top-level operators)."""


def _thread_lanes(trace: Trace, origin: int, group: str, thread: int) -> list[Lane]:
    lanes = []
    tid = int(trace.threads.tid[thread])
    thread_name = trace.symbols.name(int(trace.threads.name[thread]))
    kineto = trace.info.layout == "kineto"
    if kineto:  # the profiler names no threads ("thread N"): say which thread the lane is, once
        pid = int(trace.processes.pid[int(trace.threads.process[thread])])
        who = "main thread" if tid == pid else f"thread {tid}"

        def label(role: str) -> str:
            return f"{role} · {who}"
    else:

        def label(role: str) -> str:
            return f"{thread_name} [{tid}] {role}"

    api = trace.api
    rows = rows_where(api.thread == thread)
    name = api.name[rows]
    count = len(name)
    if count:
        lanes.append(
            Lane(
                key=f"api:{thread}",
                group=group,
                label=label("CUDA API"),
                kind="api",
                source=np.full(count, API, np.int8),
                row=row_numbers(rows, len(api)),
                start=x_of(api.start[rows], origin),
                end=x_of(api.end[rows], origin),
                color=api_kinds(trace.symbols, name).astype(np.int16),
                name=name,
                depth=np.zeros(count, np.int8),
                role="CUDA API",
            )
        )
    nvtx = trace.nvtx
    rows = np.flatnonzero((nvtx.thread == thread) & sets.isin(nvtx.event_type, NVTX_DRAWN_TYPES))
    if not len(rows):
        return lanes
    if not kineto:
        return [*lanes, _range_lane(trace, origin, group, rows, f"nvtx:{thread}", label("NVTX"), "NVTX")]
    domain = nvtx.domain[rows]
    ranges = []
    for key, role in KINETO_RANGE_ROLES.items():
        mine = rows[domain == key]
        if len(mine):
            ranges.append(_range_lane(trace, origin, group, mine, f"{role}:{thread}", label(role), role))
    other = rows[~sets.isin(domain, list(KINETO_RANGE_ROLES))]
    if len(other):
        ranges.append(_range_lane(trace, origin, group, other, f"nvtx:{thread}", label("ranges"), "ranges"))
    return [*ranges, *lanes]  # top down as the work flows: the stack, its operators, their CUDA calls


def _range_lane(trace: Trace, origin: int, group: str, rows: np.ndarray, key: str, label: str, role: str) -> Lane:
    """NVTX (or PyTorch-profiler) ranges of one thread, nested ones in sub-rows."""
    nvtx = trace.nvtx
    start = nvtx.start[rows]
    is_range = sets.isin(nvtx.event_type[rows], NVTX_RANGE_TYPES) & (nvtx.end[rows] >= start)
    end = np.where(is_range, nvtx.end[rows], start)
    return Lane(
        key=key,
        group=group,
        label=label,
        kind="nvtx",
        source=np.full(len(rows), NVTX, np.int8),
        row=rows,
        start=x_of(start, origin),
        end=x_of(end, origin),
        color=_color_by_name(nvtx.text[rows], NVTX_COLORS, trace.symbols),
        name=nvtx.text[rows],
        depth=nesting_depth(start, end),
        role=role,
    )


def nesting_depth(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Sub-row of each range so that nested ranges stack (input sorted by start)."""
    depth = np.zeros(len(start), dtype=np.int8)
    open_ends: list[int] = []
    for i, (s, e) in enumerate(zip(start.tolist(), end.tolist())):
        while open_ends and open_ends[-1] <= s:
            open_ends.pop()
        depth[i] = min(len(open_ends), 127)
        open_ends.append(e)
    return depth


def _gpu_lanes(trace: Trace, origin: int, device: int) -> list[Lane]:
    gpu = trace.gpu(device)
    named = gpu is not None and gpu.name and gpu.name != f"GPU {device}"  # a profiler may name it "GPU N"
    group = f"GPU {device}" + (f" · {gpu.name}" if named else "")
    lanes = []
    parts = []
    for source in GPU_WORK:
        table = getattr(trace, source.table)
        if not len(table):
            continue
        rows = rows_where(table.device == device)
        stream = table.stream[rows]
        count = len(stream)
        if not count:
            continue
        if source == KERNEL:
            name = table.short_name[rows]
            color = _color_by_name(name, KERNEL_COLORS, trace.symbols)
        else:
            color, name = np.full(count, KIND_COLOR[source], np.int16), np.full(count, -1, np.int32)
        row = row_numbers(rows, len(table))
        parts.append((np.full(count, source, np.int8), row, stream, table.start[rows], table.end[rows], color, name))
    if not parts:
        return lanes
    if len(parts) == 1:
        source, rows, stream, start, end, color, name = parts[0]
    else:
        source, rows, stream, start, end, color, name = (np.concatenate(p) for p in zip(*parts))
    streams = _small_distinct(stream)
    for s in streams:
        mine = slice(None) if len(streams) == 1 else np.flatnonzero(stream == s)
        starts = start[mine]
        if not bool(np.all(starts[1:] >= starts[:-1])):  # usually in order already: no sort
            mine = row_numbers(mine, len(start))[np.argsort(starts, kind="stable")]
        lanes.append(
            Lane(
                key=f"stream:{device}:{s}",
                group=group,
                label=f"GPU {device} · stream {s}",
                kind="gpu",
                source=source[mine],
                row=rows[mine],
                start=x_of(start[mine], origin),
                end=x_of(end[mine], origin),
                color=color[mine],
                name=name[mine],
                depth=np.zeros(len(starts), np.int8),
                device=device,
                stream=int(s),
                role="GPU",
            )
        )
    return lanes


def _brackets(
    nodes: Table, launch: np.ndarray, device: int, stream: int, origin: int
) -> tuple[np.ndarray | None, LodLane | None]:
    """Per graph launch that ran nodes on this stream: its launch index and span here (first node's
    start to last node's end), sorted by start."""
    mine = np.flatnonzero((nodes.device == device) & (nodes.stream == stream) & (launch >= 0))
    if not len(mine):
        return None, None
    order = mine[np.argsort(launch[mine], kind="stable")]
    keys = launch[order]
    first = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    starts = x_of(np.minimum.reduceat(nodes.start[order], first), origin)
    ends = x_of(np.maximum.reduceat(nodes.end[order], first), origin)
    by_start = np.argsort(starts, kind="stable")
    spans = LodLane(starts[by_start], ends[by_start], np.full(len(first), KIND_COLOR[GRAPH_GROUP], np.int16))
    return keys[first][by_start], spans


def _locate(sizes: dict[int, int], lanes: list[Lane]) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    locate = {s: (np.full(n, -1, np.int32), np.full(n, -1, np.int64)) for s, n in sizes.items()}
    for lane_index, lane in enumerate(lanes):
        for source in sets.unique(lane.source):
            events = np.flatnonzero(lane.source == source)
            lane_of, index_of = locate[int(source)]
            lane_of[lane.row[events]] = lane_index
            index_of[lane.row[events]] = events
    lane_of, index_of = locate[GRAPH_GROUP]  # a launch's bracket: on the first stream lane that has one
    for lane_index, lane in reversed(list(enumerate(lanes))):
        if lane.bracket_rows is not None:
            lane_of[lane.bracket_rows] = lane_index
            index_of[lane.bracket_rows] = np.arange(len(lane.bracket_rows))
    return locate
