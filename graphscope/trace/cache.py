"""A columnar cache of what graphscope read from a trace, so a second open costs a memory map.

One entry per file in the user's cache folder (never beside the file): a folder named by the file's
identity (core/cache_files.py: path, device, inode, size, times in ns, a hash of its first and last
blocks) and `CACHE_VERSION`, holding `manifest.json` (the export info, GPUs, strings, per table the
columns cached and what the SQLite reader needs to read the rest, and per `.npy` file its size, a
digest of its size and header and the 64-bit sum of its data; the manifest carries a digest
of itself) and one NumPy `.npy` file per column, memory-mapped read-only on reopen. Columns a later
command reads from the file (deferred ones) are added to the entry as they load. The folder is bounded
(`GRAPHSCOPE_CACHE_BYTES`, default 8 GiB; least recently used entries go first); a damaged entry is
removed and the file read again; `GRAPHSCOPE_NO_CACHE=1` (the CLI's `--no-cache`) turns it off.

Every column is verified as it is mapped: its file's size and a digest of its header (a truncated or
garbled file), and the sum of its data as 64-bit words, which any single flipped bit changes (a pass at
memory speed: 4 ms for an 80 MB column where BLAKE2b took 84 ms; benchmarks/cache_verify.py). Files
are opened without following symlinks; every write is beside-and-rename.

NumPy's own format rather than Arrow IPC: the columns are NumPy arrays already, mapping them back needs
no conversion and their dtypes round-trip exactly; pyarrow's IPC reader gives the same memory maps but
costs its import (measured: 0.12 s in a fresh process, 0.03 s after NumPy).
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
from typing import Any, Literal

import numpy as np

from graphscope.core.answer_cache import code_version, enabled, file_key, register_writer, writes_held
from graphscope.core.cache_files import (
    DamagedEntry,
    head_digest,
    make_private_folder,
    open_regular,
    read_checked,
    write_checked,
    write_file,
)
from graphscope.core.settings import cache_dir, cache_subfolder
from graphscope.core.symbols import SymbolTable
from graphscope.core.table import Table
from graphscope.trace.model import ExportInfo, GpuInfo, Trace
from graphscope.trace.tables import ENTITY_KEYS, KEYS

CACHE_VERSION = 2
"""Bump when the readers' columns or their meaning change; entries are also keyed by the reader's own
sources (answer_cache.code_version), so an edited or upgraded reader misses and old entries age out.
2: the file's identity (inode, ctime, content hash) and verified columns."""
BUDGET_ENV = "GRAPHSCOPE_CACHE_BYTES"
DEFAULT_BUDGET = 8 << 30
_writing = threading.Lock()  # one writer per process: entries are written whole or not at all
_evicted = False
_held: list[Callable[[], Any]] = []  # writes held until the command is done (answer_cache.writes_held)
_opened: dict[str, Path] = {}  # a file's entry as it was when its read began (`open_entry`)


def folder() -> Path:
    return cache_subfolder("traces")


def entry_for(path: Path) -> Path:
    """The entry folder of a file as it is now (its identity is the folder's name)."""
    return folder() / file_key(path, f"{CACHE_VERSION}:{code_version('core', 'trace')}")


def _info_json(info: ExportInfo) -> dict[str, Any]:
    data = dataclasses.asdict(info)
    data["path"] = str(info.path)
    return data


def content_sum(array: np.ndarray) -> int:
    """The sum of an array's bytes as little-endian 64-bit words (the tail's bytes added singly), modulo
    2**64: any single flipped bit changes it."""
    data = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    whole = len(data) // 8 * 8
    total = np.add.reduce(data[:whole].view("<u8"), dtype=np.uint64) if whole else np.uint64(0)
    tail = np.add.reduce(data[whole:], dtype=np.uint64) if whole < len(data) else np.uint64(0)
    return int(total) + int(tail) & ((1 << 64) - 1)


