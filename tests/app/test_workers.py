"""Background work in the GUI: a damaged file is a one-line failure, never a traceback."""

from __future__ import annotations

import os
import sqlite3
import sys
import threading

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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a per-thread priority is Linux's")
def test_a_files_reads_run_below_the_window_and_runs_do_not(qtbot):
    """Reads and analyses of an opened file (start_behind) run BEHIND_NICE below the GUI thread, and so do
    the threads they start; the global pool's work (workload runs, whose children take the priority of
    the thread that starts them) and the GUI thread keep theirs."""
    from graphscope.app.workers import Task, start, start_behind
    from graphscope.core.process import BEHIND_NICE

    def nice_of(thread: int) -> int:
        return os.getpriority(os.PRIO_PROCESS, thread)

    def work(progress, cancel):
        started = []
        child = threading.Thread(target=lambda: started.append(nice_of(threading.get_native_id())))
        child.start()
        child.join()
        return nice_of(threading.get_native_id()), started[0]

    base = nice_of(threading.get_native_id())
    behind = Task(work)
    with qtbot.waitSignal(behind.signals.finished, timeout=5000) as done:
        start_behind(behind)
    assert done.args[0] == (min(19, base + BEHIND_NICE),) * 2
    plain = Task(work)
    with qtbot.waitSignal(plain.signals.finished, timeout=5000) as done:
        start(plain)
    assert done.args[0] == (base, base) and nice_of(threading.get_native_id()) == base
