"""Processes, threads, GPUs and streams of an export, and the indices event rows use for them."""

from __future__ import annotations

import numpy as np

from graphscope.core import sets
from graphscope.core.symbols import SymbolTable
from graphscope.core.table import Table
from graphscope.trace.database import ExportDatabase, as_int
from graphscope.trace.model import GpuInfo

PID_MASK = 0xFFFFFF


def distinct(values: np.ndarray) -> np.ndarray:
    """np.unique of an event column that holds few distinct values in long runs (thread and process
    ids): the run starts first, then a small unique."""
    if len(values) < 4096:
        return sets.unique(values)
    starts = np.flatnonzero(values[1:] != values[:-1]) + 1
    return sets.unique(values[np.r_[0, starts]])


def process_key(global_id: np.ndarray) -> np.ndarray:
    """The process part of a globalTid/globalPid: hardware, VM and pid bits (everything above the tid)."""
    return np.right_shift(global_id, 24)


def _int_rows(rows: list[tuple], warnings: list[str] | None, what: str) -> list[tuple[int | None, ...]]:
    """Rows with every value as an int (None where a value is not one), warning once about the bad ones."""
    converted = [tuple(as_int(v) for v in row) for row in rows]
    bad = sum(1 for raw, row in zip(rows, converted) if any(v is None and r is not None for r, v in zip(raw, row)))
    if bad and warnings is not None:
        warnings.append(f"{what}: {bad} rows hold text or out-of-range values where numbers belong; ignored")
    return converted


def build_processes(
    db: ExportDatabase, symbols: SymbolTable, keys: np.ndarray, warnings: list[str] | None = None
) -> Table:
    """One row per process that owns events: key, OS pid and a name (from PROCESSES or its main thread)."""
    keys = sets.unique(keys)
    names: dict[int, str] = {}
    if db.has_columns("PROCESSES", "globalPid", "name"):
        rows = db.select("PROCESSES", ("globalPid", "name"))
        for (global_pid,), (_, name) in zip(_int_rows([r[:1] for r in rows], warnings, "PROCESSES"), rows):
            if global_pid is not None and name:
                names[global_pid >> 24] = str(name)
    thread_names = _thread_names(db, symbols)
    pids = keys & PID_MASK
    name_ids = np.empty(len(keys), dtype=np.int32)
    for i, (key, pid) in enumerate(zip(keys.tolist(), pids.tolist())):
        main_thread = (key << 24) | pid
        name_ids[i] = symbols.intern(names.get(key) or thread_names.get(main_thread) or f"pid {pid}")
    return Table({"key": keys.astype(np.int64), "pid": pids.astype(np.int64), "name": name_ids})


def build_threads(db: ExportDatabase, symbols: SymbolTable, global_tids: np.ndarray, processes: Table) -> Table:
    """One row per CPU thread that owns events: globalTid, OS tid, process index, name id."""
    tids = sets.unique(global_tids)
    names = _thread_names(db, symbols)
    name_ids = np.array(
        [symbols.intern(names.get(g) or f"thread {g & PID_MASK}") for g in tids.tolist()], dtype=np.int32
    )
    return Table(
        {
            "global_tid": tids.astype(np.int64),
            "tid": (tids & PID_MASK).astype(np.int64),
            "process": process_index(processes.key, tids),
            "name": name_ids,
        }
    )


