"""What the Run and Plan panels share: one background task at a time, a start and a cancel button, a
progress bar and a status line that turns red on failure."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton, QWidget

from graphscope.app.workers import Task, start

FAILED_STYLE = "color: #b3261e; font-weight: bold"


class TaskPanel(QWidget):
    """Subclasses call `_task_controls` and define `_done(result)`."""

    start_button: QPushButton
    cancel_button: QPushButton
    progress: QProgressBar
    status: QLabel

    def __init__(self) -> None:
        super().__init__()
        self.task: Task | None = None

    def _task_controls(self, label: str, on_start: Any, prompt: str) -> None:
        """The start and cancel buttons, the progress bar and the status line, wired."""
        self.start_button, self.cancel_button = QPushButton(label), QPushButton("Cancel")
        self.start_button.clicked.connect(on_start)
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.status = QLabel(prompt)
        self.status.setWordWrap(True)

    def _start_task(self, task: Task, message: str) -> None:
        self.task = task
        task.signals.progressed.connect(self._progress)
        task.signals.finished.connect(self._done)
        task.signals.failed.connect(self._error)
        task.signals.cancelled.connect(self._cancelled)
        self.start_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.status.setStyleSheet("")
        self.status.setText(message)
        start(task)

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def _progress(self, fraction: float, message: str) -> None:
        self.progress.setValue(int(fraction * 1000))
        self.status.setText(message)

    def _finish(self, message: str) -> None:
        self.task = None
        self.start_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.status.setText(message)

    def _cancelled(self) -> None:
        self._finish("cancelled; the workload process was stopped")
        self.progress.reset()

    def _error(self, message: str) -> None:
        """A failure: said in red, the progress bar emptied (it stayed at 5% after a no-GPU error)."""
        self._finish(message)
        self.progress.reset()
        self.status.setStyleSheet(FAILED_STYLE)

    def _done(self, result: Any) -> None:
        raise NotImplementedError
