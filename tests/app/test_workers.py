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
