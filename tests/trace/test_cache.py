"""The trace cache: a second open gives the same trace from memory-mapped columns, keeps up with the file,
survives damage, stays in the user's cache folder, and can be turned off."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from graphscope.trace import cache, load_trace, tables
from tests.conftest import DATA, FORKJOIN

KINETO = DATA / "kineto" / "h200_torch_linear_capture.json.gz"


def _written(path: Path, timeout: float = 20.0) -> Path:
    """The file's entry, once the background writer has put it in place."""
    entry = cache.entry_for(path)
    deadline = time.time() + timeout
    while not (entry / "manifest.json").exists():
        assert time.time() < deadline, "the cache entry was never written"
        time.sleep(0.05)
    return entry


def _mapped(array: np.ndarray) -> bool:
    while array is not None:
        if isinstance(array, np.memmap):
            return True
        array = array.base
    return False


def _same(a, b) -> None:
    for key in tables.ALL_KEYS:
        ta, tb = getattr(a, key), getattr(b, key)
        assert len(ta) == len(tb) and set(ta.columns) | set(ta.deferred) == set(tb.columns) | set(tb.deferred)
        for name in set(ta.columns) | set(ta.deferred):
            np.testing.assert_array_equal(ta[name], tb[name], err_msg=f"{key}.{name}")
    assert [a.symbols.name(i) for i in range(len(a.symbols))][: len(b.symbols)] == [
        b.symbols.name(i) for i in range(len(b.symbols))
    ][: len(a.symbols)]
    assert a.info.warnings == b.info.warnings and a.info.holds == b.info.holds and a.gpus == b.gpus


@pytest.mark.parametrize("source", [FORKJOIN, KINETO], ids=["nsys", "kineto"])
def test_a_second_open_is_the_same_trace_from_memory_mapped_columns(own_cache, tmp_path, source):
    path = tmp_path / source.name
    shutil.copy(source, path)
    first = load_trace(path)
    entry = _written(path)
    assert entry.parent == own_cache / "traces" and not list(tmp_path.glob("*.npy"))  # never beside the file
    second = load_trace(path)
    assert _mapped(second.kernels.arrays["start"])
    _same(first, second)
    with pytest.raises(ValueError):  # read-only: nothing may change the cached columns in place
        second.kernels.start[0] = 0


def test_deferred_columns_are_read_from_the_file_and_then_kept(own_cache, tmp_path, monkeypatch):
    path = tmp_path / "f.sqlite"
    shutil.copy(FORKJOIN, path)
    load_trace(path)  # the summary's columns: the launch configurations stay in the file
    entry = _written(path)
    monkeypatch.setenv("GRAPHSCOPE_NO_CACHE", "1")
    fresh = load_trace(path, columns="all")
    monkeypatch.delenv("GRAPHSCOPE_NO_CACHE")
    cached = load_trace(path)
    assert "grid_x" in cached.kernels.deferred
    np.testing.assert_array_equal(cached.kernels.grid_x, fresh.kernels.grid_x)  # from the file, ordered alike
    deadline = time.time() + 10
    while "grid_x" not in cache.read_manifest(entry)["tables"]["kernels"]["columns"]:
        assert time.time() < deadline
        time.sleep(0.05)
    third = load_trace(path)
    assert "grid_x" in third.kernels.columns and _mapped(third.kernels.arrays["grid_x"])


def test_columns_asked_up_front_of_a_cached_file_are_read_without_the_rest(own_cache, tmp_path, monkeypatch):
    """A report asks for the launch configuration with the summary's columns: of a summarised file only
    those are read then (the kernel table's other deferred columns cost 0.8 s of CPU more at 1M)."""
    path = tmp_path / "f.sqlite"
    shutil.copy(FORKJOIN, path)
    load_trace(path)
    _written(path)
    monkeypatch.setenv("GRAPHSCOPE_NO_CACHE", "1")
    fresh = load_trace(path, columns="all")
    monkeypatch.delenv("GRAPHSCOPE_NO_CACHE")
    asked = load_trace(path, columns={"kernels": ("block_x",)})
    assert "block_x" in asked.kernels.columns
    assert "registers" in asked.kernels.deferred and "name" in asked.kernels.deferred  # still in the file
    for name in ("block_x", "registers", "name", "start"):
        np.testing.assert_array_equal(asked.kernels[name], fresh.kernels[name])


def test_a_changed_file_misses_and_a_damaged_entry_is_rebuilt(own_cache, tmp_path):
    path = tmp_path / "f.sqlite"
    shutil.copy(FORKJOIN, path)
    expected = load_trace(path)
    entry = _written(path)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert cache.open_entry(path) is None  # another modification time: another entry
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert cache.open_entry(path) is None  # the old time set back: its status-change time is not
    load_trace(path)
    entry = _written(path)
    (entry / "kernels.start.npy").write_bytes(b"\x93NUMPY garbage")
    damaged = load_trace(path)  # read from the file instead, and the entry removed
    _same(expected, damaged)
    assert not (entry / "kernels.start.npy").exists()
    cache.wait_for_writers()
    entry = _written(path)  # written again, whole
    (entry / "manifest.json").write_text("{not json")
    assert cache.open_entry(path) is None and not entry.exists()


