"""CPU call to GPU work: join on (process, correlationId), one call to many activities."""

from __future__ import annotations

import numpy as np

from graphscope.core.table import NULL
from graphscope.trace.model import Trace

GPU_KINDS = ("kernels", "memcpy", "memset", "sync", "graph_launches")


def _key(process: np.ndarray, correlation: np.ndarray) -> np.ndarray:
    return (process.astype(np.int64) << 32) | (correlation & 0xFFFFFFFF)


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
    keys = _key(api.process, api.correlation)
    if len(keys) < 2 or bool(np.all(keys[1:] >= keys[:-1])):  # one process: ids grow with time
        order, sorted_keys = None, keys
    else:
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]
    del keys
    api_row: dict[str, np.ndarray] = {}
    for kind in GPU_KINDS:
        table = getattr(trace, kind)
        if len(api) == 0 or len(table) == 0:
            api_row[kind] = np.full(len(table), NULL, dtype=np.int32)
            continue
        wanted = _key(table.process, table.correlation)
        pos = np.searchsorted(sorted_keys, wanted)
        np.minimum(pos, len(sorted_keys) - 1, out=pos)
        hit = (sorted_keys[pos] == wanted) & (table.correlation >= 0)
        del wanted
        rows = (pos if order is None else order[pos]).astype(np.int32)
        rows[~hit] = NULL
        api_row[kind] = rows
    return Correlation(api_row)
