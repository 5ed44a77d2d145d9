""".nsys-rep reports are exported through nsys when it is there; otherwise the user is told what to run."""

from __future__ import annotations

import stat

import pytest

from graphscope.core.errors import BadInputError, ToolMissingError
from graphscope.trace import load_trace
from tests.conftest import FORKJOIN

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
def report(tmp_path):
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
    assert not report.with_suffix(".sqlite").exists() and not list(tmp_path.glob("*.partial.sqlite"))


def test_garbage_from_a_successful_export_never_takes_the_reports_place(report, monkeypatch, tmp_path):
    monkeypatch.setenv("GRAPHSCOPE_NSYS", str(_fake_nsys(tmp_path, 'echo garbage > "$out"')))
    with pytest.raises(BadInputError, match="wrote no readable export"):
        load_trace(report)
    assert not report.with_suffix(".sqlite").exists()
    report.with_suffix(".sqlite").write_text("left by an earlier, broken export")  # newer than the report
    monkeypatch.setenv("GRAPHSCOPE_NSYS", str(_fake_nsys(tmp_path, f'cp "{FORKJOIN}" "$out"')))
    assert len(load_trace(report).kernels) == 52  # an unreadable export beside it is made again
