"""Per-step graph anatomy: in each step, the graph launches, the eager islands between them, the seams,
the share of GPU time inside graphs and the step's mode; the steps whose mode changes, with what the
trace shows of why; and what fusing a piecewise step's seams into one graph would buy.

- **Steps** come from analysis/step_ranges.py: its step family, and beside it every other repeated,
  side-by-side family of ranges that launched STEP_PHASE_SHARE of the GPU busy time and overlaps none of
  them (a program that runs its steps as phases: the seeds' eager_N then graph_N, each family under
  STEP_GPU_SHARE alone, both together over it). Without a step family the phases must launch
  STEP_GPU_SHARE together, or the trace has no steps. Work belongs to the step its launch call started
  in (its own start where no call was recorded), as in any scope.
- **Segments**: each graph launch seen on the GPU (analysis/graphs.py: its first node's start to its
  last node's end, or the whole-graph row) is one segment; each piece of GPU work outside a graph is one.
  In GPU start order, consecutive eager segments form an *island*; an island with graph launches on both
  sides is *interior*.
- **Seams**: every boundary between two segments of which at least one is a graph launch (graph to
  island, island to graph, graph to graph); its idle is the GPU time between the last end so far and the
  next segment's start (0 when the next work started before: work overlapping is never negative idle).
- **Mode** (core/rules.py STEP_MODES): from the graph launches, the interior islands and the graphs'
  share of the step's GPU busy time (the union of its work).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphscope.analysis import intervals, step_ranges
from graphscope.analysis.capture import capture_marks
from graphscope.analysis.launch import api_kinds
from graphscope.analysis.scope import Scope, nvtx_ranges
from graphscope.analysis.step_shapes import Shapes, shape_causes, step_shapes
from graphscope.core import sets
from graphscope.core.events import NODE_WORK, Activity, ApiKind
from graphscope.core.rules import (
    GRAPH_BODY_SHARE,
    MODE_EAGER,
    MODE_FULL,
    MODE_IDLE,
    MODE_MIXED,
    MODE_PIECEWISE,
    STEP_DISJOINT_SHARE,
    STEP_GPU_SHARE,
    STEP_MODES,
    STEP_PHASE_SHARE,
)
from graphscope.core.table import Table
from graphscope.trace.model import Trace

COLUMNS = (
    "graph_launches",  # graph launches seen on the GPU whose call started in the step
    "graph_nodes",  # their node activities (-1: graph trace mode, nodes not traced)
    "graph_launch_ns",  # host time in their launch calls
    "islands",  # runs of eager work between (or around) graph launches
    "interior_islands",  # islands with graph launches on both sides
    "island_kernels",  # eager kernels in the step
    "island_work",  # eager pieces of work (kernels, copies, memsets)
    "island_launch_calls",  # distinct calls that launched them
    "island_launch_ns",  # host time in those calls
    "seams",  # boundaries with a graph launch on at least one side
    "seam_ns",  # GPU idle at those boundaries
    "seam_host_wait_ns",  # the part of it spent waiting for the CPU to submit the next segment
    "span_host_wait_ns",  # GPU idle waiting for the CPU from the first graph launch to the last (fusion.py)
    "first_graph_nodes",  # node activities of the step's first graph launch (-1: none, or not traced)
    "first_graph_latency_ns",  # its call's start to its first GPU work (-1: no graph launch with a call)
    "busy_ns",  # union of the step's GPU work
    "graph_busy_ns",  # union of its graph launches' work
    "captures",  # begin-capture calls made in the step
    "capture_calls",  # launch calls made while capturing (analysis/capture.py)
)


@dataclass
class Anatomy:
    """One row per step (`Table` with COLUMNS plus start, end, mode), step names, and where they came from."""

    steps: Table
    names: list[str]
    source: str  # "3 ranges 'graph_*' + 3 ranges 'eager_*'"
    graph_ids: list[np.ndarray]  # per step, the distinct graph ids it launched
    shapes: Shapes | None = None  # per step, operator input shapes (analysis/step_shapes.py)
    # per graph launch whose first node waited for its call (not for queued work): (step, node activities,
    # call start to first work)
    launch_latency: tuple[np.ndarray, np.ndarray, np.ndarray] = (np.empty(0, np.int64),) * 3

    def __len__(self) -> int:
        return len(self.steps)

    @property
    def modes(self) -> list[str]:
        return [STEP_MODES[int(m)] for m in self.steps.mode]

    @property
    def graph_share(self) -> np.ndarray:
        busy = self.steps.busy_ns
        return np.where(busy > 0, self.steps.graph_busy_ns / np.maximum(busy, 1), 0.0)


def step_windows(trace: Trace, work: Table) -> tuple[np.ndarray, np.ndarray, str] | None:
    """The steps (module docstring) as sorted start, end arrays and a description; None when there are none."""
    ranked = step_ranges.families(trace, work)
    chosen = step_ranges.chosen(ranked)
    taken = [chosen] if chosen is not None else []
    for family in ranked:
        if family is chosen or family.gpu_share < STEP_PHASE_SHARE or family.disjoint_share < STEP_DISJOINT_SHARE:
            continue
        if not any(_overlaps(family, other) for other in taken):
            taken.append(family)
    if not taken or (chosen is None and not _enough(trace, work, taken)):
        return None
    start = np.concatenate([f.start for f in taken]).astype(np.int64)
    end = np.concatenate([f.end for f in taken]).astype(np.int64)
    order = np.argsort(start, kind="stable")
    return start[order], end[order], " + ".join(f"{f.instances} ranges {f.pattern!r}" for f in taken)


def _overlaps(a: step_ranges.StepFamily, b: step_ranges.StepFamily) -> bool:
    """Does any instance of `a` overlap any instance of `b`?"""
    merged = Scope.of("", b.start, b.end)
    at = np.searchsorted(merged.start, a.end, side="left") - 1  # the last window of b starting before a ends
    found = at >= 0
    return bool((merged.end[np.maximum(at, 0)] > a.start)[found].any())


def _enough(trace: Trace, work: Table, taken: list[step_ranges.StepFamily]) -> bool:
    """Did the families together launch STEP_GPU_SHARE of the trace's GPU busy time?"""
    start = np.concatenate([f.start for f in taken])
    end = np.concatenate([f.end for f in taken])
    inside = Scope.of("", start, end).contains(_launched(trace, work))
    busy = _busy(work, np.ones(len(work), dtype=bool))
    return busy > 0 and _busy(work, inside) >= STEP_GPU_SHARE * busy


