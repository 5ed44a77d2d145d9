"""GPU busy and idle time per device and per stream, and idle gaps classified by their cause."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphscope.analysis import intervals
from graphscope.analysis.correlation import Correlation
from graphscope.core.events import GPU_WORK
from graphscope.core.table import Table, rows_where
from graphscope.trace.entities import distinct
from graphscope.trace.model import Trace


def gpu_work(trace: Trace, correlation: Correlation) -> Table:
    """All GPU work in one table sorted by start: kind (an `Activity` of GPU_WORK), source row, launching
    API row (-1 if unrecorded), process, device, stream, start, end (other columns: `work_column`).

    Whole-graph rows (graph trace mode) count as work: their nodes have no rows of their own.
    """
    parts = []
    for kind in GPU_WORK:
        table = getattr(trace, kind.table)
        if len(table):
            parts.append(
                {
                    "kind": np.full(len(table), kind, dtype=np.int8),
                    "source_row": np.arange(len(table), dtype=np.int32),
                    "api_row": correlation.api_row[kind.table],
                    **{c: table[c] for c in ("process", "device", "stream", "start", "end")},
                }
            )
    if not parts:
        dtypes = {
            "kind": np.int8,
            "source_row": np.int64,
            "api_row": np.int64,
            "process": np.int32,
            "device": np.int32,
            "stream": np.int32,
            "start": np.int64,
            "end": np.int64,
        }
        return Table.empty(dtypes)
    if len(parts) == 1:  # the usual trace: kernels only; no copies
        return Table(parts[0])
    work = Table({name: np.concatenate([p[name] for p in parts]) for name in parts[0]})
    order = intervals.start_order(work.start)
    return work if isinstance(order, slice) else work.take(order)


def work_column(trace: Trace, work: Table, column: str, rows: np.ndarray | slice = slice(None)) -> np.ndarray:
    """A column of the source tables (`context`, say) for some rows of the work table."""
    kinds, sources = work.kind[rows], work.source_row[rows]
    parts = [(mine, getattr(trace, kind.table)[column]) for kind in GPU_WORK if (mine := kinds == kind).any()]
    if not parts:
        return np.empty(0, np.int32)
    values = np.empty(len(kinds), np.result_type(*(column for _, column in parts)))  # ids narrowed per table
    for mine, column in parts:
        values[mine] = column[sources[mine]]
    return values


@dataclass(frozen=True)
class DeviceTime:
    device: int
    first_ns: int
    last_ns: int
    busy_ns: int

    @property
    def idle_ns(self) -> int:
        return self.last_ns - self.first_ns - self.busy_ns

    @property
    def utilization(self) -> float:
        window = self.last_ns - self.first_ns
        return self.busy_ns / window if window > 0 else 0.0


def device_time(work: Table) -> list[DeviceTime]:
    """Busy time (union of all work) and the active window per device ordinal."""
    result = []
    devices = distinct(work.device)
    for device in devices:
        mine = slice(None) if len(devices) == 1 else work.device == device  # one GPU: no copies
        start, end = work.start[mine], work.end[mine]
        result.append(DeviceTime(int(device), int(start.min()), int(end.max()), intervals.covered_ns(start, end)))
    return result


@dataclass
class IdleGaps:
    """Idle gaps on one device (or stream): when, and whether the GPU was waiting for the CPU to submit."""

    start: np.ndarray
    end: np.ndarray
    host_wait: np.ndarray  # True: the next work's launch call had not returned when the GPU went idle
    unknown: np.ndarray  # True: the next work has no recorded launch call

    @property
    def total_ns(self) -> int:
        return int((self.end - self.start).sum())

    @property
    def host_wait_ns(self) -> int:
        return int((self.end - self.start)[self.host_wait].sum())


def idle_gaps(trace: Trace, work: Table, device: int, stream: int | None = None) -> IdleGaps:
    """Gaps in GPU work on a device (or one of its streams), classified as host-wait or other.

    A gap is host-wait when the call that launched the work ending the gap had not returned when
    the gap began: the GPU had nothing queued and waited for the CPU to submit. Otherwise the work
    was already queued and waited on something else (a dependency, a synchronisation, a copy engine).
    """
    mine = work.device == device
    if stream is not None:
        mine &= work.stream == stream
    mine = rows_where(mine)  # one GPU (and one stream): no copies
    start, end, calls = work.start[mine], work.end[mine], work.api_row[mine]
    gap_start, gap_end, next_index = intervals.gaps(start, end)
    calls = calls[next_index]
    known = calls >= 0
    call_end = trace.api.end[np.maximum(calls, 0)] if len(trace.api) else np.zeros(len(calls), np.int64)
    return IdleGaps(gap_start, gap_end, known & (call_end >= gap_start), ~known)
