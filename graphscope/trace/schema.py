"""What graphscope reads from each export table, under which names, across Nsight Systems versions.

Column names are checked against `PRAGMA table_info` before every read (see NSYS_SCHEMA.md):
absent optional columns take their default, absent required ones make the table unusable.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum

import numpy as np

from graphscope.core.events import (
    GRAPH_LAUNCH_PREFIXES,
    HIP_KERNEL_LAUNCH_PREFIXES,
    KERNEL_LAUNCH_PREFIXES,
    ApiKind,
)
from graphscope.core.table import narrowest
from graphscope.trace.database import ROWID, ColumnSpec

I8, I16, I32, I64 = np.int8, np.int16, np.int32, np.int64

RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
MEMCPY = "CUPTI_ACTIVITY_KIND_MEMCPY"
MEMSET = "CUPTI_ACTIVITY_KIND_MEMSET"
SYNC = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"
GRAPH_TRACE = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"
NVTX = "NVTX_EVENTS"
GRAPH_NODE_TABLES = ("CUDA_GRAPH_NODE_EVENTS", "CUDA_GRAPH_EVENTS")  # 2022.2 used the second name for nodes
GRAPH_EVENTS = "CUDA_GRAPH_EVENTS"

BACKTRACE_EVENT_CLASS = 67
"""RUNTIME rows of this class duplicate a real call to carry its backtrace; they are not calls."""


def _gpu_common() -> dict[str, ColumnSpec]:
    return {
        "start": ColumnSpec("start", I64, 0),
        "end": ColumnSpec("end", I64, 0),
        "device": ColumnSpec("deviceId", I32, 0, unsigned=True),
        "context": ColumnSpec("contextId", I32, 0, unsigned=True),
        "stream": ColumnSpec("streamId", I32, 0, unsigned=True),
        "correlation": ColumnSpec("correlationId", I64, -1),
        "global_pid": ColumnSpec("globalPid", I64, 0),
    }


API_COLUMNS = {
    "start": ColumnSpec("start", I64, 0),
    "end": ColumnSpec("end", I64, 0),
    "event_class": ColumnSpec("eventClass", I16, 0),
    "global_tid": ColumnSpec("globalTid", I64, 0),
    "correlation": ColumnSpec("correlationId", I64, -1),
    "name": ColumnSpec("nameId", I32, -1, symbol=True),
    "return_value": ColumnSpec("returnValue", I64, 0),
}

KERNEL_COLUMNS = {
    **_gpu_common(),
    "short_name": ColumnSpec(("shortName", "demangledName"), I32, -1, symbol=True),
    "name": ColumnSpec(("demangledName", "shortName"), I32, -1, symbol=True),
    "mangled": ColumnSpec("mangledName", I32, -1, symbol=True),
    "grid_x": ColumnSpec("gridX", I32, 0),
    "grid_y": ColumnSpec("gridY", I32, 0),
    "grid_z": ColumnSpec("gridZ", I32, 0),
    "block_x": ColumnSpec("blockX", I32, 0),
    "block_y": ColumnSpec("blockY", I32, 0),
    "block_z": ColumnSpec("blockZ", I32, 0),
    "registers": ColumnSpec("registersPerThread", I32, 0),
    "static_smem": ColumnSpec("staticSharedMemory", I32, 0),
    "dynamic_smem": ColumnSpec("dynamicSharedMemory", I32, 0),
    "graph_node": ColumnSpec("graphNodeId", I64, -1),
    # Nsight 2024.5+ (green contexts) and 2025.5+ (clusters): deferred, shown in Details where present
    "launch_type": ColumnSpec("launchType", I8, -1),  # core/launch_kinds.py LAUNCH_TYPES
    "green_context": ColumnSpec("greenContextId", I64, -1),
    "cluster_x": ColumnSpec("clusterX", I8, 0),  # 0: no cluster (at most 16 blocks a side)
    "cluster_y": ColumnSpec("clusterY", I8, 0),
    "cluster_z": ColumnSpec("clusterZ", I8, 0),
    "cluster_policy": ColumnSpec("clusterSchedulingPolicy", I8, -1),  # core/launch_kinds.py CLUSTER_POLICIES
}

MEMCPY_COLUMNS = {
    **_gpu_common(),
    "bytes": ColumnSpec("bytes", I64, 0),
    "copy_kind": ColumnSpec("copyKind", I16, 0),
    "src_kind": ColumnSpec("srcKind", I16, -1),
    "dst_kind": ColumnSpec("dstKind", I16, -1),
    "graph_node": ColumnSpec("graphNodeId", I64, -1),
}

MEMSET_COLUMNS = {
    **_gpu_common(),
    "bytes": ColumnSpec("bytes", I64, 0),
    "value": ColumnSpec("value", I64, 0),
    "mem_kind": ColumnSpec("memKind", I16, -1),
    "graph_node": ColumnSpec("graphNodeId", I64, -1),
}

SYNC_COLUMNS = {**_gpu_common(), "sync_type": ColumnSpec("syncType", I16, 0)}

GRAPH_TRACE_COLUMNS = {
    **_gpu_common(),
    "graph_id": ColumnSpec("graphId", I64, -1),
    "graph_exec_id": ColumnSpec("graphExecId", I64, -1),
}

NVTX_COLUMNS = {
    "start": ColumnSpec("start", I64, 0),
    "end": ColumnSpec("end", I64, -1),
    "event_type": ColumnSpec("eventType", I16, 0),
    "global_tid": ColumnSpec("globalTid", I64, 0),
    "text": ColumnSpec("textId", I32, -1, symbol=True),
    "domain": ColumnSpec("domainId", I64, 0),
    "color": ColumnSpec("color", I64, -1),
    "rowid": ColumnSpec(ROWID, I64, -1),
}

GRAPH_NODE_COLUMNS = {
    "start": ColumnSpec("start", I64, 0),
    "end": ColumnSpec("end", I64, 0),
    "event_class": ColumnSpec("eventClass", I16, 0),
    "global_tid": ColumnSpec("globalTid", I64, 0),
    "name": ColumnSpec("nameId", I32, -1, symbol=True),
    "node": ColumnSpec("graphNodeId", I64, -1),
    "original_node": ColumnSpec("originalGraphNodeId", I64, -1),
}

GRAPH_EVENT_COLUMNS = {
    "start": ColumnSpec("start", I64, 0),
    "end": ColumnSpec("end", I64, 0),
    "event_class": ColumnSpec("eventClass", I16, 0),
    "global_tid": ColumnSpec("globalTid", I64, 0),
    "name": ColumnSpec("nameId", I32, -1, symbol=True),
    "graph_id": ColumnSpec("graphId", I64, -1),
    "original_graph_id": ColumnSpec("originalGraphId", I64, -1),
    "graph_exec_id": ColumnSpec("graphExecId", I64, -1),
}

PRESENT_ONLY = frozenset({"launch_type", "green_context", "cluster_x", "cluster_y", "cluster_z", "cluster_policy"})
"""Columns newer exports add, read only from a file that has them: filled with defaults they would cost a
byte a kernel for nothing (the exports before 2025.5 have no cluster columns)."""


def in_file(columns: list[str], specs: Mapping[str, ColumnSpec]) -> dict[str, ColumnSpec]:
    """The specs read from a table with these `columns`: all but the PRESENT_ONLY ones it lacks."""
    have = {c.lower() for c in columns}
    return {n: s for n, s in specs.items() if n not in PRESENT_ONLY or any(x.lower() in have for x in s.sources)}


ID_COLUMNS = frozenset(
    {
        *("device", "context", "stream", "correlation", "process", "thread"),
        *("graph_node", "node", "original_node", "graph_id", "original_graph_id", "graph_exec_id", "green_context"),
        *("name", "short_name", "mangled", "text"),  # symbol ids
        *("event_class", "event_type", "copy_kind", "src_kind", "dst_kind", "mem_kind", "sync_type"),
    }
)
"""Columns of ids and codes, compared and looked up but never added up: each is held in the narrowest
integer type its values fit (`narrow_ids`). Times, sizes, values and launch dimensions keep their type."""


def narrow_ids(columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every id column (`ID_COLUMNS`) of `columns` in the narrowest integer type that holds it, in place
    (each wide array goes as its narrow one comes); returns `columns`."""
    for name in columns.keys() & ID_COLUMNS:
        columns[name] = narrowest(columns[name])
    return columns


