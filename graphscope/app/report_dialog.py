"""Export a report from any window: built off the GUI thread, previewed, then saved in the format its
file name's extension names (.html, .md, .json, .csv); and the Perfetto export."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QMessageBox,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from graphscope.app.workers import Task, start
from graphscope.core.errors import GraphscopeError
from graphscope.core.paths import refuse_inputs
from graphscope.report.formats import to_markdown, write_report

REPORT_FILTER = "HTML report (*.html);;Markdown (*.md);;JSON (*.json);;CSV, the kernel table (*.csv)"


class ReportPreview(QDialog):
    """The report as its Markdown form renders, with Save… and Close."""

    def __init__(self, report: dict[str, Any], charts: dict[str, str], suggested: str, parent: QWidget) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Report: {report['title']}")
        self.resize(900, 700)
        self.report, self.charts, self.suggested = report, charts, suggested
        self.saved: Path | None = None
        self.view = QTextBrowser()
        self.view.setMarkdown(to_markdown(report))
        self.status = QLabel(
            "the HTML file adds charts: kernel durations, histograms, a timeline of each side, the graph"
        )
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Close)
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.status)
        layout.addWidget(buttons)

    def save(self, path: Path | None = None) -> None:
        if path is None:
            chosen, _ = QFileDialog.getSaveFileName(self, "Save the report", self.suggested, REPORT_FILTER)
            if not chosen:
                return
            path = Path(chosen)
        sources = [side.get("source") for side in (self.report.get("a"), self.report.get("b")) if side]
        try:
            refuse_inputs(path, sources, "Save")  # a report saved over the trace it was made from
            write_report(self.report, path, self.charts)
        except GraphscopeError as exc:
            self.status.setText(exc.message)
            return
        self.saved = path
        self.status.setText(f"wrote {path}")


def export_report(parent: QWidget, build: Callable[[], tuple[dict[str, Any], dict[str, str]]], suggested: str) -> Task:
    """Build a report in the background, then preview it (the caller keeps the task alive)."""
    task = Task(lambda progress, cancel: build())

    def ready(result: tuple[dict[str, Any], dict[str, str]]) -> None:
        parent.report_preview = ReportPreview(*result, suggested, parent)
        parent.report_preview.open()

    task.signals.finished.connect(ready)
    task.signals.failed.connect(lambda message: QMessageBox.warning(parent, "Cannot make the report", message))
    return start(task)


def export_perfetto(parent: QWidget, trace: Any, analysis: Any, status: Callable[[str], None]) -> Task | None:
    """Ask where, then write the trace-event JSON in the background."""
    from graphscope.export.perfetto import write_perfetto

    chosen, _ = QFileDialog.getSaveFileName(
        parent, "Export as Perfetto trace", "trace.json", "Trace-event JSON (*.json)"
    )
    if not chosen:
        return None
    try:
        refuse_inputs(chosen, [trace.info.path], "Export")
    except GraphscopeError as exc:
        status(exc.message)
        return None
    task = Task(lambda progress, cancel: write_perfetto(trace, analysis, Path(chosen)))
    task.signals.finished.connect(
        lambda counts: status(f"wrote {chosen}: {counts['slices']:,} slices; open it at https://ui.perfetto.dev")
    )
    task.signals.failed.connect(status)
    return start(task)
