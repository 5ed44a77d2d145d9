"""Build small traces by hand, with known answers, for analysis tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from graphscope.core.symbols import SymbolTable
from graphscope.core.table import Table
from graphscope.trace import schema
from graphscope.trace.model import ExportInfo, Trace


def _table(specs: dict, rows: list[dict]) -> Table:
    columns = {}
    for name, spec in specs.items():
        if name in ("global_pid", "global_tid", "rowid"):
            continue
        columns[name] = np.array([r.get(name, spec.default) for r in rows], dtype=spec.dtype)
    gpu = "global_pid" in specs
    columns["process"] = np.array([r.get("process", 0) for r in rows], dtype=np.int32)
    if not gpu:
        columns["thread"] = np.array([r.get("thread", 0) for r in rows], dtype=np.int32)
    return Table(columns).sorted_by("start")  # the reader's contract: tables sorted by start


def make_trace(api=(), kernels=(), memcpy=(), memset=(), graph_launches=(), names=()) -> Trace:
    """Rows are dicts of column values; `names` are the symbol table strings (ids by position)."""
    symbols = SymbolTable(list(names))
    processes = Table({"key": np.array([1, 2]), "pid": np.array([1, 2]), "name": np.array([0, 0], np.int32)})
    threads = Table(
        {
            "global_tid": np.array([1 << 24 | 1]),
            "tid": np.array([1]),
            "process": np.array([0], np.int32),
            "name": np.array([0], np.int32),
        }
    )
    return Trace(
        info=ExportInfo(path=Path("synthetic.sqlite"), size_bytes=0),
        symbols=symbols,
        processes=processes,
        threads=threads,
        api=_table(schema.API_COLUMNS, list(api)),
        kernels=_table(schema.KERNEL_COLUMNS, list(kernels)),
        memcpy=_table(schema.MEMCPY_COLUMNS, list(memcpy)),
        memset=_table(schema.MEMSET_COLUMNS, list(memset)),
        sync=_table(schema.SYNC_COLUMNS, []),
        graph_launches=_table(schema.GRAPH_TRACE_COLUMNS, list(graph_launches)),
        nvtx=_table(schema.NVTX_COLUMNS, []),
        graph_nodes=_table(schema.GRAPH_NODE_COLUMNS, []),
        graph_events=_table(schema.GRAPH_EVENT_COLUMNS, []),
        streams=Table.empty({"pid": np.int64}),
    )
