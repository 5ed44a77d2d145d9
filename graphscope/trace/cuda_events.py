"""CUDA events of an Nsight Systems export: which stream recorded each event, and which wait or sync
waited for which record (`CUPTI_ACTIVITY_KIND_CUDA_EVENT`, and `eventSyncId` of the synchronization rows).

Nsight writes one CUDA_EVENT row per event record call (`cudaEventRecord`, `...WithFlags`: joined to
the call by process and correlationId), with the event's id, the recording stream and, since 2025.5,
`timestamp`, the device-side completion time (0: not collected). Exports of 2025.3 and later also
give each record an `eventSyncId`, which the synchronization rows (`cudaStreamWaitEvent`,
`cudaEventSynchronize`) carry too: the wait's event record, so its cross-stream dependency, is known.
Older exports lack the table or these columns; they read as empty or -1.

Read on demand from the export (a few rows per step: 2-58 in the shipped exports), once per trace,
and kept beside it: the trace tables themselves are not widened for these.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from graphscope.core.errors import GraphscopeError
from graphscope.trace.database import ExportDatabase, as_int
from graphscope.trace.entities import process_key
from graphscope.trace.model import Trace

CUDA_EVENT = "CUPTI_ACTIVITY_KIND_CUDA_EVENT"
SYNC = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"
RECORD_COLUMNS = ("globalPid", "correlationId", "eventId", "streamId", "deviceId", "timestamp", "eventSyncId")
NO_ID = (
    4_294_967_295  # 2**32 - 1, CUPTI's "none" for 32-bit ids (device-wide syncs carry it as eventId and eventSyncId)
)


@dataclass
class EventRecords:
    """Per event record: process key (globalPid >> 24), correlation, event id, stream, device, GPU
    completion time (-1: not collected) and sync id (-1: none); per waiting sync row, its process key,
    correlation and sync id. Columns are arrays, rows in the file's order."""

    process: np.ndarray
    correlation: np.ndarray
    event: np.ndarray
    stream: np.ndarray
    device: np.ndarray
    gpu_time: np.ndarray
    sync_id: np.ndarray
    wait_process: np.ndarray
    wait_correlation: np.ndarray
    wait_sync_id: np.ndarray

    def record_of_call(self, process: int, correlation: int) -> int | None:
        """The record row made by the call (process key, correlation), or None."""
        found = np.flatnonzero((self.correlation == correlation) & (self.process == process))
        return int(found[0]) if len(found) else None

    def record_waited_by(self, process: int, correlation: int) -> int | None:
        """The record row a wait or sync call (process key, correlation) waited for, or None."""
        waits = np.flatnonzero((self.wait_correlation == correlation) & (self.wait_process == process))
        for wait in waits.tolist():
            sync_id = int(self.wait_sync_id[wait])
            if sync_id < 0:
                continue
            found = np.flatnonzero((self.sync_id == sync_id) & (self.process == process))
            if len(found):
                return int(found[0])
        return None


_HELD: dict[int, EventRecords] = {}


def event_records(trace: Trace) -> EventRecords:
    """The trace's CUDA event records, read from its export once (empty for a PyTorch-profiler trace, an
    export without the table, or one that can no longer be read)."""
    key = id(trace)
    found = _HELD.get(key)
    if found is None:
        found = _HELD.setdefault(key, _read(trace))
        weakref.finalize(trace, _HELD.pop, key, None)
    return found


def _ints(rows: list[tuple], column: int, none: int = -1) -> np.ndarray:
    values = [as_int(row[column]) for row in rows]
    return np.array([none if v is None or v == NO_ID else v for v in values], dtype=np.int64)


def _read(trace: Trace) -> EventRecords:
    records: list[tuple] = []
    waits: list[tuple] = []
    if trace.info.layout != "kineto" and trace.path.suffix == ".sqlite":
        try:
            with ExportDatabase(trace.path) as db:
                records = db.select(CUDA_EVENT, RECORD_COLUMNS)
                if db.column(SYNC, "eventSyncId") is not None:
                    waits = db.select(SYNC, ("globalPid", "correlationId", "eventSyncId"), "eventSyncId IS NOT NULL")
        except (GraphscopeError, OSError):
            records, waits = [], []  # the file moved or changed since it was opened: nothing to add
    gpu_time = _ints(records, 5)
    gpu_time[gpu_time <= 0] = -1  # 0: the completion time was not collected
    sync_id, wait_sync_id = _ints(records, 6), _ints(waits, 2)
    sync_id[sync_id <= 0] = -1  # 0: none (the fork-join export's two waits inside a stream capture)
    wait_sync_id[wait_sync_id <= 0] = -1
    return EventRecords(
        process=process_key(_ints(records, 0)),
        correlation=_ints(records, 1),
        event=_ints(records, 2),
        stream=_ints(records, 3),
        device=_ints(records, 4),
        gpu_time=gpu_time,
        sync_id=sync_id,
        wait_process=process_key(_ints(waits, 0)),
        wait_correlation=_ints(waits, 1),
        wait_sync_id=wait_sync_id,
    )
