"""The loaded trace: columnar event tables plus what the export says about itself."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from graphscope.core.events import CORRELATED, NODE_WORK
from graphscope.core.symbols import SymbolTable
from graphscope.core.table import Table


@dataclass(frozen=True)
class GpuInfo:
    """One GPU of the capture (from TARGET_INFO_GPU, or TARGET_INFO_CUDA_GPU in the oldest layout)."""

    device: int  # the CUDA device ordinal that event rows carry in deviceId
    name: str
    bus: str = ""
    sm_count: int | None = None
    compute_capability: str | None = None
    max_threads_per_block: int | None = None
    max_registers_per_block: int | None = None
    max_registers_per_sm: int | None = None
    max_shared_per_block: int | None = None
    warp_size: int | None = None


@dataclass
class ExportInfo:
    """What a file is and what it holds or lacks, in words a user can read."""

    path: Path
    size_bytes: int
    nsys_version: str | None = None
    schema_version: str | None = None
    platform: str | None = None
    layout: str = ""
    capture: dict[str, str] = field(default_factory=dict)
    graph_trace_mode: str | None = None
    tables: list[str] = field(default_factory=list)
    holds: dict[str, int] = field(default_factory=dict)
    lacks: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    backtrace_duplicates: int = 0
    window: dict[str, int] | None = None  # set when only a time window of the file was read


@dataclass
class Trace:
    """Every event table of one export, sorted by start time, names interned in `symbols`.

    CPU tables (`api`, `nvtx`, `graph_nodes`, `graph_events`) carry `thread` and `process` indices into
    `threads` and `processes`; GPU tables (`kernels`, `memcpy`, `memset`, `sync`, `graph_launches`)
    carry `process`, `device`, `context` and `stream`. Missing values are -1.
    """

    info: ExportInfo
    symbols: SymbolTable
    processes: Table  # key (globalTid >> 24), pid, name
    threads: Table  # global_tid, tid, process, name
    api: Table
    kernels: Table
    memcpy: Table
    memset: Table
    sync: Table
    graph_launches: Table  # whole-graph rows (graph trace mode)
    nvtx: Table
    graph_nodes: Table  # node creation events (capture and instantiation)
    graph_events: Table  # graph and graph-exec creation events
    streams: Table  # pid, context, stream, priority, flag
    gpus: list[GpuInfo] = field(default_factory=list)

    @property
    def path(self) -> Path:
        return self.info.path

    def gpu(self, device: int) -> GpuInfo | None:
        return next((g for g in self.gpus if g.device == device), None)

    def gpu_tables(self) -> dict[str, Table]:
        """GPU activity tables by kind (the ones that occupy a stream)."""
        return {kind.noun: getattr(self, kind.table) for kind in NODE_WORK}

    def tables(self) -> dict[str, Table]:
        """Every table by its key (trace/tables.py `ALL_KEYS`: the event tables, then the entity tables)."""
        from graphscope.trace.tables import ALL_KEYS

        return {key: getattr(self, key) for key in ALL_KEYS}

    @property
    def has_node_work(self) -> bool:
        """Does any replayed graph work carry node ids (node-level tracing)? Only then can nodes be attributed."""
        return any(bool((table.graph_node >= 0).any()) for table in self.gpu_tables().values() if len(table))

    def span(self) -> tuple[int, int]:
        """First start and last end over every timed event (0, 0 for an empty trace)."""
        starts, ends = [], []
        for table in (self.api, *(getattr(self, kind.table) for kind in CORRELATED)):  # calls and what they caused
            if len(table):
                starts.append(table.start.min())
                ends.append(table.end.max())
        if len(self.nvtx):
            starts.append(self.nvtx.start.min())
            ends.append(np.maximum(self.nvtx.start, self.nvtx.end).max())
        if not starts:
            return 0, 0
        return int(min(starts)), int(max(ends))
