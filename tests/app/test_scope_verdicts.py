"""After a scope (a dragged window, an NVTX range) every panel shows that scope's verdict, and Summary its
own span (issue 42, item 5): Details, shown by default, kept the whole trace's."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

from graphscope.analysis.scope import Scope
from graphscope.analysis.summary import summarize
from graphscope.core.units import format_ns
from graphscope.view.layout import KERNEL, NVTX
from tests.conftest import H200_NODE


def wait_for_scope(qtbot, window, text):
    qtbot.waitUntil(lambda: window.scope_task is None and text in window.scope_banner.text(), timeout=20_000)


def test_details_and_summary_follow_a_dragged_scope(window, open_trace, qtbot):
    document = open_trace(H200_NODE)
    whole = document.summary["launch"]["verdict"]
    assert window.side_tabs.currentWidget() is window.details  # shown by default
    assert whole in window.details.toPlainText() and "the whole trace" in window.details.toPlainText()
    origin = document.layout.origin
    eager_1 = int(np.flatnonzero(document.trace.nvtx.text == document.trace.symbols.lookup("eager_1"))[0])
    low = int(document.trace.nvtx.start[eager_1]) - origin
    high = int(document.trace.nvtx.end[eager_1]) - origin
    window.timeline._on_axis_drag(low, high, finished=True)
    wait_for_scope(qtbot, window, " to ")
    # the second way: the same window summarised directly
    scope = Scope.of("drag", np.array([origin + low]), np.array([origin + high]))
    expected = summarize(document.trace, analysis=document.analysis, scope=scope)["launch"]["verdict"]
    assert expected != whole and expected == window.current_view.summary["launch"]["verdict"]
    details, summary = window.details.toPlainText(), window.summary.toPlainText()
    assert expected in details and whole not in details
    assert expected in summary and whole not in summary
    span = format_ns(high - low)
    assert f"\nspan\n{span} (" in summary  # the scope's own span (a table cell a line)
    assert format_ns(document.summary["span_ns"]) != span
    assert f"the trace spans {format_ns(document.summary['span_ns'])}" in summary

    kernel = int(np.flatnonzero(document.trace.kernels.start > origin + low)[0])
    window.timeline.select(KERNEL, kernel)  # an event: Details describes it
    assert "Kernel" in window.details.toPlainText() and expected not in window.details.toPlainText()
    qtbot.keyClick(window.timeline, Qt.Key.Key_Escape)  # nothing selected: the scope's verdict, not the trace's
    assert expected in window.details.toPlainText() and whole not in window.details.toPlainText()

    qtbot.keyClick(window.timeline, Qt.Key.Key_Backspace)
    wait_for_scope(qtbot, window, "the whole trace")
    assert whole in window.details.toPlainText() and whole in window.summary.toPlainText()
    assert f"\nspan\n{format_ns(document.summary['span_ns'])}\n" in window.summary.toPlainText()


def test_a_clicked_capture_range_says_it_only_captures_in_every_panel(window, open_trace, qtbot):
    document = open_trace(H200_NODE)
    row = int(np.flatnonzero(document.trace.nvtx.text == document.trace.symbols.lookup("capture"))[0])
    window.timeline.select(NVTX, row)
    wait_for_scope(qtbot, window, "capture")
    verdict = window.current_view.summary["launch"]["verdict"]
    assert verdict.startswith("this scope captures graphs; it launches nothing to judge")
    assert verdict in window.summary.toPlainText()
    details = window.details.toPlainText()
    assert "NVTX capture" in details and verdict in details  # the range, and the verdict of its scope
    assert document.summary["launch"]["verdict"] not in details