REQUIRED = {
    RUNTIME: ("start", "end", "nameId"),
    KERNEL: ("start", "end"),
    MEMCPY: ("start", "end"),
    MEMSET: ("start", "end"),
    SYNC: ("start", "end"),
    GRAPH_TRACE: ("start", "end"),
    NVTX: ("start", "eventType"),
}
KERNEL_NAME_COLUMNS = ("shortName", "demangledName")


_SYNC_NAMES = (
    "cudaDeviceSynchronize",
    "cudaStreamSynchronize",
    "cudaEventSynchronize",
    "cudaStreamWaitEvent",
    "cudaStreamQuery",
    "cudaEventQuery",
    "cuCtxSynchronize",
    "cuStreamSynchronize",
    "cuEventSynchronize",
    "cuStreamWaitEvent",
    "cuStreamQuery",
    "cuEventQuery",
)
_GRAPH_BUILD_PREFIXES = (
    "cudaStreamBeginCapture",
    "cudaStreamEndCapture",
    "cudaGraphInstantiate",
    "cudaGraphUpload",
    "cudaGraphExec",
    "cudaGraphAdd",
    "cudaGraphCreate",
    "cudaGraphClone",
    "cudaGraphDestroy",
    "cuStreamBeginCapture",
    "cuStreamEndCapture",
    "cuGraphInstantiate",
    "cuGraphUpload",
    "cuGraphExec",
    "cuGraphAdd",
    "cuGraphCreate",
    "cuGraphClone",
    "cuGraphDestroy",
)
_MEMORY_PREFIXES = ("cudaMalloc", "cudaFree", "cudaHostAlloc", "cudaHostRegister", "cuMemAlloc", "cuMemFree")


