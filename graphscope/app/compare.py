"""Two timelines, one above the other, on one time axis: eager and graph runs of a workload, or any
trace against another (File > Compare with…); and the comparison report of the two."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QApplication, QHBoxLayout, QLabel, QPushButton, QSplitter, QVBoxLayout, QWidget

from graphscope.app.report_dialog import export_report
from graphscope.app.timeline import TimelineView
from graphscope.app.workers import Task, start_behind
from graphscope.core.events import measured_range
from graphscope.view.document import ALIGN_FOCUS, TraceDocument, open_document


class CompareWindow(QWidget):
    """Opens two exports in the background and links their time axes.

    `traces` maps a label to a path. A run's traces (labels 'eager' and 'graph') line up at their first
    measured repetition; other traces at the start of the activity each one's first view shows.
    """

    def __init__(self, traces: dict[str, Path], parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setWindowTitle("graphscope: " + " vs ".join(traces))
        self.resize(1500, 900)
        self.views: dict[str, TimelineView] = {}
        self.labels: dict[str, QLabel] = {}
        self.tasks: list[Task] = []
        self.documents: dict[str, TraceDocument] = {}
        self.export_button = QPushButton("Export report…")
        self.export_button.setEnabled(False)
        self.export_button.clicked.connect(self.export)
        splitter = QSplitter(Qt.Orientation.Vertical)
        for label, path in traces.items():
            pane = QWidget()
            layout = QVBoxLayout(pane)
            layout.setContentsMargins(0, 0, 0, 0)
            self.labels[label] = QLabel(f"<b>{label}</b>: loading {Path(path).name}…")
            self.labels[label].setWordWrap(True)
            self.views[label] = TimelineView()
            layout.addWidget(self.labels[label])
            layout.addWidget(self.views[label])
            splitter.addWidget(pane)
            align = measured_range(label, 0) if label in ("eager", "graph") else ALIGN_FOCUS
            task = Task(open_document, Path(path), align_to=align)
            task.signals.finished.connect(lambda document, m=label: self._loaded(m, document))
            task.signals.failed.connect(lambda message, m=label: self.labels[m].setText(f"<b>{m}</b>: {message}"))
            self.tasks.append(start_behind(task))
        first = next(iter(self.views.values()))
        for view in list(self.views.values())[1:]:
            view.view.setXLink(first.view)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("both time axes start at each trace's first measured step (or its activity)"), 1)
        bar.addWidget(self.export_button)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(splitter, 1)
        QShortcut(QKeySequence("Ctrl+W"), self, self.close)
        QShortcut(QKeySequence("Ctrl+Q"), self, QApplication.closeAllWindows)  # as in the main window

    def closeEvent(self, event) -> None:
        for task in self.tasks:  # a trace still loading stops rather than finishing for a closed window
            task.cancel()
        super().closeEvent(event)

    def _loaded(self, label: str, document: TraceDocument) -> None:
        self.documents[label] = document
        view = self.views[label]
        view.set_document(document)
        launch = document.summary["launch"]
        self.labels[label].setText(
            f"<b>{label}</b>: {Path(document.trace.path).name} — {document.summary['kernels']['count']:,} kernels, "
            f"{document.summary['graphs']['launches']} graph launches; {launch['verdict']}"
        )
        if len(self.documents) == len(self.views):  # both in: show the first steps side by side
            spans = [d.focus[1] - d.focus[0] for d in self.documents.values()]
            next(iter(self.views.values())).view.setXRange(-0.02 * max(spans), max(spans) * 1.02, padding=0)
            self.export_button.setEnabled(len(self.documents) == 2)

    def report_sides(self):
        """Both documents as report sides, A and B in the window's order (whichever finished loading
        first), over the scopes `graphscope report A B` uses: one engine, one headline (report/compose.py)."""
        from graphscope.report.compose import trace_sides

        documents = [self.documents[label] for label in self.views if label in self.documents]
        return trace_sides(*((d.trace, d.analysis) for d in documents))

    def export(self) -> None:
        from graphscope.report.compose import report_of

        self.tasks.append(export_report(self, lambda: report_of(*self.report_sides()), "comparison.html"))
