"""What a document computed from a trace, kept for the next open of the same file: the launch analysis,
the lanes with their level-of-detail pyramids, the first view's window and the panels' contents.

A second open then costs the memory maps of the trace's cached columns (trace/cache.py) and of these:
at 10M kernels + 10M calls the analysis, the lanes and the panels took ~4 s of CPU on every open.

The parts are written with pickle (the standard library's format for a graph of objects: dataclasses,
dicts keyed by ints, references shared between parts) and every NumPy array of `INLINE_BYTES` or more
beside it as its own `.npy` file, mapped back copy-on-write (`mmap_mode="c"`: writable in the process,
the file never changes); an array that is a column of the trace itself is written as a reference to
that column, never as a copy. An entry is a folder in the trace cache's folder, keyed by the file's
identity (core/cache_files.py), the sources of the code that computed it and the alignment asked for,
so it shares the trace cache's switch (`--no-cache`), budget and eviction; its manifest holds a digest
of the pickle and each array file's record (size, header digest, 64-bit sum: trace/cache.py), checked
on load. A damaged or mismatched entry is removed and the parts computed again.

Pickle can run code on load, so the reader takes only the exact (module, name) pairs of `ALLOWED`:
the classes a document is made of, NumPy's dtype and the two functions that rebuild an array, and a few
plain builtins; never another class, a function, a dotted name or anything reached through a module
attribute. A reference to the trace's own columns or to an array file names a table and column the
trace has, or a file listed in the manifest; nothing else is opened.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import re
import shutil
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from graphscope.core.answer_cache import code_version, enabled, file_key
from graphscope.core.cache_files import DamagedEntry, digest, read_file, write_checked, write_file
from graphscope.core.table import Table
from graphscope.trace import cache
from graphscope.trace.model import Trace
from graphscope.trace.tables import ALL_KEYS

VERSION = 2  # 2: verified files, an exact allowlist
INLINE_BYTES = 1 << 16  # smaller arrays go inside the pickle: a file each would cost more than its bytes
PARTS = ("analysis", "default_scope", "focus", "layout", "view", "dags")
ALLOWED: frozenset[tuple[str, str]] = frozenset(
    {
        ("graphscope.analysis.correlation", "Correlation"),
        ("graphscope.analysis.gpu_time", "DeviceTime"),
        ("graphscope.analysis.gpu_time", "IdleGaps"),
        ("graphscope.analysis.graphs", "GraphLaunches"),
        ("graphscope.analysis.launch", "LaunchMetrics"),
        ("graphscope.analysis.scope", "Scope"),
        ("graphscope.analysis.scope", "ScopedRows"),
        ("graphscope.analysis.scope", "TimeWindow"),
        ("graphscope.analysis.summary", "TraceAnalysis"),
        ("graphscope.core.events", "Activity"),
        ("graphscope.core.events", "ApiKind"),
        ("graphscope.core.table", "Table"),
        ("graphscope.graph.model", "Dag"),
        ("graphscope.graph.model", "DagNode"),
        ("graphscope.graph.model", "Fold"),
        ("graphscope.view.document", "ScopedView"),
        ("graphscope.view.layout", "Lane"),
        ("graphscope.view.layout", "TimelineLayout"),
        ("graphscope.view.lod", "LodLane"),
        ("graphscope.view.lod", "Runs"),
        ("numpy", "dtype"),
        ("numpy", "ndarray"),
        *((f"numpy.{core}.multiarray", name) for core in ("core", "_core") for name in ("_reconstruct", "scalar")),
        *((f"numpy.{core}.numeric", "_frombuffer") for core in ("core", "_core")),
        *(("builtins", name) for name in ("set", "frozenset", "slice", "range", "complex", "bytearray")),
    }
)
"""Every (module, qualified name) a saved view may name: what saving every shipped trace's document
reached (tests/view/test_saved.py checks that each restores), plus the analysis' other dataclasses."""
_ARRAY_FILE = re.compile(r"[0-9]{1,9}\.npy")


def entry_for(path: Path, align_to: str | None) -> Path:
    made_by = code_version("core", "trace", "analysis", "graph", "export", "view")
    return cache.folder() / file_key(path, f"view:{VERSION}:{made_by}:{align_to}")


def _lengths(trace: Trace) -> dict[str, int]:
    return {key: len(table) for key, table in trace.tables().items()}


def _address(array: np.ndarray) -> tuple:
    return array.__array_interface__["data"][0], array.shape, array.strides, array.dtype.str


