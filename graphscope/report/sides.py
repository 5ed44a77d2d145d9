"""One side of a comparison: what happened per step, and per kernel, in a trace scope or a stored run.

A step is one window of the side's scope (one NVTX range instance, one measured repetition). Per
step: wall time, GPU busy time, host submit time (CPU time inside launch calls), GPU idle time split
into waiting for the CPU (host-wait) and other, and launch calls. Kernels are keyed by full identity
(mangled name, else demangled) and launch configuration, so an eager launch and the graph node that
runs the same kernel with the same configuration are the same row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphscope.analysis.accounting import Timeline
from graphscope.analysis.kernel_stats import distinct_groups, kernel_identity
from graphscope.analysis.scope import Scope, ScopedRows, scoped_rows
from graphscope.analysis.steady import submission_ns
from graphscope.analysis.summary import TraceAnalysis, nodes_in, summarize
from graphscope.core import sets
from graphscope.core.events import Activity, ApiKind
from graphscope.core.stats import describe
from graphscope.core.symbols import elide
from graphscope.core.table import Table
from graphscope.export.dags import trace_dags
from graphscope.graph.model import Dag
from graphscope.trace.model import Trace

METRICS = ("wall_ns", "gpu_busy_ns", "submit_ns", "idle_host_wait_ns", "idle_other_ns", "launch_calls")
MAX_STEPS = 500
KERNEL_ROWS = 60
EXCERPT_EVENTS = 4000


@dataclass
class KernelRow:
    """One kernel identity + launch configuration on one side."""

    identity: str  # the full mangled (else demangled) name: symbol ids differ from one export to another
    name: str
    full_name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    count: int
    order: int  # first appearance, in start order
    durations: np.ndarray

    def to_json(self, steps: int) -> dict[str, Any]:
        """`steps`: how many steps the kernels were counted over (the side's, or its trace's)."""
        stats = describe(self.durations)
        return {
            "count": self.count,
            "per_step": self.count / max(steps, 1),
            "grid": list(self.grid),
            "block": list(self.block),
            "median_ns": stats.median,
            "ci_low_ns": stats.ci_low,
            "ci_high_ns": stats.ci_high,
            "total_ns": float(self.durations.sum()),
        }


@dataclass
class Side:
    """Everything a report says about one side."""

    label: str
    kind: str  # "trace" or "run"
    source: str
    scope: str | None
    steps: dict[str, np.ndarray]  # metric -> one value per step
    summary: dict[str, Any] | None = None  # the trace summary of the scope (trace sides)
    kernels: list[KernelRow] = field(default_factory=list)
    latency_ns: np.ndarray = field(default_factory=lambda: np.empty(0))
    duration_ns: np.ndarray = field(default_factory=lambda: np.empty(0))
    excerpt: dict[str, Any] | None = None  # a timeline excerpt of the first step
    dag: Dag | None = None  # the first traced graph's nodes, when the trace traced them
    notes: list[str] = field(default_factory=list)
    kernel_steps: int | None = None  # steps the kernel counts cover, when they come from another source
    program: str | None = None  # the traced command line, where the trace records it (Nsight Systems)
    modules: list[dict[str, Any]] = field(default_factory=list)  # replayed graph time by module (attribution)

    @property
    def step_count(self) -> int:
        return len(self.steps["wall_ns"])

    @property
    def kernel_step_count(self) -> int:
        return self.kernel_steps if self.kernel_steps is not None else self.step_count


def trace_side(trace: Trace, analysis: TraceAnalysis, scope: Scope | None, label: str) -> Side:
    """A side from a trace scope (the whole trace when `scope` is None: one step)."""
    summary = summarize(trace, analysis=analysis, scope=scope, whole=scope is None)
    start, end = trace.span()
    windows = (scope.start, scope.end) if scope is not None else (np.array([start]), np.array([end]))
    notes = []
    if len(windows[0]) > MAX_STEPS:
        notes.append(f"{len(windows[0])} windows in scope; the first {MAX_STEPS} are compared step by step")
        windows = (windows[0][:MAX_STEPS], windows[1][:MAX_STEPS])
    rows = scoped_rows(trace, analysis.correlation, analysis.work, scope) if scope is not None else None
    side = Side(
        label=label,
        kind="trace",
        source=str(trace.path),
        scope=scope.label if scope is not None else None,
        steps=_steps(trace, analysis, *windows),
        summary=summary,
        notes=notes,
        program=program_of(trace),
    )
    kernels_in = rows.gpu["kernels"] if rows is not None else np.ones(len(trace.kernels), dtype=bool)
    calls_in = rows.api[analysis.launches.rows] if rows is not None else slice(None)
    side.kernels = _kernel_rows(trace, np.flatnonzero(kernels_in))
    launches = analysis.launches
    latency = launches.latency_ns[calls_in][launches.kind[calls_in] == ApiKind.KERNEL_LAUNCH]
    side.latency_ns = latency[~np.isnan(latency)]
    kernels = trace.kernels
    side.duration_ns = (kernels.end - kernels.start)[kernels_in].astype(np.float64)
    side.excerpt = excerpt(trace, analysis, int(windows[0][0]), int(windows[1][0]))
    side.dag = _dag(trace, analysis, rows)
    side.modules = _modules(trace)
    return side


def _modules(trace: Trace) -> list[dict[str, Any]]:
    """Every replay's graph time by the nn.Module that made each node (analysis/capture_ops.py), where
    the trace holds node-level graph work and its capture tells modules; else none. The trace's held
    attribution: a capture trace attached in the GUI (view/attached.py) counts in its report."""
    if not trace.has_node_work:
        return []
    from graphscope.analysis.capture_ops import node_attribution

    nodes = node_attribution(trace)
    total = int(nodes.gpu_ns.sum())
    modules = [m for m in nodes.grouped(("module",)) if m["module"] is not None]
    return [dict(m, share=m["gpu_ns"] / total) for m in modules] if total else []


def program_of(trace: Trace) -> str | None:
    """The command line Nsight Systems launched (its capture metadata: PROCESS_0:COMMAND and
    PROCESS_0:ARGUMENT_k), or None."""
    capture = trace.info.capture
    command = capture.get("PROCESS_0:COMMAND")
    if not command:
        return None
    arguments = []
    while (argument := capture.get(f"PROCESS_0:ARGUMENT_{len(arguments)}")) is not None:
        arguments.append(argument)
    return " ".join([command, *arguments])


def _steps(trace: Trace, analysis: TraceAnalysis, starts: np.ndarray, ends: np.ndarray) -> dict[str, np.ndarray]:
    """Per window: its time account (analysis/accounting.py: every GPU counted as one, so that end to end
    = GPU busy + idle waiting for the CPU + idle otherwise) and the launch calls that began in it."""
    api, launches = trace.api, analysis.launches
    submitting = ~launches.capture  # calls that build a graph launch nothing (analysis/capture.py)
    is_launch = np.zeros(len(api), dtype=bool)
    is_launch[launches.rows[submitting]] = True
    call_ns = np.zeros(len(api), dtype=np.int64)
    call_ns[launches.rows[submitting]] = submission_ns(launches, analysis.work)[submitting]
    timeline = Timeline.of(trace, analysis.work)
    values = {metric: np.zeros(len(starts), dtype=np.float64) for metric in METRICS}
    for i, (low, high) in enumerate(zip(starts.tolist(), ends.tolist())):
        first, last = np.searchsorted(api.start, [low, high])  # api rows are sorted by start
        account = timeline.account(low, high)
        values["wall_ns"][i] = account.wall_ns
        values["gpu_busy_ns"][i] = account.busy_ns
        values["submit_ns"][i] = call_ns[first:last].sum()
        values["idle_host_wait_ns"][i] = account.host_wait_ns
        values["idle_other_ns"][i] = account.other_ns
        values["launch_calls"][i] = is_launch[first:last].sum()
    return values


def _kernel_rows(trace: Trace, rows: np.ndarray) -> list[KernelRow]:
    """Kernel rows grouped by identity and launch configuration, the busiest KERNEL_ROWS kept."""
    if not len(rows):
        return []
    kernels = trace.kernels
    identity = kernel_identity(kernels)[rows]
    config = ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z")
    _, group = distinct_groups(identity)
    for column in config:  # one column at a time: the groups stay dense, no sort of wide keys
        _, values = distinct_groups(kernels[column][rows])
        _, group = distinct_groups(group.astype(np.int64) * (int(values.max()) + 1) + values)
    order = np.argsort(group, kind="stable")
    starts = np.flatnonzero(np.r_[True, group[order][1:] != group[order][:-1]])
    first = order[starts]  # each group's first row, in start order
    unique = np.column_stack([identity[first]] + [kernels[c][rows][first] for c in config]).astype(np.int64)
    durations = (kernels.end - kernels.start)[rows]
    totals = np.bincount(group, weights=durations, minlength=len(unique))
    result = []
    for g in np.argsort(-totals, kind="stable")[:KERNEL_ROWS].tolist():
        row = rows[first[g]]
        members = order[starts[g] : starts[g + 1] if g + 1 < len(starts) else len(order)]
        full = trace.symbols.name(int(unique[g][0]))
        result.append(
            KernelRow(
                identity=full,
                name=elide(trace.symbols.name(int(kernels.short_name[row])), 120),
                full_name=elide(full),
                grid=tuple(int(v) for v in unique[g][1:4]),
                block=tuple(int(v) for v in unique[g][4:7]),
                count=len(members),
                order=int(first[g]),
                durations=durations[members].astype(np.float64),
            )
        )
    return result


def excerpt(trace: Trace, analysis: TraceAnalysis, low: int, high: int) -> dict[str, Any]:
    """Lanes of one window for a timeline picture: launch calls per thread, work per stream. A window of
    more than EXCERPT_EVENTS GPU events is drawn up to its first EXCERPT_EVENTS; `step_ns` keeps the
    whole window's length (the caption says both)."""
    lanes = []
    api, work = trace.api, analysis.work
    step_ns = high - low
    cut = np.searchsorted(work.start, low) + EXCERPT_EVENTS  # a dense window: its first few thousand events
    if cut < len(work) and work.start[cut] < high:
        high = int(work.start[cut])
    first, last = np.searchsorted(api.start, [low, high])
    launches = analysis.launches
    is_launch = np.zeros(len(api), dtype=bool)
    is_launch[launches.rows] = True
    calls = np.arange(first, last)
    for thread in sets.unique(api.thread[calls]).tolist():
        mine = calls[api.thread[calls] == thread]
        lanes.append(_lane(f"thread {int(trace.threads.tid[thread])} launch calls", api, mine[is_launch[mine]], "api"))
    inside = np.flatnonzero((work.end > low) & (work.start < high))
    tracks = sets.unique_rows(np.stack([work.device[inside], work.stream[inside]], axis=1)).tolist()
    for device, stream in tracks:
        mine = inside[(work.device[inside] == device) & (work.stream[inside] == stream)]
        lane = _lane(f"GPU {device} stream {stream}", work, mine, "work")
        lane["kinds"] = [Activity(k).table for k in work.kind[mine][:EXCERPT_EVENTS].tolist()]
        lanes.append(lane)
    return {"start_ns": low, "end_ns": high, "step_ns": step_ns, "lanes": lanes}


