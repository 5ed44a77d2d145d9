""".nsys-rep reports are exported through nsys when it is there; otherwise the user is told what to run."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from graphscope.core.errors import BadInputError, ToolMissingError
from graphscope.trace import cache, load_trace, nsysrep
from tests.conftest import FORKJOIN, H200_NODE

FAKE_NSYS = """#!/bin/sh
# stands in for `nsys export --type sqlite --force-overwrite true -o OUT REPORT`
while [ $# -gt 1 ]; do case "$1" in -o) out="$2"; shift;; esac; shift; done
{body}
"""


def _fake_nsys(tmp_path, body):
    script = tmp_path / "nsys"
    script.write_text(FAKE_NSYS.format(body=body))
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


@pytest.fixture
def report(tmp_path, own_cache):
    """A report in a folder of its own, caching on (the export is made beside it and its record kept)."""
    path = tmp_path / "run.nsys-rep"
    path.write_bytes(b"not really a report")
    return path


def test_without_nsys_the_message_says_what_to_run(report, monkeypatch, tmp_path):
    monkeypatch.setenv("GRAPHSCOPE_NSYS", str(tmp_path / "missing-nsys"))
    with pytest.raises(ToolMissingError, match="nsys export --type sqlite"):
        load_trace(report)


def test_report_is_exported_next_to_itself_and_reused(report, monkeypatch, tmp_path):
    monkeypatch.setenv("GRAPHSCOPE_NSYS", str(_fake_nsys(tmp_path, f'cp "{FORKJOIN}" "$out"')))
    trace = load_trace(report)
    assert len(trace.kernels) == 52 and trace.path == report.with_suffix(".sqlite")
    monkeypatch.setenv("GRAPHSCOPE_NSYS", str(_fake_nsys(tmp_path, "exit 9")))
    assert len(load_trace(report).kernels) == 52  # the existing export is newer: nsys is not run again


def test_a_failing_export_is_reported(report, monkeypatch, tmp_path):
    monkeypatch.setenv("GRAPHSCOPE_NSYS", str(_fake_nsys(tmp_path, 'echo "ERROR: report is corrupt"; exit 1')))
    with pytest.raises(BadInputError, match="nsys export failed: ERROR: report is corrupt"):
        load_trace(report)
    assert not report.with_suffix(".sqlite").exists()


def test_the_gui_opens_a_report_through_its_export(report, monkeypatch, tmp_path):
    """`graphscope open run.nsys-rep`: exported first, then planned and read like any export."""
    from graphscope.trace.reader import load_for_view
    from graphscope.view.document import open_document

    monkeypatch.setenv("GRAPHSCOPE_NSYS", str(_fake_nsys(tmp_path, f'cp "{FORKJOIN}" "$out"')))
    trace, window = load_for_view(report)
    assert len(trace.kernels) == 52 and window is None
    document = open_document(report, panels=False)
    assert len(document.trace.kernels) == 52 and document.layout.lanes


def test_an_export_that_never_finishes_is_stopped(report, monkeypatch, tmp_path):
    monkeypatch.setenv("GRAPHSCOPE_NSYS", str(_fake_nsys(tmp_path, "sleep 60")))
    monkeypatch.setenv("GRAPHSCOPE_NSYS_TIMEOUT", "1")
    with pytest.raises(BadInputError, match="did not finish in 1 s"):
        load_trace(report)
    assert not report.with_suffix(".sqlite").exists() and not list(tmp_path.glob("*partial*"))


def test_garbage_from_a_successful_export_never_takes_the_reports_place(report, monkeypatch, tmp_path):
    monkeypatch.setenv("GRAPHSCOPE_NSYS", str(_fake_nsys(tmp_path, 'echo garbage > "$out"')))
    with pytest.raises(BadInputError, match="wrote no readable export"):
        load_trace(report)
    assert not report.with_suffix(".sqlite").exists()
    report.with_suffix(".sqlite").write_text("left by an earlier, broken export")  # newer than the report
    monkeypatch.setenv("GRAPHSCOPE_NSYS", str(_fake_nsys(tmp_path, f'cp "{FORKJOIN}" "$out"')))
    assert len(load_trace(report).kernels) == 52  # an unreadable export beside it is made again


PICK_BY_CONTENT = """case "$(cat "$1")" in
  A*) cp "{a}" "$out";;
  *) cp "{b}" "$out";;