def index_of(sorted_keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Position of each value in `sorted_keys` (every value must be present)."""
    if len(sorted_keys) == 0:
        return np.full(len(values), -1, dtype=np.int32)
    if len(sorted_keys) == 1:  # one process (or thread): the usual trace
        return np.zeros(len(values), dtype=np.int32)
    return np.searchsorted(sorted_keys, values).astype(np.int32)


def process_index(process_keys: np.ndarray, global_ids: np.ndarray) -> np.ndarray:
    """Row in `process_keys` (sorted) of each event's process, from its globalPid or globalTid; with
    one process (the usual trace) the ids need not be looked at."""
    if len(process_keys) <= 1:
        return index_of(process_keys, global_ids)
    return index_of(process_keys, process_key(global_ids))


def _thread_names(db: ExportDatabase, symbols: SymbolTable) -> dict[int, str]:
    if not db.has_columns("ThreadNames", "nameId", "globalTid"):
        return {}
    rows = _int_rows(db.select("ThreadNames", ("globalTid", "nameId")), None, "ThreadNames")
    return {g: symbols.file_name(n) for g, n in rows if g is not None and n is not None}


_NUMBERS = slice(3, None)  # in a GPU row: name and bus first, then numbers


def _gpu(device: int, row: tuple, numbers: tuple[int | None, ...]) -> GpuInfo:
    sm, major, minor, *limits = numbers
    capability = f"{major}.{minor}" if major is not None else None
    return GpuInfo(device, str(row[1] or f"GPU {device}"), str(row[2] or ""), sm, capability, *limits)


def read_gpus(db: ExportDatabase, warnings: list[str] | None = None) -> list[GpuInfo]:
    """CUDA GPUs of the capture, keyed by the device ordinal that event rows carry."""
    if db.has_columns("TARGET_INFO_GPU", "id"):
        return _gpus_from_target_info(db, warnings)
    if db.has_columns("TARGET_INFO_CUDA_GPU", "deviceId", "name"):
        wanted = (
            "deviceId",
            "name",
            "pciBusId",
            "numMultiprocessors",
            "computeCapabilityMajor",
            "computeCapabilityMinor",
            "maxThreadsPerBlock",
            "maxRegistersPerBlock",
            "maxRegistersPerMultiprocessor",
            "maxSharedMemoryPerBlock",
            "numThreadsPerWarp",
        )
        rows = db.select("TARGET_INFO_CUDA_GPU", wanted)
        numbers = _int_rows([(r[0], *r[_NUMBERS]) for r in rows], warnings, "TARGET_INFO_CUDA_GPU")
        return [_gpu(n[0], r, n[1:]) for r, n in zip(rows, numbers) if n[0] is not None]
    return []


def _gpus_from_target_info(db: ExportDatabase, warnings: list[str] | None) -> list[GpuInfo]:
    wanted = [
        "id",
        "name",
        "busLocation",
        "smCount",
        "computeMajor",
        "computeMinor",
        "maxThreadsPerBlock",
        "maxRegistersPerBlock",
        "maxRegistersPerSm",
        "maxShmemPerBlock",
        "threadsPerWarp",
        "cuDevice",
    ]
    cuda_ids: dict[int, int] = {}
    if db.has_columns("TARGET_INFO_CUDA_DEVICE", "gpuId", "cudaId"):
        pairs = _int_rows(
            db.select("TARGET_INFO_CUDA_DEVICE", ("gpuId", "cudaId")), warnings, "TARGET_INFO_CUDA_DEVICE"
        )
        cuda_ids = {g: c for g, c in pairs if g is not None and c is not None}
    rows = db.select("TARGET_INFO_GPU", wanted)
    numbers = _int_rows([(r[0], *r[_NUMBERS]) for r in rows], warnings, "TARGET_INFO_GPU")
    gpus = []
    for r, (gpu_id, *values) in zip(rows, numbers):
        if gpu_id is None or (values[0] is not None and values[0] <= 0):
            continue  # no usable id, or a display adapter listed on Windows (no SMs), not a CUDA device
        cu_device = values[-1]
        device = cuda_ids.get(gpu_id, cu_device if cu_device is not None else gpu_id)
        gpus.append(_gpu(device, r, tuple(values[:-1])))
    return sorted(gpus, key=lambda g: g.device)


def read_streams(db: ExportDatabase, warnings: list[str] | None = None) -> Table:
    """Stream metadata: OS pid, context, stream id, priority (signed) and flag (1 default, 2 non-blocking, 3 null)."""
    empty = Table.empty(
        {"pid": np.int64, "context": np.int32, "stream": np.int32, "priority": np.int32, "flag": np.int16}
    )
    if not db.has_columns("TARGET_INFO_CUDA_STREAM", "streamId", "processId", "contextId"):
        return empty
    raw = db.select("TARGET_INFO_CUDA_STREAM", ("processId", "contextId", "streamId", "priority", "flag"))
    rows = [
        (pid, context, stream, priority or 0, flag or 0)
        for pid, context, stream, priority, flag in _int_rows(raw, warnings, "TARGET_INFO_CUDA_STREAM")
        if pid is not None
        and context is not None
        and stream is not None
        and -(1 << 31) <= stream < (1 << 31)
        and -(1 << 31) <= context < (1 << 31)
    ]
    if not rows:
        return empty
    matrix = np.array(rows, dtype=np.int64)
    priority = matrix[:, 3].astype(np.uint32).view(np.int32)  # stored unsigned: 4294967291 is -5
    return Table(
        {
            "pid": matrix[:, 0],
            "context": matrix[:, 1].astype(np.int32),
            "stream": matrix[:, 2].astype(np.int32),
            "priority": priority,
            "flag": matrix[:, 4].astype(np.int16),
        }
    )
