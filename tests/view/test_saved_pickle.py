"""A saved view's reader names only the exact (module, name) pairs of `saved.ALLOWED`: a planted pickle that
would start a process, truncate a file, evaluate text or build any other class is refused before anything
runs, the entry removed and the view computed again."""

from __future__ import annotations

import builtins
import importlib
import io
import json
import os
import pickle
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

import graphscope.core.table
import graphscope.trace.cache
import graphscope.view.layout
from graphscope.core.cache_files import digest, write_checked, write_file
from graphscope.trace import cache
from graphscope.view import saved
from graphscope.view.document import open_document
from tests.conftest import FORKJOIN


def _calling(module: str, name: str, *args) -> bytes:
    """A protocol-4 pickle that calls module.name(*args) on load (GLOBAL opcode: a dotted name is looked up
    attribute by attribute, as pickle does from protocol 4)."""
    call = b"c" + module.encode() + b"\n" + name.encode() + b"\n" + pickle.dumps(args, protocol=2)[2:-1] + b"R"
    return b"\x80\x04}(X\x08\x00\x00\x00analysis" + call + b"u."


@pytest.fixture
def planted(own_cache, tmp_path):
    """plant(bytes): the file's saved view replaced by these bytes (with their digest in the manifest)."""
    path = tmp_path / FORKJOIN.name
    shutil.copy(FORKJOIN, path)
    first = open_document(path)
    entry = saved.entry_for(path, None)
    deadline = time.time() + 30
    while not (entry / "manifest.json").exists():
        assert time.time() < deadline
        time.sleep(0.05)

    def plant(data: bytes):
        manifest = cache.read_manifest(entry)
        write_file(entry / "parts.pickle", data)
        write_checked(entry / "manifest.json", json.dumps({**manifest, "parts": digest(data)}))
        assert saved.load(first.trace, None) is None and not entry.exists()  # refused, and the entry removed
        again = open_document(path)
        assert not again.restored and again.layout.lanes and len(again.trace.kernels) == len(first.trace.kernels)
        return entry

    return plant


def _payloads(tmp_path: Path) -> dict[str, bytes]:
    marker, victim = tmp_path / "ran", tmp_path / "victim.txt"
    return {
        "Popen": _calling("subprocess", "Popen", ["touch", str(marker)]),
        "dotted Popen": _calling("graphscope.trace.nsysrep", "subprocess.Popen", ["touch", str(marker)]),
        "dotted from an allowed class": _calling("graphscope.core.table", "Table.__init__.__globals__"),
        "memmap w+": _calling("numpy", "memmap", str(victim), "uint8", "w+", 0, (4,)),
        "os.system": _calling("os", "system", f"touch {marker}"),
        "posix.system": _calling("posix", "system", f"touch {marker}"),
        "eval": _calling("builtins", "eval", f"open({str(marker)!r}, 'w')"),
        "exec": _calling("builtins", "exec", f"open({str(marker)!r}, 'w')"),
        "getattr": _calling("builtins", "getattr", "text", "upper"),
        "__import__": _calling("builtins", "__import__", "subprocess"),
        "numpy.save": _calling("numpy", "save", str(victim), np.zeros(1)),
        "numpy.load pickle": _calling("numpy", "load", str(victim), None, True),
        "a graphscope function": _calling("graphscope.trace.cache", "drop", str(tmp_path)),
        "a graphscope class not listed": _calling("graphscope.trace.cache", "Entry", str(tmp_path)),
    }


@pytest.mark.parametrize("name", list(_payloads(Path("/x"))))
def test_a_planted_pickle_runs_nothing_and_the_view_is_computed(planted, tmp_path, name):
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's file")
    planted(_payloads(tmp_path)[name])
    assert not (tmp_path / "ran").exists() and victim.read_text() == "the user's file"


def _reader() -> saved._Reader:
    reader = saved._Reader.__new__(saved._Reader)
    pickle.Unpickler.__init__(reader, io.BytesIO(b""))
    return reader


@pytest.mark.parametrize("module", [builtins, np, graphscope.core.table, graphscope.trace.cache, graphscope.view.layout,
                                    subprocess, os])  # fmt: skip
def test_every_class_and_function_not_listed_is_refused(module):
    reader = _reader()
    names = [n for n, v in vars(module).items() if callable(v) and (module.__name__, n) not in saved.ALLOWED]
    assert len(names) > 3
    for name in names:
        with pytest.raises(pickle.UnpicklingError, match="not a class a saved view holds"):
            reader.find_class(module.__name__, name)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # numpy.core: NumPy 1's name of numpy._core
def test_every_listed_pair_is_what_a_document_is_made_of():
    """Each pair names a class or NumPy's array-rebuilding functions, never a module's other callables."""
    for module, name in saved.ALLOWED:
        try:
            found = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            assert module.startswith("numpy.core") or module.startswith("numpy._core")  # the other NumPy's name
            continue
        assert isinstance(found, type) or name in ("_reconstruct", "scalar", "_frombuffer"), (module, name)
        assert found not in (np.memmap, subprocess.Popen, os.system, eval, exec, getattr)


def test_references_name_only_the_traces_own_tables_and_the_entrys_listed_files(tmp_path):
    from graphscope.trace import load_trace

    trace = load_trace(FORKJOIN)
    reader = saved._Reader(io.BytesIO(b""), tmp_path, trace, {"0.npy": {"size": 0, "head": "", "sum": 0}})
    refused = [("npy", "../../etc/passwd"), ("npy", "1.npy"), ("table", "__class__"), ("column", "kernels", "__init__"),
               ("arange", 10**15, "<i8"), ("arange", 5, "|O"), ("trace", "x"), "trace", ()]  # fmt: skip
    for pid in refused:
        with pytest.raises((pickle.UnpicklingError, TypeError)):
            reader.persistent_load(pid)
    assert reader.persistent_load(("column", "kernels", "start")) is trace.kernels["start"]
