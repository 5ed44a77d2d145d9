"""Two timelines, one above the other, on one time axis: eager and graph runs of the same workload."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget

from graphscope.app.document import TraceDocument, open_document
from graphscope.app.timeline import TimelineView
from graphscope.app.workers import Task, start

ALIGN = "graphscope {mode} rep 0"  # the NVTX range the runner puts around the first measured repetition


class CompareWindow(QWidget):
    """Opens two exports in the background and links their time axes (t = 0: first measured repetition)."""

    def __init__(self, traces: dict[str, Path], parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setWindowTitle("graphscope: " + " vs ".join(traces))
        self.resize(1500, 900)
        self.views: dict[str, TimelineView] = {}
        self.labels: dict[str, QLabel] = {}
        self.tasks: list[Task] = []
        self.documents: dict[str, TraceDocument] = {}
        splitter = QSplitter(Qt.Orientation.Vertical)
        for mode, path in traces.items():
            pane = QWidget()
            layout = QVBoxLayout(pane)
            layout.setContentsMargins(0, 0, 0, 0)
            self.labels[mode] = QLabel(f"<b>{mode}</b>: loading {Path(path).name}…")
            self.views[mode] = TimelineView()
            layout.addWidget(self.labels[mode])
            layout.addWidget(self.views[mode])
            splitter.addWidget(pane)
            task = Task(open_document, Path(path), align_to=ALIGN.format(mode=mode))
            task.signals.finished.connect(lambda document, m=mode: self._loaded(m, document))
            task.signals.failed.connect(lambda message, m=mode: self.labels[m].setText(f"<b>{m}</b>: {message}"))
            self.tasks.append(start(task))
        first = next(iter(self.views.values()))
        for view in list(self.views.values())[1:]:
            view.view.setXLink(first.view)
        QVBoxLayout(self).addWidget(splitter)

    def _loaded(self, mode: str, document: TraceDocument) -> None:
        self.documents[mode] = document
        view = self.views[mode]
        view.set_document(document)
        launch = document.summary["launch"]
        self.labels[mode].setText(
            f"<b>{mode}</b>: {Path(document.trace.path).name} — {document.summary['kernels']['count']:,} kernels, "
            f"{document.summary['graphs']['launches']} graph launches; {launch['verdict']}"
        )
        if len(self.documents) == len(self.views):  # both in: show the first repetitions side by side
            span = max(d.trace.span()[1] - d.layout.origin for d in self.documents.values())
            next(iter(self.views.values())).view.setXRange(-0.02 * span, span * 0.3, padding=0)
