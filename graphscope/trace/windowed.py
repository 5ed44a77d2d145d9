"""An Nsight Systems export read a window of time at a time, for writers that stream what they read (the
Perfetto export): each window is a `Trace` read by the reader's own rules (ids linked, names translated,
damaged rows neutralised, rows sorted), and is let go before the next one is read, so memory follows the
window, not the file.

Reads are lean (`sqlite3` on one thread, `bulk.read_tables`): loading connectorx adds 16 MB resident (its
compiled module is 180 MB on disk) to a process that holds a few MB of events at a time. The description
and strings are read once (each window's small tables, GPUs and streams, with it); NVTX ranges (read
whole, as in any window of the reader) come with the first window.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from graphscope.core.events import GPU_WORK
from graphscope.core.symbols import SymbolTable
from graphscope.core.table import Table
from graphscope.trace import entities
from graphscope.trace.bulk import read_tables, resolve_sources
from graphscope.trace.database import ExportDatabase, check_regular_file, quoted
from graphscope.trace.model import GpuInfo, Trace
from graphscope.trace.reader import describe_export, read_events, translate_names
from graphscope.trace.tables import BY_KEY
from graphscope.trace.window import consecutive_windows

ACTIVITY_KEYS = ("api", *(kind.table for kind in GPU_WORK))
"""The tables a windowed read returns: CUDA calls and everything that occupies a GPU stream."""


class WindowedExport:
    """An export opened for reading by windows (`windows`: each window's rowid ranges, `rows`: each activity
    table's row count). `windows` is None when one of its activity tables cannot be windowed (a table
    without rowids, or without starts); such a file is read whole instead."""

    def __init__(self, path: str | os.PathLike[str], events_per_window: int) -> None:
        self.path = Path(path)
        check_regular_file(self.path)
        self._db = ExportDatabase(self.path)
        try:
            self.parts = describe_export(self._db)
            planned = consecutive_windows(self._db, events_per_window)
            self.windows: list[dict[str, tuple[int, int]]] | None = planned[0] if planned is not None else None
            self.rows: dict[str, int] = planned[1] if planned is not None else {}
        except BaseException:
            self._db.close()
            raise

    def __enter__(self) -> WindowedExport:
        return self

    def __exit__(self, *exc: object) -> None:
        self._db.close()

    @property
    def symbols(self) -> SymbolTable:
        return self.parts.symbols

    def origin(self) -> int:
        """The first start of any event of the file (0 for a file without events): the time every window's
        timestamps count from, as `Trace.span` does for a whole trace."""
        starts = [self._extreme(key, "start", "min") for key in (*ACTIVITY_KEYS, "nvtx")]
        return min((start for start in starts if start is not None), default=0)

    def _extreme(self, key: str, name: str, which: str) -> int | None:
        """min or max of a column (`tables.BY_KEY`' name) of one table; None when it has no integer one."""
        table = self.parts.tables.get(key)
        if table is None:
            return None
        column = resolve_sources(self._db, table, {name: BY_KEY[key].columns[name]})[name]
        if column is None:
            return None
        value = self._db.query(f"SELECT {which}({quoted(column)}) FROM {quoted(table)}")[0][0]
        return value if isinstance(value, int) else None

    def columns(self, key: str, names: Iterable[str]) -> Iterator[dict[str, np.ndarray]]:
        """Window by window, some columns of one table as the file holds them (string ids translated to the
        symbol table's; no rows dropped or sorted): for a pass over a whole table that keeps little."""
        table = self.parts.tables[key]
        specs = {name: BY_KEY[key].columns[name] for name in names}
        for ranges in self.windows or []:
            if table is None or key not in ranges:
                continue
            read = read_tables(self._db, {key: (table, specs)}, rowids={key: ranges[key]}, lean=True)[key]
            translate_names(key, read.columns, self.symbols, self.parts.info.warnings)
            yield read.columns

    def traces(self) -> Iterator[Trace]:
        """Each window's activity (`ACTIVITY_KEYS`) as a trace of its own, in time order; the first also
        holds the file's NVTX ranges. Process and thread indices are each window's own."""
        for number, ranges in enumerate(self.windows or []):
            keys = (*ACTIVITY_KEYS, "nvtx") if number == 0 else ACTIVITY_KEYS
            info = self.parts.info  # a window's own account of what it holds and lacks
            mine = dataclasses.replace(info, warnings=list(info.warnings), lacks=list(info.lacks), holds={})
            trace, _ = read_events(
                self._db, dataclasses.replace(self.parts, info=mine), rowids=ranges, keys=keys, lean=True
            )
            yield trace

    def processes_and_threads(self, global_tids: np.ndarray, global_pids: np.ndarray) -> tuple[Table, Table]:
        """The processes and threads (as `Trace.processes` and `Trace.threads`) of these globalTid and
        globalPid values, with their names."""
        keys = entities.process_key(np.concatenate([global_tids, global_pids]))
        processes = entities.build_processes(self._db, self.symbols, keys, self.parts.info.warnings)
        return processes, entities.build_threads(self._db, self.symbols, global_tids, processes)

    def gpus(self) -> list[GpuInfo]:
        return entities.read_gpus(self._db, self.parts.info.warnings)