def _busy(work: Table, rows: np.ndarray) -> int:
    """GPU busy time of the marked work, each device's work as a union, summed over devices."""
    return sum(
        intervals.covered_ns(work.start[rows & (work.device == d)], work.end[rows & (work.device == d)])
        for d in sets.unique(work.device[rows]).tolist()
    )


def _launched(trace: Trace, work: Table) -> np.ndarray:
    """When each piece of work was launched: its call's start, its own start where no call was recorded."""
    launched = np.asarray(work.start, np.int64).copy()
    linked = work.api_row >= 0
    launched[linked] = np.asarray(trace.api.start, np.int64)[work.api_row[linked]]
    return launched


def is_graph_work(trace: Trace, work: Table) -> np.ndarray:
    """Per row of the work table: does it belong to a graph launch (a node activity or a whole-graph row)?"""
    found = work.kind == Activity.GRAPH
    for kind in NODE_WORK:
        mine = np.flatnonzero(work.kind == kind)
        if len(mine):
            found[mine] = getattr(trace, kind.table).graph_node[work.source_row[mine]] >= 0
    return found


def anatomy(trace: Trace, work: Table, graphs, launches) -> Anatomy | None:
    """The anatomy of every step (module docstring); None when the trace has no steps.

    `work`, `graphs`, `launches`: analysis.gpu_time.gpu_work, analysis.graphs.graph_launches and
    analysis.launch.launch_metrics of the trace (summary.TraceAnalysis holds all three)."""
    found = step_windows(trace, work)
    if found is None:
        return None
    step_start, step_end, source = found
    api_start = np.asarray(trace.api.start, np.int64)
    api_end = np.asarray(trace.api.end, np.int64)
    api_ns = api_end - api_start
    eager = np.flatnonzero(~is_graph_work(trace, work))
    # segments: graph launches, then eager work rows; each with its launch time, GPU interval, call
    g_call = np.asarray(graphs.api_row, np.int64)
    g_at = np.where(g_call >= 0, api_start[np.maximum(g_call, 0)] if len(api_start) else 0, graphs.start)
    e_call = np.asarray(work.api_row[eager], np.int64)
    e_at = np.where(e_call >= 0, api_start[np.maximum(e_call, 0)] if len(api_start) else 0, work.start[eager])
    is_graph = np.r_[np.ones(len(graphs), bool), np.zeros(len(eager), bool)]
    seg_at = np.r_[g_at, e_at].astype(np.int64)
    seg_start = np.r_[np.asarray(graphs.start, np.int64), np.asarray(work.start[eager], np.int64)]
    seg_end = np.r_[np.asarray(graphs.end, np.int64), np.asarray(work.end[eager], np.int64)]
    seg_call = np.r_[g_call, e_call]
    seg_kernel = np.r_[np.zeros(len(graphs), bool), work.kind[eager] == Activity.KERNEL]
    seg_nodes = np.r_[np.asarray(graphs.nodes, np.int64), np.zeros(len(eager), np.int64)]
    seg_graph = np.r_[np.asarray(graphs.graph_id, np.int64), np.full(len(eager), -1, np.int64)]
    step = np.searchsorted(step_start, seg_at, side="right") - 1
    inside = step >= 0
    inside[inside] = seg_at[inside] < step_end[step[inside]]
    keep = np.flatnonzero(inside)
    o = keep[np.lexsort((seg_start[keep], step[keep]))]  # segments by step, then GPU start
    rows, graph_ids, latency = _per_step(
        len(step_start), step[o], is_graph[o], seg_start[o], seg_end[o], seg_call[o], seg_kernel[o], seg_nodes[o],
        seg_graph[o], api_ns, api_end, _kernel_launch_rows(trace), seg_at[o],
    )  # fmt: skip
    mode = _modes(rows)
    rows["captures"], rows["capture_calls"] = _captures(trace, launches, step_start, step_end)
    table = Table({"start": step_start, "end": step_end, **rows, "mode": mode})
    shapes = step_shapes(trace, step_start, step_end) if (np.diff(mode) != 0).any() else None  # for changes()
    return Anatomy(table, _names(trace, step_start, step_end), source, graph_ids, shapes, latency)


