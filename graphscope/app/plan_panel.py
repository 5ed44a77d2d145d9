"""The Plan panel: which batch sizes to capture (`graphscope plan` in the GUI).

Measure a workload's sizes in a child process (or re-plan a stored plan's measurements, no GPU needed),
then see the frontier of the expected step (without switching) against graph memory with the chosen set ringed, the
per-size table with the chosen sizes marked, the verdict, and the chosen set as an engine's config
snippet to copy; the plan's report exports like every other.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import pyqtgraph as pg
from PySide6.QtGui import QBrush, QColor, QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from graphscope.app.report_dialog import export_report
from graphscope.app.table_copy import make_copyable
from graphscope.app.task_panel import TaskPanel
from graphscope.app.workers import Task
from graphscope.core.progress import CancelToken, ProgressCallback
from graphscope.core.rules import PLAN_EXPECTED
from graphscope.plan.snippets import ENGINES, engine_snippet
from graphscope.report.plan_report import COLUMNS as PER_SIZE_COLUMNS
from graphscope.report.plan_report import per_size_cells
from graphscope.store.demo_plan import demo_plan_path
from graphscope.text.plan import under_rule_lines

COLUMNS = (*PER_SIZE_COLUMNS, "captured")
CHOSEN = QColor(214, 234, 248)
MIB = float(1 << 20)


def _plan(
    target: str,
    sizes: str,
    traffic: str,
    memory: str,
    startup: str,
    reps: int,
    store_path: Path | None,
    progress: ProgressCallback,
    cancel: CancelToken,
) -> dict[str, Any]:
    """The CLI's plan path (plan.runner.plan_and_record) on a worker thread; inputs parsed as the CLI does."""
    from graphscope.core.errors import BadInputError
    from graphscope.plan.budgets import parse_bytes, parse_startup
    from graphscope.plan.runner import measure, plan_and_record
    from graphscope.plan.sizes_text import DEFAULT_LIKE, parse_sizes
    from graphscope.plan.traffic import read_traffic
    from graphscope.store.recorder import Recorder

    chosen_sizes = parse_sizes(sizes) if sizes else None
    requests = read_traffic(Path(traffic)) if traffic else None
    budgets = (parse_bytes(memory) if memory else None, parse_startup(startup) if startup else None)
    recorder = Recorder(store_path)
    if target.startswith("plan:"):
        from graphscope.report.sources import StoredPlan

        measured = StoredPlan.parse(target).load(store_path)
    else:
        if not Path(target).is_file():
            raise BadInputError(f"{target}: no such workload file")
        measured = measure(Path(target), chosen_sizes, reps, progress=progress, cancel=cancel)
    return plan_and_record(recorder, measured, requests, *budgets, DEFAULT_LIKE)


