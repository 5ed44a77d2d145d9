"""Background work in the GUI: a damaged file is a one-line failure, never a traceback."""

from __future__ import annotations

import sqlite3

import pytest


@pytest.mark.parametrize(
    "error, words",
    [
        (sqlite3.DatabaseError("database disk image is malformed"), "cannot be read as an export"),
        (PermissionError(13, "Permission denied", "/x.sqlite"), "/x.sqlite: Permission denied"),
    ],
)
def test_a_loader_error_is_one_line(qtbot, capfd, error, words):
    from graphscope.app.workers import Task, start

    def work(progress, cancel):
        raise error

    task = Task(work)
    with qtbot.waitSignal(task.signals.failed, timeout=5000) as blocker:
        start(task)
    assert words in blocker.args[0] and "\n" not in blocker.args[0]
    assert "Traceback" not in capfd.readouterr().err


def test_work_whose_window_went_away_ends_quietly(qtbot, capfd):
    """A background read still reporting progress after its window (and the task's signals) were
    deleted ends without a traceback: nobody is listening any more."""
    import shiboken6

    from graphscope.app.workers import Task

    ran = []

    def work(progress, cancel):
        shiboken6.delete(task.signals)  # what closing the window mid-read does to the task's signals
        ran.append(True)
        progress(1.0, "all columns read")

    task = Task(work)
    task.run()
    assert ran and "Traceback" not in capfd.readouterr().err
