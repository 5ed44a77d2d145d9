"""A cache never answers for another file: a trace edited or replaced at the same path, with the same size and
its old modification time set back (`touch -r`, `cp -p`, `rsync -a`, `tar x`), is read again by `summary`,
`report`, `export` and the window, and its kept answer, cached columns and saved view are not used."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from graphscope import cli
from graphscope.trace import cache
from graphscope.view import saved
from graphscope.view.document import open_document
from tests.conftest import DATA, FORKJOIN

KINETO = DATA / "kineto" / "h200_seed_vecadd_graph_profile_torch.json.gz"  # 6 MB of JSON


@pytest.fixture
def run(own_cache, monkeypatch, capsys):
    """run(*argv) -> stdout of the command line, in this process, its cache writes done before it returns."""
    monkeypatch.setattr(cache, "detached", lambda work: work() or True)

    def command(*argv: str) -> str:
        before = os.environ.get("GRAPHSCOPE_NO_CACHE")
        code = cli.main(list(argv))
        os.environ.pop("GRAPHSCOPE_NO_CACHE", None) if before is None else None  # --no-cache sets it
        out = capsys.readouterr()
        assert code == 0, out.err
        return out.out

    return command


def _total(run, path: Path, *extra: str) -> int:
    return json.loads(run("summary", "--json", *extra, str(path)))["kernels"]["total_ns"]


def _sql_total(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        total = conn.execute('SELECT SUM("end" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL').fetchone()[0]
    conn.close()
    return total


def _double_every_kernel(path: Path) -> None:
    """Edit the export in place with SQL, then set its old modification time back (`touch -r`)."""
    stat = path.stat()
    with sqlite3.connect(path) as conn:
        conn.execute('UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = start + 2 * ("end" - start)')
    conn.close()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size and path.stat().st_mtime_ns == stat.st_mtime_ns


def test_an_export_edited_in_place_with_its_old_time_set_back_is_read_again(run, tmp_path):
    path = tmp_path / "f.sqlite"
    shutil.copy(FORKJOIN, path)
    assert _total(run, path) == _total(run, path) == _sql_total(path) == 409_630  # the second: a kept answer
    assert _total(run, path, "--top", "3") == 409_630  # the columns cached, then used
    _double_every_kernel(path)
    assert _total(run, path) == _sql_total(path) == 819_260 == _total(run, path, "--no-cache")
    assert _total(run, path, "--top", "3") == 819_260


@pytest.mark.parametrize("how", ["copied over (cp -p)", "renamed over (tar x, rsync -a)"])
def test_a_same_size_replacement_with_the_old_time_is_read_again(run, tmp_path, how):
    path, other = tmp_path / "f.sqlite", tmp_path / "other.sqlite"
    shutil.copy(FORKJOIN, path)
    shutil.copy(FORKJOIN, other)
    _double_every_kernel(other)
    assert _total(run, path) == 409_630 and path.stat().st_size == other.stat().st_size
    stat = path.stat()
    if how.startswith("copied"):
        shutil.copyfile(other, path)
    else:
        os.replace(other, path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert _total(run, path) == 819_260 and _total(run, path, "--top", "3") == 819_260


def test_report_and_export_of_an_edited_export_are_its_new_numbers(run, tmp_path):
    path = tmp_path / "f.sqlite"
    shutil.copy(FORKJOIN, path)

    def report(*extra: str) -> dict:
        out = tmp_path / "r.json"
        run("report", *extra, str(path), "-o", str(out))
        found = json.loads(out.read_text())
        found.pop("created", None)
        return found

    def export(*extra: str) -> list:
        """The export's slices (flow ids are numbered apart by the streamed and the whole writers)."""
        out = tmp_path / "t.json"
        run("export", *extra, str(path), "-o", str(out))
        events = json.loads(out.read_text())["traceEvents"]
        return sorted((e["ts"], e["dur"], e["name"], e["tid"]) for e in events if e["ph"] == "X")

    old_report, old_export = report(), export()
    assert report() == old_report and export() == old_export  # warm: from the cache
    _double_every_kernel(path)
    new_report, new_export = report(), export()
    assert new_report != old_report and new_export != old_export
    assert new_report == report("--no-cache") and new_export == export("--no-cache")


def test_the_window_of_an_edited_export_is_not_its_saved_view(own_cache, tmp_path):
    path = tmp_path / "f.sqlite"
    shutil.copy(FORKJOIN, path)
    first = open_document(path)
    cache.wait_for_writers()
    assert open_document(path).restored
    _double_every_kernel(path)
    again = open_document(path)
    assert not again.restored and again.summary["kernels"]["total_ns"] == 2 * first.summary["kernels"]["total_ns"]
    assert not saved.entry_for(path, None).exists() or open_document(path).restored


def test_a_profiler_trace_edited_in_its_middle_with_its_old_time_is_read_again(run, tmp_path):
    path = tmp_path / "t.json"
    text = gzip.decompress(KINETO.read_bytes()).decode()
    events = json.loads(text)
    kernels = [e for e in events["traceEvents"] if e.get("cat") == "kernel"]
    assert len(kernels) > 2 and len(text) > 1 << 20  # the edit lies outside the first and last 64 KiB
    path.write_text(json.dumps(events) + " " * 100)  # room for the edit to keep the size
    before = _total(run, path)
    stat = path.stat()
    middle = kernels[len(kernels) // 2]
    middle["dur"] = middle["dur"] + 1  # one more microsecond, padded to the same size
    edited = json.dumps(events)
    edited = edited + " " * (stat.st_size - len(edited.encode()))
    assert len(edited.encode()) == stat.st_size
    path.write_text(edited)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    after = _total(run, path)
    assert abs(after - before - 1000) <= 1 and after == _total(run, path, "--no-cache")
