"""Per launch call: how long the CPU spent in it, how soon the GPU started, how deep the stream queue was."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from graphscope.analysis.capture import capture_calls
from graphscope.core.events import ApiKind
from graphscope.core.symbols import SymbolTable
from graphscope.core.table import STEP_ROWS, Table, narrowest, row_numbers, rows_where
from graphscope.trace.model import Trace
from graphscope.trace.schema import classify_api


def api_kinds(symbols: SymbolTable, name_ids: np.ndarray) -> np.ndarray:
    """`ApiKind` of every API row, classifying each distinct name once (a lookup table, no sort)."""
    if len(name_ids) == 0:
        return np.empty(0, dtype=np.int8)
    size = len(symbols)
    known = None if symbols.all_valid(name_ids) else symbols.valid(name_ids)  # None: every id (no masks)
    present = np.zeros(size, dtype=bool)
    present[name_ids if known is None else name_ids[known]] = True
    lookup = np.zeros(size + 1, dtype=np.int8)  # the extra last slot answers ids StringIds lacks
    for symbol_id in np.flatnonzero(present).tolist():
        lookup[symbol_id] = classify_api(symbols.name(symbol_id))
    return lookup[name_ids if known is None else np.where(known, name_ids, size)]


@dataclass
class LaunchMetrics:
    """One entry per kernel-launch or graph-launch call (rows of `trace.api`)."""

    rows: np.ndarray  # api row index, int32
    kind: np.ndarray  # ApiKind.KERNEL_LAUNCH or ApiKind.GRAPH_LAUNCH
    api_ns: np.ndarray  # time inside the call (the narrowest integer type that holds it)
    first_work: np.ndarray  # index in the `gpu_work` table of the call's first activity (-1: none), int32
    call_start: np.ndarray = field(repr=False)  # trace.api.start, whole
    work_start: np.ndarray = field(repr=False)  # the work table's start, whole
    capture: np.ndarray  # per call: made while its thread captured a graph (analysis/capture.py), bool

    def of_kind(self, kind: ApiKind) -> np.ndarray:
        return self.kind == int(kind)

    @property
    def latency_ns(self) -> np.ndarray:
        """First GPU start - call start per call, float64 (NaN: no GPU work recorded). Computed when asked:
        at 10M calls a stored copy held 76 MiB through every later step."""
        latency = np.full(len(self.rows), np.nan)
        if not len(self.work_start):
            return latency
        for low in range(0, len(self.rows), STEP_ROWS):
            first = self.first_work[low : low + STEP_ROWS]
            ran = first >= 0
            part = self.work_start[np.maximum(first, 0)] - self.call_start[self.rows[low : low + STEP_ROWS]]
            latency[low : low + STEP_ROWS][ran] = part[ran]
        return latency


def launch_metrics(trace: Trace, work: Table) -> LaunchMetrics:
    """Launch duration and latency for every launch call. `work` is `gpu_work(...)`."""
    api = trace.api
    kinds = api_kinds(trace.symbols, api.name)
    rows = rows_where((kinds == ApiKind.KERNEL_LAUNCH) | (kinds == ApiKind.GRAPH_LAUNCH))
    first = _first_activity(len(api), work)[rows]
    api_ns = narrowest(api.end[rows] - api.start[rows], 0)
    calls = row_numbers(rows, len(api)).astype(np.int32)
    capture = capture_calls(trace, kinds, calls, first)
    return LaunchMetrics(calls, kinds[rows], api_ns, first, api.start, work.start, capture)


def _first_activity(api_rows: int, work: Table) -> np.ndarray:
    """Per API row, the index in `work` (sorted by start) of the earliest work it caused; -1 if none (int32)."""
    none = np.iinfo(np.int32).max
    first = np.full(api_rows, none, dtype=np.int32)
    calls = work.api_row
    if len(calls) and int(calls.min()) >= 0:  # every item has its call (the usual trace): no index copies
        np.minimum.at(first, calls, np.arange(len(calls), dtype=np.int32))
    else:
        linked = np.flatnonzero(calls >= 0).astype(np.int32)
        np.minimum.at(first, calls[linked], linked)  # a graph launch's many nodes: the earliest wins
    first[first == none] = -1
    return first
