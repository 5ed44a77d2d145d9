"""Per-kernel statistics, keyed by the kernel's full identity and labelled by its short name."""

from __future__ import annotations

import numpy as np

from graphscope.core.stats import median as median_of
from graphscope.core.table import Table
from graphscope.trace.model import Trace


def kernel_identity(kernels: Table) -> np.ndarray:
    """The symbol id that identifies a kernel: mangled name, else demangled name, else short name.

    Where every kernel has a mangled name (the usual export) the demangled names are not read at all.
    """
    mangled = kernels.mangled
    if not len(mangled) or mangled.min() >= 0:
        return mangled
    identity = np.where(mangled >= 0, mangled, kernels.name)
    return np.where(identity >= 0, identity, kernels.short_name)


_FEW_GROUPS = 4096


def distinct_groups(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct keys, group index of each row): `np.unique(keys, return_inverse=True)`, in one
    pass without a sort when the keys are integers in a range not much wider than their count (symbol ids)."""
    low, high = int(keys.min()), int(keys.max())
    if keys.dtype.kind not in "iu" or high - low > 4 * len(keys) + 65_536:
        return np.unique(keys, return_inverse=True)
    present = np.zeros(high - low + 1, dtype=bool)
    offset = keys - low
    present[offset] = True
    position = np.cumsum(present) - 1
    return np.flatnonzero(present).astype(keys.dtype) + low, position[offset]


def grouped_stats(keys: np.ndarray, durations: np.ndarray) -> Table:
    """count, total, mean, median, min, max and std of `durations` per distinct key, largest total first."""
    columns = ("key", "count", "total_ns", "mean_ns", "median_ns", "min_ns", "max_ns", "std_ns")
    if len(keys) == 0:
        integer = ("key", "count", "total_ns", "min_ns", "max_ns")
        return Table.empty({c: np.int64 if c in integer else np.float64 for c in columns})
    unique, group = distinct_groups(keys)
    few = len(unique) <= _FEW_GROUPS
    # few groups: a radix sort by group, then a median per slice; many: one sort by (group, duration)
    order = np.argsort(group.astype(np.uint16), kind="stable") if few else np.lexsort((durations, group))
    d = durations[order].astype(np.int64)
    count = np.bincount(group, minlength=len(unique))
    first = np.r_[0, np.cumsum(count)[:-1]]
    total = np.add.reduceat(d, first)
    mean = total / count
    std = np.sqrt(np.maximum(np.add.reduceat(d.astype(np.float64) ** 2, first) / count - mean**2, 0.0))
    if few:
        bounds = np.r_[first, len(d)]
        median = np.array([median_of(d[bounds[i] : bounds[i + 1]]) for i in range(len(unique))])
    else:
        median = (d[first + (count - 1) // 2] + d[first + count // 2]) / 2.0
    stats = Table(
        {
            "key": unique.astype(np.int64),
            "count": count.astype(np.int64),
            "total_ns": total,
            "mean_ns": mean,
            "median_ns": median,
            "min_ns": np.minimum.reduceat(d, first),
            "max_ns": np.maximum.reduceat(d, first),
            "std_ns": std,
        }
    )
    return stats.take(np.lexsort((stats.key, -stats.total_ns)))


def kernel_stats(trace: Trace, by: str = "identity", rows: np.ndarray | None = None) -> Table:
    """Statistics per kernel (`by="identity"`, with a `short_name` label column) or per short name.

    `rows` restricts the statistics to some kernel rows (a filter, a time window).
    """
    kernels = trace.kernels if rows is None else trace.kernels.take(rows)
    keys = kernel_identity(kernels) if by == "identity" else kernels.short_name
    stats = grouped_stats(keys, kernels.end - kernels.start)
    if by != "identity":
        return stats.with_columns(short_name=stats.key)
    label = np.empty(len(stats), dtype=np.int64)
    if len(stats):
        first_row = np.unique(keys, return_index=True)
        label_by_key = dict(zip(first_row[0].tolist(), kernels.short_name[first_row[1]].tolist()))
        label = np.array([label_by_key[k] for k in stats.key.tolist()], dtype=np.int64)
    return stats.with_columns(short_name=label)
