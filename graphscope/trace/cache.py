"""A columnar cache of what graphscope read from a trace, so a second open costs a memory map.

One entry per file in the user's cache folder (never beside the file): a folder named by a hash of the
file's resolved path, size, modification time and `CACHE_VERSION`, holding `manifest.json` (the export
info, GPUs, strings, and per table the columns cached and what the SQLite reader needs to read the
rest) and one NumPy `.npy` file per column, memory-mapped read-only on reopen. Columns a later command
reads from the file (deferred ones) are added to the entry as they load. The folder is bounded
(`GRAPHSCOPE_CACHE_BYTES`, default 8 GiB; least recently used entries go first); a damaged entry is
removed and the file read again; `GRAPHSCOPE_NO_CACHE=1` (the CLI's `--no-cache`) turns it off.

NumPy's own format rather than Arrow IPC: the columns are NumPy arrays already, `np.load(mmap_mode="r")`
maps them back with no conversion and their dtypes round-trip exactly; pyarrow's IPC reader gives the
same memory maps but costs its import (measured: 0.12 s in a fresh process, 0.03 s after NumPy).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from graphscope.core.answer_cache import code_version, enabled, file_key, writes_held
from graphscope.core.settings import cache_dir
from graphscope.core.symbols import SymbolTable
from graphscope.core.table import Table
from graphscope.trace.model import ExportInfo, GpuInfo, Trace

CACHE_VERSION = 1
"""Bump when the readers' columns or their meaning change; entries are also keyed by the reader's own
sources (answer_cache.code_version), so an edited or upgraded reader misses and old entries age out."""
BUDGET_ENV = "GRAPHSCOPE_CACHE_BYTES"
DEFAULT_BUDGET = 8 << 30
EVENT_TABLES = ("api", "kernels", "memcpy", "memset", "sync", "graph_launches", "nvtx", "graph_nodes", "graph_events")
SMALL_TABLES = ("processes", "threads", "streams")
_writing = threading.Lock()  # one writer per process: entries are written whole or not at all
_evicted = False
_held: list[Callable[[], Any]] = []  # writes held until the command is done (answer_cache.writes_held)


def folder() -> Path:
    return cache_dir() / "traces"


def entry_for(path: Path) -> Path:
    """The entry folder of a file as it is now (its size and modification time are in the name)."""
    return folder() / file_key(path, f"{CACHE_VERSION}:{code_version('core', 'trace')}")


def _info_json(info: ExportInfo) -> dict[str, Any]:
    data = dataclasses.asdict(info)
    data["path"] = str(info.path)
    return data


def save(trace: Trace, readers: dict[str, dict[str, Any]]) -> Path | None:
    """Write `trace` (every column it holds now) as the entry of its file; `readers[key]` says how the SQLite
    reader reads a table's other columns ({"table", "keep", "order"}, arrays or None). None when the
    trace cannot be cached (an object column) or the cache folder cannot be written."""
    try:
        entry = entry_for(trace.path)
    except OSError:
        return None
    if (entry / "manifest.json").exists():
        return entry
    tables = {key: getattr(trace, key) for key in (*EVENT_TABLES, *SMALL_TABLES)}
    if any(table._columns[c].dtype == object for table in tables.values() for c in table._columns):
        return None
    partial = entry.with_name(entry.name + f".{os.getpid()}.partial")
    with _writing:
        try:
            partial.mkdir(parents=True, exist_ok=True)
            manifest: dict[str, Any] = {"version": CACHE_VERSION, "tables": {}}
            for key, table in tables.items():
                for name, array in table._columns.items():
                    np.save(partial / f"{key}.{name}.npy", np.ascontiguousarray(array), allow_pickle=False)
                reader = dict(readers.get(key, {}))
                for part in ("keep", "order"):
                    if reader.get(part) is not None:
                        np.save(partial / f"{key}.__{part}.npy", reader[part], allow_pickle=False)
                        reader[part] = True
                reader["deferred"] = [n for n in reader.get("deferred", ()) if n not in table._columns]
                manifest["tables"][key] = {"columns": list(table._columns), "length": len(table), **reader}
            manifest["info"] = _info_json(trace.info)
            manifest["gpus"] = [dataclasses.asdict(g) for g in trace.gpus]
            manifest["strings"] = [trace.symbols.name(i) for i in range(len(trace.symbols))]
            if trace.symbols.file_ids is not None:
                np.save(partial / "__file_ids.npy", trace.symbols.file_ids, allow_pickle=False)
            (partial / "manifest.json").write_text(json.dumps(manifest))
            os.replace(partial, entry)
        except OSError:  # a full disk, a read-only home: the cache is an optimisation, never an error
            shutil.rmtree(partial, ignore_errors=True)
            return None
    global _evicted
    if not _evicted:  # once a process, as the walk stats every file: one process's entries may pass the budget
        _evicted = True
        evict(budget())
    return entry


def save_in_background(trace: Trace, readers: dict[str, dict[str, Any]]) -> None:
    """`save` of the columns the trace holds now, beside the caller's work (`_write_later`)."""
    snapshot = dataclasses.replace(
        trace, **{key: Table(dict(getattr(trace, key)._columns)) for key in (*EVENT_TABLES, *SMALL_TABLES)}
    )
    if writes_held():  # written once the command is done: the columns then must be the ones read (the analysis
        # never writes them: a warm open maps them read-only)
        for table in (getattr(snapshot, key) for key in (*EVENT_TABLES, *SMALL_TABLES)):
            for array in table._columns.values():
                array.setflags(write=False)
    for key in EVENT_TABLES:  # what the file still holds for each table: read on a cached open when asked
        if key in readers:
            readers[key] = {**readers[key], "deferred": list(getattr(trace, key).deferred)}
    _write_later(lambda: save(snapshot, readers))