def _is_arange(array: np.ndarray) -> bool:
    if array.dtype.kind not in "iu" or array.ndim != 1 or array[0] != 0 or array[-1] != len(array) - 1:
        return False
    return bool((np.diff(array) == 1).all())


class _Writer(pickle.Pickler):
    def __init__(self, file: BinaryIO, folder: Path, trace: Trace) -> None:
        super().__init__(file, protocol=5)
        self.folder, self.trace = folder, trace
        self.tables = {id(table): key for key, table in trace.tables().items()}
        self.columns = {
            _address(array): (key, name)
            for key, table in trace.tables().items()
            for name, array in table.arrays.items()
            if array.nbytes
        }
        self.written: dict[int, tuple[str, np.ndarray]] = {}  # id -> (file, array): each array written once
        self.files: dict[str, dict[str, Any]] = {}  # file -> its record (trace/cache.py `save_array`)

    def persistent_id(self, obj: Any) -> tuple | None:
        if obj is self.trace:
            return ("trace",)
        if obj is self.trace.symbols:
            return ("symbols",)
        if isinstance(obj, Table) and id(obj) in self.tables:
            return ("table", self.tables[id(obj)])
        if not isinstance(obj, np.ndarray):
            return None
        column = self.columns.get(_address(obj)) if obj.nbytes else None
        if column is not None:
            return ("column", *column)
        if obj.nbytes < INLINE_BYTES or obj.dtype.hasobject:
            return None
        if _is_arange(obj):  # the row numbers of a lane that holds a whole table: 80 MB at 10M, rebuilt in 10 ms
            return ("arange", len(obj), obj.dtype.str)
        known = self.written.get(id(obj))
        if known is None:
            name = f"{len(self.written)}.npy"
            self.files[name] = cache.save_array(self.folder / name, np.ascontiguousarray(obj).view(np.ndarray))
            known = self.written[id(obj)] = (name, obj)
        return ("npy", known[0])

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Table):
            if obj.deferred:
                raise pickle.PicklingError("a derived table with columns not read yet")
            return Table, (dict(obj.arrays),)
        if isinstance(obj, np.memmap):  # a small slice of a mapped column: kept as a plain array
            return np.asarray, (obj.view(np.ndarray),)
        return NotImplemented


class _Reader(pickle.Unpickler):
    def __init__(self, file: BinaryIO, folder: Path, trace: Trace, files: dict[str, Any]) -> None:
        super().__init__(file)
        self.folder, self.trace, self.files = folder, trace, files
        self.loaded: dict[str, np.ndarray] = {}
        self.longest = max(len(table) for table in trace.tables().values())

    def persistent_load(self, pid: Any) -> Any:
        if not isinstance(pid, tuple) or not pid:
            raise pickle.UnpicklingError("a reference that is not a tuple")
        kind, rest = pid[0], pid[1:]
        if kind == "trace" and not rest:
            return self.trace
        if kind == "symbols" and not rest:
            return self.trace.symbols
        if kind in ("table", "column") and rest and rest[0] in ALL_KEYS:
            table = getattr(self.trace, rest[0])
            if kind == "table" and len(rest) == 1:
                return table
            if len(rest) == 2 and rest[1] in (*table.columns, *table.deferred):
                return table[rest[1]]
        if kind == "arange" and len(rest) == 2 and isinstance(rest[0], int) and 0 <= rest[0] <= self.longest:
            dtype = np.dtype(rest[1])
            if dtype.kind in "iu":
                return np.arange(rest[0], dtype=dtype)
        if kind == "npy" and len(rest) == 1 and isinstance(rest[0], str) and _ARRAY_FILE.fullmatch(rest[0]):
            name = rest[0]
            if name in self.files:
                if name not in self.loaded:
                    self.loaded[name] = cache.load_array(self.folder / name, self.files[name], mode="c")
                return self.loaded[name]
        raise pickle.UnpicklingError(f"a reference a saved view does not make: {pid!r}"[:200])

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in ALLOWED:  # exact pairs: no dotted name, no attribute of a module reached
            raise pickle.UnpicklingError(f"{module}.{name} is not a class a saved view holds"[:200])
        return super().find_class(module, name)


def _named(obj: Any, module: str, name: str) -> bool:
    """Is `obj` of that class (named: view.document imports this module)?"""
    return (type(obj).__module__, type(obj).__qualname__) == (module, name)


