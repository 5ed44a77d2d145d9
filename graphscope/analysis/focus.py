"""Where the work is: the window of a trace the first view shows (dense launches and GPU work, not
sparse start-up or tear-down)."""

from __future__ import annotations

import numpy as np

from graphscope.analysis.steady import ONE_OFF_FACTOR, ONE_OFF_MIN_NS
from graphscope.analysis.summary import TraceAnalysis
from graphscope.core import stats
from graphscope.trace.model import Trace

FOCUS_SPARSENESS = 0.5  # the first view leaves out stretches under half the trace's average event density
RIVAL_BUSY = 0.25  # GPU work outside the window of at least this share of the busy time inside joins it
MOSTLY_GAP = 0.5  # a window more than half one gap between events keeps only its busier side,
MAJORITY = 0.5  # when that side holds at least this share of the trace's GPU busy time
FEW_EVENTS = 20  # fewer launches and GPU items than this: the view is their span, no density to weigh
ONE_OFF_SAMPLE = 4096  # launch calls opening the window whose median a one-off is measured against
BLOCK = 1 << 16  # events per step of the running sum: its temporaries stay small and in cache


def activity_window(trace: Trace, analysis: TraceAnalysis) -> tuple[int, int]:
    """The window of launch calls and GPU work that maximises (events inside) - FOCUS_SPARSENESS x (its
    width / the trace's average spacing between events).

    A stretch at least FOCUS_SPARSENESS times as dense as the trace on average is worth including;
    sparse start-up (module loading, set-up copies) and tear-down are not. A trace as dense at its
    edges as in the middle is shown whole. Events are counted, so then few long GPU items (graph
    replays traced as one item each) rival many launches: GPU work within one window width after (or
    before) the window with at least RIVAL_BUSY of the window's busy time joins it. A window that is
    more than MOSTLY_GAP one gap (a long module load between warm-up and the replays) keeps the side with
    more GPU busy time, the later on a tie, if that side holds MAJORITY of the trace's GPU time. The
    window ends where the last work it holds ends; then CUDA calls longer than its GPU work's span that
    end in it beside that work (start-up: context creation, big allocations) are left out, and so are the
    one-off launch calls that open it (a first graph launch loading its module). Fewer than
    FEW_EVENTS launches and GPU items are shown from the first to the last.
    """
    calls = analysis.launches.rows
    call_starts = trace.api.start[calls]  # API rows and GPU work are both sorted by start
    work = analysis.work
    starts = np.concatenate([call_starts, work.start])
    starts.sort(kind="stable")  # two sorted runs: a merge
    if len(starts) == 0 or starts[-1] < starts[0]:
        return trace.span()
    if len(starts) < FEW_EVENTS or starts[-1] == starts[0]:
        low, high = int(starts[0]), int(starts[-1])  # a handful of launches: all of them, nothing around
    else:
        first, last = densest_run(starts)
        total = _TotalBusy(work.start, work.end)
        low, high = _without_big_gap(starts, work.start, work.end, int(starts[first]), int(starts[last]), total)
        low, high = _with_rivals(work.start, work.end, low, high)
        low, high = _without_big_gap(starts, work.start, work.end, low, high, total)
    ends = [high]
    a, b = _between(call_starts, low, high)
    if b > a:
        ends.append(int(trace.api.end[calls[a:b]].max()))
    a, b = _between(work.start, low, high)
    if b > a:
        ends.append(int(work.end[a:b].max()))
    low = _after_one_off_calls(trace, calls, call_starts, low, high)
    return _without_long_calls(trace, work.start, work.end, low, max(ends))


def _after_one_off_calls(trace: Trace, calls: np.ndarray, call_starts: np.ndarray, low: int, high: int) -> int:
    """The window's start moved past the launch calls that open it and are one-off (the steady account's
    rule, analysis/steady.py: ONE_OFF_FACTOR x the window's median launch call and ONE_OFF_MIN_NS slower):
    the first launch of a graph that took 420 us against 7 us for the replays after it (a lazy module
    load) is start-up, not the steady work the view should open on."""
    a, b = _between(call_starts, low, high)
    b = min(b, a + ONE_OFF_SAMPLE)
    if b - a < 3:
        return low
    took = trace.api.end[calls[a:b]] - trace.api.start[calls[a:b]]
    median = float(stats.median_of(took))
    slow = (took > ONE_OFF_FACTOR * median) & (took - median >= ONE_OFF_MIN_NS)
    leading = int(np.argmin(slow)) if not slow.all() else len(slow)  # the slow calls that open the window
    if leading == 0 or b - a - leading < 2:  # none, or nothing steady left after them
        return low
    return max(low, int(call_starts[a + leading]))