def _lane(label: str, table: Table, rows: np.ndarray, kind: str) -> dict[str, Any]:
    rows = rows[:EXCERPT_EVENTS]
    return {"label": label, "kind": kind, "start": table.start[rows].tolist(), "end": table.end[rows].tolist()}


def _dag(trace: Trace, analysis: TraceAnalysis, rows: ScopedRows | None) -> Dag | None:
    """The first traced graph in scope, nodes in capture order (edges are not traced)."""
    nodes = analysis.nodes
    if rows is not None and len(nodes):
        nodes = nodes.take(nodes_in(nodes, rows))
    dags = trace_dags(trace, nodes) if len(nodes) else []
    return dags[0] if dags else None


def run_side(run: dict[str, Any], mode: str, samples: list[dict[str, Any]], trace: Side | None = None) -> Side:
    """A side from one mode of a stored run: its measured repetitions are the steps.

    `trace`, when the run was profiled, lends its kernel table, excerpt and DAG (its own steps are
    the profiled repetitions, fewer and slower than the measured ones, so they are not used).
    """
    mine = [s for s in samples if s["mode"] == mode]
    if not mine:
        raise ValueError(f"run {run['id']} has no {mode} measurements")
    steps = {metric: np.full(len(mine), np.nan) for metric in METRICS}
    steps["wall_ns"] = np.array([s["wall_ns"] for s in mine], dtype=np.float64)
    steps["gpu_busy_ns"] = np.array([s["gpu_ns"] for s in mine], dtype=np.float64)  # the GPU span, by events
    steps["submit_ns"] = np.array([s["submit_ns"] for s in mine], dtype=np.float64)
    side = Side(f"run {run['id']} {mode}", "run", str(run["path"]), None, steps)
    side.notes.append("GPU time per step is the span between CUDA events around the step (it includes idle gaps)")
    if trace is not None:
        side.kernels, side.excerpt, side.dag = trace.kernels, trace.excerpt, trace.dag
        side.latency_ns, side.duration_ns, side.summary = trace.latency_ns, trace.duration_ns, trace.summary
        side.kernel_steps = trace.step_count  # the profiled repetitions, not the measured ones
        side.notes.append(f"kernels, timeline and graph from its Nsight Systems trace {trace.source}")
    return side
