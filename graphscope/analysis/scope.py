"""Scopes: the part of a trace an analysis looks at (a time window, NVTX ranges, graphscope's own
measured repetitions), and which rows fall inside one.

A CPU call is in a scope when it starts inside one of its windows. GPU work is in the scope of the
call that launched it, wherever it ran (work from a scope can finish after the range closes); work
with no recorded call is in scope when it starts inside a window.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

import numpy as np

from graphscope.analysis import intervals
from graphscope.analysis.correlation import Correlation
from graphscope.core import sets
from graphscope.core.errors import BadInputError
from graphscope.core.events import MEASURED_PATTERN
from graphscope.core.table import Table
from graphscope.core.units import format_ns
from graphscope.trace.model import Trace
from graphscope.trace.schema import NVTX_RANGE_TYPES

_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_TIME = re.compile(r"^\s*(-?[0-9]*\.?[0-9]+(?:e[-+]?[0-9]+)?)\s*(ns|us|µs|ms|s)?\s*$")
_UNIT = re.compile(r"(ns|us|µs|ms|s)\s*$")
_LONGEST_NS = float(1 << 62)  # about 146 years: beyond it no int64 trace time (or sum of two) fits


@dataclass(frozen=True)
class Scope:
    """Disjoint windows [start, end) of trace time (ns) and a label saying where they came from."""

    label: str
    start: np.ndarray
    end: np.ndarray

    @classmethod
    def of(cls, label: str, start: np.ndarray, end: np.ndarray) -> Scope:
        merged = intervals.union(np.asarray(start, np.int64), np.asarray(end, np.int64))
        return cls(label, *merged)

    def __len__(self) -> int:
        return len(self.start)

    @property
    def first(self) -> int:
        return int(self.start[0])

    @property
    def last(self) -> int:
        return int(self.end[-1])

    @property
    def covered_ns(self) -> int:
        return int((self.end - self.start).sum())

    def contains(self, times: np.ndarray) -> np.ndarray:
        """Which times fall inside a window."""
        window = np.searchsorted(self.start, times, side="right") - 1
        inside = window >= 0
        inside[inside] = times[inside] < self.end[window[inside]]
        return inside

    def to_json(self, origin: int = 0) -> dict[str, object]:
        return {
            "label": self.label,
            "windows": len(self),
            "start_ns": self.first - origin,
            "end_ns": self.last - origin,
            "covered_ns": self.covered_ns,
        }


@dataclass
class ScopedRows:
    """Boolean masks: the rows of each table (and of the `gpu_work` table) inside a scope."""

    api: np.ndarray
    gpu: dict[str, np.ndarray]  # kernels, memcpy, memset, sync, graph_launches
    work: np.ndarray
    nvtx: np.ndarray


def scoped_rows(trace: Trace, correlation: Correlation, work: Table, scope: Scope) -> ScopedRows:
    """Which rows a scope holds (see the module docstring for the rule)."""
    api_in = scope.contains(trace.api.start)

    def gpu_mask(start: np.ndarray, calls: np.ndarray) -> np.ndarray:
        linked = calls >= 0
        inside = np.empty(len(calls), dtype=bool)
        inside[linked] = api_in[calls[linked]]
        inside[~linked] = scope.contains(start[~linked])
        return inside

    gpu = {kind: gpu_mask(getattr(trace, kind).start, rows) for kind, rows in correlation.api_row.items()}
    return ScopedRows(api_in, gpu, gpu_mask(work.start, work.api_row), scope.contains(trace.nvtx.start))


def parse_time(text: str) -> int:
    """'12ms', '3.5 us', '1e6' (ns) -> integer nanoseconds."""
    found = _TIME.match(text)
    if not found:
        raise BadInputError(f"{text!r} is not a time (write it like 12ms, 350us, 1.5s or 2000000 for ns)")
    value = float(found.group(1)) * _UNITS[found.group(2) or "ns"]
    if not abs(value) < _LONGEST_NS:
        raise BadInputError(f"{text!r} is longer than any trace can be (at most {_LONGEST_NS / 3.156e16:.0f} years)")
    return round(value)


@dataclass(frozen=True)
class TimeWindow:
    """A window [start, end) in ns from the start of a trace, as the user wrote it (`what`, for messages);
    `end` None runs to the end of the trace."""

    what: str
    start: int
    end: int | None

    def scope(self, trace: Trace) -> Scope:
        """This window of `trace`; refused when it lies outside what the trace recorded."""
        first, last = trace.span()
        length = last - first
        end = length if self.end is None else self.end
        if self.start >= length or end <= 0:
            raise BadInputError(
                f"{self.what}: outside the trace, which spans 0 to {format_ns(length)} (times count from its start)"
            )
        start, end = max(self.start, 0), min(end, length)  # the part the trace recorded
        label = f"{format_ns(start)} to {format_ns(end)}"
        return Scope.of(label, np.array([first + start]), np.array([first + end]))


def parse_window(text: str, what: str) -> TimeWindow:
    """`START:END` with units (either side may be empty: from the start, to the end); `what` is how the
    user wrote it (`--range 1ms:2ms`, `range:1ms:2ms`) and starts every message."""
    first, colon, last = text.partition(":")
    if not colon:
        raise BadInputError(f"{what}: write START:END with units, such as 120ms:180ms")
    start = parse_time(first) if first.strip() else 0
    end = parse_time(last) if last.strip() else None
    if end is not None and end <= start:
        raise BadInputError(f"{what}: the end must come after the start")
    bare = [
        t
        for t in (first, last)  # each parsed above: _TIME matches it
        if t.strip() and not _UNIT.search(t) and (number := _TIME.match(t)) is not None and float(number.group(1)) != 0
    ]
    if bare:
        raise BadInputError(f"{what}: give {bare[0].strip()!r} a unit (ns, us, ms or s), such as {bare[0].strip()}ms")
    return TimeWindow(what, start, end)


def window_scope(trace: Trace, text: str) -> Scope:
    """`--range START:END`, times from the start of the trace (as the timeline's axis shows them)."""
    return parse_window(text, f"--range {text}").scope(trace)


def nvtx_ranges(trace: Trace) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every closed NVTX range: (text id, start, end), in start order."""
    nvtx = trace.nvtx
    closed = sets.isin(nvtx.event_type, NVTX_RANGE_TYPES) & (nvtx.end >= nvtx.start)
    return nvtx.text[closed], nvtx.start[closed], nvtx.end[closed]


def nvtx_scope(trace: Trace, pattern: str) -> Scope:
    """All instances of NVTX ranges named `pattern` (a name, or a glob like 'eager_*'); `NAME#k` is the
    k-th instance only (from 1)."""
    name, hash_sign, number = pattern.rpartition("#")
    only = int(number) if hash_sign and number.isdigit() else None
    wanted = name if only is not None else pattern
    texts, starts, ends = nvtx_ranges(trace)
    present = [i for i in sets.unique(texts).tolist() if i >= 0]
    ids = [i for i in present if fnmatch.fnmatchcase(trace.symbols.name(i), wanted)]
    rows = np.flatnonzero(sets.isin(texts, ids)) if ids else np.empty(0, np.int64)
    if not len(rows):
        names = sorted({trace.symbols.name(i) for i in present})
        hint = f"; it has {', '.join(names[:8])}{'…' if len(names) > 8 else ''}" if names else "; it has none"
        raise BadInputError(f"no NVTX range in this trace matches {wanted!r}{hint}")
    if only is not None:
        if only < 1 or only > len(rows):
            raise BadInputError(f"{pattern}: there are {len(rows)} ranges named {wanted!r} (count from 1)")
        rows = rows[only - 1 : only]
    count = f"{len(rows)} NVTX ranges" if len(rows) > 1 else "NVTX range"
    return Scope.of(f"{count} {pattern!r}", starts[rows], ends[rows])


def measured_scope(trace: Trace) -> Scope | None:
    """graphscope's measured repetitions in a trace its runner wrote (None in other traces)."""
    try:
        scope = nvtx_scope(trace, MEASURED_PATTERN)
    except BadInputError:
        return None
    return Scope(f"graphscope's measured repetitions ({len(scope)} NVTX ranges)", scope.start, scope.end)


def parse_scope(trace: Trace, range_text: str | None = None, nvtx: str | None = None) -> Scope | None:
    """The scope a command asked for (--range or --nvtx); None for the whole trace."""
    if range_text is not None and nvtx is not None:
        raise BadInputError("choose one scope: --range or --nvtx, not both")
    if range_text is not None:
        return window_scope(trace, range_text)
    if nvtx is not None:
        if not nvtx.strip():
            raise BadInputError("--nvtx '': name the NVTX range (a name, a glob such as 'eager_*', or NAME#k)")
        return nvtx_scope(trace, nvtx)
    return None
