"""The Run panel: run a workload eagerly and as a graph, see the honest comparison, open both traces."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from graphscope.app.diverge_section import DivergeSection
from graphscope.app.table_copy import make_copyable
from graphscope.app.task_panel import TaskPanel
from graphscope.app.workers import Task
from graphscope.core.progress import CancelToken, ProgressCallback
from graphscope.core.units import format_ns
from graphscope.text.run import attribution_lines, own_cost_line
from graphscope.workload.record import run_and_record
from graphscope.workload.runner import MODES

COLUMNS = ("mode", "end to end (median, 95%)", "GPU span", "CPU submit", "capture + instantiate", "outputs")


def _run_and_record(
    path: Path,
    modes: tuple[str, ...],
    reps: int,
    warmup: int,
    profile: str | None,
    store_path: Path | None,
    progress: ProgressCallback,
    cancel: CancelToken,
) -> dict[str, Any]:
    """The CLI's run path (workload.record), on a worker thread; the database opens there too."""
    from graphscope.analysis.attribution_run import annotate_run
    from graphscope.store.recorder import Recorder  # sqlite-utils: not needed to open the window

    recorder = Recorder(store_path)
    return run_and_record(
        path, recorder, modes, reps, warmup, profile=profile, progress=progress, cancel=cancel, annotate=annotate_run
    )


TIMELINES = (
    ("none: measure only", None),
    ("also record each mode under Nsight Systems", "nsys"),
    ("also record each mode with torch.profiler (no nsys needed)", "torch"),
)


class RunPanel(TaskPanel):
    traces_ready = Signal(object)  # {mode: sqlite path}

    def __init__(self, store_path: Path | None = None) -> None:
        super().__init__()
        self.store_path = store_path
        self.result: dict[str, Any] | None = None
        self.path = QLineEdit()
        self.path.setPlaceholderText("a workload file (see README: Workload format)")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        self.mode = QComboBox()
        self.mode.addItems(["both", "eager", "graph"])
        self.reps, self.warmup = QSpinBox(), QSpinBox()
        self.reps.setRange(2, 10_000)
        self.reps.setValue(30)
        self.warmup.setRange(0, 1000)
        self.warmup.setValue(5)
        self.timeline = QComboBox()  # the traces of a profiled run open one above the other
        for label, profiler in TIMELINES:
            self.timeline.addItem(label, profiler)
        self._task_controls("Run", self.run, "choose a workload and press Run")
        self.run_button = self.start_button
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)  # no cut headers
        make_copyable(self.table, "run")
        self.verdict = QLabel()
        self.verdict.setWordWrap(True)
        self.open_traces = QPushButton("Open the traces side by side")
        self.open_traces.setEnabled(False)
        self.open_traces.clicked.connect(lambda: self.traces_ready.emit(self._trace_paths()))

        row = QHBoxLayout()
        row.addWidget(self.path, 1)
        row.addWidget(browse)
        form = QFormLayout()
        form.addRow("workload", row)
        form.addRow("mode", self.mode)
        form.addRow("repetitions", self.reps)
        form.addRow("warm-up steps", self.warmup)
        form.addRow("timeline", self.timeline)
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.progress, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.status)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.verdict)
        self.diverge = DivergeSection()  # where the graph departs from eager, when its outputs differ
        layout.addWidget(self.diverge, 1)
        layout.addWidget(self.open_traces)

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose a workload", "", "Python workloads (*.py)")
        if path:
            self.path.setText(path)

    def run(self) -> None:
        path = Path(self.path.text().strip())
        if not path.is_file():
            self._error(f"{path}: no such workload file")
            return
        modes = MODES if self.mode.currentText() == "both" else (self.mode.currentText(),)
        task = Task(
            _run_and_record,
            path,
            modes,
            self.reps.value(),
            self.warmup.value(),
            self.timeline.currentData(),
            self.store_path,
        )
        self._start_task(task, f"running {path.name} in a child process…")

    def _done(self, result: dict[str, Any]) -> None:
        self.result = result
        self._finish(f"stored as run {result['run_id']}")
        self.table.setRowCount(0)
        for mode, data in result["modes"].items():
            stats, capture = data["stats"], data.get("capture") or {}
            wall = stats["wall_ns"]
            outputs = data["outputs"]
            cells = (
                mode,
                f"{format_ns(wall['median'])} [{format_ns(wall['ci_low'])}-{format_ns(wall['ci_high'])}]",
                format_ns(stats["gpu_ns"]["median"]),
                format_ns(stats["submit_ns"]["median"]),
                format_ns(capture["capture_ns"] + capture["instantiate_ns"]) if capture else "-",
                "reference"
                if mode == "eager"
                else ("match" if outputs.get("match") else outputs.get("note", "DIFFER")),
            )
            row = self.table.rowCount()
            self.table.insertRow(row)
            for column, text in enumerate(cells):
                self.table.setItem(row, column, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()
        own = result.get("own_cost")
        cost = f"<br>{html.escape(own_cost_line(own))}" if own else ""
        for line in attribution_lines(result.get("attribution") or {}, None, None):  # analysis/attribution_run.py
            cost += f"<br>{html.escape(line.strip())}"
        self.verdict.setText(f"<b>{html.escape(result['verdict'])}</b>{cost}")
        self.diverge.show_result(result.get("divergence"))
        self.open_traces.setEnabled(bool(result.get("traces")))
        if result.get("traces"):
            self.traces_ready.emit(self._trace_paths())

    def _trace_paths(self) -> dict[str, Path]:
        return {mode: Path(files["sqlite"]) for mode, files in (self.result or {}).get("traces", {}).items()}
