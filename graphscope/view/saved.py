"""What a document computed from a trace, kept for the next open of the same file: the launch analysis,
the lanes with their level-of-detail pyramids, the first view's window and the panels' contents.

A second open then costs the memory maps of the trace's cached columns (trace/cache.py) and of these:
at 10M kernels + 10M calls the analysis, the lanes and the panels took ~4 s of CPU on every open.

The parts are written with pickle (the standard library's format for a graph of objects: dataclasses,
dicts keyed by ints, references shared between parts) and every NumPy array of `INLINE_BYTES` or more
beside it as its own `.npy` file, mapped back copy-on-write (`mmap_mode="c"`: writable in the process,
the file never changes); an array that is a column of the trace itself is written as a reference to
that column, never as a copy. An entry is a folder in the trace cache's folder, keyed by the file (path,
size, modification time), the sources of the code that computed it and the alignment asked for, so it
shares the trace cache's switch (`--no-cache`), budget and eviction; a damaged one is removed and the
parts computed again. Pickle can run code on load: only classes of graphscope, NumPy and plain Python
data (and NumPy's own functions that rebuild an array) are accepted, never another function, from the
user's own cache folder, written by graphscope.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import threading
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from graphscope.core.answer_cache import code_version, enabled, file_key
from graphscope.core.table import Table
from graphscope.trace import cache
from graphscope.trace.model import Trace

VERSION = 1
INLINE_BYTES = 1 << 16  # smaller arrays go inside the pickle: a file each would cost more than its bytes
PARTS = ("analysis", "default_scope", "focus", "layout", "view", "dags")
_TABLES = (*cache.EVENT_TABLES, *cache.SMALL_TABLES)
_ALLOWED = ("graphscope", "numpy", "pathlib", "collections")
_ALLOWED_BUILTINS = {"set", "frozenset", "slice", "range", "complex", "bytearray", "tuple", "list", "dict"}
# what arrays, scalars and slices of mapped columns pickle as
_NUMPY_FUNCTIONS = {"_reconstruct", "_frombuffer", "scalar", "asarray"}


def entry_for(path: Path, align_to: str | None) -> Path:
    made_by = code_version("core", "trace", "analysis", "graph", "report", "view")
    return cache.folder() / file_key(path, f"view:{VERSION}:{made_by}:{align_to}")


def _lengths(trace: Trace) -> dict[str, int]:
    return {key: len(getattr(trace, key)) for key in _TABLES}


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
        self.tables = {id(getattr(trace, key)): key for key in _TABLES}
        self.columns = {
            _address(array): (key, name)
            for key in _TABLES
            for name, array in getattr(trace, key)._columns.items()
            if array.nbytes
        }
        self.written: dict[int, tuple[str, np.ndarray]] = {}  # id -> (file, array): each array written once

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
            np.save(self.folder / name, np.ascontiguousarray(obj).view(np.ndarray), allow_pickle=False)
            known = self.written[id(obj)] = (name, obj)
        return ("npy", known[0])

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Table):
            if obj.deferred:
                raise pickle.PicklingError("a derived table with columns not read yet")
            return Table, (obj._columns,)
        if isinstance(obj, np.memmap):  # a small slice of a mapped column: kept as a plain array
            return np.asarray, (obj.view(np.ndarray),)
        return NotImplemented


class _Reader(pickle.Unpickler):
    def __init__(self, file: BinaryIO, folder: Path, trace: Trace) -> None:
        super().__init__(file)
        self.folder, self.trace = folder, trace
        self.loaded: dict[str, np.ndarray] = {}

    def persistent_load(self, pid: tuple) -> Any:
        kind = pid[0]
        if kind == "trace":
            return self.trace
        if kind == "symbols":
            return self.trace.symbols
        if kind == "table":
            return getattr(self.trace, pid[1])
        if kind == "column":
            return getattr(self.trace, pid[1])[pid[2]]
        if kind == "arange":
            return np.arange(pid[1], dtype=np.dtype(pid[2]))
        if kind == "npy":
            if pid[1] not in self.loaded:
                self.loaded[pid[1]] = np.load(self.folder / pid[1], mmap_mode="c", allow_pickle=False)
            return self.loaded[pid[1]]
        raise pickle.UnpicklingError(f"unknown reference {kind!r}")

    def find_class(self, module: str, name: str) -> Any:
        allowed = module.split(".")[0] in _ALLOWED or (module == "builtins" and name in _ALLOWED_BUILTINS)
        found = super().find_class(module, name) if allowed else None
        numpy_function = module.split(".")[0] == "numpy" and name in _NUMPY_FUNCTIONS
        if not isinstance(found, type) and not numpy_function:  # classes only: no function runs on load
            raise pickle.UnpicklingError(f"{module}.{name} is not a class a saved view holds")
        return found


def save(trace: Trace, parts: dict[str, Any], align_to: str | None) -> Path | None:
    """Write a document's parts as the entry of its file; None when they cannot be written (an object
    that does not pickle, a full disk, a read-only home: the entry is an optimisation, never an error)."""
    try:
        entry = entry_for(trace.path, align_to)
    except OSError:
        return None
    if (entry / "manifest.json").exists():
        return entry
    partial = entry.with_name(entry.name + f".{os.getpid()}.{threading.get_ident()}.partial")
    try:
        partial.mkdir(parents=True, exist_ok=True)
        with open(partial / "parts.pickle", "wb") as file:
            _Writer(file, partial, trace).dump({name: parts[name] for name in PARTS})
        manifest = {"version": VERSION, "kind": "view", "lengths": _lengths(trace)}
        (partial / "manifest.json").write_text(json.dumps(manifest))
        os.replace(partial, entry)
    except (OSError, pickle.PicklingError, TypeError, AttributeError, ValueError):
        shutil.rmtree(partial, ignore_errors=True)
        return None
    cache.evict(cache.budget())
    return entry


def save_in_background(trace: Trace, parts: dict[str, Any], align_to: str | None) -> None:
    """`save` beside the caller's work, on a writer thread the process waits for before it exits (the
    window's: forking its process froze the frames for 20-24 ms at 10M + 10M)."""
    if not enabled():
        return
    cache.write_beside(lambda: save(trace, parts, align_to))


def load(trace: Trace, align_to: str | None) -> dict[str, Any] | None:
    """The parts saved for this file as it is now, or None (none saved, caching off, or a damaged or
    mismatched entry, which is removed)."""
    if not enabled():
        return None
    try:
        entry = entry_for(trace.path, align_to)
    except OSError:
        return None
    if not (entry / "manifest.json").exists():
        return None
    try:
        manifest = json.loads((entry / "manifest.json").read_text())
        if manifest.get("version") != VERSION or manifest.get("lengths") != _lengths(trace):
            raise ValueError("saved for another version of the file or of graphscope")
        with open(entry / "parts.pickle", "rb") as file:
            parts = _Reader(file, entry, trace).load()
        if not isinstance(parts, dict) or set(parts) != set(PARTS):
            raise ValueError("parts missing")
        os.utime(entry / "manifest.json")  # least recently used: this one was just used
        return parts
    except Exception:  # any damage (truncated pickle, a missing array file, a foreign class): computed again
        shutil.rmtree(entry, ignore_errors=True)
        return None
