"""Load an Nsight Systems export (SQLite, or .nsys-rep through `nsys export`) into a `Trace`.

Only the columns a command needs are read up front (`tables.EAGER` plus what the caller
asks for); the others stay deferred in their tables and load on first use, in one pass per table.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from graphscope.core.bounds import clamp_durations
from graphscope.core.errors import NotAnExportError, UnsupportedSchemaError
from graphscope.core.events import CORRELATED
from graphscope.core.process import heap_only
from graphscope.core.progress import CancelToken, ProgressCallback, no_progress
from graphscope.core.rules import plural
from graphscope.core.symbols import SymbolTable, elide
from graphscope.core.table import Deferred, Table, narrowest
from graphscope.core.units import format_ns
from graphscope.trace import cache, entities, metadata, schema
from graphscope.trace.bulk import import_in_background, read_tables
from graphscope.trace.database import SQLITE_HEADER, ColumnSpec, ExportDatabase, as_int, check_regular_file, quoted
from graphscope.trace.model import ExportInfo, Trace
from graphscope.trace.tables import BY_KEY, CPU_KEYS, ENTITY_KEYS, KEYS
from graphscope.trace.window import Window, memory_budget_events, plan_window, rowid_ranges

_DENSE_SLACK = 4096  # ids up to 2 x the strings + this are kept as the file's (a list with a few holes)
_MAX_STRING = 1 << 16  # no real name is this long; a damaged or hostile file's would flood every view
GPU_KEYS = tuple(kind.table for kind in CORRELATED)
Columns = Mapping[str, Iterable[str]] | Literal["all"] | None


def load_trace(
    path: str | os.PathLike[str],
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    columns: Columns = None,
    window: Window | None = None,
) -> Trace:
    """Read an export; raise a `GraphscopeError` with a one-line reason if it is unusable.

    `columns` adds columns to read up front ({"kernels": ("name",)}), or "all" reads every column.
    `window` reads only the activity inside a time window (trace/window.py: files too large to hold).
    Damaged-but-readable content (dangling string ids, negative durations, wrongly typed values, rowid
    gaps) is loaded and described in `trace.info.warnings`.
    """
    path = Path(path)
    if path.suffix == ".nsys-rep":
        from graphscope.trace.nsysrep import export_to_sqlite

        path = export_to_sqlite(path, progress, cancel)
    progress(0.0, f"opening {path.name}")
    check_regular_file(path)
    kineto = is_kineto(path)
    entry = cache.open_entry(path) if window is None else None
    if entry is not None:
        try:
            return _from_cache(entry, path, columns, kineto)
        except (OSError, ValueError, KeyError, TypeError):  # a damaged entry: read the file, and cache it again
            cache.drop(entry.path)
    if kineto:  # a PyTorch-profiler trace: JSON (or gzip), not SQLite
        from graphscope.trace.kineto import load_kineto

        trace = load_kineto(path)
        if cache.enabled():
            cache.save_in_background(trace, {})
        return trace
    import_in_background()
    with ExportDatabase(path) as db:
        return _load(db, progress, cancel, columns, window)


def is_kineto(path: Path) -> bool:
    """`kineto_json.is_kineto`, with an SQLite file answered from its header: the JSON reader's module
    imports msgspec (18 ms of a cold summary's start-up), which an export never needs."""
    try:
        with open(path, "rb") as handle:
            if handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER:
                return False
    except OSError:
        return False
    from graphscope.trace.kineto_json import is_kineto as kineto_text

    return kineto_text(path)


def _from_cache(entry: cache.Entry, path: Path, columns: Columns, kineto: bool) -> Trace:
    """The trace from its cache entry: cached columns memory-mapped, the others deferred to the file
    (and added to the entry once read)."""
    parts = entry.trace_parts(path)
    info, symbols = parts["info"], parts["symbols"]
    tables = {}
    for key in KEYS:
        cached = entry.columns(key)
        reader = entry.reader(key)
        specs = BY_KEY[key].columns
        later = {n: specs[n] for n in reader["deferred"] if n in specs and n not in cached}
        deferred = None
        if later and reader["table"] and not kineto:

            def remember(loaded: dict[str, np.ndarray], key: str = key) -> None:
                cache.add_columns_in_background(entry.path, key, loaded)

            def group(names: dict[str, ColumnSpec], key: str = key, reader: dict = reader) -> Deferred:
                return _deferred(
                    path, key, reader["table"], names, reader["keep"], reader["order"], info.warnings, None,
                    symbols, remember,
                )  # fmt: skip

            asked = {n: spec for n, spec in later.items() if n in _eager_names(key, columns)}
            if asked:  # asked for up front, not cached yet: only those read now (a report's launch configuration:
                # the kernel table's other 10 deferred columns cost 0.8 s of CPU more at 1M), the rest later
                cached = {**cached, **group(asked).load()}
                later = {n: spec for n, spec in later.items() if n not in asked}
            deferred = group(later) if later else None
        tables[key] = Table(cached, deferred)
    entities_ = {key: parts[key] for key in ENTITY_KEYS}  # named apart from the event tables: each has its type
    return Trace(info=info, symbols=symbols, gpus=parts["gpus"], **entities_, **tables)


def load_for_view(
    path: str | os.PathLike[str],
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    window_start: int | None = None,
    max_events: int | None = None,
) -> tuple[Trace, Window | None]:
    """The trace a window shows, and the part of the file it holds: a file with more events than this
    machine's memory holds (`max_events`, by default trace/window.py's budget) is read a time window
    at a time, from `window_start`; None when the whole file was read."""
    path = Path(path)
    if path.suffix == ".nsys-rep":
        from graphscope.trace.nsysrep import export_to_sqlite

        path = export_to_sqlite(path, progress, cancel)
    check_regular_file(path)
    if is_kineto(path):  # held whole: a trace-event file has no windows to read
        return load_trace(path, progress, cancel), None
    with ExportDatabase(path) as db:
        window = plan_window(db, max_events or memory_budget_events(), window_start)
    return load_trace(path, progress, cancel, window=window), window


def _eager_names(key: str, columns: Columns) -> set[str]:
    specs = BY_KEY[key].columns
    eager = BY_KEY[key].eager
    if columns == "all" or eager is None:
        return set(specs)
    extra = set(columns.get(key, ())) if isinstance(columns, Mapping) else set()
    return {*eager, *extra} & set(specs)


def _table_of(db: ExportDatabase, key: str) -> str | None:
    """The file's table for a key; the graph-node table had another name in 2022.2."""
    if key == "graph_nodes":
        found = (db.resolve_table(t) for t in schema.GRAPH_NODE_TABLES if db.has_columns(t, "graphNodeId"))
        return next(found, None)
    if key == "graph_events":
        return db.resolve_table(schema.GRAPH_EVENTS) if db.has_columns(schema.GRAPH_EVENTS, "graphId") else None
    return db.resolve_table(BY_KEY[key].export)


def _check_required(db: ExportDatabase, key: str, table: str) -> None:
    name = BY_KEY[key].export
    missing = [c for c in schema.REQUIRED.get(name, ()) if db.column(table, c) is None]
    if key == "kernels" and not any(db.column(table, c) for c in schema.KERNEL_NAME_COLUMNS):
        missing.append("shortName/demangledName")
    if missing:
        raise UnsupportedSchemaError(f"{db.path}: table {table} lacks required column(s) {', '.join(missing)}")


@dataclass
class ExportParts:
    """What is read of an export once, whatever part of its events is read: its description, its strings
    and the file's table for each key of `KEYS` (None where it lacks one)."""

    info: ExportInfo
    symbols: SymbolTable
    tables: dict[str, str | None]


def describe_export(db: ExportDatabase) -> ExportParts:
    """The export's description, strings and tables; raise when it is not an export or lacks a required column."""
    if not any(db.resolve_table(t) for t in (schema.RUNTIME, schema.KERNEL, schema.NVTX, "StringIds")):
        raise NotAnExportError(
            f"{db.path}: an SQLite database, but not an Nsight Systems export (no StringIds, CUDA or NVTX tables)"
        )
    info = metadata.read_export_info(db)
    info.warnings.extend(db.notes)
    symbols = _read_strings(db, info.warnings)
    tables = {key: _table_of(db, key) for key in KEYS}
    for key, table in tables.items():
        if table is not None:
            _check_required(db, key, table)
    return ExportParts(info, symbols, tables)


def _load(
    db: ExportDatabase,
    progress: ProgressCallback,
    cancel: CancelToken | None,
    columns: Columns,
    window: Window | None = None,
) -> Trace:
    parts = describe_export(db)
    rowids = rowid_ranges(db, window) if window is not None else None
    if window is not None:
        parts.info.window = window.to_json()
        parts.info.warnings.append(
            f"read a window of the file: {window.events:,} of its {window.total:,} events, from "
            f"{format_ns(window.start - window.first)} to {format_ns(window.end - window.first)} of "
            f"{format_ns(window.last - window.first)} (the whole file does not fit in memory here)"
        )
    trace, readers = read_events(db, parts, progress, cancel, columns, rowids)
    if window is None and cache.enabled():  # written beside the caller's own work (a forked process)
        cache.save_in_background(trace, readers)
    progress(1.0, "loaded")
    return trace


def read_events(
    db: ExportDatabase,
    parts: ExportParts,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    columns: Columns = None,
    rowids: Mapping[str, tuple[int, int]] | None = None,
    keys: Iterable[str] = KEYS,
    lean: bool = False,
) -> tuple[Trace, dict[str, dict]]:
    """The events of the tables `keys` (the others empty), or of their rows in `rowids` ({key: (low, high)}),
    as a `Trace`; and for each table how it was read (the cache keeps it). `lean`: read with `sqlite3` alone
    (`bulk.read_tables`)."""
    info, symbols = parts.info, parts.symbols
    wanted = set(keys)
    tables = {key: table if key in wanted else None for key, table in parts.tables.items()}
    eager = {key: _eager_names(key, columns) for key in KEYS}
    specs = {key: schema.in_file(db.columns(t) if (t := tables[key]) else [], BY_KEY[key].columns) for key in KEYS}
    requests = {key: (tables[key], {n: s for n, s in specs[key].items() if n in eager[key]}) for key in KEYS}

    def finish(key: str, columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        translate_names(key, columns, symbols, info.warnings)
        return columns if key == "nvtx" else schema.narrow_ids(columns)  # NVTX text is interned below

    reads = read_tables(
        db, requests, cancel, lambda f, m: progress(0.05 + 0.8 * f, m), rowids=rowids, finish=finish, lean=lean
    )
    for read in reads.values():
        info.warnings.extend(w for w in read.warnings if w not in info.warnings)
    raw = {key: reads.pop(key).columns for key in list(reads)}
    with heap_only():  # the linking's temporaries: reused, not fresh pages (core/process.py)
        progress(0.9, "linking processes and threads")

        keep: dict[str, np.ndarray | None] = dict.fromkeys(KEYS)
        backtrace = raw["api"]["event_class"] == schema.BACKTRACE_EVENT_CLASS
        info.backtrace_duplicates += int(backtrace.sum())
        if backtrace.any():
            keep["api"] = ~backtrace
            raw["api"] = {name: column[~backtrace] for name, column in raw["api"].items()}
        _attach_nvtx_text(db, tables["nvtx"], raw["nvtx"], symbols)  # interns strings: ids may grow
        raw["nvtx"] = schema.narrow_ids(raw["nvtx"])

        all_tids = np.concatenate([entities.distinct(raw[k]["global_tid"]) for k in CPU_KEYS])
        all_pids = np.concatenate([entities.distinct(raw[k]["global_pid"]) for k in GPU_KEYS])
        process_keys = entities.process_key(np.concatenate([all_tids, all_pids]))
        processes = entities.build_processes(db, symbols, process_keys, info.warnings)
        threads = entities.build_threads(db, symbols, all_tids, processes)

        order = {key: _sort_by_start(columns) for key, columns in raw.items()}
        _check_rows(raw, symbols, info.warnings)
        result: dict[str, Table] = {}
        for key in KEYS:
            columns = raw[key]
            if key in CPU_KEYS:
                global_tid = columns.pop("global_tid")
                columns["thread"] = entities.index_of(threads.global_tid, global_tid)
                columns["process"] = threads.process[columns["thread"]] if len(global_tid) else np.empty(0, np.int32)
            else:
                columns["process"] = entities.process_index(processes.key, columns.pop("global_pid"))
            for name in columns.keys() & {"process", "thread"}:  # the other ids were narrowed as they were read
                columns[name] = narrowest(columns[name])
            later = {n: s for n, s in specs[key].items() if n not in eager[key]}
            limit = (rowids or {}).get(key)
            deferred = (
                _deferred(db.path, key, tables[key], later, keep[key], order[key], info.warnings, limit, symbols)
                if later
                else None
            )
            result[key] = Table(columns, deferred)

        trace = Trace(
            info=info,
            symbols=symbols,
            processes=processes,
            threads=threads,
            streams=entities.read_streams(db, info.warnings),
            gpus=entities.read_gpus(db, info.warnings),
            **result,
        )
        info.graph_trace_mode = metadata.infer_graph_mode(trace)
        metadata.describe_contents(db, trace)
    return trace, {k: {"table": tables[k], "keep": keep[k], "order": order[k]} for k in KEYS}


def _deferred(
    path: Path,
    key: str,
    table: str | None,
    specs: dict[str, ColumnSpec],
    keep: np.ndarray | None,
    order: np.ndarray | None,
    warnings: list[str],
    rowids: tuple[int, int] | None = None,
    symbols: SymbolTable | None = None,
    after: Callable[[dict[str, np.ndarray]], None] | None = None,
) -> Deferred:
    """Columns read on first use, in one pass, filtered, translated and ordered as the eager ones were;
    `after` hears of them once read (the cache keeps them)."""

    def load() -> dict[str, np.ndarray]:
        with ExportDatabase(path) as db:
            read = read_tables(db, {key: (table, specs)}, rowids={key: rowids} if rowids else None)[key]
        warnings.extend(w for w in read.warnings if w not in warnings)
        columns = read.columns
        if symbols is not None:
            translate_names(key, columns, symbols, warnings)
        if keep is not None:
            columns = {name: array[keep] for name, array in columns.items()}
        if order is not None:
            columns = {name: array[order] for name, array in columns.items()}
        columns = schema.narrow_ids(columns)
        if after is not None:
            after(columns)
        return columns

    return Deferred(tuple(specs), load)


def translate_names(key: str, columns: dict[str, np.ndarray], symbols: SymbolTable, warnings: list[str]) -> None:
    """Name columns from the file's StringIds ids to the symbol table's (a no-op for dense ids)."""
    if symbols.file_ids is None:
        return
    for name, spec in BY_KEY[key].columns.items():
        if spec.symbol and name in columns:
            columns[name], missing = symbols.from_file(columns[name])
            if missing:
                note = f"{key}: {missing} rows name strings that StringIds lacks"
                if note not in warnings:
                    warnings.append(note)


def _read_strings(db: ExportDatabase, warnings: list[str]) -> SymbolTable:
    if not db.has("StringIds"):
        return SymbolTable()
    if not db.has_columns("StringIds", "id", "value"):
        raise UnsupportedSchemaError(f"{db.path}: table StringIds lacks its id/value columns")
    rows, skipped, cut = [], 0, 0
    for raw_id, value in db.select("StringIds", ("id", "value")):
        string_id = as_int(raw_id)
        if string_id is None or string_id < 0 or value is None:
            skipped += 1
            continue
        text = str(value)
        if len(text) > _MAX_STRING:
            text, cut = elide(text, _MAX_STRING), cut + 1
        rows.append((string_id, text))
    if skipped:
        warnings.append(f"StringIds: {skipped} rows without a usable id or text were ignored")
    if cut:
        warnings.append(
            f"StringIds: {plural(cut, 'string')} longer than {_MAX_STRING:,} characters "
            f"{'was' if cut == 1 else 'were'} cut short"
        )
    if not rows:
        return SymbolTable()
    rows.sort()
    if rows[-1][0] >= 2 * len(rows) + _DENSE_SLACK:  # sparse ids (a trimmed or renumbered export)
        file_ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        keep = np.r_[True, file_ids[1:] != file_ids[:-1]]  # a repeated id: its first string
        texts = [r[1] for r, kept in zip(rows, keep.tolist()) if kept]
        return SymbolTable(texts, file_ids[keep])
    if rows[-1][0] == len(rows) - 1:
        return SymbolTable([v for _, v in rows])
    strings = [f"[unknown #{i}]" for i in range(rows[-1][0] + 1)]
    for string_id, value in rows:
        strings[string_id] = value
    return SymbolTable(strings)


def _attach_nvtx_text(db: ExportDatabase, table: str | None, nvtx: dict[str, np.ndarray], symbols: SymbolTable) -> None:
    """NVTX labels come from `text` (inline) or `textId`; intern the inline ones into `text`."""
    rowids = nvtx.pop("rowid")
    if table is None or not len(rowids):
        return
    text = db.column(table, "text")
    alias = db.rowid_alias(table)
    if text is None or alias is None:
        return
    inline = db.query(f"SELECT {alias}, {quoted(text)} FROM {quoted(table)} WHERE {quoted(text)} IS NOT NULL")
    if not inline:
        return
    ids = np.fromiter((as_int(r[0]) or 0 for r in inline), dtype=np.int64, count=len(inline))
    texts = np.fromiter((symbols.intern(str(r[1])) for r in inline), dtype=np.int32, count=len(inline))
    positions = np.minimum(np.searchsorted(rowids, ids), len(rowids) - 1)
    found = rowids[positions] == ids
    nvtx["text"][positions[found]] = texts[found]


def _check_rows(raw: dict[str, dict[str, np.ndarray]], symbols: SymbolTable, warnings: list[str]) -> None:
    """Warn about (and neutralise) damaged rows: negative or day-long durations and dangling string ids.

    Only columns already read are checked: deferred ones are never forced in here.
    """
    for key, columns in raw.items():
        start, ends = columns.get("start"), columns.get("end")
        if start is None or ends is None or not len(start):
            continue
        clamp_durations(key, start, ends, warnings, ranges=key == "nvtx")  # negative or over a day: 0
        for column in ("name", "short_name", "text"):
            ids = columns.get(column)
            if ids is not None and len(symbols) and not symbols.all_valid(ids):
                dangling = (ids >= 0) & ~symbols.valid(ids) if column == "text" else ~symbols.valid(ids)
                if dangling.any():
                    warnings.append(f"{key}: {int(dangling.sum())} rows name strings that StringIds lacks")


def _sort_by_start(columns: dict[str, np.ndarray]) -> np.ndarray | None:
    """Sort a table's columns by start in place, one column at a time (peak memory: one column).

    Returns the order applied (None when the rows were already in start order, the usual case:
    Nsight Systems writes rows in start order).
    """
    start = columns["start"]
    if len(start) < 2 or bool(np.all(start[1:] >= start[:-1])):
        return None
    order = np.argsort(start, kind="stable")
    for name in list(columns):
        columns[name] = columns[name][order]
    return order
