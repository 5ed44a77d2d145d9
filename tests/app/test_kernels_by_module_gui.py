"""The Kernels table grouped by module: computed off the GUI thread, totals as `summary --json` counts them."""

from __future__ import annotations

import json
import threading

from graphscope.analysis.capture_ops import attribution
from graphscope.app.stats_panel import StatsPanel
from graphscope.cli import main
from graphscope.trace import load_trace
from graphscope.view import module_stats
from graphscope.view.module_stats import NOT_ATTRIBUTED
from tests.conftest import H200_NODE

KINETO = H200_NODE.parent / "kineto"
CAPTURE, REPLAY = KINETO / "h200_torch_linear_capture.json.gz", KINETO / "h200_torch_linear_replay.json.gz"


def _cell(panel: StatsPanel, row: int, column: int) -> str:
    return panel.proxy.index(row, column).data()


def test_grouping_the_window_s_kernels_by_module_matches_the_summary(window, open_trace, qtbot, monkeypatch, capsys):
    threads = []
    real = module_stats.module_rows
    monkeypatch.setattr(
        "graphscope.app.stats_panel.module_rows", lambda n: threads.append(threading.current_thread()) or real(n)
    )
    open_trace(H200_NODE)
    panel = window.stats
    kernel_rows = panel.proxy.rowCount()
    panel.group.setCurrentText("module")
    qtbot.waitUntil(lambda: panel.modules.rows != [], timeout=30_000)
    assert threads and threads[0] is not threading.main_thread()
    assert main(["summary", str(H200_NODE), "--json"]) == 0
    coverage = json.loads(capsys.readouterr().out)["capture_attribution"]["coverage"]
    assert [(r.module, r.gpu_ns) for r in panel.modules.rows] == [(NOT_ATTRIBUTED, coverage["gpu_ns"])]
    assert _cell(panel, 0, 0) == NOT_ATTRIBUTED and _cell(panel, 0, 4) == "100.0%"
    assert "names no module" in panel.note.text()
    panel.group.setCurrentText("kernel")  # back: the scope's kernels again, and no second computation
    assert panel.proxy.rowCount() == kernel_rows
    panel.group.setCurrentText("module")
    assert len(threads) == 1 and panel.proxy.rowCount() == 1


def test_a_capture_trace_s_modules_are_rows_with_their_share(qtbot):
    replay, capture = load_trace(REPLAY), load_trace(CAPTURE)
    panel = StatsPanel()
    qtbot.addWidget(panel)
    panel.attribution = lambda trace: attribution(trace, [capture])[0]
    panel.trace = replay
    panel.group.setCurrentText("module")
    qtbot.waitUntil(lambda: panel.modules.rows != [], timeout=30_000)
    table = [[_cell(panel, r, c) for c in (0, 1, 2, 4)] for r in range(panel.proxy.rowCount())]
    assert table == [["Linear_0", "5", "5", "73.8%"], [NOT_ATTRIBUTED, "5", "5", "26.2%"]]
    described = []
    panel.rows_described.connect(lambda title, fields: described.append((title, dict(fields))))
    panel.table.selectRow(0)
    assert described[-1][0] == "Module (Kernels table)"
    assert described[-1][1]["replayed kernels"] == "5"
    assert described[-1][1]["share of replay GPU time"] == "73.8%"
