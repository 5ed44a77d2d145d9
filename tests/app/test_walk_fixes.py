"""What a new user's walk found (issue 23), fixed: a readable Graph view, quitting with Compare open, the
whole keyboard in Help."""

from __future__ import annotations

from PySide6.QtCore import Qt

from graphscope.core.events import Activity
from graphscope.graph.model import Dag, DagNode
from tests.conftest import DATA, H200_NODE


def test_a_long_graph_in_a_short_dock_stays_readable_and_f_refits(qtbot):
    from graphscope.app.dag_view import READABLE, DagView

    view = DagView()
    qtbot.addWidget(view)
    view.resize(900, 180)  # the bottom dock's size at the default window size
    view.show()
    qtbot.waitExposed(view)
    names = ["embed", "ln", "qkv", "attn", "proj", "ln2", "up", "gelu", "down", "add"] * 4  # no run folds
    nodes = [DagNode(i, "kernel", name, (64, 1, 1), (256, 1, 1)) for i, name in enumerate(names)]
    view.show_dag(Dag(nodes, [(i, i + 1) for i in range(len(nodes) - 1)], "live"))
    assert view.transform().m11() >= READABLE - 1e-9
    assert view.horizontalScrollBar().maximum() > 0  # it scrolls instead of shrinking
    view.scale(0.1, 0.1)
    qtbot.keyClick(view, Qt.Key.Key_F)
    assert view.transform().m11() >= READABLE - 1e-9


def test_quitting_the_main_window_closes_its_compare_windows_and_ctrl_w_closes_one(qtbot, window):
    compare = window.open_comparison({"eager": H200_NODE, "graph": DATA / "h200_seed_vecadd_graph.sqlite"})
    qtbot.waitExposed(compare)
    from PySide6.QtGui import QShortcut

    # the offscreen platform does not move activation to a second window, so the shortcut is fired here
    shortcuts = {s.key().toString(): s for s in compare.findChildren(QShortcut)}
    assert set(shortcuts) == {"Ctrl+W", "Ctrl+Q"}
    shortcuts["Ctrl+W"].activated.emit()
    qtbot.waitUntil(lambda: not compare.isVisible())
    second = window.open_comparison({"eager": H200_NODE, "graph": DATA / "h200_seed_vecadd_graph.sqlite"})
    qtbot.waitExposed(second)
    window.close()  # File > Quit
    assert not second.isVisible()


def test_help_lists_every_shortcut_the_menus_have():
    from graphscope.app.main_window import KEYBOARD

    for key in ("Ctrl+O", "Ctrl+Shift+O", "Ctrl+E", "Ctrl+]", "Ctrl+[", "Ctrl+Q", "Ctrl+W", "Backspace", "Z:"):
        assert key in KEYBOARD, key


def test_esc_clears_details_too(qtbot, window, open_trace):
    document = open_trace(H200_NODE)
    qtbot.waitUntil(lambda: window.task is None, timeout=30_000)
    window.timeline.select(0, 0)  # the first kernel, as a click selects it
    assert "Nothing selected" not in window.details.toPlainText()
    qtbot.keyClick(window.timeline, Qt.Key.Key_Escape)
    assert window.details.toPlainText().startswith("Nothing selected")
    assert document.summary["launch"]["verdict"][:40] in window.details.toPlainText().replace("\n", " ")


