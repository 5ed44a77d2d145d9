"""Scoping the panels from the timeline: a drag along the time axis, a click on an NVTX range, and
Backspace back to the default; the banner always says what the panels describe."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

from graphscope.view.layout import NVTX
from tests.conftest import FORKJOIN, H200_NODE


def wait_for_scope(qtbot, window, text):
    qtbot.waitUntil(lambda: window.scope_task is None and text in window.scope_banner.text(), timeout=20_000)


def test_clicking_an_nvtx_range_scopes_summary_kernels_and_histograms(window, open_trace, qtbot):
    document = open_trace(H200_NODE)
    assert "the whole trace" in window.scope_banner.text()
    row = int(np.flatnonzero(document.trace.nvtx.text == document.trace.symbols.lookup("eager_1"))[0])
    window.timeline.select(NVTX, row)
    wait_for_scope(qtbot, window, "eager_1")
    summary = window.current_view.summary
    assert summary["kernels"]["count"] == 1000 and summary["api"]["launches"] == 1000
    assert "CUDA graphs should pay" in window.summary.toPlainText()
    assert window.stats.model.rowCount() == 1  # vec_add alone
    assert len(window.timeline.scope_item.windows) == 1
    qtbot.keyClick(window.timeline, Qt.Key.Key_Backspace)
    wait_for_scope(qtbot, window, "the whole trace")
    assert window.stats.model.rowCount() == len(document.stats) and not window.timeline.scope_item.windows


def test_a_drag_along_the_time_axis_scopes_to_that_window(window, open_trace, qtbot):
    document = open_trace(FORKJOIN)
    origin = document.layout.origin
    calls = document.trace.api.start[document.analysis.graphs.api_row]  # work is in the scope of its call
    low, high = calls[0] - origin - 1_000, document.analysis.graphs.end[-1] - origin + 1_000
    window.timeline._on_axis_drag(low, high / 2, finished=False)  # the preview follows the mouse
    assert window.timeline.scope_item.preview is not None
    window.timeline._on_axis_drag(low, high, finished=True)
    wait_for_scope(qtbot, window, " to ")
    assert window.timeline.scope_item.preview is None
    assert window.current_view.summary["graphs"]["launches"] == 5
    assert window.current_view.summary["scope"]["label"].endswith(("ms", "us"))


def test_histograms_follow_the_scope(window, open_trace, qtbot):
    document = open_trace(H200_NODE)
    full = len(window.current_view.duration_ns)
    row = int(np.flatnonzero(document.trace.nvtx.text == document.trace.symbols.lookup("graph_0"))[0])
    window.timeline.select(NVTX, row)
    wait_for_scope(qtbot, window, "graph_0")
    assert len(window.current_view.duration_ns) == 1000 < full
    assert len(window.current_view.latency_ns) == 0  # no eager kernel launches inside a replay


def test_a_real_mouse_drag_on_the_axis_scopes(window, open_trace, qtbot):
    from PySide6.QtCore import QEvent, QPointF
    from PySide6.QtGui import QMouseEvent
    from PySide6.QtWidgets import QApplication

    open_trace(H200_NODE)
    timeline = window.timeline
    rect = timeline.time_axis.sceneBoundingRect()
    points = [timeline.mapFromScene(QPointF(rect.left() + x, rect.center().y())) for x in (150, 260, 380)]
    viewport = timeline.viewport()

    def send(kind, point, buttons):
        button = Qt.MouseButton.LeftButton if kind != QEvent.Type.MouseMove else Qt.MouseButton.NoButton
        local = QPointF(point)
        event = QMouseEvent(kind, local, viewport.mapToGlobal(local), button, buttons, Qt.KeyboardModifier.NoModifier)
        QApplication.sendEvent(viewport, event)

    held, free = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    send(QEvent.Type.MouseButtonPress, points[0], held)
    for point in points[1:]:
        send(QEvent.Type.MouseMove, point, held)
    send(QEvent.Type.MouseButtonRelease, points[-1], free)
    wait_for_scope(qtbot, window, " to ")
    (x0, x1), _ = timeline.view.viewRange()
    window_start, window_end = timeline.scope_item.windows[0]
    assert x0 < window_start < window_end < x1  # the view did not pan: the drag made a scope


def test_a_file_larger_than_memory_opens_a_window_at_a_time(window, qtbot, monkeypatch):
    from graphscope.trace import window as windows

    monkeypatch.setattr(windows, "memory_budget_events", lambda: 3000)  # as if this file did not fit
    monkeypatch.setattr("graphscope.trace.reader.memory_budget_events", lambda: 3000)
    with qtbot.waitSignal(window.loaded, timeout=30_000):
        window.open_path(H200_NODE)
    first = window.document.window
    assert first is not None and first.events <= 3000 and "next window" in window.scope_banner.text()
    assert len(window.document.trace.kernels) + len(window.document.trace.api) <= 3000
    with qtbot.waitSignal(window.loaded, timeout=30_000):
        window.open_window(+1)
    second = window.document.window
    assert second.start == first.end and "previous" in window.scope_banner.text()
    # the second window keeps the file's clock: its axis, fit and scopes read as --range and the header do
    document = window.document
    assert document.layout.origin == second.first
    window.timeline.fit_all()
    (x0, x1), _ = window.timeline.view.viewRange()
    start, end = document.trace.span()
    assert x0 <= start - second.first and x1 >= end - second.first and x0 > 0.5 * (second.start - second.first)
    assert "the whole window" in window.summary.toPlainText()


def test_the_histograms_are_drawn_when_their_tab_is_first_shown(window, open_trace, qtbot):
    """Built on first show (not at start-up), with the values the panel was given while hidden."""
    open_trace(H200_NODE)
    panel = window.histograms
    assert panel.latency is None  # the Details tab is in front
    window.side_tabs.setCurrentWidget(panel)
    qtbot.waitUntil(lambda: panel.latency is not None, timeout=5_000)
    curves = [item for item in panel.duration.getPlotItem().items if hasattr(item, "getData")]
    assert curves and curves[0].getData()[1].sum() == len(
        window.current_view.duration_ns[window.current_view.duration_ns > 0]
    )


def test_the_histogram_axes_read_in_time_units():
    from graphscope.app.panels import LogTimeAxis

    axis = LogTimeAxis(orientation="bottom")
    (spacing, decades), (_, minor) = axis.tickValues(2.5, 6.2, 400)
    assert spacing == 1.0
    assert decades == [3.0, 4.0, 5.0, 6.0] and all(2.5 <= v <= 6.2 for v in minor) and len(minor) > 10
    assert axis.tickStrings(decades, 1.0, 1.0) == ["1 us", "10 us", "100 us", "1 ms"]
    assert set(axis.tickStrings(minor, 1.0, 0.1)) == {""}
