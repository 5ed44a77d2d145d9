"""The accounting of GPU time in a window, written once: end to end = busy + idle waiting for the CPU +
idle otherwise, exactly, the time before the first and after the last GPU work included.

Within a window [low, high) the work that overlaps it is clipped to it and merged (a GPU is busy while
any of its work runs). Every idle stretch, including the one from `low` to the first work and the one
from the last work to `high`, ends with the work that runs next (on that device, possibly after the
window). The stretch is *waiting for the CPU* when that work's launch call had not returned when the
stretch began (the GPU had nothing queued), or when no more work ever came; it is *other* when the next
work was already queued (waiting on a dependency, a synchronisation, a copy engine) or its launch call
was not recorded. Summary, scopes, reports and the GUI all use this.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphscope.core import sets
from graphscope.core.table import STEP_ROWS, Table
from graphscope.trace.model import Trace


@dataclass(frozen=True)
class Account:
    """Time of one or more windows; `wall_ns == busy_ns + host_wait_ns + other_ns` always."""

    wall_ns: int
    busy_ns: int
    host_wait_ns: int
    other_ns: int
    gaps: int  # idle stretches

    @property
    def idle_ns(self) -> int:
        return self.host_wait_ns + self.other_ns

    @property
    def utilization(self) -> float:
        return self.busy_ns / self.wall_ns if self.wall_ns > 0 else 0.0

    def __add__(self, other: Account) -> Account:
        return Account(
            self.wall_ns + other.wall_ns,
            self.busy_ns + other.busy_ns,
            self.host_wait_ns + other.host_wait_ns,
            self.other_ns + other.other_ns,
            self.gaps + other.gaps,
        )


EMPTY = Account(0, 0, 0, 0, 0)


class _CallEnds:
    """When each item's launch call returned (-1: no recorded call), looked up only for the items asked
    about (those that end an idle stretch): at 10M items the full array held 76 MiB."""

    def __init__(self, calls: np.ndarray, api_end: np.ndarray) -> None:
        self.calls, self.api_end = calls, api_end

    def __getitem__(self, items: np.ndarray) -> np.ndarray:
        calls = self.calls[items]
        if not len(self.api_end):
            return np.full(len(calls), -1, dtype=np.int64)
        return np.where(calls >= 0, self.api_end[np.maximum(calls, 0)], -1)


class Timeline:
    """One device's work (or all devices' as one GPU), ready for accounting many windows.

    `start`/`end` are sorted by start; `call_end` is when each item's launch call returned (-1: no
    recorded call). Whole columns are used as they are (no copies) when they already hold."""

    def __init__(self, start: np.ndarray, end: np.ndarray, call_end: np.ndarray | _CallEnds) -> None:
        self.start = start.astype(np.int64, copy=False)
        end = end.astype(np.int64, copy=False)
        self.end = end if bool((end >= start).all()) else np.maximum(end, start)
        self.call_end = call_end.astype(np.int64, copy=False) if isinstance(call_end, np.ndarray) else call_end
        ordered = len(self.end) < 2 or bool((self.end[1:] >= self.end[:-1]).all())  # one stream: ends in order
        self.reach = self.end if ordered else np.maximum.accumulate(self.end)  # monotonic: searchable

    @classmethod
    def of(cls, trace: Trace, work: Table, rows: np.ndarray | slice = slice(None)) -> Timeline:
        """The work table's rows (`analysis.gpu_time.gpu_work`, sorted by start) as a timeline."""
        return cls(work.start[rows], work.end[rows], _CallEnds(work.api_row[rows], trace.api.end))

    def account(self, low: int, high: int) -> Account:
        """The account of the window [low, high)."""
        wall = max(int(high) - int(low), 0)
        if wall == 0:
            return EMPTY
        first = int(np.searchsorted(self.reach, low, side="right"))  # the first item that may reach past low
        last = int(np.searchsorted(self.start, high, side="left"))  # items starting before high
        start, end, item = self.start[first:last], self.end[first:last], None
        cut = last > first and (int(start[0]) < low or int(self.reach[last - 1]) > high)
        if cut:  # the window cuts items: clip them to it
            start, end = np.clip(start, low, high), np.clip(end, low, high)
        overlap = end > start
        if cut or not overlap.all():
            start, end, item = start[overlap], end[overlap], np.flatnonzero(overlap) + first
            reach = np.maximum.accumulate(end)
        else:  # a window holding its items whole (the whole trace): views, not copies; at 10M items the
            reach = self.reach[first:last]  # copies held 0.34 GiB. Earlier items end by `low`: same reach
        if not len(start):
            waiting = self._waiting(low, last)
            return Account(wall, 0, wall if waiting else 0, 0 if waiting else wall, 1)
        # the busy time is start[0]..reach[-1] less the holes inside it, each between an item that closes a
        # busy stretch and the next item; found a chunk of items at a time (at 2.4M holes whole arrays of
        # them held 0.15 GiB)
        holes = host_wait = gaps = 0
        for low_item in range(0, len(start) - 1, STEP_ROWS):
            high_item = min(low_item + STEP_ROWS, len(start) - 1)
            following = np.flatnonzero(start[low_item + 1 : high_item + 1] > reach[low_item:high_item])
            following += low_item + 1
            gap_start = reach[following - 1]
            length = start[following] - gap_start  # > 0: the next item starts after everything before it ended
            waits = self._waiting_many(gap_start, following + first if item is None else item[following])
            holes, gaps = holes + int(length.sum()), gaps + len(length)
            host_wait += int(length[waits].sum())
        other = holes - host_wait
        busy_from, busy_to = int(start[0]), int(reach[-1])
        busy = busy_to - busy_from - holes
        for stretch, since, following_item in (  # before the first item, and after the last
            (busy_from - low, low, first if item is None else int(item[0])),
            (high - busy_to, busy_to, last),
        ):
            if stretch > 0:
                gaps += 1
                if self._waiting(since, following_item):
                    host_wait += stretch
                else:
                    other += stretch
        return Account(wall, busy, host_wait, other, gaps)

    def _waiting(self, since: int, following: int) -> bool:
        return bool(self._waiting_many(np.array([since]), np.array([following]))[0])

    def _waiting_many(self, since: np.ndarray, following: np.ndarray) -> np.ndarray:
        """Per stretch: was the GPU waiting for the CPU from `since` until item `following` arrived (an
        index past the end: no more work came)?"""
        came = following < len(self.start)
        call_end = self.call_end[np.minimum(following, max(len(self.start) - 1, 0))] if len(self.start) else since
        return ~came | ((call_end >= 0) & (call_end >= since))

    def accounts(self, starts: np.ndarray, ends: np.ndarray) -> list[Account]:
        return [self.account(low, high) for low, high in zip(starts.tolist(), ends.tolist())]

    def active(self, starts: np.ndarray, ends: np.ndarray) -> Account:
        """The account of the windows clipped to this device's first work start and last work end: start-up
        before the first work (context creation, loading) and the tail after the last are not time the GPU
        waited for launches that a graph could remove."""
        if not len(self.start):
            return EMPTY
        first, last = int(self.start[0]), int(self.reach[-1])
        lows, highs = np.maximum(starts, first), np.minimum(ends, last)
        keep = highs > lows
        return sum(self.accounts(lows[keep], highs[keep]), EMPTY)


def device_timelines(trace: Trace, work: Table) -> dict[int, Timeline]:
    """One timeline per device ordinal in the work table."""
    devices = sets.unique(work.device) if len(work) else np.empty(0, np.int32)
    if len(devices) == 1:
        return {int(devices[0]): Timeline.of(trace, work)}
    return {int(d): Timeline.of(trace, work, np.flatnonzero(work.device == d)) for d in devices.tolist()}
