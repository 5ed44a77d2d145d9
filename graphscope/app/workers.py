"""The one adapter that runs long work off the GUI thread, with progress and cancel."""

from __future__ import annotations

import sqlite3
import sys
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from graphscope.core.errors import Cancelled, GraphscopeError, one_line
from graphscope.core.process import lower_this_threads_priority
from graphscope.core.progress import CancelToken


class TaskSignals(QObject):
    progressed = Signal(float, str)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()


class Task(QRunnable):
    """Runs `work(*args, progress=..., cancel=...)` on a pool thread; results come back as signals."""

    def __init__(self, work: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self.work = work
        self.args = args
        self.kwargs = kwargs
        self.token = CancelToken()
        self.signals = TaskSignals()
        self.behind = False  # set by start_behind: runs below the GUI thread's priority
        self.setAutoDelete(False)

    def cancel(self) -> None:
        self.token.cancel()

    def run(self) -> None:
        if self.behind:
            lower_this_threads_priority()
        try:
            self._run()
        except RuntimeError as exc:  # the window went away first: nobody is listening any more
            if "deleted" not in str(exc):
                raise

    def _run(self) -> None:
        try:
            result = self.work(*self.args, **self.kwargs, progress=self.signals.progressed.emit, cancel=self.token)
        except Cancelled:
            self.signals.cancelled.emit()
        except (GraphscopeError, MemoryError, sqlite3.DatabaseError, UnicodeDecodeError, OSError) as exc:
            self.signals.failed.emit(one_line(exc) or repr(exc))  # the CLI's one line (core/errors.py)
        except Exception as exc:  # a bug: keep the window alive and say so
            if isinstance(exc, RuntimeError) and "Signal source has been deleted" in str(exc):
                return  # the window went away while the work ran (its progress had nowhere to go)
            traceback.print_exc(file=sys.stderr)
            self.signals.failed.emit(f"unexpected error: {exc!r}")
        else:
            self.signals.finished.emit(result)


def collect_garbage_on_gui_thread() -> Any:
    """Python's cycle collector off, run on a GUI-thread timer instead (pyqtgraph's GarbageCollector).

    A collection may start in whichever thread allocates; one that starts in a loading thread and frees
    a widget from a reference cycle aborts Qt (seen: 'Fatal Python error: Aborted ... Garbage-collecting'
    in a loader thread, after a closed window's find field and its bar referred to each other). Call
    once the QApplication exists; keep the returned collector alive."""
    from pyqtgraph.util.garbage_collector import GarbageCollector

    return GarbageCollector(interval=1.0)


SWITCH_INTERVAL_S = 0.001  # Python's default is 0.005


def hand_the_interpreter_over_quickly() -> None:
    """Let a thread waiting for the interpreter lock get it after 1 ms instead of 5 (call once, in the
    GUI's process). A frame takes the lock many times; while the analysis and the readers run on pool
    threads each take could wait a whole interval: at 10M + 10M, opened without the cache, the frames
    drawn in the 8 s after the first one had a max of 69 and 110 ms at the default, 14-27 ms at 1 ms
    (benchmarks/frames_while_loading.py, eight runs), with the first frame and the panels no later."""
    sys.setswitchinterval(SWITCH_INTERVAL_S)


def hold_cache_writes() -> None:
    """Hold the trace cache's writes (a file's entry, columns read later) until `release_cache_writes`: a
    file opened with the cache on but empty wrote its entry beside the analysis and layout of its first
    frame, on the same two cores (1M kernels + 1M calls: that frame 1.12x later than with --no-cache, CPU
    1.06x, 6 interleaved rounds under load; benchmarks/cache_warm.py --gui)."""
    from graphscope.core import answer_cache

    answer_cache.hold_writes(True)


def release_cache_writes() -> None:
    """The writes held since `hold_cache_writes` start, on a writer thread of this process (a window's
    first frame is drawn, or its load ended without one)."""
    from graphscope.core import answer_cache

    if answer_cache.writes_held():
        answer_cache.hold_writes(False)
        from graphscope.trace import cache

        cache.start_held_writes_beside()


def start(task: Task) -> Task:
    """Queue a task on the global thread pool and return it (keep a reference until it finishes)."""
    QThreadPool.globalInstance().start(task)
    return task


_behind_pool: QThreadPool | None = None


def start_behind(task: Task) -> Task:
    """Queue a task that reads or analyses an opened file on a pool of its own, whose threads run below
    the GUI thread's priority (and so do the threads they start: connectorx's readers, cache writers).

    On two cores the readers' threads took the cores from the GUI thread: at 10M + 10M the slow frames
    drawn while the remaining columns were read spent 8-70 ms of their 17-168 ms queued for a core
    (benchmarks/frames_while_loading.py, /proc schedstat). A pool of its own because a thread's priority,
    once lowered, cannot be raised again, and workload children take the priority of the thread that
    starts them: runs and tuning stay on the global pool."""
    global _behind_pool
    if _behind_pool is None:
        _behind_pool = QThreadPool()
    task.behind = True
    _behind_pool.start(task)
    return task


def wait_for_tasks(milliseconds: int) -> None:
    """Until every queued task has ended (both pools), or the time is up."""
    QThreadPool.globalInstance().waitForDone(milliseconds)
    if _behind_pool is not None:
        _behind_pool.waitForDone(milliseconds)


def tasks_running() -> int:
    """How many tasks run now, on both pools."""
    behind = _behind_pool.activeThreadCount() if _behind_pool is not None else 0
    return QThreadPool.globalInstance().activeThreadCount() + behind
