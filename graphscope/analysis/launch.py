"""Per launch call: how long the CPU spent in it, how soon the GPU started, how deep the stream queue was."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphscope.core.events import ApiKind
from graphscope.core.symbols import SymbolTable
from graphscope.core.table import Table, row_numbers, rows_where
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

    rows: np.ndarray  # api row index
    kind: np.ndarray  # ApiKind.KERNEL_LAUNCH or ApiKind.GRAPH_LAUNCH
    api_ns: np.ndarray  # time inside the call
    latency_ns: np.ndarray  # first GPU start - call start (NaN: no GPU work recorded)
    first_work: np.ndarray  # index in the `gpu_work` table of the call's first activity (-1: none), int32

    def of_kind(self, kind: ApiKind) -> np.ndarray:
        return self.kind == int(kind)


def launch_metrics(trace: Trace, work: Table) -> LaunchMetrics:
    """Launch duration and latency for every launch call. `work` is `gpu_work(...)`."""
    api = trace.api
    kinds = api_kinds(trace.symbols, api.name)
    rows = rows_where((kinds == ApiKind.KERNEL_LAUNCH) | (kinds == ApiKind.GRAPH_LAUNCH))
    first = _first_activity(len(api), work)[rows]
    call_start = api.start[rows]
    if not len(work):
        latency = np.full(len(call_start), np.nan)
    elif len(first) and first.min() >= 0:  # every call caused work
        latency = (work.start[first] - call_start).astype(np.float64)
    else:
        latency = (work.start[np.maximum(first, 0)] - call_start).astype(np.float64)
        latency[first < 0] = np.nan
    calls = row_numbers(rows, len(api)).astype(np.int32)
    return LaunchMetrics(calls, kinds[rows], api.end[rows] - call_start, latency, first.astype(np.int32))


def _first_activity(api_rows: int, work: Table) -> np.ndarray:
    """Per API row, the index in `work` (sorted by start) of the earliest work it caused; -1 if none."""
    none = np.iinfo(np.int64).max
    first = np.full(api_rows, none, dtype=np.int64)
    linked = np.flatnonzero(work.api_row >= 0)
    np.minimum.at(first, work.api_row[linked], linked)  # a graph launch's many nodes: the earliest wins
    first[first == none] = -1
    return first