def save_array(where: Path, array: np.ndarray) -> dict[str, Any]:
    """Write `array` as a `.npy` file (beside and renamed, 0600) and return its record for the manifest."""
    array = np.ascontiguousarray(array)
    if array.dtype.hasobject:
        raise TypeError("an object array is never cached")
    record: dict[str, Any] = {"sum": content_sum(array)}

    def write(file) -> None:
        np.save(file, array, allow_pickle=False)
        file.flush()
        record["size"] = file.tell()
        record["head"] = head_digest(file.fileno(), record["size"])

    write_file(where, write)
    return record


def load_array(where: Path, record: dict[str, Any], mode: Literal["r", "c"] = "r") -> np.ndarray:
    """A `.npy` file written by `save_array`, memory-mapped (`mode` "r" or copy-on-write "c"), verified
    against its record: a symlink, another size, a changed header, an object dtype or
    another sum of its data raise DamagedEntry."""
    fd = open_regular(where)
    with os.fdopen(fd, "rb", buffering=0) as file:  # a header's few reads; the data is mapped
        size = os.fstat(fd).st_size
        if size != record["size"] or head_digest(fd, size) != record["head"]:
            raise DamagedEntry(f"{where}: changed since it was written")
        version = np.lib.format.read_magic(file)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(file)
        else:
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(file)
        count = int(np.prod(shape, dtype=np.int64))
        if dtype.hasobject or fortran or file.tell() + count * dtype.itemsize != size:
            raise DamagedEntry(f"{where}: not the array that was written")
        if count == 0:
            array = np.empty(shape, dtype)
            array.setflags(write=mode == "c")
        else:
            array = np.memmap(file, dtype=dtype, mode=mode, offset=file.tell(), shape=shape)
    if content_sum(array) != record["sum"]:
        raise DamagedEntry(f"{where}: its data changed since it was written")
    return array


def read_manifest(entry: Path) -> dict[str, Any]:
    """An entry's manifest, checked against its digest (DamagedEntry when not whole and unchanged)."""
    manifest = json.loads(read_checked(entry / "manifest.json"))
    if not isinstance(manifest, dict):
        raise DamagedEntry(f"{entry}: a manifest that is not an object")
    return manifest


def new_partial(entry: Path) -> Path:
    """A fresh 0700 folder beside `entry` that no other writer (process or thread) uses."""
    make_private_folder(entry.parent)
    partial = entry.with_name(f"{entry.name}.{os.getpid()}.{threading.get_ident()}.{time.monotonic_ns()}.partial")
    partial.mkdir(mode=0o700)
    return partial


def save(trace: Trace, readers: dict[str, dict[str, Any]]) -> Path | None:
    """Write `trace` (every column it holds now) as the entry of its file; `readers[key]` says how the SQLite
    reader reads a table's other columns ({"table", "keep", "order"}, arrays or None). None when the
    trace cannot be cached (an object column, a file changed since it was read) or the folder cannot be
    written."""
    try:
        entry = entry_for(trace.path)
    except OSError:
        return None
    if _opened.get(str(trace.path), entry) != entry:  # the file changed since its read began
        return None
    if (entry / "manifest.json").exists():
        return entry
    tables = trace.tables()
    if any(table.arrays[c].dtype == object for table in tables.values() for c in table.arrays):
        return None
    with _writing:
        partial = None
        try:
            partial = new_partial(entry)
            manifest: dict[str, Any] = {"version": CACHE_VERSION, "tables": {}, "files": {}}
            files = manifest["files"]
            for key, table in tables.items():
                for name, array in table.arrays.items():
                    files[f"{key}.{name}.npy"] = save_array(partial / f"{key}.{name}.npy", array)
                reader = dict(readers.get(key, {}))
                for part in ("keep", "order"):
                    if reader.get(part) is not None:
                        files[f"{key}.__{part}.npy"] = save_array(partial / f"{key}.__{part}.npy", reader[part])
                        reader[part] = True
                reader["deferred"] = [n for n in reader.get("deferred", ()) if n not in table.arrays]
                manifest["tables"][key] = {"columns": list(table.arrays), "length": len(table), **reader}
            manifest["info"] = _info_json(trace.info)
            manifest["gpus"] = [dataclasses.asdict(g) for g in trace.gpus]
            manifest["strings"] = [trace.symbols.name(i) for i in range(len(trace.symbols))]
            if trace.symbols.file_ids is not None:
                files["__file_ids.npy"] = save_array(partial / "__file_ids.npy", trace.symbols.file_ids)
            write_checked(partial / "manifest.json", json.dumps(manifest))
            os.replace(partial, entry)
        except (OSError, TypeError, ValueError):  # a full disk, a read-only home: the cache is an optimisation
            if partial is not None:
                shutil.rmtree(partial, ignore_errors=True)
            return None
    global _evicted
    if not _evicted:  # once a process, as the walk stats every file: one process's entries may pass the budget
        _evicted = True
        evict(budget())
    return entry


