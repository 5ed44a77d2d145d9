"""Windows of an export too large to hold whole: a time window and the rows of each table inside it.

Nsight Systems writes event rows in start order, so a time maps to a rowid by binary search over the
rowids (a few dozen point lookups in the b-tree, never a scan), and a window of time is a rowid range
per table that the bulk reader reads on every core like any other. The activity tables are windowed;
NVTX and graph-creation rows are few and read whole.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from graphscope.trace.database import ExportDatabase, quoted
from graphscope.trace.tables import WINDOWED

GUI_BYTES_PER_EVENT = 220  # measured: 3.69 GiB at the first frame of 10M kernels + 10M API rows, plus margin
MEMORY_SHARE = 0.5  # the share of the machine's memory a window may take


@dataclass(frozen=True)
class Window:
    """[start, end) of trace time (ns), how many events it holds, and how many the file holds."""

    start: int
    end: int
    events: int
    total: int
    first: int  # the file's first event start
    last: int  # and its last

    def to_json(self) -> dict[str, int]:
        return {"start_ns": self.start, "end_ns": self.end, "events": self.events, "total_events": self.total}


def memory_budget_events() -> int:
    """How many events the GUI may load here: MEMORY_SHARE of physical memory, at its cost per event."""
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        memory = 16 << 30
    return int(memory * MEMORY_SHARE / GUI_BYTES_PER_EVENT)


def _tables(db: ExportDatabase) -> dict[str, str]:
    found = {key: db.resolve_table(name) for key, name in WINDOWED.items()}
    return {key: table for key, table in found.items() if table and db.rowid_alias(table) and db.column(table, "start")}


def _start_at(db: ExportDatabase, table: str, rowid: int, last: bool = False) -> int | None:
    alias, start = db.rowid_alias(table), quoted(db.column(table, "start") or "start")  # `_tables`: it has one
    order, compare = ("DESC", "<=") if last else ("", ">=")
    rows = db.query(
        f"SELECT {start} FROM {quoted(table)} WHERE {alias} {compare} ? ORDER BY {alias} {order} LIMIT 1", (rowid,)
    )
    return int(rows[0][0]) if rows and rows[0][0] is not None else None


def _bounds(db: ExportDatabase, table: str) -> tuple[int, int] | None:
    """The first and last rowid (two b-tree lookups; min() and max() in one query would scan)."""
    alias, name = db.rowid_alias(table), quoted(table)
    low = db.query(f"SELECT {alias} FROM {name} ORDER BY {alias} LIMIT 1")
    high = db.query(f"SELECT {alias} FROM {name} ORDER BY {alias} DESC LIMIT 1")
    return (int(low[0][0]), int(high[0][0])) if low and high else None


def rowid_at(db: ExportDatabase, table: str, time: int) -> int:
    """The first rowid whose start is at or after `time` (one past the last row when none is)."""
    bounds = _bounds(db, table)
    if bounds is None:
        return 0
    low, high = bounds[0], bounds[1] + 1
    while low < high:
        middle = (low + high) // 2
        found = _start_at(db, table, middle)
        if found is None or found >= time:
            high = middle
        else:
            low = middle + 1
    return low


def plan_window(db: ExportDatabase, max_events: int, start: int | None = None) -> Window | None:
    """The window from `start` (the file's first event by default) holding about `max_events` events;
    None when the whole file fits and no start was asked for."""
    tables = _tables(db)
    bounds = {key: _bounds(db, table) for key, table in tables.items()}
    estimate = sum(b[1] - b[0] + 1 for b in bounds.values() if b)  # an upper bound, from two lookups a table
    if not estimate or (estimate <= max_events and start is None):
        return None
    counts = {key: db.row_count(table) for key, table in tables.items()}
    total = sum(counts.values())
    if not total or (total <= max_events and start is None):
        return None
    firsts: list[int | None] = []
    lasts: list[int | None] = []
    for table in tables.values():
        rowids = _bounds(db, table)
        if rowids is not None:
            firsts.append(_start_at(db, table, rowids[0]))
            lasts.append(_start_at(db, table, rowids[1], last=True))
    first, last = min(v for v in firsts if v is not None), max(v for v in lasts if v is not None)
    begin = first if start is None else max(first, min(int(start), last))
    biggest = max(counts, key=lambda key: counts[key])  # its rows stand for the time the others are read to
    table = tables[biggest]
    share = max_events * counts[biggest] / total
    row = rowid_at(db, table, begin) + int(share)
    end = _start_at(db, table, row)
    end = last + 1 if end is None else max(end, begin + 1)
    opening = {t: rowid_at(db, t, begin) for t in tables.values()}

    def inside(until: int) -> int:
        return sum(rowid_at(db, t, until) - opening[t] for t in tables.values())

    events = inside(end)
    if events > max_events:  # the tables do not keep pace with each other: bisect the end
        low, high = begin + 1, end
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (middle, high) if inside(middle) <= max_events else (low, middle)
        end, events = low, inside(low)
    return Window(begin, end, events, total, first, last)


def rowid_ranges(db: ExportDatabase, window: Window) -> dict[str, tuple[int, int]]:
    """Per windowed table: the rowids [low, high) of the rows that start inside the window."""
    return {
        key: (rowid_at(db, table, window.start), rowid_at(db, table, window.end)) for key, table in _tables(db).items()
    }


def consecutive_windows(
    db: ExportDatabase, max_events: int
) -> tuple[list[dict[str, tuple[int, int]]], dict[str, int]] | None:
    """Rowid ranges ({key: (low, high)}) of consecutive windows of time that together hold every row of every
    activity table exactly once, each about `max_events` events (one window when the file holds no more),
    and each table's row count. None when an activity table cannot be windowed (no rowid alias, or no
    start column).

    Window edges are times found from a sample of each table's starts (one b-tree lookup every
    max_events / 4 rows; in a table whose rowids have gaps, the sampled rowids come from one scan); each
    edge becomes a rowid by binary search, so rows out of start order (a renumbered file) still fall in
    exactly one window, and the first and last windows reach the tables' ends.
    """
    tables = _tables(db)
    if any(db.resolve_table(name) and key not in tables for key, name in WINDOWED.items()):
        return None
    bounds = {key: b for key, table in tables.items() if (b := _bounds(db, table)) is not None}
    rows = {key: db.row_count(tables[key]) for key in bounds}
    if sum(rows.values()) <= max_events:
        return [{key: (low, high + 1) for key, (low, high) in bounds.items()}], rows
    step = max(1, max_events // 4)
    samples = []
    for key, (low, high) in bounds.items():
        for rowid in _every_nth_rowid(db, tables[key], low, high, rows[key], step):
            start = _start_at(db, tables[key], rowid)
            if start is not None:
                samples.append(start)
    samples.sort()
    per_window = max(1, max_events // step)  # samples a window holds, each standing for `step` rows
    edges = sorted(set(samples[per_window::per_window]))
    ranges = []
    opening = {key: low for key, (low, _) in bounds.items()}
    for edge in [*edges, None]:
        closing = {
            key: bounds[key][1] + 1 if edge is None else max(opening[key], rowid_at(db, tables[key], edge))
            for key in bounds
        }
        ranges.append({key: (opening[key], closing[key]) for key in bounds})
        opening = closing
    return ranges, rows


def _every_nth_rowid(db: ExportDatabase, table: str, low: int, high: int, rows: int, step: int) -> list[int]:
    """Every `step`-th rowid of a table: by arithmetic where its rowids are dense (the usual), else found in
    one scan (rows deleted, or a rowid far from the others)."""
    if high - low + 1 <= 2 * rows + 4096:
        return list(range(low, high + 1, step))
    alias = db.rowid_alias(table)
    found = db.query(
        f"SELECT r FROM (SELECT {alias} AS r, row_number() OVER (ORDER BY {alias}) AS n FROM {quoted(table)}) "
        f"WHERE (n - 1) % {int(step)} = 0"
    )
    return [int(r[0]) for r in found]
