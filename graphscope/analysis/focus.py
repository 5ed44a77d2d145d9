"""Where the work is: the window of a trace the first view shows (dense launches and GPU work, not
sparse start-up or tear-down)."""

from __future__ import annotations

import numpy as np

from graphscope.analysis.summary import TraceAnalysis
from graphscope.trace.model import Trace

FOCUS_SPARSENESS = 0.5  # the first view leaves out stretches under half the trace's average event density
BLOCK = 1 << 16  # events per step of the running sum: its temporaries stay small and in cache


def activity_window(trace: Trace, analysis: TraceAnalysis) -> tuple[int, int]:
    """The window of launch calls and GPU work that maximises (events inside) - FOCUS_SPARSENESS x (its
    width / the trace's average spacing between events).

    A stretch at least FOCUS_SPARSENESS times as dense as the trace on average is worth including;
    sparse start-up (module loading, set-up copies) and tear-down are not. A trace as dense at its
    edges as in the middle is shown whole. The window ends where the last work it holds ends.
    """
    calls = analysis.launches.rows
    call_starts = trace.api.start[calls]  # API rows and GPU work are both sorted by start
    work = analysis.work
    starts = np.concatenate([call_starts, work.start])
    starts.sort(kind="stable")  # two sorted runs: a merge
    if len(starts) < 20 or starts[-1] <= starts[0]:
        return trace.span()
    first, last = densest_run(starts)
    low, high = int(starts[first]), int(starts[last])
    ends = [high]
    a, b = _between(call_starts, low, high)
    if b > a:
        ends.append(int(trace.api.end[calls[a:b]].max()))
    a, b = _between(work.start, low, high)
    if b > a:
        ends.append(int(work.end[a:b].max()))
    return low, max(ends)


def _between(sorted_values: np.ndarray, low: int, high: int) -> tuple[int, int]:
    """The slice of sorted values within [low, high]."""
    return int(np.searchsorted(sorted_values, low, "left")), int(np.searchsorted(sorted_values, high, "right"))


def densest_run(starts: np.ndarray) -> tuple[int, int]:
    """(first, last) indices of the run of sorted `starts` with the largest (events in it) -
    FOCUS_SPARSENESS x (its width / the average spacing): the best segment of a running sum, kept
    block by block. The earliest such run wins a tie."""
    origin = float(starts[0])  # floats: a damaged file may span all of int64
    per_ns = FOCUS_SPARSENESS * (len(starts) - 1) / (float(starts[-1]) - origin)
    best, first, last = -np.inf, 0, 0
    lowest, lowest_at = np.inf, 0  # the running minimum of the sum before this block, and where it was
    for lo in range(0, len(starts), BLOCK):
        value = starts[lo : lo + BLOCK].astype(np.float64)
        value -= origin
        value *= -per_ns
        value += np.arange(lo, lo + len(value))
        running = np.minimum.accumulate(value)
        np.minimum(running, lowest, out=running)
        gain = value - running
        k = int(np.argmax(gain))
        if gain[k] > best:
            best, last = gain[k], lo + k
            first = lowest_at if running[k] == lowest else lo + int(np.flatnonzero(value[: k + 1] == running[k])[0])
        if running[-1] < lowest:
            lowest, lowest_at = running[-1], lo + int(np.flatnonzero(value == running[-1])[0])
    return first, last