_HIP_LAUNCHES = HIP_KERNEL_LAUNCH_PREFIXES


def classify_api(name: str) -> ApiKind:
    """Classify one API name (with or without its `_vNNNN` suffix); HIP's names (PyTorch-profiler traces
    from ROCm) as their CUDA twins.

    Kernel launches follow the counting rule of docs/counting.md exactly: names starting with
    `cudaLaunchKernel` or `cuLaunchKernel` (which covers the Ex variants), and HIP's launch calls.
    """
    if name.startswith("hip"):
        if name.startswith(_HIP_LAUNCHES):
            return ApiKind.KERNEL_LAUNCH
        name = "cuda" + name[3:]  # hipGraphLaunch, hipMemcpyAsync, hipStreamSynchronize, ...
    if name.startswith(KERNEL_LAUNCH_PREFIXES):
        return ApiKind.KERNEL_LAUNCH
    if name.startswith(GRAPH_LAUNCH_PREFIXES):
        return ApiKind.GRAPH_LAUNCH
    if name.startswith(_SYNC_NAMES):
        return ApiKind.SYNC
    if name.startswith(("cudaMemcpy", "cuMemcpy")):
        return ApiKind.MEMCPY
    if name.startswith(("cudaMemset", "cuMemset", "cuMemsetD")):
        return ApiKind.MEMSET
    if name.startswith(_GRAPH_BUILD_PREFIXES):
        return ApiKind.GRAPH_BUILD
    if name.startswith(_MEMORY_PREFIXES):
        return ApiKind.MEMORY
    return ApiKind.OTHER


class NvtxType(IntEnum):
    """NVTX_EVENTS.eventType values that graphscope draws (ENUM_NSYS_EVENT_TYPE)."""

    MARK = 34
    PUSH_POP = 59
    START_END = 60
    NVTXT_PUSH_POP = 70
    NVTXT_START_END = 71
    DOMAIN_CREATE = 75


NVTX_RANGE_TYPES = (NvtxType.PUSH_POP, NvtxType.START_END, NvtxType.NVTXT_PUSH_POP, NvtxType.NVTXT_START_END)
NVTX_DRAWN_TYPES = (*NVTX_RANGE_TYPES, NvtxType.MARK)
