"""A PyTorch-profiler trace's events, batch by batch, as int64 row matrices per table (trace/kineto.py).

Each batch is split by table in one pass that also interns the names (in file order, so symbol ids do
not depend on the batch size); each table's events then become columns a field at a time: a list of
the field's values, one `np.array` of it, vector arithmetic. Where a column's values are not all
plain numbers in range (a missing value, text, an id beyond int64), that column is converted value by
value as before, and where one value cannot be converted at all, that table's events of the batch
take the event-by-event path (`_row`), which skips the bad event: the reference the fast path must
agree with (tests/trace/test_kineto_columns.py). Measured on the public graph-replay trace (105,167
events, CPU time under load, 3 rounds): the rows event by event 0.18-0.22 s (and 0.07 s more to make
arrays of their tuples), the columns 0.10-0.16 s, the split by table and the shapes included.
"""

from __future__ import annotations

import json
import re
from itertools import chain
from typing import Any

import numpy as np

from graphscope.core.events import COPY_DIRECTIONS, RANGE_DOMAINS, Activity
from graphscope.trace.kineto_json import Args, Event, Number
from graphscope.trace.tables import KINETO_KEYS

API_CATEGORIES = {"cuda_runtime", "cuda_driver"}
GPU = ("start", "end", "device", "stream", "context", "correlation", "node_arg", "graph_arg")
_GPU_TABLES = {  # the trace-event category of each kind of GPU work, and the columns after GPU's
    Activity.KERNEL: ("kernel", ("name", "gx", "gy", "gz", "bx", "by", "bz", "regs", "smem")),
    Activity.MEMCPY: ("gpu_memcpy", ("bytes", "copy_kind")),
    Activity.MEMSET: ("gpu_memset", ("bytes",)),
}
TABLE_OF: dict[str | None, str] = {
    **dict.fromkeys(API_CATEGORIES, "api"),
    **{category: kind.table for kind, (category, _) in _GPU_TABLES.items()},
    **dict.fromkeys(RANGE_DOMAINS, "nvtx"),
}
"""The table of each trace-event category graphscope reads (trace/tables.py: KINETO_KEYS)."""
COLUMNS: dict[str, tuple[str, ...]] = {
    "api": ("start", "end", "name", "correlation", "pid", "tid"),
    **{kind.table: (*GPU, *more) for kind, (_, more) in _GPU_TABLES.items()},
    "nvtx": ("start", "end", "text", "pid", "tid", "domain", "shapes"),
}
"""Each table's row layout as the batches are kept (int64)."""
_NAMED = {key for key, columns in COLUMNS.items() if {"name", "text"} & set(columns)}  # copies keep no name
_COPY = re.compile(r"Memcpy (\w+)")
_COPY_KINDS = {name: kind for kind, name in COPY_DIRECTIONS.items() if kind}
_NO_ARGS = Args()  # stands for an event without args: every field None, as `e.args and e.args.x` gives
_LIMIT = 1 << 62  # ids and times beyond it are not kept (their sums must fit int64)
_US_LIMIT = (_LIMIT - 1) // 1000  # integer microseconds whose nanoseconds stay below _LIMIT
_EXACT = float(1 << 53)  # below it a float holds every integer, so float and integer arithmetic agree
_BAD = (TypeError, ValueError, OverflowError)


class _Slow(Exception):
    """A value the columns cannot convert: the table's events of this batch go event by event."""


