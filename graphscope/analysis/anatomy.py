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
        for d in np.unique(work.device[rows]).tolist()
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
    order = keep[np.lexsort((seg_start[keep], step[keep]))]
    bounds = np.searchsorted(step[order], np.arange(len(step_start) + 1))
    kernel_launch = _kernel_launch_rows(trace)
    rows = {c: np.zeros(len(step_start), np.int64) for c in COLUMNS}
    mode = np.zeros(len(step_start), np.int8)
    graph_ids = []
    for i in range(len(step_start)):
        mine = order[bounds[i] : bounds[i + 1]]
        values, ids = _one_step(
            is_graph[mine], seg_start[mine], seg_end[mine], seg_call[mine], seg_kernel[mine], seg_nodes[mine],
            seg_graph[mine], api_ns, api_end, kernel_launch,
        )  # fmt: skip
        for c, v in values.items():
            rows[c][i] = v
        mode[i] = STEP_MODES.index(_mode(values))
        graph_ids.append(ids)
    rows["captures"], rows["capture_calls"] = _captures(trace, launches, step_start, step_end)
    table = Table({"start": step_start, "end": step_end, **rows, "mode": mode})
    return Anatomy(table, _names(trace, step_start, step_end), source, graph_ids)


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


def _one_step(
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
) -> tuple[dict[str, int], np.ndarray]:
    """The COLUMNS of one step from its segments, in GPU start order."""
    n = len(graph)
    values = dict.fromkeys(COLUMNS, 0)
    if not n:
        return values, np.empty(0, np.int64)
    before = np.maximum.accumulate(end)  # the last end so far: overlapping work is never negative idle
    idle = np.zeros(n, np.int64)
    idle[1:] = np.maximum(start[1:] - before[:-1], 0)
    seam = np.zeros(n, bool)
    seam[1:] = graph[1:] | graph[:-1]
    # host wait, as in analysis/gpu_time.idle_gaps: the next segment's call had not returned when the GPU
    # went idle (the GPU waited for the CPU to submit it); a call not recorded is never host wait
    waited = np.zeros(n, bool)
    known = np.flatnonzero(call[1:] >= 0) + 1
    waited[known] = api_end[call[known]] >= before[known - 1]
    island_first = ~graph & np.r_[True, graph[:-1]]
    graphs_before = np.cumsum(graph)
    interior = island_first & (graphs_before > 0) & (graphs_before[-1] > graphs_before)
    eager_calls = np.unique(call[~graph & (call >= 0)])
    graph_calls = np.unique(call[graph & (call >= 0)])
    traced = nodes[graph]
    values.update(
        graph_launches=int(graph.sum()),
        graph_nodes=int(traced.sum()) if (traced >= 0).all() else -1,
        graph_launch_ns=int(api_ns[graph_calls].sum()),
        islands=int(island_first.sum()),
        interior_islands=int(interior.sum()),
        island_kernels=int((kernel & ~graph).sum()),
        island_work=int((~graph).sum()),
        island_launch_calls=int(kernel_launch[eager_calls].sum()),
        island_launch_ns=int(api_ns[eager_calls[kernel_launch[eager_calls]]].sum()),
        seams=int(seam.sum()),
        seam_ns=int(idle[seam].sum()),
        seam_host_wait_ns=int(idle[seam & waited].sum()),
        busy_ns=intervals.covered_ns(start, end),
        graph_busy_ns=intervals.covered_ns(start[graph], end[graph]),
    )
    return values, np.unique(graph_id[graph])


def _mode(v: dict[str, int]) -> str:
    if not v["busy_ns"]:
        return MODE_IDLE
    if not v["graph_launches"]:
        return MODE_EAGER
    if v["graph_busy_ns"] < GRAPH_BODY_SHARE * v["busy_ns"]:
        return MODE_MIXED
    return MODE_PIECEWISE if v["interior_islands"] else MODE_FULL


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
    two had no graph launch, a capture inside it, a graph launched for the first time, or other counts of
    graph launches or eager kernels; `returns` when the step after goes back (a one-step departure)."""
    steps, names, modes = found.steps, found.names, found.modes
    seen: set[int] = set()
    result = []
    for i in range(len(found)):
        new = sorted(set(found.graph_ids[i].tolist()) - seen)
        seen.update(found.graph_ids[i].tolist())
        if i == 0 or modes[i] == modes[i - 1]:
            continue
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