def test_a_narrow_inspector_or_a_tall_kernels_dock_is_not_restored(qtbot):
    """A layout saved with the Inspector at 110 px (a word a line) or the Kernels dock over half the window
    comes back readable."""
    from graphscope.app.main_window import BOTTOM_DOCK_HEIGHT, INSPECTOR_MIN_WIDTH, MainWindow

    first = MainWindow()
    qtbot.addWidget(first)
    first.resize(1400, 900)
    first.show()
    qtbot.waitExposed(first)
    qtbot.wait(50)  # the start-up check has run
    first.resizeDocks([first.inspector_dock], [110], Qt.Orientation.Horizontal)
    first.resizeDocks([first.kernels_dock], [600], Qt.Orientation.Vertical)
    qtbot.wait(50)
    assert first.inspector_dock.width() < INSPECTOR_MIN_WIDTH and first.kernels_dock.height() > 450
    first.close()
    again = MainWindow()
    qtbot.addWidget(again)
    again.show()
    qtbot.waitExposed(again)
    qtbot.waitUntil(lambda: again.inspector_dock.width() >= INSPECTOR_MIN_WIDTH, timeout=2000)
    assert again.kernels_dock.height() <= max(again.height() // 3, BOTTOM_DOCK_HEIGHT) + 10


def test_find_steps_through_matches_selecting_each_and_bringing_it_into_view(qtbot, window, open_trace):
    document = open_trace(DATA / "h200_torch_mlp_node.sqlite")
    bar = window.find_bar
    window.find_bar.focus()
    qtbot.keyClicks(bar.field, "memcpy htod")
    qtbot.keyClick(bar.field, Qt.Key.Key_Return)
    total = len(bar.matches)
    assert total > 0 and bar.count.text() == f"{bar.current + 1} of {total}"
    first = bar.current
    source, row = window.timeline.selection
    assert source == Activity.MEMCPY
    assert window.details.toPlainText().lower().startswith("memcpy htod")  # Details shows the found copy
    (x0, x1), _ = window.timeline.view.viewRange()
    start = float(document.trace.memcpy.start[row] - document.layout.origin)
    assert x0 <= start <= x1 and x1 - x0 < 1e6  # zoomed to it
    qtbot.keyClick(bar.field, Qt.Key.Key_Return)
    assert bar.current == (first + 1) % total
    qtbot.keyClick(bar.field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert bar.current == first
    bar.field.setText("no such thing")
    qtbot.keyClick(bar.field, Qt.Key.Key_Return)
    assert bar.count.text() == "no match"


def test_a_ruler_reads_the_time_between_two_marks_and_z_zooms_to_a_dragged_scope(qtbot, window, open_trace):
    open_trace(H200_NODE)
    timeline = window.timeline
    timeline.mark(1_000_000.0)
    timeline.mark(3_500_000.0)
    assert timeline.ruler_text() == "2.5 ms between 1.000000 ms and 3.500000 ms"
    timeline.mark(4_000_000.0)  # a third mark starts a new measurement
    assert timeline.ruler_text() == "mark 4.000000 ms: M again at the second point"
    qtbot.keyClick(timeline, Qt.Key.Key_Escape)
    assert timeline.ruler_text() == ""
    timeline._on_axis_drag(2_000_000.0, 2_600_000.0, True)
    qtbot.waitUntil(lambda: window.current_view is not None and window.current_view.scope is not None, timeout=10_000)
    timeline.clear_selection()
    qtbot.keyClick(timeline, Qt.Key.Key_Z)
    (x0, x1), _ = timeline.view.viewRange()
    assert 1_900_000 <= x0 <= 2_000_000 and 2_600_000 <= x1 <= 2_700_000


def test_the_kernels_table_and_the_timeline_follow_each_other(qtbot, window, open_trace):
    document = open_trace(H200_NODE)
    window.timeline.select(Activity.KERNEL, 5)
    stats = window.stats
    chosen = stats.table.selectionModel().selectedRows()
    assert len(chosen) == 1
    row = stats.proxy.mapToSource(chosen[0]).row()
    assert stats.model.identity(row) == document.identity_of(5)
    # and back: a double-clicked row shows its next kernel, again the one after
    index = stats.proxy.mapFromSource(stats.model.index(row, 0))
    stats.table.doubleClicked.emit(index)
    first = window.timeline.selection
    assert first[0] == Activity.KERNEL and document.identity_of(first[1]) == stats.model.identity(row)
    stats.table.doubleClicked.emit(index)
    second = window.timeline.selection
    starts = document.trace.kernels.start
    assert document.identity_of(second[1]) == stats.model.identity(row) and starts[second[1]] > starts[first[1]]
    (x0, x1), _ = window.timeline.view.viewRange()
    assert x0 <= starts[second[1]] - document.layout.origin <= x1