class Columns:
    """The events of every batch so far, as int64 row matrices per table (the batch's objects go after)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.parts: dict[str, list[np.ndarray]] = {key: [] for key in KINETO_KEYS}
        self.names: dict[str, int] = {}
        self.shapes: dict[tuple[bytes, bytes], int] = {}
        self.copies: dict[str, int] = {}
        self.skipped = 0

    def rows(self, key: str) -> np.ndarray:
        """Every row of one table, in file order: (rows, len(COLUMNS[key])) int64."""
        parts = self.parts[key]
        if not parts:
            return np.empty((0, len(COLUMNS[key])), np.int64)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def count(self, key: str) -> int:
        return sum(len(part) for part in self.parts[key])

    def name(self, text: str) -> int:
        found = self.names.get(text)
        if found is None:
            found = self.names[text] = len(self.names)
        return found

    def shape(self, args: Args) -> int:
        """The symbol of an operator's input shapes text (-1: none), decoded once per distinct raw value:
        a trace repeats a few thousand of them over hundreds of thousands of operators."""
        key = (bytes(args.input_dims), bytes(args.input_type))
        found = self.shapes.get(key)
        if found is None:
            try:
                text = _shapes(*(json.loads(raw) if raw else None for raw in key))
            except (ValueError, RecursionError):  # not JSON a profiler writes: no shapes, the event kept
                text = None
            found = self.shapes[key] = -1 if text is None else self.name(text)
        return found

    def add(self, batch: list[Event]) -> None:
        """One batch: split by table (names interned in file order), then each table's columns."""
        groups: dict[str, list[Event]] = {key: [] for key in COLUMNS}
        ids: dict[str, list[int]] = {key: [] for key in COLUMNS}
        shapes: list[int] = []
        names, table_of = self.names, TABLE_OF
        intern = names.setdefault
        for e in batch:
            if e.ph != "X":
                continue
            key = table_of.get(e.cat)  # None: no table
            if key is None:
                continue
            groups[key].append(e)
            if key == "nvtx":  # the shapes' text first, as the event-by-event path interns them
                shapes.append(self.shape(e.args) if e.cat == "cpu_op" and e.args else -1)
            if key in _NAMED:
                ids[key].append(intern(e.name, len(names)))
        for key, events in groups.items():
            if not events:
                continue
            try:
                matrix = self._columns(key, events, ids[key], shapes)
            except (_Slow, *_BAD):
                matrix = self._event_by_event(key, events)
            self.parts[key].append(matrix)

    def _columns(self, key: str, events: list[Event], names: list[int], shapes: list[int]) -> np.ndarray:
        start = _ns_column([e.ts for e in events])
        end = start + _ns_column([e.dur for e in events])  # each below 2**62: the sum fits int64
        if key == "api":
            args = [e.args or _NO_ARGS for e in events]
            columns = [start, end, names, _ints([a.correlation for a in args]), *_cpu_columns(events)]
        elif key == "nvtx":
            domains = [RANGE_DOMAINS[e.cat] for e in events]
            columns = [start, end, names, *_cpu_columns(events), domains, shapes]
        else:
            args = [e.args or _NO_ARGS for e in events]
            columns = [
                start,
                end,
                _ints([a.device for a in args], 0),
                _ints([a.stream for a in args], 0),
                _ints([a.context for a in args], 0),
                _ints([a.correlation for a in args]),
                _ints([a.graph_node for a in args]),
                _ints([a.graph for a in args]),
            ]
            if key == "kernels":
                columns += [
                    names,
                    *_dims([a.grid for a in args]),
                    *_dims([a.block for a in args]),
                    _ints([a.registers for a in args], 0),
                    _ints([a.shared for a in args], 0),
                ]
            else:
                columns.append(_ints([a.bytes for a in args], 0))
                if key == "memcpy":
                    columns.append([self._copy_kind(e.name) for e in events])
        return np.column_stack([np.asarray(c, np.int64) for c in columns])

    def _copy_kind(self, name: str) -> int:
        found = self.copies.get(name)
        if found is None:
            kind = _COPY.match(name)
            found = self.copies[name] = _COPY_KINDS.get(kind.group(1), 0) if kind else 0
        return found

    def _event_by_event(self, key: str, events: list[Event]) -> np.ndarray:
        rows = []
        for e in events:
            try:
                rows.append(self._row(key, e))
            except _BAD:
                self.skipped += 1
        if not rows:
            return np.empty((0, len(COLUMNS[key])), np.int64)
        return np.array(rows, dtype=np.int64)

    def _row(self, key: str, e: Event) -> tuple[int, ...]:
        """One event's row, value by value: the reference the columns agree with."""
        start = _ns(e.ts)
        end = start + _ns(e.dur)
        a = e.args
        if key == "api":
            return (start, end, self.name(e.name), _int(a and a.correlation), *_cpu(e))
        if key == "nvtx":
            shape = self.shape(a) if e.cat == "cpu_op" and a else -1
            return (start, end, self.name(e.name), *_cpu(e), RANGE_DOMAINS[e.cat], shape)
        gpu = _gpu(start, end, a)
        if key == "kernels":
            return (
                *gpu,
                self.name(e.name),
                *_dim(a and a.grid),
                *_dim(a and a.block),
                _int(a and a.registers, 0),
                _int(a and a.shared, 0),
            )
        if key == "memcpy":
            return (*gpu, _int(a and a.bytes, 0), self._copy_kind(e.name))
        return (*gpu, _int(a and a.bytes, 0))


