"""The rank overview: a folder of one job's rank traces analysed in a child process, a row per
rank with the planted straggler named, and a double-clicked rank opening its lanes in the main window."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tests.synthetic_ranks import write_rank_set

pytest.importorskip("dask.distributed")


def test_a_folder_of_ranks_opens_as_an_overview_and_a_rank_opens_its_lanes(qtbot, window, tmp_path):
    folder = tmp_path / "job"
    write_rank_set(folder, world=4, steps=8, slow_gpu={(2, 4): 500_000, (2, 6): 500_000})
    window.open_ranks(folder)
    qtbot.waitUntil(lambda: bool(window.rank_windows), timeout=120_000)
    overview = window.rank_windows[0]
    table = overview.table
    assert table.rowCount() == 4
    rows = {table.item(r, 0).text(): r for r in range(table.rowCount())}
    assert set(rows) == {"0", "1", "2", "3"}
    stragglers = {rank: int(table.item(row, 3).text()) for rank, row in rows.items()}
    assert stragglers["2"] >= 2 and stragglers["2"] == max(stragglers.values())  # the planted one
    assert "Verdict:" in overview.header.text() and not overview.chart.isHidden()
    assert overview.chart.renderer().isValid()  # the lateness chart is drawn, not refused
    with qtbot.waitSignal(window.loaded, timeout=30_000):
        table.cellDoubleClicked.emit(rows["2"], 0)
    assert window.document.trace.path.name == table.item(rows["2"], 6).text()
    qtbot.keyClick(overview, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)
    assert not overview.isVisible()


def test_a_folder_without_traces_is_one_line_in_the_status_bar(qtbot, window, tmp_path):
    empty = tmp_path / "nothing"
    empty.mkdir()
    window.open_ranks(empty)
    qtbot.waitUntil(lambda: "cannot analyse the ranks" in window.status_label.text(), timeout=60_000)
    assert "no traces" in window.status_label.text() and not window.rank_windows


def test_a_cancelled_rank_job_stops_its_child_and_says_cancelled(tmp_path):
    from graphscope.app.ranks_window import job_of_folder
    from graphscope.core.errors import Cancelled
    from graphscope.core.progress import CancelToken

    folder = tmp_path / "job"
    write_rank_set(folder, world=2, steps=4)
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled, match="cancelled by the user"):  # was a TypeError: 'unexpected error'
        job_of_folder(folder, cancel=token)


def test_a_rank_job_cancelled_while_its_child_runs_says_cancelled(tmp_path):
    """Cancelled once the child started: it is killed, or (a small job answers in 0.17 s) its answer is
    dropped; either way the window says cancelled, never shows the answer."""
    import threading

    from graphscope.app.ranks_window import job_of_folder
    from graphscope.core.errors import Cancelled
    from graphscope.core.progress import CancelToken

    folder = tmp_path / "job"
    write_rank_set(folder, world=2, steps=4)
    token = CancelToken()
    threading.Timer(0.05, token.cancel).start()
    with pytest.raises(Cancelled, match="cancelled by the user"):
        job_of_folder(folder, cancel=token)


def test_file_menu_opens_the_demo_rank_set(window, monkeypatch):
    from graphscope.core.settings import demo_ranks

    opened = []
    monkeypatch.setattr(window, "open_ranks", opened.append)
    actions = [a for m in window.menuBar().actions() for a in m.menu().actions()]
    action = next(a for a in actions if "demo rank set" in a.text().replace("&", ""))
    action.trigger()
    assert opened == [demo_ranks()] and (opened[0] / "rank0.json.gz").is_file()
