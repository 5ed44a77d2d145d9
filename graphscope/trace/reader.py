"""Load an Nsight Systems export (SQLite, or .nsys-rep through `nsys export`) into a `Trace`."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

import numpy as np

from graphscope.core.errors import NotAnExportError, UnsupportedSchemaError
from graphscope.core.progress import CancelToken, ProgressCallback, no_progress
from graphscope.core.symbols import SymbolTable
from graphscope.core.table import Table
from graphscope.trace import entities, metadata, schema
from graphscope.trace.database import ColumnSpec, ExportDatabase
from graphscope.trace.model import Trace

_MAX_STRING_ID_SLACK = 1 << 20
READ_THREADS = 2


def load_trace(
    path: str | os.PathLike[str],
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> Trace:
    """Read every event table graphscope uses; raise a `GraphscopeError` with a one-line reason if unusable.

    Damaged-but-readable content (dangling string ids, negative durations, wrongly typed values) is
    loaded and described in `trace.info.warnings`.
    """
    path = Path(path)
    if path.suffix == ".nsys-rep":
        from graphscope.trace.nsysrep import export_to_sqlite

        path = export_to_sqlite(path, progress, cancel)
    progress(0.0, f"opening {path.name}")
    with ExportDatabase(path) as db:
        return _load(db, progress, cancel)


def _load(db: ExportDatabase, progress: ProgressCallback, cancel: CancelToken | None) -> Trace:
    known = [schema.RUNTIME, schema.KERNEL, schema.NVTX, "StringIds"]
    if not any(db.resolve_table(t) for t in known):
        raise NotAnExportError(
            f"{db.path}: an SQLite database, but not an Nsight Systems export (no StringIds, CUDA or NVTX tables)"
        )
    info = metadata.read_export_info(db)
    symbols = _read_strings(db, info.warnings)
    steps = [
        ("api", schema.RUNTIME, schema.API_COLUMNS),
        ("kernels", schema.KERNEL, schema.KERNEL_COLUMNS),
        ("memcpy", schema.MEMCPY, schema.MEMCPY_COLUMNS),
        ("memset", schema.MEMSET, schema.MEMSET_COLUMNS),
        ("sync", schema.SYNC, schema.SYNC_COLUMNS),
        ("graph_launches", schema.GRAPH_TRACE, schema.GRAPH_TRACE_COLUMNS),
        ("nvtx", schema.NVTX, {**schema.NVTX_COLUMNS, "rowid": ColumnSpec("rowid", np.int64, -1)}),
    ]
    for _, table_name, _ in steps:  # the column inventory, read once before the workers start
        db.columns(db.resolve_table(table_name) or table_name)
    raw: dict[str, dict[str, np.ndarray]] = {}
    with ThreadPoolExecutor(max_workers=READ_THREADS) as pool:  # connectorx releases the GIL while reading
        futures = {
            pool.submit(_read_event_table, db, table_name, specs, info.warnings, cancel): key
            for key, table_name, specs in steps
        }
        for done, future in enumerate(as_completed(futures)):
            raw[futures[future]] = future.result()
            progress(0.05 + 0.85 * (done + 1) / len(steps), f"read {futures[future]}")
    raw["graph_nodes"], raw["graph_events"] = _read_graph_tables(db, info.warnings, cancel)
    progress(0.9, "linking processes and threads")

    api = raw["api"]
    backtrace = api["event_class"] == schema.BACKTRACE_EVENT_CLASS
    info.backtrace_duplicates = int(backtrace.sum())
    if info.backtrace_duplicates:
        raw["api"] = {name: column[~backtrace] for name, column in api.items()}
    _attach_nvtx_text(db, raw["nvtx"], symbols)

    cpu_keys = ("api", "nvtx", "graph_nodes", "graph_events")
    gpu_keys = ("kernels", "memcpy", "memset", "sync", "graph_launches")
    process_keys = np.concatenate(
        [entities.process_key(np.unique(raw[k]["global_tid"])) for k in cpu_keys]
        + [entities.process_key(np.unique(raw[k]["global_pid"])) for k in gpu_keys]
    )
    processes = entities.build_processes(db, symbols, process_keys)
    all_tids = np.concatenate([np.unique(raw[k]["global_tid"]) for k in cpu_keys])
    threads = entities.build_threads(db, symbols, all_tids, processes)

    tables: dict[str, Table] = {}
    for columns in raw.values():
        _sort_by_start(columns)
    for key in cpu_keys:
        columns = raw[key]
        global_tid = columns.pop("global_tid")
        columns["thread"] = entities.index_of(threads.global_tid, global_tid)
        columns["process"] = threads.process[columns["thread"]] if len(global_tid) else np.empty(0, np.int32)
        tables[key] = Table(columns)
    for key in gpu_keys:
        columns = raw[key]
        columns["process"] = entities.index_of(processes.key, entities.process_key(columns.pop("global_pid")))
        tables[key] = Table(columns)
    _check_rows(tables, symbols, info.warnings)

    trace = Trace(
        info=info,
        symbols=symbols,
        processes=processes,
        threads=threads,
        streams=entities.read_streams(db),
        gpus=entities.read_gpus(db),
        **tables,
    )
    info.graph_trace_mode = metadata.infer_graph_mode(trace)
    metadata.describe_contents(db, trace)
    progress(1.0, "loaded")
    return trace


def _read_strings(db: ExportDatabase, warnings: list[str]) -> SymbolTable:
    if not db.has("StringIds"):
        return SymbolTable()
    if not {"id", "value"} <= set(db.columns("StringIds")):
        raise UnsupportedSchemaError(f"{db.path}: table StringIds lacks its id/value columns")
    rows = db.query("SELECT id, value FROM StringIds WHERE id >= 0 ORDER BY id")
    if not rows:
        return SymbolTable()
    limit = len(rows) + _MAX_STRING_ID_SLACK
    if rows[-1][0] >= limit:
        warnings.append("StringIds holds ids far outside its size; those strings were ignored")
        rows = [r for r in rows if r[0] < limit]
    if rows[-1][0] == len(rows) - 1:
        return SymbolTable([str(v) for _, v in rows])
    strings = [f"[unknown #{i}]" for i in range(rows[-1][0] + 1)]
    for string_id, value in rows:
        strings[string_id] = str(value)
    return SymbolTable(strings)


def _read_event_table(
    db: ExportDatabase,
    name: str,
    specs: dict[str, ColumnSpec],
    warnings: list[str],
    cancel: CancelToken | None,
) -> dict[str, np.ndarray]:
    table = db.resolve_table(name)
    if table is None:
        return {key: np.empty(0, dtype=spec.dtype) for key, spec in specs.items()}
    present = set(db.columns(table))
    missing = [c for c in schema.REQUIRED.get(name, ()) if c not in present]
    if name == schema.KERNEL and not present & set(schema.KERNEL_NAME_COLUMNS):
        missing.append("shortName/demangledName")
    if missing:
        raise UnsupportedSchemaError(f"{db.path}: table {table} lacks required column(s) {', '.join(missing)}")
    columns, notes = db.read_columns(table, specs, cancel=cancel)
    warnings.extend(notes)
    if name == schema.KERNEL:
        if "shortName" not in present:
            columns["short_name"] = columns["name"]
        elif "demangledName" not in present:
            columns["name"] = columns["short_name"]
    return columns


def _read_graph_tables(
    db: ExportDatabase, warnings: list[str], cancel: CancelToken | None
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Node creation events and graph/exec creation events; 2022.2 stored nodes as CUDA_GRAPH_EVENTS."""
    nodes = events = None
    for table in schema.GRAPH_NODE_TABLES:
        if nodes is None and "graphNodeId" in db.columns(table):
            nodes = _read_event_table(db, table, schema.GRAPH_NODE_COLUMNS, warnings, cancel)
    if "graphId" in db.columns(schema.GRAPH_EVENTS):
        events = _read_event_table(db, schema.GRAPH_EVENTS, schema.GRAPH_EVENT_COLUMNS, warnings, cancel)

    def empty(specs: dict[str, ColumnSpec]) -> dict[str, np.ndarray]:
        return {key: np.empty(0, dtype=spec.dtype) for key, spec in specs.items()}

    return nodes or empty(schema.GRAPH_NODE_COLUMNS), events or empty(schema.GRAPH_EVENT_COLUMNS)


