"""The main window driven as a user would (pytest-qt, offscreen)."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPoint, Qt

from graphscope.core.settings import demo_trace
from graphscope.view.layout import API, GRAPH_GROUP, KERNEL
from tests.conftest import FORKJOIN, H200_GRAPH, H200_NODE


def _item(window, kind, stream=None):
    return next(
        i for i in window.timeline.items.values() if i.lane.kind == kind and (stream is None or i.lane.stream == stream)
    )


def test_the_demo_opens_with_cpu_and_gpu_lanes_and_a_verdict(window, open_trace):
    document = open_trace(demo_trace())
    kinds = {item.lane.kind for item in window.timeline.items.values()}
    assert kinds == {"api", "nvtx", "gpu"}
    assert "graphs in use" in window.summary.toPlainText()
    assert window.stats.model.rowCount() == len(document.stats)
    assert window.windowTitle().endswith("demo_trace.sqlite")


def test_selecting_a_kernel_shows_and_links_its_launching_call(window, open_trace):
    document = open_trace(H200_NODE)
    row = int(np.flatnonzero(document.trace.kernels.graph_node < 0)[-1])
    window.timeline.select(KERNEL, row)
    text = window.details.toPlainText()
    assert "vec_add" in text and "launched by" in text and "cuLaunchKernel" in text and "block" in text
    api_item = _item(window, "api")
    assert api_item._highlight_count == 1
    assert window.timeline.link.points is not None


def test_clicking_a_graph_launch_lights_up_all_its_node_kernels(window, open_trace, qtbot):
    document = open_trace(H200_NODE)
    stream = _item(window, "gpu", stream=13)
    brackets = stream.lane.brackets
    window.timeline.view.setXRange(float(brackets.start[1]) - 1e5, float(brackets.end[1]) + 1e5, padding=0)
    qtbot.wait(50)
    x = (brackets.start[1] + brackets.end[1]) / 2
    scene = window.timeline.view.mapViewToScene(pg_point(x, stream.y + 0.1))  # the bracket's top band
    position = window.timeline.mapFromScene(scene)
    with qtbot.waitSignal(window.timeline.selected) as blocker:
        qtbot.mouseClick(window.timeline.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(position.x(), position.y()))
    assert blocker.args == [GRAPH_GROUP, 1]
    assert _item(window, "gpu", stream=13)._highlight_count == 1000
    assert "1000" in window.details.toPlainText()
    call = int(document.analysis.graphs.api_row[1])
    window.timeline.select(API, call)  # and back: the call lights up the same kernels
    assert _item(window, "gpu", stream=13)._highlight_count == 1000


def test_hovering_an_event_names_it_in_a_tooltip(window, open_trace, qtbot):
    document = open_trace(H200_NODE)
    row = int(np.flatnonzero(document.trace.kernels.graph_node < 0)[-1])
    start, end = int(document.trace.kernels.start[row]), int(document.trace.kernels.end[row])
    origin = document.layout.origin
    window.timeline.view.setXRange(start - origin - 2_000, end - origin + 2_000, padding=0)
    qtbot.wait(50)
    ((lane, _),) = document.layout.find(KERNEL, np.array([row]))
    item = window.timeline.items[lane]
    scene = window.timeline.view.mapViewToScene(pg_point((start + end) / 2 - origin, item.y + item.height / 2))
    text = window.timeline.hover_text(scene)
    assert text.splitlines()[0].startswith("vec_add") or "vec_add" in text.splitlines()[0]
    assert "duration" in text or "start" in text
    empty = window.timeline.view.mapViewToScene(pg_point(start - origin, -50.0))  # above every lane
    assert window.timeline.hover_text(empty) == ""
    window.timeline._on_hover(scene)  # shows it, and a second move over the same event changes nothing
    assert window.timeline._hovered == text


def pg_point(x, y):
    from PySide6.QtCore import QPointF

    return QPointF(float(x), float(y))


def test_statistics_table_sorts_filters_and_highlights(window, open_trace, qtbot):
    open_trace(H200_NODE)
    stats = window.stats
    stats.table.sortByColumn(1, Qt.SortOrder.AscendingOrder)
    counts = [stats.proxy.data(stats.proxy.index(r, 1)) for r in range(stats.proxy.rowCount())]
    assert counts[-1] == "7,000"
    stats.search.setText("vec")
    assert stats.proxy.rowCount() == 1
    assert _item(window, "gpu", stream=13)._highlight_count == 7000
    stats.search.setText("")
    assert _item(window, "gpu", stream=13)._highlight_count == 0  # clearing the search clears the highlight
    stats.table.sortByColumn(2, Qt.SortOrder.DescendingOrder)
    assert stats.proxy.data(stats.proxy.index(0, 0)) == "vec_add"
    stats.table.selectRow(0)
    assert _item(window, "gpu", stream=13)._highlight_count == 7000


def test_a_corrupt_file_shows_an_error_and_keeps_the_previous_trace(window, open_trace, qtbot, tmp_path):
    document = open_trace(H200_NODE)
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(H200_NODE.read_bytes()[:30_000])
    with qtbot.waitSignal(window.load_failed, timeout=30_000) as blocker:
        window.open_path(broken)
    assert "damaged or truncated" in blocker.args[0]
    assert window.document is document and window.timeline.document is document
    assert window.error_box is not None and "damaged" in window.error_box.text()


def test_keyboard_zoom_pan_and_fit(window, open_trace, qtbot):
    open_trace(FORKJOIN)
    view = window.timeline.view
    window.timeline.setFocus()
    (x0, x1), _ = view.viewRange()
    qtbot.keyClick(window.timeline, Qt.Key.Key_W)
    (a0, a1), _ = view.viewRange()
    assert a1 - a0 < (x1 - x0) * 0.6
    qtbot.keyClick(window.timeline, Qt.Key.Key_D)
    (b0, _), _ = view.viewRange()
    assert b0 > a0
    qtbot.keyClick(window.timeline, Qt.Key.Key_F)  # back to the activity: what the first view showed
    assert view.viewRange()[0] == [x0, x1]
    qtbot.keyClick(window.timeline, Qt.Key.Key_F, Qt.KeyboardModifier.ShiftModifier)  # the whole process
    (c0, c1), _ = view.viewRange()
    span = window.document.trace.span()
    assert c1 - c0 >= (span[1] - span[0])


def test_idle_gaps_lanes_hiding_and_collapsing(window, open_trace, qtbot):
    open_trace(FORKJOIN)
    timeline = window.timeline
    with qtbot.waitSignal(timeline.gaps_ready, timeout=10_000):  # found on the background pool
        window.gaps_action.trigger()
    assert timeline.gap_items and all(len(g.lod) for g in timeline.gap_items)
    before = len(timeline.items)
    stream_key = _item(window, "gpu", stream=16).lane.key
    timeline.set_lane_hidden(stream_key, True)
    assert len(timeline.items) == before - 1
    group = _item(window, "gpu").lane.group
    timeline.set_group_collapsed(group, True)
    gpu_items = [i for i in timeline.items.values() if i.lane.group == group]
    assert len({i.y for i in gpu_items}) == 1


def test_recent_files_are_remembered(window, open_trace):
    open_trace(FORKJOIN)
    open_trace(H200_NODE)
    assert window.recent.files()[:2] == [str(H200_NODE.resolve()), str(FORKJOIN.resolve())]
    assert len(window.recent.menu.actions()) == 2


def test_a_file_with_nothing_to_draw_says_so_on_the_timeline(window, open_trace, tmp_path):
    import shutil
    import sqlite3

    path = tmp_path / "empty.sqlite"
    shutil.copy(FORKJOIN, path)
    with sqlite3.connect(path) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            if table.startswith(("CUPTI_ACTIVITY_KIND_", "NVTX_EVENTS")):
                db.execute(f"DELETE FROM {table}")
    open_trace(path)
    note = window.timeline.empty_note
    assert note.scene() is not None and "nothing to draw in empty.sqlite" in note.textItem.toPlainText()
    open_trace(FORKJOIN)  # and gone once there is something
    assert window.timeline.empty_note.scene() is None


def test_a_graph_launch_links_its_call_to_its_bracket_and_a_whole_graph_launch_comes_into_view(window, open_trace):
    document = open_trace(H200_NODE)
    window.timeline.select(GRAPH_GROUP, 1)
    start = float(document.analysis.graphs.start[1] - document.layout.origin)
    assert abs(window.timeline.link.points[1].x() - start) < 1.0  # the bracket, not the lane's first kernel
    document = open_trace(H200_GRAPH)  # graph trace mode 'graph': whole-graph rows, no brackets
    window.timeline.select(GRAPH_GROUP, 1)
    window.timeline.zoom_to_selection()
    (x0, x1), _ = window.timeline.view.viewRange()
    start = float(document.analysis.graphs.start[1] - document.layout.origin)
    assert x0 < start < x1 and x1 - x0 < 10e6  # brought into view, zoomed to it
    assert any(item.selected >= 0 for item in window.timeline.items.values())
    text = window.details.toPlainText()
    assert "Graph launch 2" in text and "launch 2 of its 3" in text
