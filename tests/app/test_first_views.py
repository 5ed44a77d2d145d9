"""What a new user meets first (issue 44): the GPU lanes of a PyTorch trace in view, lanes named for what
they hold, the profiler named in the Summary, call stacks collapsed and expandable."""

from __future__ import annotations

import time

from tests.conftest import DATA

RANK0 = DATA / "kineto" / "hta__rank0_of_16_graph_launches.json.gz"
REPLAY = DATA / "kineto" / "hta__trace_diff_test_graph_replay.json.gz"


def _rows_in_view(window) -> tuple[float, float]:
    (_, _), (y0, y1) = window.timeline.view.viewRange()
    return y0, y1


def test_a_pytorch_trace_opens_with_every_gpu_lane_in_view(window, open_trace):
    for path in (RANK0, REPLAY):
        open_trace(path)
        y0, y1 = _rows_in_view(window)
        gpu = [item for item in window.timeline.items.values() if item.lane.kind == "gpu"]
        assert gpu and all(y0 <= item.y and item.y + item.height <= y1 for item in gpu), path.name


def test_pytorch_lanes_are_named_for_what_they_hold(window, open_trace):
    document = open_trace(RANK0)
    labels = [lane.label for lane in document.layout.lanes]
    assert "operators · main thread" in labels and "CUDA API · main thread" in labels
    assert "annotations · main thread" in labels
    assert "GPU 0 · stream 7" in labels
    assert not any("NVTX" in label or "[" in label for label in labels)
    groups = {lane.group for lane in document.layout.lanes}
    assert groups == {"pid 4515", "GPU 0 · NVIDIA A100-SXM4-80GB"}
    # every range is on the lane of its category, none lost by the split
    nvtx_lanes = [lane for lane in document.layout.lanes if lane.kind == "nvtx"]
    assert sum(len(lane) for lane in nvtx_lanes) == len(document.trace.nvtx)


def test_the_summary_names_the_profiler_that_wrote_the_file(window, open_trace):
    open_trace(RANK0)
    text = window.summary.toPlainText()
    assert "recorded by" in text and "PyTorch profiler (Kineto)" in text
    assert "Nsight Systems" not in text
    open_trace(DATA / "h200_forkjoin_node.sqlite")
    assert "Nsight Systems 2025.3.2.0" in window.summary.toPlainText()


def test_call_stacks_open_in_one_row_and_expand_from_the_lanes_panel(window, open_trace, qtbot):
    from PySide6.QtCore import Qt

    document = open_trace(RANK0)
    timeline = window.timeline
    operators = next(i for i in timeline.items.values() if i.lane.label == "operators · main thread")
    assert operators.lane.depth_rows == 4 and operators.flat and operators.height == 1
    gpu_top = min(i.y for i in timeline.items.values() if i.lane.kind == "gpu")

    # the Lanes panel's collapse box on the lane expands it: four rows, the GPU lanes move down by three
    panel = window.lanes
    lane_items = [panel.topLevelItem(0).child(k) for k in range(panel.topLevelItem(0).childCount())]
    row = next(item for item in lane_items if item.text(0).startswith("operators · main thread"))
    assert row.checkState(1) == Qt.CheckState.Checked
    row.setCheckState(1, Qt.CheckState.Unchecked)
    operators = next(i for i in timeline.items.values() if i.lane.label == "operators · main thread")
    assert not operators.flat and operators.height == 4
    assert min(i.y for i in timeline.items.values() if i.lane.kind == "gpu") == gpu_top + 3
    assert "operators" not in timeline.flat_roles

    # remembered: the next PyTorch trace opens its operator stacks expanded, in this window and the next
    open_trace(REPLAY)
    assert not any(i.flat for i in timeline.items.values() if i.lane.role == "operators")
    assert any(i.flat for i in timeline.items.values() if i.lane.role == "annotations")
    from graphscope.app.main_window import MainWindow

    again = MainWindow()
    qtbot.addWidget(again)
    assert "operators" not in again.timeline.flat_roles and "annotations" in again.timeline.flat_roles
    assert document.layout is not None


def test_a_click_on_a_lane_name_collapses_and_expands_it(window, open_trace):
    open_trace(RANK0)
    timeline = window.timeline
    annotations = next(i for i in timeline.items.values() if i.lane.label == "annotations · main thread")
    timeline._on_label_click(annotations.y + 0.5)
    annotations = next(i for i in timeline.items.values() if i.lane.label == "annotations · main thread")
    assert not annotations.flat and annotations.height == annotations.lane.depth_rows == 8
    lanes_row = next(
        window.lanes.topLevelItem(0).child(k)
        for k in range(window.lanes.topLevelItem(0).childCount())
        if window.lanes.topLevelItem(0).child(k).text(0).startswith("annotations · main thread")
    )
    assert lanes_row.checkState(1).name == "Unchecked"  # the panel follows
    group = timeline._label_rows[0]
    timeline._on_label_click((group[0] + group[1]) / 2)  # the process's header: the whole group collapses
    assert "pid 4515" in timeline.collapsed


