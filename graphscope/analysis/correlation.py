"""CPU call to GPU work: join on (process, correlationId), one call to many activities."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphscope.core.table import NULL
from graphscope.trace.model import Trace

GPU_KINDS = ("kernels", "memcpy", "memset", "sync", "graph_launches")


def _key(process: np.ndarray, correlation: np.ndarray) -> np.ndarray:
    return (process.astype(np.int64) << 32) | (correlation.astype(np.int64) & 0xFFFFFFFF)


@dataclass
class Correlation:
    """For every GPU row, the `trace.api` row that launched it (-1 when the call was not recorded)."""

    api_row: dict[str, np.ndarray]
    _by_call: dict[str, tuple[np.ndarray, np.ndarray]]

    def activities_of(self, api_row: int) -> dict[str, np.ndarray]:
        """Row indices, per GPU table, of all the work one CPU call caused (a graph launch: many)."""
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
    order = np.argsort(keys, kind="stable")  # nearly sorted already: ids grow with time
    sorted_keys = keys[order]
    api_row: dict[str, np.ndarray] = {}
    by_call: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for kind in GPU_KINDS:
        table = getattr(trace, kind)
        if len(api) == 0 or len(table) == 0:
            api_row[kind] = np.full(len(table), NULL, dtype=np.int64)
        else:
            wanted = _key(table.process, table.correlation)
            pos = np.minimum(np.searchsorted(sorted_keys, wanted), len(sorted_keys) - 1)
            hit = (sorted_keys[pos] == wanted) & (table.correlation >= 0)
            api_row[kind] = np.where(hit, order[pos], NULL).astype(np.int64)
        rows = api_row[kind]
        linked = np.flatnonzero(rows >= 0)
        call_order = linked[np.argsort(rows[linked], kind="stable")]
        by_call[kind] = (rows[call_order], call_order)
    return Correlation(api_row, by_call)