def _check_parts(parts: Any) -> dict[str, Any]:
    """The parts, when each is of the type a document holds (a pickle with the right keys and wrong
    contents would otherwise fail later, in the window)."""
    from graphscope.analysis.scope import Scope
    from graphscope.analysis.summary import TraceAnalysis
    from graphscope.graph.model import Dag
    from graphscope.view.layout import TimelineLayout

    if not isinstance(parts, dict) or set(parts) != set(PARTS):
        raise DamagedEntry("parts missing")
    focus, layout = parts["focus"], parts["layout"]
    checks = (
        isinstance(parts["analysis"], TraceAnalysis),
        parts["default_scope"] is None or isinstance(parts["default_scope"], Scope),
        isinstance(focus, tuple | list) and len(focus) == 2 and all(isinstance(t, int | np.integer) for t in focus),
        isinstance(layout, TimelineLayout) and isinstance(layout.lanes, list),
        _named(parts["view"], "graphscope.view.document", "ScopedView") and isinstance(parts["view"].summary, dict),
        isinstance(parts["dags"], list) and all(isinstance(d, Dag) for d in parts["dags"]),
    )
    if not all(checks):
        raise DamagedEntry("a part of another type")
    for lane in layout.lanes:
        arrays = [getattr(lane, n, None) for n in ("source", "row", "start", "end", "color", "name", "depth")]
        if not all(isinstance(a, np.ndarray) and a.ndim == 1 and len(a) == len(arrays[0]) for a in arrays):
            raise DamagedEntry("a lane whose arrays disagree")
    return parts


def save(trace: Trace, parts: dict[str, Any], align_to: str | None) -> Path | None:
    """Write a document's parts as the entry of its file; None when they cannot be written (an object
    that does not pickle, a full disk, a read-only home: the entry is an optimisation, never an error)
    or the file changed since it was read."""
    try:
        entry = entry_for(trace.path, align_to)
        if not cache.unchanged_since_read(trace.path):
            return None
    except OSError:
        return None
    if (entry / "manifest.json").exists():
        return entry
    partial = None
    try:
        partial = cache.new_partial(entry)
        buffer = io.BytesIO()
        writer = _Writer(buffer, partial, trace)
        writer.dump({name: parts[name] for name in PARTS})
        pickled = buffer.getvalue()
        write_file(partial / "parts.pickle", pickled)
        manifest = {
            "version": VERSION, "kind": "view", "lengths": _lengths(trace), "parts": digest(pickled),
            "files": writer.files,
        }  # fmt: skip
        write_checked(partial / "manifest.json", json.dumps(manifest))
        os.replace(partial, entry)
    except (OSError, pickle.PicklingError, TypeError, AttributeError, ValueError):
        if partial is not None:
            shutil.rmtree(partial, ignore_errors=True)
        return None
    cache.evict(cache.budget())
    return entry


def save_in_background(trace: Trace, parts: dict[str, Any], align_to: str | None) -> None:
    """`save` beside the caller's work, on a writer thread the process waits for before it exits (the
    window's: forking its process froze the frames for 20-24 ms at 10M + 10M); held with the trace cache's
    own writes while they are held (trace/cache.write_later: a window's until its first frame, whose paint
    it would share the cores with, pickling with the GIL held)."""
    if not enabled():
        return
    cache.write_later(lambda: save(trace, parts, align_to))


def load(trace: Trace, align_to: str | None) -> dict[str, Any] | None:
    """The parts saved for this file as it is now, or None (none saved, caching off, or a damaged,
    foreign or mismatched entry, which is removed)."""
    if not enabled():
        return None
    try:
        entry = entry_for(trace.path, align_to)
    except OSError:
        return None
    if entry.is_symlink():  # planted: an entry is a folder of the cache's own
        cache.drop(entry)
    if not os.path.lexists(entry / "manifest.json"):
        return None
    try:
        manifest = cache.read_manifest(entry)
        if manifest.get("version") != VERSION or manifest.get("lengths") != _lengths(trace):
            raise DamagedEntry("saved for another version of the file or of graphscope")
        pickled = read_file(entry / "parts.pickle")
        if digest(pickled) != manifest.get("parts") or not isinstance(manifest.get("files"), dict):
            raise DamagedEntry("the pickle changed since it was written")
        parts = _check_parts(_Reader(io.BytesIO(pickled), entry, trace, manifest["files"]).load())
        os.utime(entry / "manifest.json", follow_symlinks=False)  # least recently used: this one was just used
        return parts
    except Exception:  # any damage (truncated pickle, a missing array file, a foreign class): computed again
        cache.drop(entry)
        return None