def test_the_keyboard_starts_on_the_timeline(window, open_trace, qtbot):
    from PySide6.QtCore import Qt

    open_trace(RANK0)
    window.activateWindow()
    qtbot.waitUntil(lambda: window.timeline.hasFocus(), timeout=5000)
    (x0, x1), _ = window.timeline.view.viewRange()
    qtbot.keyClick(window.timeline, Qt.Key.Key_W)  # zooms in at once, types nothing into the find field
    (a, b), _ = window.timeline.view.viewRange()
    assert (b - a) < 0.6 * (x1 - x0)
    assert window.find_bar.field.text() == ""


def test_ctrl_e_in_the_find_field_exports_a_report(window, open_trace, qtbot):
    from PySide6.QtCore import QEvent, Qt
    from PySide6.QtGui import QKeyEvent

    open_trace(RANK0)
    field = window.find_bar.field
    for key, taken in ((Qt.Key.Key_E, False), (Qt.Key.Key_O, False), (Qt.Key.Key_A, True), (Qt.Key.Key_V, True)):
        override = QKeyEvent(QEvent.Type.ShortcutOverride, key, Qt.KeyboardModifier.ControlModifier)
        override.ignore()  # as Qt sends it; a line edit accepts what it binds (Ctrl+E: end of line on X11)
        field.event(override)
        assert override.isAccepted() == taken, key  # not taken: the window's shortcut runs


def test_file_open_lists_every_format_graphscope_reads():
    from graphscope.app.other_windows import EXPORT_FILTER

    filters = EXPORT_FILTER.split(";;")
    assert filters[0].startswith("Traces graphscope reads")
    for pattern in ("*.sqlite", "*.nsys-rep", "*.json", "*.json.gz", "*.pt.trace.json.gz"):
        assert pattern in filters[0]
    assert any(f.startswith("PyTorch-profiler traces") and "*.json.gz" in f for f in filters)
    assert filters[-1] == "All files (*)" and len(filters) == 5


def test_a_failed_plan_empties_its_progress_bar(qtbot, tmp_path):
    """The Plan panel's bar stayed at 5% after a no-GPU error: a failure empties it (TaskPanel)."""
    from graphscope.app.plan_panel import PlanPanel
    from graphscope.app.workers import Task
    from graphscope.core.errors import NoGpuError

    panel = PlanPanel(tmp_path / "s.sqlite")
    qtbot.addWidget(panel)

    def measure(progress, cancel):
        progress(0.05, "measuring each size in a child process…")
        time.sleep(0.05)
        raise NoGpuError("no CUDA GPU is available")

    panel._start_task(Task(measure), "measuring…")
    qtbot.waitUntil(lambda: panel.task is None, timeout=10_000)
    assert "no CUDA GPU" in panel.status.text()
    assert panel.progress.value() <= panel.progress.minimum()


def test_no_axes_until_there_is_something_to_draw(window, open_trace, tmp_path, qtbot):
    """An empty window, a failed open or a file with nothing to draw shows no 0-20 lane axis and no
    0-1 ns time axis; a trace brings them."""
    import shutil
    import sqlite3

    plot = window.timeline.getPlotItem()

    def axes_shown() -> bool:
        return plot.getAxis("left").isVisible() and plot.getAxis("bottom").isVisible()

    assert not axes_shown()
    bad = tmp_path / "picture.json"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    with qtbot.waitSignal(window.load_failed, timeout=30_000):
        window.open_path(bad)
    assert not axes_shown()
    empty = tmp_path / "empty.sqlite"
    shutil.copy(DATA / "h200_forkjoin_node.sqlite", empty)
    with sqlite3.connect(empty) as db:
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall():
            if table.startswith(("CUPTI_ACTIVITY_KIND_", "NVTX_EVENTS")):
                db.execute(f"DELETE FROM {table}")
    open_trace(empty)
    assert not axes_shown() and window.timeline.empty_note.scene() is not None
    open_trace(RANK0)
    assert axes_shown()


