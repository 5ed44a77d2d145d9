"""Processes, threads, GPUs and streams of an export, and the indices event rows use for them."""

from __future__ import annotations

import numpy as np

from graphscope.core.symbols import SymbolTable
from graphscope.core.table import Table
from graphscope.trace.database import ExportDatabase
from graphscope.trace.model import GpuInfo

PID_MASK = 0xFFFFFF


def process_key(global_id: np.ndarray) -> np.ndarray:
    """The process part of a globalTid/globalPid: hardware, VM and pid bits (everything above the tid)."""
    return np.right_shift(global_id, 24)


def build_processes(db: ExportDatabase, symbols: SymbolTable, keys: np.ndarray) -> Table:
    """One row per process that owns events: key, OS pid and a name (from PROCESSES or its main thread)."""
    keys = np.unique(keys)
    names: dict[int, str] = {}
    if {"globalPid", "name"} <= set(db.columns("PROCESSES")):
        for global_pid, name in db.query("SELECT globalPid, name FROM PROCESSES"):
            if global_pid is not None and name:
                names[int(global_pid) >> 24] = str(name)
    thread_names = _thread_names(db, symbols)
    pids = keys & PID_MASK
    name_ids = np.empty(len(keys), dtype=np.int32)
    for i, (key, pid) in enumerate(zip(keys.tolist(), pids.tolist())):
        main_thread = (key << 24) | pid
        name_ids[i] = symbols.intern(names.get(key) or thread_names.get(main_thread) or f"pid {pid}")
    return Table({"key": keys.astype(np.int64), "pid": pids.astype(np.int64), "name": name_ids})


def build_threads(db: ExportDatabase, symbols: SymbolTable, global_tids: np.ndarray, processes: Table) -> Table:
    """One row per CPU thread that owns events: globalTid, OS tid, process index, name id."""
    tids = np.unique(global_tids)
    names = _thread_names(db, symbols)
    name_ids = np.array(
        [symbols.intern(names.get(g) or f"thread {g & PID_MASK}") for g in tids.tolist()], dtype=np.int32
    )
    return Table(
        {
            "global_tid": tids.astype(np.int64),
            "tid": (tids & PID_MASK).astype(np.int64),
            "process": index_of(processes.key, process_key(tids)),
            "name": name_ids,
        }
    )


def index_of(sorted_keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Position of each value in `sorted_keys` (every value must be present)."""
    if len(sorted_keys) == 0:
        return np.full(len(values), -1, dtype=np.int32)
    return np.searchsorted(sorted_keys, values).astype(np.int32)


def _thread_names(db: ExportDatabase, symbols: SymbolTable) -> dict[int, str]:
    if not {"nameId", "globalTid"} <= set(db.columns("ThreadNames")):
        return {}
    rows = db.query("SELECT globalTid, nameId FROM ThreadNames WHERE globalTid IS NOT NULL")
    return {int(g): symbols.name(int(n)) for g, n in rows if n is not None}


def read_gpus(db: ExportDatabase) -> list[GpuInfo]:
    """CUDA GPUs of the capture, keyed by the device ordinal that event rows carry."""
    columns = set(db.columns("TARGET_INFO_GPU"))
    if "id" in columns:
        return _gpus_from_target_info(db, columns)
    old = set(db.columns("TARGET_INFO_CUDA_GPU"))
    if {"deviceId", "name"} <= old:
        rows = db.query(
            "SELECT deviceId, name, pciBusId, numMultiprocessors, computeCapabilityMajor, computeCapabilityMinor, "
            "maxThreadsPerBlock, maxRegistersPerBlock, maxRegistersPerMultiprocessor, maxSharedMemoryPerBlock, "
            "numThreadsPerWarp FROM TARGET_INFO_CUDA_GPU"
        )
        return [
            GpuInfo(int(r[0]), str(r[1]), str(r[2] or ""), r[3], f"{r[4]}.{r[5]}", r[6], r[7], r[8], r[9], r[10])
            for r in rows
        ]
    return []


def _gpus_from_target_info(db: ExportDatabase, columns: set[str]) -> list[GpuInfo]:
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
    select = ", ".join(c if c in columns else "NULL" for c in wanted)
    cuda_ids: dict[int, int] = {}
    if {"gpuId", "cudaId"} <= set(db.columns("TARGET_INFO_CUDA_DEVICE")):
        cuda_ids = {int(g): int(c) for g, c in db.query("SELECT gpuId, cudaId FROM TARGET_INFO_CUDA_DEVICE")}
    gpus = []
    for r in db.query(f"SELECT {select} FROM TARGET_INFO_GPU"):
        if r[3] is not None and r[3] <= 0:
            continue  # a display adapter listed on Windows, not a CUDA device
        device = cuda_ids.get(int(r[0]), r[11] if r[11] is not None else r[0])
        capability = f"{r[4]}.{r[5]}" if r[4] is not None else None
        gpus.append(GpuInfo(int(device), str(r[1]), str(r[2] or ""), r[3], capability, r[6], r[7], r[8], r[9], r[10]))
    return sorted(gpus, key=lambda g: g.device)


def read_streams(db: ExportDatabase) -> Table:
    """Stream metadata: OS pid, context, stream id, priority (signed) and flag (1 default, 2 non-blocking, 3 null)."""
    empty = Table.empty(
        {"pid": np.int64, "context": np.int32, "stream": np.int32, "priority": np.int32, "flag": np.int16}
    )
    if not {"streamId", "processId", "contextId"} <= set(db.columns("TARGET_INFO_CUDA_STREAM")):
        return empty
    rows = db.query(
        "SELECT processId, contextId, streamId, IFNULL(priority, 0), IFNULL(flag, 0) FROM TARGET_INFO_CUDA_STREAM"
    )
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