class PlanPanel(TaskPanel):
    def __init__(self, store_path: Path | None = None) -> None:
        super().__init__()
        self.store_path = store_path
        self.tasks: list[Task] = []
        self.result: dict[str, Any] | None = None
        self.target = QLineEdit()
        self.target.setPlaceholderText(
            "a workload that declares SIZES (or give sizes), or plan:ID to re-plan (plan:demo: the shipped demo)"
        )
        browse = QPushButton("Browse…")
        browse.clicked.connect(lambda: self._browse(self.target, "Choose a workload", "Python workloads (*.py)"))
        self.sizes = QLineEdit()
        self.sizes.setPlaceholderText("the workload's SIZES; or 1,2,4,8 · 1-256 · 8-512/8")
        self.traffic = QLineEdit()
        self.traffic.setPlaceholderText("request sizes: a CSV, a size,count histogram or a trace (default: uniform)")
        browse_traffic = QPushButton("Browse…")
        browse_traffic.clicked.connect(lambda: self._browse(self.traffic, "Choose request sizes", "All files (*)"))
        self.memory, self.startup = QLineEdit(), QLineEdit()
        self.memory.setPlaceholderText("graph memory budget: 2GiB, 500MB (default: none)")
        self.startup.setPlaceholderText("capture time budget: 10s, 800ms (default: none)")
        self.reps = QSpinBox()
        self.reps.setRange(3, 1000)
        self.reps.setValue(20)
        self._task_controls("Plan", self.plan, "choose a workload (or plan:ID) and press Plan")
        self.plan_button = self.start_button
        self.demo_button = QPushButton("Demo plan")  # store/demo_plan.py: measured on a GPU, tried without one
        self.demo_button.setToolTip("re-plan the shipped demo plan (plan:demo), measured on an H100")
        self.demo_button.clicked.connect(self.plan_demo)
        # the plan is measured on a GPU (benchmarks/demo_plan.py): a tree without it offers no button
        self.demo_button.setVisible(demo_plan_path().is_file())
        self.verdict = QLabel()
        self.verdict.setWordWrap(True)
        self.plot = pg.PlotWidget(title=f"{PLAN_EXPECTED} against graph memory (the Pareto frontier)")
        self.plot.setBackground("w")
        self.plot.setLabel("bottom", "graph memory (MiB, as the table counts it)")
        self.plot.setLabel("left", PLAN_EXPECTED, units="s")
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        make_copyable(self.table, "plan")
        self.engine = QComboBox()
        self.engine.addItems(ENGINES)
        self.engine.currentTextChanged.connect(self._show_snippet)
        self.snippet = QPlainTextEdit()
        self.snippet.setReadOnly(True)
        self.snippet.setMaximumHeight(70)
        self.copy_button, self.export_button = QPushButton("Copy"), QPushButton("Export report…")
        self.copy_button.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.snippet.toPlainText()))
        self.export_button.clicked.connect(self.export)
        for button in (self.copy_button, self.export_button):
            button.setEnabled(False)
        self._lay_out(browse, browse_traffic)

    def _lay_out(self, browse: QPushButton, browse_traffic: QPushButton) -> None:
        form = QFormLayout()
        for label, field, extra in (("workload", self.target, browse), ("traffic", self.traffic, browse_traffic)):
            row = QHBoxLayout()
            row.addWidget(field, 1)
            row.addWidget(extra)
            form.addRow(label, row)
        form.addRow("sizes", self.sizes)
        form.addRow("memory budget", self.memory)
        form.addRow("start-up budget", self.startup)
        form.addRow("repetitions per size", self.reps)
        buttons = QHBoxLayout()
        for widget in (self.plan_button, self.cancel_button, self.demo_button):
            buttons.addWidget(widget)
        buttons.addWidget(self.progress, 1)
        snippet_row = QHBoxLayout()
        snippet_row.addWidget(QLabel("the chosen sizes for"))
        snippet_row.addWidget(self.engine)
        snippet_row.addWidget(self.snippet, 1)
        snippet_row.addWidget(self.copy_button)
        snippet_row.addWidget(self.export_button)
        results = QSplitter()
        results.addWidget(self.plot)
        results.addWidget(self.table)
        results.setSizes([500, 500])
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.status)
        layout.addWidget(self.verdict)
        layout.addWidget(results, 1)
        layout.addLayout(snippet_row)

    def _browse(self, field: QLineEdit, title: str, kinds: str) -> None:
        path, _ = QFileDialog.getOpenFileName(self, title, "", kinds)
        if path:
            field.setText(path)

    def plan_demo(self) -> None:
        """The shipped demo plan re-planned with the budgets and traffic set here: no GPU needed."""
        self.target.setText("plan:demo")
        self.plan()

    def plan(self) -> None:
        target = self.target.text().strip()
        if not target:
            self._error("choose a workload, or plan:ID to re-plan stored measurements")
            return
        fields = (self.sizes, self.traffic, self.memory, self.startup)
        task = Task(_plan, target, *(f.text().strip() for f in fields), self.reps.value(), self.store_path)
        self._start_task(task, "measuring each size in a child process…" if target.endswith(".py") else "planning…")

    def _done(self, result: dict[str, Any]) -> None:
        self.result = result
        self._finish(f"stored as plan {result['plan_id']} (plan:{result['plan_id']} re-plans it without a GPU)")
        why = "".join(f"<br>{html.escape(line)}" for line in under_rule_lines(result))  # sizes under the 20% rule
        self.verdict.setText(f"<b>Plan:</b> {html.escape(result['verdict'])}{why}")
        self._fill_table(result)
        self._draw(result)
        self._show_snippet()
        for button in (self.copy_button, self.export_button):
            button.setEnabled(True)

    def chosen(self) -> list[int]:
        return list(self.result["best"]["sizes"]) if self.result and self.result.get("best") else []

    def _fill_table(self, result: dict[str, Any]) -> None:
        chosen = set(self.chosen())
        self.table.setRowCount(0)
        for row in result["per_size"]:
            cells = (*per_size_cells(row), "✓" if row["size"] in chosen else "")
            at = self.table.rowCount()
            self.table.insertRow(at)
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if row["size"] in chosen:
                    item.setBackground(QBrush(CHOSEN))
                self.table.setItem(at, column, item)
        self.table.resizeColumnsToContents()

    def _draw(self, result: dict[str, Any]) -> None:
        self.plot.clear()
        self.plot.addLegend(offset=(-10, 10))
        frontier = result["memory_frontier"]
        xs = [p["memory_bytes"] / MIB for p in frontier]
        ys = [p["expected_ns"] * 1e-9 for p in frontier]
        self.plot.plot(xs, ys, pen=pg.mkPen((90, 90, 90), width=1), symbol="o", symbolSize=6,
                       symbolBrush=(120, 120, 120), name="frontier: the best set at each memory")  # fmt: skip
        marks = [("chosen", result.get("best"), (21, 101, 192), "o", 14)]
        marks += [("compared list", result.get("compared"), (230, 120, 0), "x", 12)]
        marks += [("no graphs", result.get("all_eager"), (180, 40, 40), "s", 10)]
        for name, choice, colour, symbol, size in marks:
            if choice:
                self.plot.plot([choice["memory_bytes"] / MIB], [choice["expected_ns"] * 1e-9], pen=None, symbol=symbol,
                               symbolSize=size, symbolBrush=colour, symbolPen=colour,
                               name=f"{name}: {len(choice['sizes'])} sizes")  # fmt: skip

    def _show_snippet(self) -> None:
        if self.result is not None:
            self.snippet.setPlainText(engine_snippet(self.engine.currentText(), self.chosen()))

    def export(self) -> None:
        from graphscope.report.plan_report import plan_report

        result = self.result
        self.tasks.append(export_report(self, lambda: plan_report(result), f"plan-{result['plan_id']}.html"))