def test_no_cache_writes_nothing_and_the_budget_evicts_the_least_recently_used(own_cache, tmp_path, monkeypatch):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    shutil.copy(FORKJOIN, a)
    shutil.copy(FORKJOIN, b)
    monkeypatch.setenv("GRAPHSCOPE_NO_CACHE", "1")
    load_trace(a)
    time.sleep(0.5)
    assert not (own_cache / "traces").exists() or not any((own_cache / "traces").iterdir())
    monkeypatch.delenv("GRAPHSCOPE_NO_CACHE")
    load_trace(a)
    first = _written(a)
    os.utime(first / "manifest.json", (time.time() - 100, time.time() - 100))  # used long ago
    load_trace(b)
    second = _written(b)
    cache.evict(sum(f.stat().st_size for f in second.iterdir()) + 1)
    assert not first.exists() and second.exists()


def test_a_warm_summary_prints_the_same_answer_without_reading_the_file(own_cache, tmp_path):
    path = tmp_path / "f.sqlite"
    shutil.copy(FORKJOIN, path)
    env = {**os.environ, "XDG_CACHE_HOME": str(own_cache.parent)}

    def summary(*extra):
        done = subprocess.run(
            [sys.executable, "-m", "graphscope", "summary", str(path), *extra], capture_output=True, text=True, env=env
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    cold, warm = summary("--json"), summary("--json")
    assert cold == warm and json.loads(warm)["kernels"]["count"] > 0
    assert len(list((own_cache / "answers").iterdir())) == 2  # the printed answer and the kept summary
    assert summary("--json", "--top", "3") != warm  # another question, another answer (of the kept summary)
    text = summary()
    assert text == summary() and not text.lstrip().startswith("{")
    assert summary("--json", "--no-cache") == cold and len(list((own_cache / "answers").iterdir())) == 4


def test_a_cache_folder_that_cannot_be_made_only_turns_the_cache_off(tmp_path, monkeypatch):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would go")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    monkeypatch.delenv("GRAPHSCOPE_NO_CACHE", raising=False)
    trace = load_trace(FORKJOIN)  # read as without a cache, no error
    assert len(trace.kernels) > 0 and cache.open_entry(FORKJOIN) is None


def test_a_cached_open_from_another_folder_names_the_file_as_opened_now(own_cache, tmp_path, monkeypatch):
    (tmp_path / "runs").mkdir()
    path = tmp_path / "runs" / "f.sqlite"
    shutil.copy(FORKJOIN, path)
    monkeypatch.chdir(tmp_path)
    load_trace(Path("runs/f.sqlite"))  # the entry is written with this relative name
    _written(path)
    monkeypatch.chdir(tmp_path / "runs")
    again = load_trace(Path("f.sqlite"), columns="all")  # deferred columns come from the file as named now
    assert again.path == Path("f.sqlite") and again.path.exists()
    assert len(again.kernels.grid_x) == len(again.kernels)


def test_columns_read_on_a_pool_thread_join_the_entry_before_the_process_ends(own_cache, tmp_path):
    """The GUI reads the remaining columns on a Qt pool thread (a daemon to Python); the writer that adds
    them to the entry is waited for when the command ends, not killed mid-write."""
    path = tmp_path / "f.sqlite"
    shutil.copy(FORKJOIN, path)
    load_trace(path)
    entry = _written(path)
    assert cache.read_manifest(entry)["tables"]["kernels"]["deferred"]
    script = f"""
import threading
from pathlib import Path
from graphscope.cli import leave
from graphscope.trace import load_trace

trace = load_trace(Path({str(path)!r}))
pool = threading.Thread(target=trace.kernels.load_deferred, daemon=True)
pool.start()
pool.join()
leave(0)
"""
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    kernels = cache.read_manifest(entry)["tables"]["kernels"]
    assert kernels["deferred"] == [] and "grid_x" in kernels["columns"]
    again = load_trace(path, columns="all")
    assert not again.kernels.deferred and _mapped(again.kernels.grid_x)


def test_a_command_writes_the_entry_once_its_answer_is_out(own_cache, tmp_path, monkeypatch, capsys):
    """A summary writes its file's entry after it answered (a writer forked beside the analysis slowed the
    cold summary), from the columns as they were read, and holds no writes once it is done."""
    from graphscope import cli
    from graphscope.core import answer_cache

    path = tmp_path / "f.sqlite"
    shutil.copy(FORKJOIN, path)
    printed_when_written = []

    def write_now(work) -> bool:
        printed_when_written.append(capsys.readouterr().out)
        work()
        return True

    monkeypatch.setattr(cache, "detached", write_now)
    assert cli.main(["summary", "--json", str(path)]) == 0
    assert len(printed_when_written) == 1 and json.loads(printed_when_written[0])["kernels"]["count"] > 0
    assert not answer_cache.writes_held() and (cache.entry_for(path) / "manifest.json").exists()
    cached = load_trace(path, columns="all")
    assert _mapped(cached.kernels.start)
    monkeypatch.setenv("GRAPHSCOPE_NO_CACHE", "1")
    _same(cached, load_trace(path, columns="all"))


def test_the_windows_process_writes_its_entry_on_a_thread_not_a_fork(own_cache, tmp_path, monkeypatch):
    """Outside the command line (the window, a rank worker) entries are written on a writer thread: a fork
    of the window's process froze its frames for 20-24 ms at 10M + 10M."""
    path = tmp_path / "f.sqlite"
    shutil.copy(FORKJOIN, path)

    def no_fork(work) -> bool:
        raise AssertionError("forked a writer")

    monkeypatch.setattr(cache, "detached", no_fork)
    load_trace(path)
    cache.wait_for_writers()
    assert (cache.entry_for(path) / "manifest.json").exists()