def _write_later(work: Callable[[], Any]) -> None:
    """A write on a writer thread now (the window's process: forking it, 2 GB at 10M + 10M, froze its
    frames for 20-24 ms), or in a detached process once the command is done where the process holds its
    writes: a writer forked while a summary's analysis ran made each page the analysis then wrote a
    copy-on-write fault and shared the two cores with it (1M kernels: the cold summary 0.95 s against
    0.78 s without the cache, 8 interleaved rounds); forked once it answered, the copies never happen."""
    if writes_held():
        _held.append(work)
    else:
        write_beside(work)


_writers: list[threading.Thread] = []


def write_beside(work: Any) -> None:
    """Run a cache writer on a thread of its own that the process waits for before it exits
    (`wait_for_writers`): a thread started from a pool thread would otherwise be a daemon, killed
    mid-write when the window closes."""
    writer = threading.Thread(target=work, name="graphscope-cache", daemon=False)
    _writers[:] = [w for w in _writers if w.is_alive()]
    _writers.append(writer)
    writer.start()


def start_held_writes() -> None:
    """Start the writes held until now, in one detached process and in order (an entry before the
    columns added to it); the command line calls this once its command is done."""
    held = _held[:]
    _held.clear()
    if held:

        def write_all() -> None:
            for work in held:
                work()

        if not detached(write_all):
            write_beside(write_all)


def wait_for_writers(timeout: float = 60.0) -> None:
    """Let the cache writer threads still running finish (the command line calls this before it exits)."""
    for writer in list(_writers):
        writer.join(timeout)


def detached(work: Any) -> bool:
    """Run `work` in a grandchild process (no zombie, no terminal: it holds none of the caller's pipes
    open, so `graphscope summary | head` ends at once); False where the system cannot fork or it failed."""
    import warnings

    if not hasattr(os, "fork"):
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # forking with threads: the child only writes
            child = os.fork()
    except OSError:
        return False
    if child:
        os.waitpid(child, 0)  # the child forks again and exits at once
        return True
    try:
        if os.fork() == 0:
            global _writing
            _writing = threading.Lock()  # another thread may have held it at the fork: it never lets go here
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            try:  # the command it was forked from goes first: at 10M + 10M on two cores, the writer at the
                os.nice(19)  # same priority made the cold summary 1.17x the uncached one
                work()
            finally:
                os._exit(0)
    finally:
        os._exit(0)


def add_columns_in_background(entry: Path, key: str, columns: dict[str, np.ndarray]) -> None:
    columns = dict(columns)
    _write_later(lambda: add_columns(entry, key, columns))


