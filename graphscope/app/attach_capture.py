"""File > Attach capture trace…: a separate trace of the graphs' capture attached to the opened replay
trace, so Details, the Kernels table by module and the DAG by module name what made each replayed node
(view/attached.py does the work, off the GUI thread). A mixin of MainWindow: it uses the window's
document, panels, settings and status line.

An attachment is remembered per trace file in the window's settings (as recent files are, not in the
saved view: that is a cache, evicted and skipped with --no-cache, while this is the user's choice) and
made again, behind the GUI thread, the next time the trace is opened.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

from PySide6.QtCore import QSettings, SignalInstance
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget, QFileDialog, QLabel, QMessageBox, QWidget

from graphscope.app.other_windows import EXPORT_FILTER
from graphscope.app.workers import Task, start_behind
from graphscope.view.attached import Attachment, attach, use

if TYPE_CHECKING:
    from graphscope.app.graph_panel import GraphPanel
    from graphscope.app.stats_panel import StatsPanel
    from graphscope.trace.model import Trace
    from graphscope.view.document import TraceDocument

ATTACHED_KEY = "captures/attached"  # {trace path: [capture paths]}, as JSON
REMEMBERED_AT_MOST = 100  # traces whose captures are remembered; the oldest are forgotten first


class AttachCapture:
    """The attached capture of the open trace, its background task and its memory across opens."""

    document: TraceDocument | None  # the window's, as every attribute declared here
    task: Task | None
    persist: bool
    settings: QSettings
    status_label: QLabel
    stats: StatsPanel
    graph_panel: GraphPanel
    kernels_dock: QDockWidget
    details_idle: bool
    details_event: tuple[int, int] | None
    capture_attached: SignalInstance
    capture_failed: SignalInstance
    detach_action: QAction
    _describe_event: Callable[[int, int], None]
    _set_busy: Callable[..., None]
    _on_progress: Callable[[float, str], None]

    def _attach_capture(self) -> None:
        self.attach_task: Task | None = None
        self.attachment: Attachment | None = None
        self.pending_captures: list[Path] | None = None  # asked for before the trace was ready
        self.attach_box: QMessageBox | None = None

    def choose_capture(self) -> None:
        """Ask for the capture trace(s) of the open replay trace (several files: one per size and rank)."""
        if self.document is None:
            QMessageBox.information(
                cast(QWidget, self),
                "Attach capture trace",
                "open the replay trace first, then attach the trace of its capture",
            )
            return
        paths, _ = QFileDialog.getOpenFileNames(
            cast(QWidget, self),
            "Attach the trace of the graphs' capture",
            str(Path(self.document.trace.path).parent),
            EXPORT_FILTER,
        )
        if paths:
            self.attach_captures([Path(p) for p in paths])

    def attach_captures(self, paths: list[Path], remember: bool = True, remembered: bool = False) -> None:
        """Attribute the open trace's replayed nodes from these capture traces, behind the GUI thread;
        before the trace's panels are ready, once they are."""
        document = self.document
        if document is None or document.view is None or self.task is not None:
            self.pending_captures = list(paths)
            return
        if self.attach_task is not None:
            self.attach_task.cancel()
        trace = document.trace
        task = self.attach_task = Task(attach, trace, list(paths))
        task.signals.progressed.connect(lambda fraction, message: self._attach_progress(task, fraction, message))
        task.signals.finished.connect(lambda found: self._attached(task, trace, found, remember, remembered))
        task.signals.failed.connect(lambda message: self._attach_failed(task, paths, message, remembered))
        task.signals.cancelled.connect(lambda: self._attach_cancelled(task))
        self._set_busy(True, f"attaching {', '.join(p.name for p in paths)}…")  # Cancel stops it
        start_behind(task)

    def _attach_progress(self, task: Task, fraction: float, message: str) -> None:
        if task is self.attach_task:
            self._on_progress(fraction, message)

    def _attach_cancelled(self, task: Task) -> None:
        if task is self.attach_task:
            self.attach_task = None
            if self.task is None:  # not cancelled by the opening of another file, whose progress shows
                self._set_busy(False, "attaching the capture trace cancelled")

    def detach_capture(self) -> None:
        """Back to the trace's own attribution; the trace is no longer opened with the capture."""
        if self.document is None or self.attachment is None:
            self.status_label.setText("no capture trace is attached to this trace")
            return
        trace, names = self.document.trace, self.attachment.names()
        self.attachment = None
        use(trace, None)
        self._remember(Path(trace.path), [])
        self._attribution_changed(f"capture {names} detached: the replayed nodes are named from this trace alone")

    def _attach_on_open(self) -> None:
        """A new trace's panels are ready: attach what was asked for it, or what was attached last time."""
        self.attachment = None
        self.detach_action.setEnabled(False)
        if self.attach_task is not None:
            self.attach_task.cancel()
            self.attach_task = None
        paths, remembered = self.pending_captures, False
        self.pending_captures = None
        if paths is None and self.persist and self.document is not None:
            paths, remembered = self._remembered(Path(self.document.trace.path)), True
        if paths:
            self.attach_captures(paths, remember=not remembered, remembered=remembered)

    def _attached(self, task: Task, trace: Trace, found: Attachment, remember: bool, remembered: bool) -> None:
        if task is not self.attach_task or self.document is None or trace is not self.document.trace:
            return  # another trace was opened, or another capture attached, meanwhile
        self.attach_task = None
        self._set_busy(False)
        message = found.message()
        if found.matched:
            self.attachment = found
            use(trace, found)
            if remember:
                self._remember(Path(trace.path), found.paths)
            self._attribution_changed(message, show=not remembered)
        else:
            self.status_label.setText(message)
            if not remembered:
                self._tell("Attach capture trace", message)
        self.capture_attached.emit(found)

    def _attach_failed(self, task: Task, paths: list[Path], message: str, remembered: bool) -> None:
        if task is not self.attach_task:
            return
        self.attach_task = None
        self._set_busy(False)
        line = f"cannot attach {', '.join(p.name for p in paths)}: {message}"
        self.status_label.setText(line)
        if not remembered:
            self._tell("Attach capture trace", line)
        self.capture_failed.emit(line)

    def _attribution_changed(self, message: str, show: bool = False) -> None:
        """The trace's attribution is another: the module views and Details are made again from it."""
        document = self.document
        self.status_label.setText(message)
        self.detach_action.setEnabled(self.attachment is not None)
        if document is None:
            return
        self.stats.attribution_changed(message if self.attachment is not None else None)
        self.graph_panel.show_trace_dags(document.dags, document.trace.info.graph_trace_mode, document.trace)
        if not self.details_idle and self.details_event is not None:
            self._describe_event(*self.details_event)
        if show:  # where the answer is: the replayed work by module
            self.stats.group.setCurrentText("module")
            self.kernels_dock.raise_()

    def _tell(self, title: str, message: str) -> None:
        if cast(QWidget, self).isVisible():  # non-blocking, as a failed open
            self.attach_box = QMessageBox(
                QMessageBox.Icon.Information, title, message, QMessageBox.StandardButton.Ok, cast(QWidget, self)
            )
            self.attach_box.open()

    # -- remembered per trace ---------------------------------------------------------------------

    def _remembered_all(self) -> dict[str, list[str]]:
        try:
            found = json.loads(str(self.settings.value(ATTACHED_KEY, "{}")))
        except ValueError:
            return {}
        return found if isinstance(found, dict) else {}

    def _remembered(self, trace: Path) -> list[Path]:
        """The captures last attached to this trace that are still there."""
        paths = [Path(p) for p in self._remembered_all().get(str(trace.resolve()), []) if isinstance(p, str)]
        return [p for p in paths if p.exists()]

    def _remember(self, trace: Path, captures: list[Path]) -> None:
        if not self.persist:
            return
        known = self._remembered_all()
        key = str(trace.resolve())
        known.pop(key, None)
        if captures:
            known[key] = [str(p.resolve()) for p in captures]
        while len(known) > REMEMBERED_AT_MOST:
            known.pop(next(iter(known)))
        self.settings.setValue(ATTACHED_KEY, json.dumps(known))