esac
echo run >> "{runs}"
"""


@pytest.fixture
def by_content(monkeypatch, tmp_path):
    """A fake nsys that exports a report starting with "A" as the fork/join trace, any other as the vecadd
    node trace, and counts its runs: returns the count."""
    runs = tmp_path / "nsys-runs"
    body = PICK_BY_CONTENT.format(a=FORKJOIN, b=H200_NODE, runs=runs)
    monkeypatch.setenv("GRAPHSCOPE_NSYS", str(_fake_nsys(tmp_path, body)))
    return lambda: len(runs.read_text().splitlines()) if runs.exists() else 0


def _kernels(source) -> int:
    return len(load_trace(source).kernels)


FORKJOIN_KERNELS, NODE_KERNELS = 52, _kernels(H200_NODE) if H200_NODE.exists() else 0


def test_two_reports_of_one_name_and_size_in_folders_not_writable_get_their_own_exports(
    own_cache, tmp_path, by_content, monkeypatch
):
    monkeypatch.setattr(nsysrep, "_writable", lambda folder: False)
    first, second = tmp_path / "a" / "run.nsys-rep", tmp_path / "b" / "run.nsys-rep"
    for path, text in ((first, b"A report"), (second, b"B report")):
        path.parent.mkdir()
        path.write_bytes(text)
    assert _kernels(first) == FORKJOIN_KERNELS and _kernels(second) == NODE_KERNELS
    assert _kernels(first) == FORKJOIN_KERNELS and by_content() == 2  # reused from the cache folder
    assert not list(tmp_path.glob("*/*.sqlite")) and len(list((own_cache / "exports").glob("*/export.sqlite"))) == 2
    cache.evict(0)  # evicted like the rest of the cache
    assert not list((own_cache / "exports").iterdir())


def test_a_report_replaced_with_its_old_time_is_exported_again(own_cache, tmp_path, by_content):
    report = tmp_path / "run.nsys-rep"
    report.write_bytes(b"A report")
    assert _kernels(report) == FORKJOIN_KERNELS
    stat = report.stat()
    report.write_bytes(b"B report")  # same size, then the old time back: as `cp -p` of another run does
    os.utime(report, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert _kernels(report) == NODE_KERNELS and by_content() == 2
    assert _kernels(report) == NODE_KERNELS and by_content() == 2  # and that export is used again


def test_an_export_changed_since_it_was_made_is_made_again(own_cache, tmp_path, by_content):
    report = tmp_path / "run.nsys-rep"
    report.write_bytes(b"A report")
    load_trace(report)
    beside = report.with_suffix(".sqlite")
    with sqlite3.connect(beside) as conn:
        conn.execute("DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid % 2 = 0")
    conn.close()
    assert _kernels(report) == FORKJOIN_KERNELS and by_content() == 2


def test_a_users_own_export_beside_the_report_is_never_replaced(own_cache, tmp_path, by_content):
    report = tmp_path / "run.nsys-rep"
    report.write_bytes(b"B report")
    beside = report.with_suffix(".sqlite")
    beside.write_bytes(b"the user's own file")
    assert _kernels(report) == NODE_KERNELS and beside.read_bytes() == b"the user's own file"


def test_without_the_cache_nothing_is_written_beside_the_report_or_in_the_cache(own_cache, tmp_path, by_content):
    report = tmp_path / "run.nsys-rep"
    report.write_bytes(b"A report")
    done = subprocess.run(
        [sys.executable, "-m", "graphscope", "summary", "--json", "--no-cache", str(report)],
        capture_output=True, text=True, env={**os.environ, "XDG_CACHE_HOME": str(own_cache.parent)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["kernels"]["count"] == FORKJOIN_KERNELS
    assert {p.name for p in tmp_path.iterdir()} - {"cache"} == {"run.nsys-rep", "nsys", "nsys-runs"}
    assert not own_cache.exists() or not any(own_cache.iterdir())


def test_two_opens_of_one_report_at_once_both_succeed(own_cache, tmp_path, monkeypatch):
    script = _fake_nsys(tmp_path, f'echo "$out" >> "{tmp_path}/outs"; sleep 0.5; cp "{FORKJOIN}" "$out"')
    monkeypatch.setenv("GRAPHSCOPE_NSYS", str(script))
    report = tmp_path / "run.nsys-rep"
    report.write_bytes(b"A report")
    with ThreadPoolExecutor(2) as pool:
        exports = list(pool.map(lambda _: nsysrep.export_to_sqlite(report), range(2)))
    outs = (tmp_path / "outs").read_text().split()
    assert len(set(outs)) == 2  # each its own partial file
    assert all(_kernels(e) == FORKJOIN_KERNELS for e in exports) and not list(tmp_path.glob(".*partial*"))


def test_a_damaged_cached_export_is_made_again(own_cache, tmp_path, by_content, monkeypatch):
    monkeypatch.setattr(nsysrep, "_writable", lambda folder: False)
    report = tmp_path / "run.nsys-rep"
    report.write_bytes(b"A report")
    assert _kernels(report) == FORKJOIN_KERNELS
    (cached,) = (own_cache / "exports").glob("*/export.sqlite")
    cached.write_bytes(cached.read_bytes()[: cached.stat().st_size // 2])
    assert _kernels(report) == FORKJOIN_KERNELS and by_content() == 2