def _captures(trace: Trace, launches, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per step: begin-capture calls, and launch calls made while capturing, that started in it."""
    api = trace.api
    marks = capture_marks(trace.symbols, api.name) if len(api) else np.empty(0, np.int8)
    begins = np.asarray(api.start, np.int64)[marks == 1]
    captured = np.asarray(api.start, np.int64)[launches.rows[launches.capture]]
    return _per_window(begins, start, end), _per_window(captured, start, end)


def _per_window(times: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """How many of `times` fall in each of the sorted, disjoint windows [start, end)."""
    at = np.searchsorted(start, times, side="right") - 1
    inside = at >= 0
    inside[inside] = times[inside] < end[at[inside]]
    return np.bincount(at[inside], minlength=len(start)).astype(np.int64)


def _kernel_launch_rows(trace: Trace) -> np.ndarray:
    """Per API row: is it a kernel-launch call?"""
    return api_kinds(trace.symbols, trace.api.name) == ApiKind.KERNEL_LAUNCH


def _reach(step: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The latest end so far within each step (segments sorted by step): one running maximum over the
    ends lifted by step x span, so that no step's maximum carries into the next."""
    if not len(end):
        return end
    low = int(end.min())
    span = int(end.max()) - low + 1
    if (int(step.max()) + 1) * span >= 1 << 62:  # beyond int64: step by step
        reach = end.copy()
        bounds = np.flatnonzero(np.r_[True, step[1:] != step[:-1], True])
        for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            reach[lo:hi] = np.maximum.accumulate(end[lo:hi])
        return reach
    lift = step.astype(np.int64) * span - low
    return np.maximum.accumulate(end + lift) - lift


def _union(steps: int, step: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Per step, the time its segments cover (their union)."""
    if not len(step):
        return np.zeros(steps, np.int64)
    reach = _reach(step, end)
    before = np.r_[np.iinfo(np.int64).min, reach[:-1]]
    before[np.r_[True, step[1:] != step[:-1]]] = np.iinfo(np.int64).min  # a step's first segment
    added = np.maximum(reach - np.maximum(start, before), 0)
    return np.bincount(step, weights=added, minlength=steps).astype(np.int64)


def _distinct_calls(steps: int, step: np.ndarray, call: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (step, call) pairs of recorded calls: their steps and calls."""
    known = call >= 0
    pairs = sets.unique_rows(np.stack([step[known].astype(np.int64), call[known]]).T).T if known.any() else None
    if pairs is None:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return pairs[0], pairs[1]


def _per_step(
    steps: int,
    step: np.ndarray,
    graph: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    call: np.ndarray,
    kernel: np.ndarray,
    nodes: np.ndarray,
    graph_id: np.ndarray,
    api_ns: np.ndarray,
    api_end: np.ndarray,
    kernel_launch: np.ndarray,
    seg_at: np.ndarray,
) -> tuple[dict[str, np.ndarray], list[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The COLUMNS of every step from its segments (sorted by step, then GPU start), all steps at once;
    the steps' graph ids; and per graph launch with a call (step, nodes, call start to GPU start)."""

    def per(mask: np.ndarray, weights: np.ndarray | None = None, at: np.ndarray = step) -> np.ndarray:
        return np.bincount(at[mask], weights=None if weights is None else weights[mask], minlength=steps).astype(
            np.int64
        )

    n = len(step)
    same = np.r_[False, step[1:] == step[:-1]]  # a segment with an earlier one in its step
    reach = _reach(step, end)
    before = np.r_[0, reach[:-1]]
    idle = np.where(same, np.maximum(start - before, 0), 0)
    seam = same & (graph | np.r_[False, graph[:-1]])
    # host wait, as in analysis/gpu_time.idle_gaps: the next segment's call had not returned when the GPU
    # went idle (the GPU waited for the CPU to submit it); a call not recorded is never host wait
    waited = (call >= 0) & (api_end[np.maximum(call, 0)] >= before) if len(api_end) else np.zeros(n, bool)
    island_first = ~graph & ~(same & ~np.r_[True, graph[:-1]])  # eager, after a graph or first in its step
    total = np.cumsum(graph)
    first_of_step = np.flatnonzero(~same)
    graphs_in = per(graph)
    offset = np.repeat(total[first_of_step] - graph[first_of_step], np.diff(np.r_[first_of_step, n]))
    graphs_before = total - offset  # graph launches up to and including each segment, in its step
    interior = island_first & (graphs_before > 0) & (graphs_before < graphs_in[step])
    # a boundary inside the span one graph would hold: a graph launch at or before the segment before it,
    # and one at or after the segment after it
    before_prev = np.r_[0, graphs_before[:-1]]
    in_span = same & (before_prev > 0) & (graphs_before - graph < graphs_in[step])
    first_graph = graph & (graphs_before == 1)
    has_call = graph & (call >= 0)
    latency = np.where(has_call, start - seg_at, -1)
    # a launch whose call returned after all earlier GPU work had ended (any step's): its first node
    # waited for the call, not behind queued work, so its latency is the launch's own
    everything = np.r_[np.iinfo(np.int64).min, np.maximum.accumulate(end)[:-1]] if n else end
    own = has_call & (api_end[np.maximum(call, 0)] >= everything) if len(api_end) else np.zeros(n, bool)
    eager_steps, eager_calls = _distinct_calls(steps, step[~graph], call[~graph])
    launch = kernel_launch[eager_calls]
    graph_steps, graph_calls = _distinct_calls(steps, step[graph], call[graph])
    traced = per(graph, nodes)
    untraced = per(graph & (nodes < 0))
    rows = {
        "graph_launches": graphs_in,
        "graph_nodes": np.where(untraced > 0, -1, traced),
        "graph_launch_ns": per(np.ones(len(graph_calls), bool), api_ns[graph_calls], graph_steps),
        "islands": per(island_first),
        "interior_islands": per(interior),
        "island_kernels": per(kernel & ~graph),
        "island_work": per(~graph),
        "island_launch_calls": per(launch, None, eager_steps),
        "island_launch_ns": per(launch, api_ns[eager_calls], eager_steps),
        "seams": per(seam),
        "seam_ns": per(seam, idle),
        "seam_host_wait_ns": per(seam & waited, idle),
        "span_host_wait_ns": per(in_span & waited, idle),
        "first_graph_nodes": _first(steps, step, first_graph, nodes),
        "first_graph_latency_ns": _first(steps, step, first_graph & has_call, latency),
        "busy_ns": _union(steps, step, start, end),
        "graph_busy_ns": _union(steps, step[graph], start[graph], end[graph]),
    }
    id_steps, ids = _distinct_calls(steps, step[graph], graph_id[graph])
    graph_ids = np.split(ids, np.searchsorted(id_steps, np.arange(1, steps)))
    return rows, graph_ids, (step[own], nodes[own], latency[own])


def _first(steps: int, step: np.ndarray, mask: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per step, the value of its (only) masked segment; -1 where none."""
    out = np.full(steps, -1, np.int64)
    out[step[mask]] = values[mask]
    return out


def _modes(rows: dict[str, np.ndarray]) -> np.ndarray:
    """Each step's mode (core/rules.py STEP_MODES) as its index there."""
    busy, graphs = rows["busy_ns"], rows["graph_launches"]
    mode = np.where(rows["interior_islands"] > 0, STEP_MODES.index(MODE_PIECEWISE), STEP_MODES.index(MODE_FULL))
    mode = np.where(rows["graph_busy_ns"] < GRAPH_BODY_SHARE * busy, STEP_MODES.index(MODE_MIXED), mode)
    mode = np.where(graphs == 0, STEP_MODES.index(MODE_EAGER), mode)
    return np.where(busy == 0, STEP_MODES.index(MODE_IDLE), mode).astype(np.int8)


def _names(trace: Trace, start: np.ndarray, end: np.ndarray) -> list[str]:
    """Each step's range name (the first closed range with its start and end)."""
    texts, starts, ends = nvtx_ranges(trace)
    order = np.lexsort((ends, starts))
    starts, ends, texts = starts[order], ends[order], texts[order]
    at = np.minimum(np.searchsorted(starts, start), max(len(starts) - 1, 0))
    names = []
    for i, row in enumerate(at.tolist()):
        lo = row
        while lo < len(starts) and starts[lo] == start[i] and ends[lo] != end[i]:
            lo += 1
        ok = lo < len(starts) and starts[lo] == start[i] and texts[lo] >= 0
        names.append(trace.symbols.name(int(texts[lo])) if ok else f"step {i + 1}")
    return names


def changes(found: Anatomy) -> list[dict[str, object]]:
    """Every step whose mode differs from the step before, with what the trace shows of why: which of the
    two had no graph launch, a capture inside it, a graph launched for the first time, an operator shape
    never seen before (where shapes are recorded), or other counts of graph launches or eager kernels;
    `returns` when the step after goes back (a one-step departure)."""
    steps, names, modes = found.steps, found.names, found.modes
    seen: set[int] = set()
    result = []
    shapes = shape_causes(found.shapes, modes) if found.shapes is not None else {}
    for i in range(len(found)):
        new = sorted(set(found.graph_ids[i].tolist()) - seen) if i else []
        if i == 0 or modes[i] == modes[i - 1]:
            seen.update(found.graph_ids[i].tolist())
            continue
        seen.update(new)
        why = []
        for j, other in ((i - 1, i), (i, i - 1)):
            if not steps.graph_launches[j] and steps.busy_ns[j] and steps.graph_launches[other]:
                why.append(f"{names[j]}: no graph launch")
            if steps.captures[j] or steps.capture_calls[j]:
                why.append(
                    f"{names[j]}: a capture inside the step ({int(steps.captures[j])} begin-capture calls, "
                    f"{int(steps.capture_calls[j])} launch calls captured)"
                )
        if new and i > 0:
            why.append(f"{names[i]}: graph {', '.join(map(str, new))} launched for the first time")
        unseen = shapes.get(i, [])
        if unseen:
            more = f" and {len(unseen) - 1:,} more operator shapes new in the step" if len(unseen) > 1 else ""
            why.append(f"{names[i]}: a shape never seen before: {unseen[0]}{more}")
        for column, noun in (("graph_launches", "graph launches"), ("island_kernels", "eager kernels")):
            a, b = int(steps[column][i - 1]), int(steps[column][i])
            if a != b and (column != "graph_launches" or (a and b)):
                why.append(f"{noun}: {a:,} in {names[i - 1]}, {b:,} in {names[i]}")
        result.append(
            {
                "step": names[i],
                "index": i,
                "from": modes[i - 1],
                "to": modes[i],
                "returns": i + 1 < len(found) and modes[i + 1] == modes[i - 1],
                "why": why or ["the trace shows no cause (the same graph launches, captures and eager kernels)"],
            }
        )
    return result


def mode_counts(found: Anatomy) -> dict[str, int]:
    """Steps per mode, in STEP_MODES order, modes with no step left out."""
    counts = np.bincount(found.steps.mode.astype(np.int64), minlength=len(STEP_MODES))
    return {mode: int(n) for mode, n in zip(STEP_MODES, counts.tolist(), strict=True) if n}

