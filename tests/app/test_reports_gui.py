"""Reports from the GUI: File > Compare with…, File > Export report… (previewed, then saved in the format
the file name says), the compare window's export, and File > Export as Perfetto trace…"""

from __future__ import annotations

import json

from PySide6.QtWidgets import QFileDialog

from tests.conftest import FORKJOIN, H200_NODE


def test_compare_with_opens_both_traces_and_exports_their_report(window, open_trace, qtbot, tmp_path):
    open_trace(FORKJOIN)
    compare = window.compare_with(H200_NODE)
    qtbot.waitUntil(lambda: compare.export_button.isEnabled(), timeout=30_000)
    assert len(compare.documents) == 2
    compare.export()
    qtbot.waitUntil(lambda: getattr(compare, "report_preview", None) is not None, timeout=30_000)
    preview = compare.report_preview
    assert "vs" in preview.report["title"] and preview.report["b"] is not None
    assert "end to end per step" in preview.view.toPlainText()
    out = tmp_path / "compare.html"
    preview.save(out)
    assert "<svg" in out.read_text() and preview.saved == out
    compare.close()


def test_export_report_of_the_current_scope(window, open_trace, qtbot, tmp_path):
    import numpy as np

    from graphscope.view.layout import NVTX

    document = open_trace(H200_NODE)
    row = int(np.flatnonzero(document.trace.nvtx.text == document.trace.symbols.lookup("graph_0"))[0])
    window.timeline.select(NVTX, row)
    qtbot.waitUntil(lambda: window.scope_task is None and "graph_0" in window.scope_banner.text(), timeout=20_000)
    window.export_report()
    qtbot.waitUntil(lambda: getattr(window, "report_preview", None) is not None, timeout=30_000)
    out = tmp_path / "scope.json"
    window.report_preview.save(out)
    report = json.loads(out.read_text())
    assert report["a"]["scope"] == "NVTX range 'graph_0'" and report["kernels"][0]["a"]["count"] == 1000
    window.report_preview.save(tmp_path / "bad.pdf")  # the extension decides the format; an unknown one says so
    assert ".html, .md, .json or .csv" in window.report_preview.status.text()


def test_export_as_perfetto(window, open_trace, qtbot, tmp_path, monkeypatch):
    open_trace(FORKJOIN)
    out = tmp_path / "trace.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), ""))
    window.export_perfetto()
    qtbot.waitUntil(lambda: "ui.perfetto.dev" in window.status_label.text(), timeout=30_000)
    assert len(json.loads(out.read_text())["traceEvents"]) > 100


def test_a_report_is_never_saved_over_its_own_trace(window, open_trace, qtbot, tmp_path):
    trace = tmp_path / "t.sqlite"
    trace.write_bytes(FORKJOIN.read_bytes())
    open_trace(trace)
    window.export_report()
    qtbot.waitUntil(lambda: getattr(window, "report_preview", None) is not None, timeout=30_000)
    (tmp_path / "r.json").symlink_to(trace)
    window.report_preview.save(tmp_path / "r.json")
    assert "is one of the inputs" in window.report_preview.status.text()
    assert trace.read_bytes() == FORKJOIN.read_bytes() and window.report_preview.saved is None
