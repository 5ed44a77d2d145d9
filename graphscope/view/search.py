"""Find events on the timeline by name: kernels, NVTX ranges, CUDA API calls, copies and memsets alike,
in time order, for next / previous match (no Qt)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphscope.core import sets
from graphscope.core.events import COPY_DIRECTIONS, Activity
from graphscope.core.symbols import SymbolTable
from graphscope.trace.model import Trace
from graphscope.view.layout import TimelineLayout


@dataclass
class Matches:
    """Events whose label holds the query, sorted by start: their lane, index in it, and start."""

    query: str
    lane: np.ndarray
    event: np.ndarray
    start: np.ndarray

    def __len__(self) -> int:
        return len(self.start)

    def after(self, x: float) -> int:
        """The first match starting after timeline x (wrapping round to the first)."""
        at = int(np.searchsorted(self.start, x, "right"))
        return at if at < len(self) else 0

    def before(self, x: float) -> int:
        """The last match starting before timeline x (wrapping round to the last)."""
        at = int(np.searchsorted(self.start, x, "left")) - 1
        return at if at >= 0 else len(self) - 1


def matching_names(symbols: SymbolTable, query: str) -> np.ndarray:
    """Ids of the names that hold `query`, case-insensitively."""
    needle = query.casefold()
    return np.array([i for i in range(len(symbols)) if needle in symbols[i].casefold()], dtype=np.int64)


def _unnamed_hits(trace: Trace, source: np.ndarray, row: np.ndarray, needle: str) -> np.ndarray:
    """Which unnamed events (copies, memsets, whole-graph rows) the needle names: 'memcpy DtoH', 'memset'."""
    hit = np.zeros(len(source), bool)
    copies = source == Activity.MEMCPY
    if copies.any():
        kinds = [k for k, direction in COPY_DIRECTIONS.items() if needle in f"memcpy {direction}".casefold()]
        hit[copies] = sets.isin(trace.memcpy.copy_kind[row[copies]], kinds)
    for activity, word in ((Activity.MEMSET, "memset"), (Activity.GRAPH, "graph")):
        if needle in word:
            hit |= source == activity
    return hit


def find_events(layout: TimelineLayout, trace: Trace, query: str) -> Matches:
    """Every drawn event whose label (kernel short or full name, NVTX text, API call, 'memcpy HtoD',
    'memset') holds `query`, case-insensitively."""
    empty = np.zeros(0, np.int64)
    needle = query.strip().casefold()
    if not needle:
        return Matches(query, empty, empty, np.zeros(0, np.float64))
    names = matching_names(trace.symbols, needle)
    lanes, events, starts = [], [], []
    for index, lane in enumerate(layout.lanes):
        if not len(lane):
            continue
        named = sets.isin(lane.name, names) if len(names) else np.zeros(len(lane), bool)
        kernels = np.flatnonzero(lane.source == Activity.KERNEL)
        if len(kernels) and len(names):  # the full name too: 'gelu' is in the template arguments
            named[kernels] |= sets.isin(trace.kernels.name[lane.row[kernels]], names)
        unnamed = np.flatnonzero(lane.name < 0)
        if len(unnamed):
            named[unnamed] = _unnamed_hits(trace, lane.source[unnamed], lane.row[unnamed], needle)
        hit = np.flatnonzero(named)
        lanes.append(np.full(len(hit), index, np.int64))
        events.append(hit)
        starts.append(lane.start[hit].astype(np.float64))
    if not lanes:
        return Matches(query, empty, empty, np.zeros(0, np.float64))
    start = np.concatenate(starts)
    order = np.argsort(start, kind="stable")
    return Matches(query, np.concatenate(lanes)[order], np.concatenate(events)[order], start[order])