def test_a_kernels_table_selection_is_described_in_details(window, open_trace):
    document = open_trace(RANK0)
    table = window.stats.table
    table.selectRow(0)
    source_row = window.stats.proxy.mapToSource(window.stats.proxy.index(0, 0)).row()
    identity = window.stats.model.identity(source_row)
    launches = len(document.kernels_of(identity))  # counted a second way: the kernels of that identity
    text = window.details.toPlainText()
    assert "Kernel (Kernels table)" in text and window.stats.model.labels[source_row] in text
    assert f"launches\n{launches:,}\n" in text
    assert "Nothing selected" not in text
    table.selectRow(1)
    table.selectionModel().select(
        window.stats.proxy.index(0, 0),
        table.selectionModel().SelectionFlag.Select | table.selectionModel().SelectionFlag.Rows,
    )
    assert "2 kernels (Kernels table)" in window.details.toPlainText()


def test_hovering_a_collapsed_stack_names_its_outermost_range_and_duration(window, open_trace, qtbot):
    import numpy as np
    import pyqtgraph as pg

    document = open_trace(RANK0)
    timeline = window.timeline
    item = next(i for i in timeline.items.values() if i.lane.label == "operators · main thread")
    lane = item.lane
    outer = np.flatnonzero(lane.depth == 0)
    event = int(outer[np.argmax(lane.end[outer] - lane.start[outer])])  # the longest top-level operator
    timeline.view.setXRange(lane.start[event] - 1e3, lane.end[event] + 1e3, padding=0)
    qtbot.wait(50)
    point = pg.Point((lane.start[event] + lane.end[event]) / 2, item.y + 0.5)
    text = timeline.hover_text(timeline.view.mapViewToScene(point))
    name = document.trace.symbols.name(int(lane.name[event]))
    assert name in text.splitlines()[0] or name[:40] in text
    assert "duration" in text


def test_the_lanes_panel_keeps_what_a_lane_holds_in_view(window, open_trace):
    """Names cut at the right ("python3 [144] CUD…") lost what the lane holds: elided in the middle, in
    full in the tooltip, the panel wide enough for the usual name."""
    from PySide6.QtCore import Qt

    open_trace(DATA / "h200_torch_mlp_node.sqlite")
    panel = window.lanes
    assert panel.textElideMode() == Qt.TextElideMode.ElideMiddle and panel.sizeHint().width() >= 360
    row = panel.topLevelItem(0).child(0)
    assert row.text(0).startswith("python3 [729] CUDA API") and row.toolTip(0).startswith(row.text(0))


def test_graph_boxes_read_on_every_fill():
    """Box text contrasts with every heat fill (grey on red read poorly: 4:1 or better now); the
    smallest fitted scale keeps box text about 11 px."""
    from graphscope.app.dag_view import BOX_POINTS, READABLE, heat, ink_on

    def contrast(a, b) -> float:
        def lum(c):
            channels = [((v / 255) / 12.92 if v / 255 <= 0.03928 else ((v / 255 + 0.055) / 1.055) ** 2.4)
                        for v in (c.red(), c.green(), c.blue())]  # fmt: skip
            return 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2]

        high, low = sorted((lum(a), lum(b)), reverse=True)
        return (high + 0.05) / (low + 0.05)

    for share in (0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0):
        fill = heat(share)
        title, subtitle = ink_on(fill)
        assert contrast(fill, title) >= 4.0 and contrast(fill, subtitle) >= 3.0, share
    assert BOX_POINTS * READABLE * 96 / 72 >= 11


def test_the_overview_strip_marks_the_view_and_moves_it(window, open_trace, qtbot):
    """The whole trace above the timeline: its window follows the timeline's range, dragging it pans the
    timeline, a click beside it centres the view there; its columns hold the GPU's busy time."""
    import numpy as np

    from graphscope.app.overview import busy_columns

    document = open_trace(RANK0)
    overview, view = window.overview, window.timeline.view
    assert overview.isVisible()
    (x0, x1), _ = view.viewRange()
    low, high = overview.region.getRegion()
    assert abs(low - x0) < 1 and abs(high - x1) < 1
    window.timeline.zoom(0.5)
    (x0, x1), _ = view.viewRange()
    assert np.allclose(overview.region.getRegion(), (x0, x1))
    overview.region.setRegion((x0 + 1e6, x1 + 1e6))  # as a drag does
    (y0, y1), _ = view.viewRange()
    assert abs(y0 - (x0 + 1e6)) < 1 and abs(y1 - (x1 + 1e6)) < 1
    # the strip's busy time, counted a second way: GPU work (stream lanes) per column of the whole trace
    edges, share = busy_columns(document, columns=50)
    lanes = [lane for lane in document.layout.lanes if lane.kind == "gpu"]
    width = edges[1] - edges[0]
    total = sum(float((lane.end - lane.start).sum()) for lane in lanes)
    assert abs(share.sum() * width * len(lanes) - total) < 0.05 * total
