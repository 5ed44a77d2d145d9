"""CPU call to GPU work: join on (process, correlationId), one call to many activities."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from graphscope.core.events import CORRELATED, call_key
from graphscope.core.table import NULL, within
from graphscope.trace.model import Trace


class Correlation:
    """For every GPU row, the `trace.api` row that launched it (-1 when the call was not recorded)."""

    def __init__(self, api_row: dict[str, np.ndarray]) -> None:
        self.api_row = api_row
        self._by_call: dict[str, tuple[np.ndarray, np.ndarray]] | None = None

    def activities_of(self, api_row: int) -> dict[str, np.ndarray]:
        """Row indices, per GPU table, of all the work one CPU call caused (a graph launch: many)."""
        if self._by_call is None:  # built on first use: the summary never needs it
            self._by_call = {}
            for kind, rows in self.api_row.items():
                linked = np.flatnonzero(rows >= 0)
                order = linked[np.argsort(rows[linked], kind="stable")]
                self._by_call[kind] = (rows[order], order)
        found = {}
        for kind, (sorted_calls, rows) in self._by_call.items():
            lo, hi = np.searchsorted(sorted_calls, [api_row, api_row + 1])
            if hi > lo:
                found[kind] = rows[lo:hi]
        return found


def correlate(trace: Trace) -> Correlation:
    """Link each GPU activity to its launching call in the same process."""
    api = trace.api
    find = _dense_lookup(api.process, api.correlation, len(trace.processes)) if len(api) else None
    if find is None:
        find = _sorted_lookup(api.process, api.correlation)
    api_row: dict[str, np.ndarray] = {}
    for kind in (activity.table for activity in CORRELATED):
        table = getattr(trace, kind)
        if len(api) == 0 or len(table) == 0:
            api_row[kind] = np.full(len(table), NULL, dtype=np.int32)
            continue
        api_row[kind] = find(table.process, table.correlation)
    return Correlation(api_row)


Lookup = Callable[[np.ndarray, np.ndarray], np.ndarray]
_DENSE_SLACK = 2  # a lookup table at most this many times the API rows (plus a little)


def _dense_lookup(process: np.ndarray, correlation: np.ndarray, processes: int) -> Lookup | None:
    """Calls found by indexing a table of (process, correlationId): correlation ids count up from 1
    in each process, so the table is barely larger than the calls. None when the ids are too sparse,
    negative, or repeated within a process (the sorted search then keeps the first call)."""
    low, high = int(correlation.min()), int(correlation.max())
    width = high + 1
    if low < 0 or processes * width > _DENSE_SLACK * len(correlation) + 4096:
        return None
    keys = correlation if processes == 1 else process.astype(np.int64) * width + correlation
    table = np.full(processes * width, NULL, dtype=np.int32)
    table[keys] = np.arange(len(keys), dtype=np.int32)
    if np.count_nonzero(table != NULL) != len(keys):
        return None  # a repeated id (fewer slots written than calls): which call won the write is unspecified
    del keys

    def find(gpu_process: np.ndarray, gpu_correlation: np.ndarray) -> np.ndarray:
        if within(gpu_correlation, width) and within(gpu_process, processes):  # the usual case: no masks
            return table[gpu_correlation if processes == 1 else gpu_process.astype(np.int64) * width + gpu_correlation]
        valid = (gpu_correlation >= 0) & (gpu_correlation < width) & (gpu_process >= 0) & (gpu_process < processes)
        keys = np.where(valid, gpu_process.astype(np.int64) * width + gpu_correlation, 0)
        rows = table[keys]
        rows[~valid] = NULL
        return rows

    return find


def _sorted_lookup(process: np.ndarray, correlation: np.ndarray) -> Lookup:
    """Calls found by binary search over the sorted (process, correlationId) keys; the first of equal ones."""
    keys = call_key(process, correlation)
    if len(keys) < 2 or bool(np.all(keys[1:] >= keys[:-1])):  # one process: ids grow with time
        order, sorted_keys = None, keys
    else:
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]

    def find(gpu_process: np.ndarray, gpu_correlation: np.ndarray) -> np.ndarray:
        wanted = call_key(gpu_process, gpu_correlation)
        pos = np.searchsorted(sorted_keys, wanted)
        np.minimum(pos, len(sorted_keys) - 1, out=pos)
        hit = (sorted_keys[pos] == wanted) & (gpu_correlation >= 0)
        rows = (pos if order is None else order[pos]).astype(np.int32)
        rows[~hit] = NULL
        return rows

    return find
