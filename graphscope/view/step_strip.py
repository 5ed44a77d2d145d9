"""The per-step strip above the lanes, without Qt: each step of the trace (analysis/anatomy.py) as a
span coloured by its graph mode, and the seams inside it (GPU idle where a graph launch meets other
work) as shaded spans, all in timeline x (ns from the layout's origin). app/step_strip.py draws it.

Seams are found as anatomy.py counts them: per step, its graph launches and eager work (each in the
step its launch call started in, its own start where no call was recorded) in GPU start order; a
boundary with a graph launch on at least one side whose next segment starts after the latest end so far
is a seam, its span that idle time (so a step's seams add up to its `seam_ns`). A seam of work launched
late in a step may lie after the step's range ends: it is drawn where the GPU was idle.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphscope.analysis.anatomy import anatomy, is_graph_work
from graphscope.core.colours import MODE_COLOURS
from graphscope.core.rules import STEP_MODES
from graphscope.view.time_origin import x_of


@dataclass
class StepStrip:
    """Steps (start, end, mode index into STEP_MODES, name) and seams (start, end, step), timeline x."""

    start: np.ndarray
    end: np.ndarray
    mode: np.ndarray
    names: list[str]
    seam_start: np.ndarray
    seam_end: np.ndarray
    seam_step: np.ndarray

    def __len__(self) -> int:
        return len(self.start)

    def colours(self) -> list[tuple[int, int, int]]:
        """Each step's colour, by its mode."""
        return [MODE_COLOURS[STEP_MODES[int(m)]] for m in self.mode]

    def label(self, index: int) -> str:
        """A step's tooltip: name, mode, seams and their idle time."""
        from graphscope.core.units import format_ns

        mine = self.seam_step == index
        idle = int((self.seam_end[mine] - self.seam_start[mine]).sum())
        mode = STEP_MODES[int(self.mode[index])]
        return f"{self.names[index]}: {mode}; {int(mine.sum())} seams, {format_ns(idle)} GPU idle at them"


def step_strip(trace, analysis, origin: int = 0) -> StepStrip | None:
    """The strip of a trace (`analysis`: summary.TraceAnalysis); None when the trace has no steps."""
    found = anatomy(trace, analysis.work, analysis.graphs, analysis.launches)
    if found is None:
        return None
    steps = found.steps
    step_start, step_end = np.asarray(steps.start, np.int64), np.asarray(steps.end, np.int64)
    work, graphs = analysis.work, analysis.graphs
    eager = ~is_graph_work(trace, work)
    start = np.r_[np.asarray(graphs.start, np.int64), np.asarray(work.start, np.int64)[eager]]
    end = np.r_[np.asarray(graphs.end, np.int64), np.asarray(work.end, np.int64)[eager]]
    graph = np.r_[np.ones(len(graphs), bool), np.zeros(int(eager.sum()), bool)]
    call = np.r_[np.asarray(graphs.api_row, np.int64), np.asarray(work.api_row, np.int64)[eager]]
    api_start = np.asarray(trace.api.start, np.int64)
    at = np.where(call >= 0, api_start[np.maximum(call, 0)] if len(api_start) else 0, start)
    seams = seam_spans(step_start, step_end, at, start, end, graph)
    return StepStrip(
        x_of(step_start, origin), x_of(step_end, origin), np.asarray(steps.mode, np.int8), found.names,
        x_of(seams[0], origin), x_of(seams[1], origin), seams[2],
    )  # fmt: skip


def seam_spans(
    step_start: np.ndarray,
    step_end: np.ndarray,
    at: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    graph: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seam spans (start, end, step) of segments (launched `at`, GPU start, end, is a graph launch)
    within sorted steps."""
    step = np.searchsorted(step_start, at, side="right") - 1
    inside = step >= 0
    inside[inside] = at[inside] < step_end[step[inside]]
    keep = np.flatnonzero(inside)
    o = keep[np.lexsort((start[keep], step[keep]))]
    step, start, end, graph = step[o], start[o], end[o], graph[o]
    if not len(step):
        empty = np.empty(0, np.int64)
        return empty, empty, empty
    same = np.r_[False, step[1:] == step[:-1]]
    reach = np.empty_like(end)  # the latest end so far, restarted at each step
    bounds = np.flatnonzero(np.r_[True, ~same[1:], True])
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        reach[lo:hi] = np.maximum.accumulate(end[lo:hi])
    before = np.r_[0, reach[:-1]]
    seam = same & (graph | np.r_[False, graph[:-1]]) & (start > before)
    return before[seam], start[seam], step[seam].astype(np.int64)