def save_in_background(trace: Trace, readers: dict[str, dict[str, Any]]) -> None:
    """`save` of the columns the trace holds now, beside the caller's work (`write_later`)."""
    tables: dict[str, Any] = {key: Table(dict(table.arrays)) for key, table in trace.tables().items()}
    snapshot = dataclasses.replace(trace, **tables)
    if writes_held():  # written once the command is done: the columns then must be the ones read (the analysis
        # never writes them: a warm open maps them read-only)
        for table in snapshot.tables().values():
            for array in table.arrays.values():
                array.setflags(write=False)
    for key in KEYS:  # what the file still holds for each table: read on a cached open when asked
        if key in readers:
            readers[key] = {**readers[key], "deferred": list(getattr(trace, key).deferred)}
    write_later(lambda: save(snapshot, readers))


def write_later(work: Callable[[], Any]) -> None:
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


def start_held_writes_beside() -> None:
    """Start the writes held until now on one writer thread of this process, in order: the window's, once
    its first frame is drawn (app/workers.release_cache_writes; a fork of its process froze frames)."""
    held = _held[:]
    _held.clear()
    if held:
        write_beside(lambda: [work() for work in held])


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
    write_later(lambda: add_columns(entry, key, columns))


def add_columns(entry: Path, key: str, columns: dict[str, np.ndarray]) -> None:
    """Columns read later from the file (deferred ones) join the entry, for the next open."""
    with _writing:
        try:
            manifest = read_manifest(entry)
            table = manifest["tables"][key]
            new = [n for n in columns if n not in table["columns"] and columns[n].dtype != object]
            for name in new:
                manifest["files"][f"{key}.{name}.npy"] = save_array(entry / f"{key}.{name}.npy", columns[name])
            table["columns"] += new
            table["deferred"] = [n for n in table.get("deferred", ()) if n not in table["columns"]]
            write_checked(entry / "manifest.json", json.dumps(manifest))
        except (OSError, ValueError, KeyError, TypeError):
            return


