"""Level of detail for one timeline lane (numpy only, no Qt).

A lane's events are merged into runs at a pyramid of resolutions (256 ns, 1 us, 4 us, ...), built
once. A redraw takes the coarsest level whose resolution is still under one pixel, cuts the visible
window with `np.searchsorted` and merges what falls inside one pixel, so the work per frame follows
the number of pixels, not the number of events. Every event keeps at least one pixel: a short kernel never vanishes.
A run that merges events of different colours takes the colour of its busiest event (of its busiest
part, at a coarser level), as Nsight Systems and Perfetto keep the dominant colour per pixel: zoomed out,
the structure stays visible instead of one grey of "several kinds" (`dominant=False` keeps that
colour MIXED, for idle gaps whose causes must not be overstated). Every run carries the time its events
were busy, so a merged run can be drawn as tall as the share of it that was busy: a GPU stream that
idles between tiny kernels shows as low bars, not as a solid block.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MIXED = -2
BASE_RESOLUTION_NS = 256.0
LEVEL_FACTOR = 4.0
MIN_LEVEL_RUNS = 64
SPACING_SAMPLE = 200_000  # start spacings sampled to choose a lane's first level


@dataclass(frozen=True)
class Runs:
    """Disjoint, sorted intervals with one colour index each."""

    start: np.ndarray
    end: np.ndarray
    color: np.ndarray
    busy: np.ndarray | None  # time covered by events inside the run (None: raw events, their lengths)

    def __len__(self) -> int:
        return len(self.start)

    @property
    def fill(self) -> np.ndarray:
        """Busy share of each run, in [0, 1]."""
        length = self.end - self.start
        return np.clip(self.busy / np.where(length > 0, length, 1.0), 0.0, 1.0)


def merge(
    start: np.ndarray,
    end: np.ndarray,
    color: np.ndarray,
    resolution: float,
    busy: np.ndarray | None = None,
    dominant: bool = False,
) -> Runs:
    """Merge intervals closer than `resolution`, each at least `resolution` wide. Input sorted by start.

    `busy` is each input interval's busy time (its length when it is a raw event). A run of several
    colours is MIXED, or with `dominant` the colour of its busiest interval (the first on a tie).
    """
    busy = end - start if busy is None else busy
    n = len(start)
    if n == 0:
        return Runs(start, end, color, busy)
    reach = np.maximum(end, start + resolution)
    np.maximum.accumulate(reach, out=reach)
    opens = np.empty(n, dtype=bool)
    opens[0] = True
    np.greater(start[1:], reach[:-1], out=opens[1:])
    first = np.flatnonzero(opens)
    if len(first) == n:
        return Runs(start, reach, color, busy)
    last = np.empty_like(first)
    last[:-1] = first[1:] - 1
    last[-1] = n - 1
    if dominant:
        merged_color = color[_busiest(busy, first, opens)]
    else:
        same = np.minimum.reduceat(color, first) == np.maximum.reduceat(color, first)
        merged_color = np.where(same, color[first], MIXED).astype(color.dtype)
    return Runs(start[first], reach[last], merged_color, np.add.reduceat(busy, first))


def _busiest(busy: np.ndarray, first: np.ndarray, opens: np.ndarray) -> np.ndarray:
    """Per run (`opens` marks where each starts, at `first`), the index of its busiest interval, the
    first on a tie: linear passes, no sort (0.22 s at 10M intervals, where repeating each run's maximum
    and a binary search per candidate took 0.31 s)."""
    run_of = np.cumsum(opens, dtype=np.int32 if len(opens) < 1 << 31 else np.int64)
    run_of -= 1
    candidates = np.flatnonzero(busy == np.maximum.reduceat(busy, first)[run_of])
    run_of = run_of[candidates]
    keep = np.empty(len(candidates), dtype=bool)
    keep[:1] = True
    np.not_equal(run_of[1:], run_of[:-1], out=keep[1:])
    return candidates[keep]


class LodLane:
    """One lane's events (sorted by start) with their merge pyramid."""

    def __init__(self, start: np.ndarray, end: np.ndarray, color: np.ndarray, dominant: bool = True) -> None:
        """`dominant`: merged runs of several colours take their busiest one's (else MIXED)."""
        self.dominant = dominant
        self.start = np.asarray(start, dtype=np.float64)
        self.end = np.asarray(end, dtype=np.float64)
        self.color = np.asarray(color, dtype=np.int16)
        ends = self.end
        in_order = len(ends) < 2 or bool(np.all(ends[1:] >= ends[:-1]))  # a stream's work: no overlaps
        self._reach = ends if in_order else np.maximum.accumulate(ends)  # latest end so far
        self.levels: list[tuple[float, Runs]] = []
        if len(self.start) <= MIN_LEVEL_RUNS:
            return
        span = float(self._reach[-1] - self.start[0])
        resolution = self._first_resolution()
        runs = Runs(self.start, self.end, self.color, None)  # raw events: busy = length, computed by merge
        while len(runs) > MIN_LEVEL_RUNS and resolution < span:
            runs = merge(runs.start, runs.end, runs.color, resolution, runs.busy, self.dominant)
            self.levels.append((resolution, runs))
            resolution *= LEVEL_FACTOR

    def _first_resolution(self) -> float:
        """The first level worth building: on the 256 ns x 4^k grid, where about 3/4 of the events merge.

        A boundary survives a merge at resolution r only where consecutive starts are more than r
        apart, so the 75th percentile of start spacing is where merging begins to pay. Finer levels
        would hardly merge anything; a redraw that fine reads the raw events instead.
        """
        # spacings sampled evenly over the lane: the level needs only its power of four, and all 10M
        # spacings of a lane took 0.09 s
        count = min(SPACING_SAMPLE, len(self.start) - 1)
        at = np.arange(count, dtype=np.int64) * (len(self.start) - 2) // max(count - 1, 1)
        spacing = self.start[at + 1] - self.start[at]
        rank = (3 * (len(spacing) - 1)) // 4  # the lower 75th percentile: one partition, no interpolation
        spacing.partition(rank)  # in place: the differences are a temporary
        target = float(spacing[rank])
        if target <= BASE_RESOLUTION_NS:
            return BASE_RESOLUTION_NS
        steps = np.ceil(np.log(target / BASE_RESOLUTION_NS) / np.log(LEVEL_FACTOR))
        return BASE_RESOLUTION_NS * LEVEL_FACTOR ** float(steps)

    def __len__(self) -> int:
        return len(self.start)

    def visible(self, x0: float, x1: float, pixel: float) -> Runs:
        """Runs to draw for the window [x0, x1] where one pixel spans `pixel` time units."""
        source = Runs(self.start, self.end, self.color, None)
        reach = self._reach
        for resolution, runs in self.levels:
            if resolution > pixel:
                break
            source, reach = runs, runs.end  # runs are disjoint: their ends are sorted
        lo = int(np.searchsorted(reach, x0, side="right"))
        hi = int(np.searchsorted(source.start, x1, side="right"))
        busy = None if source.busy is None else source.busy[lo:hi]
        return merge(source.start[lo:hi], source.end[lo:hi], source.color[lo:hi], pixel, busy, self.dominant)

    def window(self, x0: float, x1: float) -> tuple[int, int]:
        """Index range [lo, hi) of the raw events that overlap [x0, x1]."""
        lo = int(np.searchsorted(self._reach, x0, side="right"))
        hi = int(np.searchsorted(self.start, x1, side="right"))
        return lo, hi

    def hit(self, x: float, tolerance: float) -> int:
        """Index of the event under x (the shortest of those within `tolerance`), or -1."""
        lo, hi = self.window(x - tolerance, x + tolerance)
        if hi <= lo:
            return -1
        candidates = np.arange(lo, hi)
        near = (self.start[candidates] <= x + tolerance) & (self.end[candidates] >= x - tolerance)
        candidates = candidates[near]
        if not len(candidates):
            return -1
        inside = (self.start[candidates] <= x) & (self.end[candidates] >= x)
        pool = candidates[inside] if inside.any() else candidates
        return int(pool[np.argmin(self.end[pool] - self.start[pool])])
