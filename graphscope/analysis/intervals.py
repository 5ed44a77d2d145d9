"""Interval arithmetic on sorted numpy arrays: unions, busy time and the gaps between them."""

from __future__ import annotations

import numpy as np


def start_order(start: np.ndarray) -> np.ndarray | slice:
    """Indices that sort by start; a plain slice when the input is already sorted (the usual case)."""
    if bool(np.all(start[1:] >= start[:-1])):
        return slice(None)
    return np.argsort(start, kind="stable")


def union(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge possibly overlapping intervals into disjoint ones, sorted by start."""
    if len(start) == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    order = start_order(start)
    s = start[order]
    e = np.maximum.accumulate(end[order])
    new_segment = np.empty(len(s), dtype=bool)
    new_segment[0] = True
    new_segment[1:] = s[1:] > e[:-1]
    first = np.flatnonzero(new_segment)
    last = np.append(first[1:] - 1, len(s) - 1)
    return s[first], e[last]


def covered_ns(start: np.ndarray, end: np.ndarray) -> int:
    """Total time covered by at least one interval."""
    s, e = union(start, end)
    return int((e - s).sum())


def gaps(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Idle gaps between merged intervals.

    Returns (gap start, gap end, index into the input of the interval that ends each gap).
    """
    if len(start) < 2:
        empty = np.empty(0, np.int64)
        return empty, empty, empty
    order = start_order(start)
    s = start[order]
    e = np.maximum.accumulate(end[order])
    opens = np.flatnonzero(s[1:] > e[:-1]) + 1
    return e[opens - 1], s[opens], np.arange(len(start))[order][opens]