class Entry:
    """An entry opened for reading: columns memory-mapped (each verified), what the reader needs for the rest."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.manifest = read_manifest(path)
        if self.manifest.get("version") != CACHE_VERSION:
            raise ValueError("another cache version")
        os.utime(path / "manifest.json", follow_symlinks=False)  # least recently used: this one was just used

    def _array(self, name: str, mode: Literal["r", "c"] = "r") -> np.ndarray:
        record = self.manifest["files"].get(name)
        if record is None:
            raise DamagedEntry(f"{self.path}: {name} is not in the manifest")
        return load_array(self.path / name, record, mode)

    def columns(self, key: str) -> dict[str, np.ndarray]:
        table = self.manifest["tables"][key]
        loaded = {name: self._array(f"{key}.{name}.npy") for name in table["columns"]}
        if any(len(a) != table["length"] or a.ndim != 1 for a in loaded.values()):
            raise ValueError(f"{key}: a cached column has the wrong length")
        return loaded

    def reader(self, key: str) -> dict[str, Any]:
        table = self.manifest["tables"][key]
        found = {"table": table.get("table"), "deferred": list(table.get("deferred", ()))}
        for part in ("keep", "order"):
            found[part] = np.array(self._array(f"{key}.__{part}.npy")) if table.get(part) else None
        return found

    def trace_parts(self, path: Path) -> dict[str, Any]:
        """Everything of a Trace but the event tables: info (with `path`, the file as opened now: the
        entry may have been written from another folder), symbols, GPUs and the small tables."""
        manifest = self.manifest
        info = ExportInfo(**{**manifest["info"], "path": Path(path)})
        file_ids = np.array(self._array("__file_ids.npy")) if "__file_ids.npy" in manifest["files"] else None
        strings = manifest["strings"]
        if not isinstance(strings, list) or not all(isinstance(s, str) for s in strings):
            raise DamagedEntry(f"{self.path}: strings that are not a list of names")
        symbols = SymbolTable(strings, file_ids)
        small = {key: Table(self.columns(key)) for key in ENTITY_KEYS}
        return {"info": info, "symbols": symbols, "gpus": [GpuInfo(**g) for g in manifest["gpus"]], **small}


def open_entry(path: Path) -> Entry | None:
    """The file's entry, or None (no entry, caching off, or a damaged entry, which is removed). The entry
    is remembered as the one the read began with: a file that changes before its columns are saved is
    not saved under its new identity."""
    if not enabled():
        return None
    try:
        entry = entry_for(path)
    except OSError:  # no cache folder can be made (a read-only home, not the user's own): read the file
        return None
    _opened[str(path)] = entry
    if entry.is_symlink():  # planted: an entry is a folder of the cache's own
        drop(entry)
    if not os.path.lexists(entry / "manifest.json"):
        return None
    try:
        return Entry(entry)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        drop(entry)
        return None


def unchanged_since_read(path: Path) -> bool:
    """Is the file's identity the one it had when its read began (`open_entry`)? True when unknown."""
    return _opened.get(str(path)) in (None, entry_for(path))


def drop(entry: Path) -> None:
    """Remove an entry that turned out damaged (it is rebuilt by the next read of the file)."""
    if entry.is_symlink():
        entry.unlink(missing_ok=True)
    else:
        shutil.rmtree(entry, ignore_errors=True)


def budget() -> int:
    try:
        return int(os.environ.get(BUDGET_ENV, DEFAULT_BUDGET))
    except ValueError:
        return DEFAULT_BUDGET


def _size(path: Path) -> int:
    if path.is_symlink() or not path.is_dir():
        return path.lstat().st_size
    return sum(f.lstat().st_size for f in path.iterdir())


def _last_used(kind: str, entry: Path) -> float:
    """When an entry was last used: an answer's own time, a trace entry's manifest's, an export's stamp
    (the export itself is never touched: its times are its identity)."""
    if kind == "answers":
        return entry.lstat().st_mtime
    stamp = entry / ("used" if kind == "exports" else "manifest.json")
    return stamp.lstat().st_mtime if os.path.lexists(stamp) else 0.0


def evict(limit: int) -> None:
    """Remove least recently used entries (kept answers, trace entries, saved views, `.nsys-rep` exports)
    until the folder holds at most `limit` bytes; writers' leftovers an hour old go too."""
    try:
        root = cache_dir()
    except OSError:
        return
    entries = []
    for kind in ("answers", "traces", "exports"):
        place = root / kind
        for entry in place.iterdir() if place.is_dir() and not place.is_symlink() else ():
            try:
                if entry.name.endswith((".partial", ".tmp")):
                    if time.time() - entry.lstat().st_mtime > 3600:  # a writer that died
                        drop(entry) if entry.is_dir() else entry.unlink(missing_ok=True)
                    continue
                entries.append((_last_used(kind, entry), _size(entry), entry))
            except OSError:
                continue
    total = sum(size for _, size, _ in entries)
    for _, size, entry in sorted(entries, key=lambda e: e[0]):
        if total <= limit:
            break
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        total -= size


register_writer(start_held_writes, wait_for_writers)  # the command line starts and awaits them (core/answer_cache)