def _ns_column(values: list[Number]) -> np.ndarray:
    """`_ns` of every value at once, where that gives the same integers: all integers in range (exact),
    or all numbers below 2**53 / 1000 (then float rounding is exact for the integers among them)."""
    try:
        column = np.array(values)
    except _BAD:
        raise _Slow from None
    if column.ndim == 1 and column.dtype.kind == "i":
        if len(column) and (int(column.min()) < -_US_LIMIT or int(column.max()) > _US_LIMIT):
            raise _Slow
        return column.astype(np.int64, copy=False) * 1000
    if column.ndim == 1 and column.dtype.kind == "f":
        if len(column) and not float(np.abs(column).max()) * 1000 < _EXACT:  # NaN and inf fail too
            raise _Slow
        return np.rint(column * 1000.0).astype(np.int64)
    raise _Slow


def _ints(values: list[Number], default: int = -1) -> np.ndarray:
    """`_int` of every value: at once where all are integers (msgspec lets no JSON true or false into a
    number field), else value by value (a missing value, text, a float, an id beyond int64)."""
    try:
        column = np.array(values)
    except _BAD:
        column = None
    if column is not None and column.ndim == 1 and column.dtype.kind == "i":
        column = column.astype(np.int64, copy=False)
        out = (column <= -_LIMIT) | (column >= _LIMIT)
        return np.where(out, default, column) if out.any() else column
    return np.array([_int(v, default) for v in values], np.int64)


def _dims(values: list[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`_dim` of every launch's grid (or block): at once where each is three integers, none a JSON
    true or false (the field is untyped), else value by value."""
    try:
        matrix = np.array(values)
    except _BAD:
        matrix = None
    if (
        matrix is not None
        and matrix.ndim == 2
        and matrix.shape[1] == 3
        and matrix.dtype.kind == "i"
        and bool not in set(map(type, chain.from_iterable(values)))
    ):
        matrix = matrix.astype(np.int64, copy=False)
        out = (matrix <= -_LIMIT) | (matrix >= _LIMIT)
        if out.any():
            matrix = np.where(out, 1, matrix)
    else:
        matrix = np.array([_dim(v) for v in values], np.int64).reshape(-1, 3)
    return matrix[:, 0], matrix[:, 1], matrix[:, 2]


def _ns(microseconds: Number) -> int:
    """Microseconds as integer nanoseconds: exactly for the integers older traces write (a float of
    1.66e18 ns would be 256 ns coarse), rounded for the fractions newer ones write."""
    if isinstance(microseconds, int) and not isinstance(microseconds, bool):
        value = microseconds * 1000
    elif microseconds is None:
        raise TypeError("no time")
    else:
        value = round(float(microseconds) * 1000)
    if not -_LIMIT < value < _LIMIT:  # beyond what int64 nanoseconds (and their sums) hold
        raise OverflowError
    return value


def _shapes(dims: object, types: object) -> str | None:
    """An operator's inputs as one text ("float[4, 16], float[16, 16], Scalar"): `Input Dims` with
    `Input type`, which `record_shapes=True` writes; None without them."""
    if not isinstance(dims, list) or not dims:
        return None
    types = types if isinstance(types, list) else []
    parts = []
    for i, shape in enumerate(dims):
        kind = str(types[i]) if i < len(types) and types[i] is not None else ""
        tensor = not kind[:1].isupper()  # "Scalar", "ScalarList", "TensorList": not one tensor's dtype
        if not isinstance(shape, list):
            return None  # not the profiler's layout (a list per input)
        parts.append(f"{kind}{shape}" if shape or (kind and tensor) else kind or "[]")
    return ", ".join(parts)


def _int(value: object, default: int = -1) -> int:
    if value is None or isinstance(value, bool):
        return default
    if isinstance(value, str | float):
        number = int(float(value))
    elif isinstance(value, int):
        number = value
    else:
        raise TypeError(f"not a number: {type(value).__name__}")
    return number if -_LIMIT < number < _LIMIT else default


def _cpu(e: Event) -> tuple[int, int]:
    return _int(e.pid, 0), _int(e.tid, 0)


def _cpu_columns(events: list[Event]) -> tuple[np.ndarray, np.ndarray]:
    return _ints([e.pid for e in events], 0), _ints([e.tid for e in events], 0)


def _gpu(start: int, end: int, a: Args | None) -> tuple[int, ...]:
    return (
        start,
        end,
        _int(a and a.device, 0),
        _int(a and a.stream, 0),
        _int(a and a.context, 0),
        _int(a and a.correlation),
        _int(a and a.graph_node),  # recorded graph-node id (recent PyTorch), -1 when absent
        _int(a and a.graph),
    )


def _dim(value: object) -> tuple[int, int, int]:
    if not isinstance(value, list) or not value:
        return 0, 0, 0
    parts = [_int(v, 1) for v in value[:3]] + [1, 1]
    return parts[0], parts[1], parts[2]
