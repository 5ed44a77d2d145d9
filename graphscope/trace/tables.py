"""The event tables of a trace, declared once: each `Trace` table's key, the export table it is read
from, its columns (trace/schema.py), its side, whether it is read a window of time at a time, and
whether a PyTorch-profiler trace fills it. The reader, the windowed reader, the window planner, the
cache, saved views and the Kineto reader take their table sets from here, so a new table is one line
below and one field of `Trace` (tests/test_vocabulary.py fails on a table set written out elsewhere).

    key             export table                          side  windows  Kineto
    api             CUPTI_ACTIVITY_KIND_RUNTIME           CPU   yes      yes
    kernels         CUPTI_ACTIVITY_KIND_KERNEL            GPU   yes      yes
    memcpy          CUPTI_ACTIVITY_KIND_MEMCPY            GPU   yes      yes
    memset          CUPTI_ACTIVITY_KIND_MEMSET            GPU   yes      yes
    sync            CUPTI_ACTIVITY_KIND_SYNCHRONIZATION   GPU   yes      -
    graph_launches  CUPTI_ACTIVITY_KIND_GRAPH_TRACE       GPU   yes      -
    nvtx            NVTX_EVENTS                           CPU   -        yes (user annotations)
    graph_nodes     CUDA_GRAPH_NODE_EVENTS                CPU   -        -
    graph_events    CUDA_GRAPH_EVENTS                     CPU   -        -

CPU tables carry `global_tid` (then `thread` and `process`), GPU tables `global_pid` (then `process`).
Of the four big tables only the columns in `eager` are read up front; the rest load on first use.
The entity tables (`ENTITY_KEYS`: processes, threads, streams) are built from those, not read as events.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from graphscope.trace import schema
from graphscope.trace.database import ColumnSpec


@dataclass(frozen=True)
class TableSpec:
    """One event table of a trace."""

    key: str  # the `Trace` field
    export: str  # the export's table (`schema`; graph_nodes also has an older name, schema.GRAPH_NODE_TABLES)
    columns: Mapping[str, ColumnSpec]  # our column name -> the export's column, type and default
    cpu: bool  # a CPU table (threads), else a GPU one (a process's device and stream)
    windowed: bool = False  # read a window of time at a time (trace/window.py) for files too large to hold
    kineto: bool = False  # filled from a PyTorch-profiler trace (trace/kineto.py)
    eager: tuple[str, ...] | None = None  # read up front (the rest deferred); None: the whole table


_GPU_EAGER = ("start", "end", "device", "stream", "correlation", "global_pid")
_API_EAGER = ("start", "end", "event_class", "global_tid", "correlation", "name")
TABLES: tuple[TableSpec, ...] = (
    TableSpec("api", schema.RUNTIME, schema.API_COLUMNS, cpu=True, windowed=True, kineto=True, eager=_API_EAGER),
    TableSpec(
        "kernels",
        schema.KERNEL,
        schema.KERNEL_COLUMNS,
        cpu=False,
        windowed=True,
        kineto=True,
        eager=(*_GPU_EAGER, "short_name", "mangled", "graph_node"),
    ),
    TableSpec(
        "memcpy",
        schema.MEMCPY,
        schema.MEMCPY_COLUMNS,
        cpu=False,
        windowed=True,
        kineto=True,
        eager=(*_GPU_EAGER, "bytes", "graph_node"),
    ),
    TableSpec(
        "memset",
        schema.MEMSET,
        schema.MEMSET_COLUMNS,
        cpu=False,
        windowed=True,
        kineto=True,
        eager=(*_GPU_EAGER, "graph_node"),
    ),
    TableSpec("sync", schema.SYNC, schema.SYNC_COLUMNS, cpu=False, windowed=True),
    TableSpec("graph_launches", schema.GRAPH_TRACE, schema.GRAPH_TRACE_COLUMNS, cpu=False, windowed=True),
    TableSpec("nvtx", schema.NVTX, schema.NVTX_COLUMNS, cpu=True, kineto=True),
    TableSpec("graph_nodes", schema.GRAPH_NODE_TABLES[0], schema.GRAPH_NODE_COLUMNS, cpu=True),
    TableSpec("graph_events", schema.GRAPH_EVENTS, schema.GRAPH_EVENT_COLUMNS, cpu=True),
)
BY_KEY: dict[str, TableSpec] = {spec.key: spec for spec in TABLES}
KEYS: tuple[str, ...] = tuple(BY_KEY)
CPU_KEYS: tuple[str, ...] = tuple(spec.key for spec in TABLES if spec.cpu)
WINDOWED: dict[str, str] = {spec.key: spec.export for spec in TABLES if spec.windowed}
KINETO_KEYS: tuple[str, ...] = tuple(spec.key for spec in TABLES if spec.kineto)
EAGER: dict[str, tuple[str, ...]] = {spec.key: spec.eager for spec in TABLES if spec.eager is not None}
"""Columns read up front by default: what the summary, the timeline's lanes and the launch joins use.
Every other column of these tables is deferred (read on first use); other tables are read whole."""
ENTITY_KEYS: tuple[str, ...] = ("processes", "threads", "streams")
ALL_KEYS: tuple[str, ...] = (*KEYS, *ENTITY_KEYS)
"""Every table of a `Trace`: the event tables, then the entity tables."""
