"""Set operations on 1-D columns, answering as NumPy's do (`np.unique`, `np.isin`, `np.intersect1d`,
`np.setdiff1d`, `np.union1d`, `np.unique(axis=0)` of pairs), without NumPy's import of numpy.ma.

NumPy 2's `np.unique` asks `np.ma.is_masked` of its input, and the sort path of every set operation goes
through it: the first call in a process imports numpy.ma, 13-16 ms and 1.3 MB resident (`python -X
importtime`; `/usr/bin/time`, NumPy 2.4), in every summary, the Kineto ones included, whose whole memory
is some 47 MB. These are the few lines of sort and compare those answers need; `np.isin` itself is used
where NumPy would take its table method (integers over a small range), which never reaches numpy.ma.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

_TABLE_FACTOR = 6  # NumPy's own rule for its table method: a lookup table at most 6x the two inputs


def _array(values: Any) -> np.ndarray:
    if isinstance(values, np.ndarray):
        return values.ravel()
    if isinstance(values, (set, frozenset, dict)) or (isinstance(values, Iterable) and not isinstance(values, list)):
        values = list(values)
    return np.asarray(values).ravel()


def unique(values: Any) -> np.ndarray:
    """The sorted distinct values (NaN once, last), as `np.unique(values)`."""
    ordered = np.sort(_array(values))
    if not len(ordered):
        return ordered
    keep = np.empty(len(ordered), dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    if ordered.dtype.kind in "fc" and np.isnan(ordered[-1]):  # NaNs sort last and differ from each other
        first_nan = int(np.searchsorted(np.isnan(ordered), True))
        keep[first_nan + 1 :] = False
        keep[first_nan] = True
    return ordered[keep]


def isin(values: Any, among: Any, invert: bool = False) -> np.ndarray:
    """Per value of `values`, is it one of `among` (the opposite with `invert`), as `np.isin`."""
    shape = np.shape(values)
    return _isin(_array(values), _array(among), invert).reshape(shape)


def _isin(values: np.ndarray, among: np.ndarray, invert: bool) -> np.ndarray:
    if not len(among) or not len(values):
        return np.full(len(values), invert, dtype=bool)
    if values.dtype.kind in "iub" and among.dtype.kind in "iub":
        low, high = int(among.min()), int(among.max())
        if high - low <= _TABLE_FACTOR * (len(values) + len(among)):
            return np.isin(values, among, invert=invert, kind="table")
    distinct = unique(among)
    at = np.searchsorted(distinct, values)
    at[at == len(distinct)] = 0
    found: np.ndarray = np.equal(distinct[at], values)
    return ~found if invert else found


def intersect(first: Any, second: Any) -> np.ndarray:
    """The sorted distinct values in both, as `np.intersect1d`."""
    mine = unique(first)
    kept: np.ndarray = mine[isin(mine, second)]
    return kept


def difference(first: Any, second: Any) -> np.ndarray:
    """The sorted distinct values of `first` not in `second`, as `np.setdiff1d`."""
    mine = unique(first)
    kept: np.ndarray = mine[isin(mine, second, invert=True)]
    return kept


def union(first: Any, second: Any) -> np.ndarray:
    """The sorted distinct values of either, as `np.union1d`."""
    return unique(np.concatenate([_array(first), _array(second)]))


def unique_rows(rows: np.ndarray) -> np.ndarray:
    """The distinct rows of a 2-D array in lexicographic order, as `np.unique(rows, axis=0)`."""
    rows = np.asarray(rows)
    if not len(rows):
        return rows
    order = np.lexsort(rows.T[::-1])
    ordered = rows[order]
    keep = np.empty(len(ordered), dtype=bool)
    keep[0] = True
    np.any(ordered[1:] != ordered[:-1], axis=1, out=keep[1:])
    return ordered[keep]