def _without_long_calls(trace: Trace, work_start: np.ndarray, work_end: np.ndarray, low: int, high: int):
    """The window less the CUDA calls longer than its GPU work's span that end in it beside that work,
    never overlapping it: context creation, a 88-400 ms cudaMalloc or cuMemAllocAsync, a module load
    before the first kernel (or after the last) would otherwise fill the view, the kernels specks at
    its edge. Calls that overlap the work (a synchronize, a lazily loading launch) stay."""
    a, b = _between(work_start, low, high)
    if b <= a:
        return low, high
    first, last = int(work_start[a]), int(work_end[a:b].max())
    api = trace.api
    before = int(np.searchsorted(api.start, first, "left"))  # calls starting before the work (start-up)
    for lo in range(0, before, BLOCK):  # block by block: at 10M calls whole temporaries took 240 MB
        ends, starts = api.end[lo : min(lo + BLOCK, before)], api.start[lo : min(lo + BLOCK, before)]
        long_before = (ends - starts > last - first) & (ends >= low) & (ends < first)
        if long_before.any():
            low = max(low, int(ends[long_before].max()))
    after = int(np.searchsorted(api.start, last, "right"))  # calls starting after the work ends
    stop = int(np.searchsorted(api.start, high, "right"))
    ends, starts = api.end[after:stop], api.start[after:stop]
    long_after = (ends - starts > last - first) & (ends <= high)
    if long_after.any():
        high = min(high, int(starts[long_after].min()))
    return low, max(high, last)


class _TotalBusy:
    """The trace's GPU busy time, summed when first asked (a big gap is rare; at 10M items the sum costs
    two passes): float sums of ends and starts, no 80 MB temporary of durations."""

    def __init__(self, work_start: np.ndarray, work_end: np.ndarray) -> None:
        self.work_start, self.work_end = work_start, work_end
        self.value: float | None = None

    def __float__(self) -> float:
        if self.value is None:
            self.value = float(np.sum(self.work_end, dtype=np.float64) - np.sum(self.work_start, dtype=np.float64))
        return self.value


def _busy(work_start: np.ndarray, work_end: np.ndarray, low: float, high: float) -> float:
    """GPU time of the work items starting within [low, high] (items of several streams add up)."""
    a, b = _between(work_start, low, high)
    return float((work_end[a:b] - work_start[a:b]).sum()) if b > a else 0.0


def _with_rivals(work_start: np.ndarray, work_end: np.ndarray, low: int, high: int) -> tuple[int, int]:
    """The window widened to the GPU work within one window width after (and before) it, when that work
    rivals what is inside."""
    inside, width = _busy(work_start, work_end, low, high), max(high - low, 1)
    if len(work_start) == 0 or inside <= 0:
        return low, high
    a, b = _between(work_start, high + 1, high + width)
    if b > a and _busy(work_start, work_end, high + 1, high + width) >= RIVAL_BUSY * inside:
        high = int(work_start[b - 1])
    a, b = _between(work_start, low - width, low - 1)
    if b > a and _busy(work_start, work_end, low - width, low - 1) >= RIVAL_BUSY * inside:
        low = int(work_start[a])
    return low, high


def _without_big_gap(
    starts: np.ndarray, work_start: np.ndarray, work_end: np.ndarray, low: int, high: int, total: _TotalBusy
) -> tuple[int, int]:
    """While one gap between event starts is most of the window, keep the side with more GPU busy time
    if it holds MAJORITY of the trace's (`total`): eager steps and graph replays of about the same GPU
    time on either side of a module load both stay, so the view holds most of the GPU work."""
    for _ in range(8):  # each pass at least halves the window: a few suffice
        a, b = _between(starts, low, high)
        if b - a < 3 or high <= low or not _may_have_gap(starts[a:b], low, high):
            break
        inside = starts[a:b]
        gaps = np.diff(inside)
        k = int(np.argmax(gaps))
        if gaps[k] <= MOSTLY_GAP * (high - low):
            break
        left_end, right_start = int(inside[k]), int(inside[k + 1])
        left = _busy(work_start, work_end, low, left_end)
        right = _busy(work_start, work_end, right_start, high)
        if max(left, right) < MAJORITY * float(total):
            break
        low, high = (low, left_end) if left > right else (right_start, high)
    return low, high


GAP_BINS = 64


def _may_have_gap(starts: np.ndarray, low: int, high: int) -> bool:
    """Could one gap between these sorted starts exceed MOSTLY_GAP of [low, high]? Such a gap empties a
    run of at least GAP_BINS * MOSTLY_GAP - 1 of GAP_BINS equal bins: 65 binary searches tell, where the
    exact check reads every start (0.25 s at 20M events)."""
    edges = np.linspace(low, high, GAP_BINS + 1).astype(starts.dtype)  # float edges would convert every start
    counts = np.diff(np.searchsorted(starts, edges))
    empty = np.concatenate(([0], (counts == 0).astype(np.int8), [0]))
    runs = np.flatnonzero(np.diff(empty) == -1) - np.flatnonzero(np.diff(empty) == 1)
    return bool(len(runs)) and int(runs.max()) >= int(GAP_BINS * MOSTLY_GAP) - 1


def _between(sorted_values: np.ndarray, low: float, high: float) -> tuple[int, int]:
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