def add_columns(entry: Path, key: str, columns: dict[str, np.ndarray]) -> None:
    """Columns read later from the file (deferred ones) join the entry, for the next open."""
    with _writing:
        try:
            manifest_path = entry / "manifest.json"
            manifest = json.loads(manifest_path.read_text())
            table = manifest["tables"][key]
            new = [n for n in columns if n not in table["columns"] and columns[n].dtype != object]
            for name in new:
                np.save(entry / f"{key}.{name}.npy", np.ascontiguousarray(columns[name]), allow_pickle=False)
            table["columns"] += new
            table["deferred"] = [n for n in table.get("deferred", ()) if n not in table["columns"]]
            temporary = manifest_path.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_text(json.dumps(manifest))
            os.replace(temporary, manifest_path)
        except (OSError, ValueError, KeyError):
            return


class Entry:
    """An entry opened for reading: columns memory-mapped, what the reader needs for the rest."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.manifest = json.loads((path / "manifest.json").read_text())
        if self.manifest.get("version") != CACHE_VERSION:
            raise ValueError("another cache version")
        os.utime(path / "manifest.json")  # least recently used: this one was just used

    def columns(self, key: str) -> dict[str, np.ndarray]:
        table = self.manifest["tables"][key]
        loaded = {name: np.load(self.path / f"{key}.{name}.npy", mmap_mode="r") for name in table["columns"]}
        if any(len(a) != table["length"] or a.ndim != 1 for a in loaded.values()):
            raise ValueError(f"{key}: a cached column has the wrong length")
        return loaded

    def reader(self, key: str) -> dict[str, Any]:
        table = self.manifest["tables"][key]
        found = {"table": table.get("table"), "deferred": list(table.get("deferred", ()))}
        for part in ("keep", "order"):
            found[part] = np.load(self.path / f"{key}.__{part}.npy") if table.get(part) else None
        return found

    def trace_parts(self, path: Path) -> dict[str, Any]:
        """Everything of a Trace but the event tables: info (with `path`, the file as opened now: the
        entry may have been written from another folder), symbols, GPUs and the small tables."""
        manifest = self.manifest
        info = ExportInfo(**{**manifest["info"], "path": Path(path)})
        file_ids = np.load(self.path / "__file_ids.npy") if (self.path / "__file_ids.npy").exists() else None
        symbols = SymbolTable(manifest["strings"], file_ids)
        small = {key: Table(self.columns(key)) for key in SMALL_TABLES}
        return {"info": info, "symbols": symbols, "gpus": [GpuInfo(**g) for g in manifest["gpus"]], **small}


def open_entry(path: Path) -> Entry | None:
    """The file's entry, or None (no entry, caching off, or a damaged entry, which is removed)."""
    if not enabled():
        return None
    try:
        entry = entry_for(path)
    except OSError:  # no cache folder can be made (a read-only home): read the file, as without a cache
        return None
    if not (entry / "manifest.json").exists():
        return None
    try:
        return Entry(entry)
    except (OSError, ValueError, KeyError, TypeError):
        shutil.rmtree(entry, ignore_errors=True)
        return None


def drop(entry: Path) -> None:
    """Remove an entry that turned out damaged (it is rebuilt by the next read of the file)."""
    shutil.rmtree(entry, ignore_errors=True)


def budget() -> int:
    try:
        return int(os.environ.get(BUDGET_ENV, DEFAULT_BUDGET))
    except ValueError:
        return DEFAULT_BUDGET


def evict(limit: int) -> None:
    """Remove least recently used entries until the folder holds at most `limit` bytes."""
    root = folder()
    entries = []
    answers = cache_dir() / "answers"
    for answer in answers.iterdir() if answers.is_dir() else ():
        try:
            entries.append((answer.stat().st_mtime, answer.stat().st_size, answer))
        except OSError:
            continue
    for entry in root.iterdir() if root.is_dir() else ():
        manifest = entry / "manifest.json"
        try:
            if entry.name.endswith(".partial"):
                if time.time() - entry.stat().st_mtime > 3600:  # a writer that died
                    shutil.rmtree(entry, ignore_errors=True)
                continue
            size = sum(f.stat().st_size for f in entry.iterdir())
            entries.append((manifest.stat().st_mtime if manifest.exists() else 0.0, size, entry))
        except OSError:
            continue
    total = sum(size for _, size, _ in entries)
    for _, size, entry in sorted(entries, key=lambda e: e[0]):
        if total <= limit:
            break
        if entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        total -= size