def _attach_nvtx_text(db: ExportDatabase, nvtx: dict[str, np.ndarray], symbols: SymbolTable) -> None:
    """NVTX labels come from `text` (inline) or `textId`; intern the inline ones into `text`."""
    rowids = nvtx.pop("rowid")
    table = db.resolve_table(schema.NVTX)
    if table is None or "text" not in db.columns(table) or not len(rowids):
        return
    inline = db.query(f'SELECT rowid, text FROM "{table}" WHERE text IS NOT NULL')
    if not inline:
        return
    ids = np.fromiter((r[0] for r in inline), dtype=np.int64, count=len(inline))
    texts = np.fromiter((symbols.intern(str(r[1])) for r in inline), dtype=np.int32, count=len(inline))
    positions = np.searchsorted(rowids, ids)
    nvtx["text"][positions] = texts


def _check_rows(tables: dict[str, Table], symbols: SymbolTable, warnings: list[str]) -> None:
    """Warn about (and neutralise) damaged rows: negative durations and dangling string ids."""
    for key, table in tables.items():
        if not len(table):
            continue
        ends = table.end
        timed = ends >= 0 if key == "nvtx" else np.ones(len(ends), dtype=bool)
        negative = timed & (ends < table.start)
        if negative.any():
            warnings.append(f"{key}: {int(negative.sum())} rows end before they start; their durations count as 0")
            ends[negative] = table.start[negative]
        for column in ("name", "short_name", "text"):
            if column in table:
                ids = table[column]
                dangling = (ids >= 0) & ~symbols.valid(ids) if column == "text" else ~symbols.valid(ids)
                if len(symbols) and dangling.any():
                    warnings.append(f"{key}: {int(dangling.sum())} rows name strings that StringIds lacks")


def _sort_by_start(columns: dict[str, np.ndarray]) -> None:
    """Sort a table's columns by start in place, one column at a time (peak memory: one column).

    Nsight Systems writes rows in start order, so this is usually a cheap check.
    """
    start = columns["start"]
    if len(start) < 2 or bool(np.all(start[1:] >= start[:-1])):
        return
    order = np.argsort(start, kind="stable")
    for name in list(columns):
        columns[name] = columns[name][order]
