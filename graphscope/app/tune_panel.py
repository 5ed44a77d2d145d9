"""The Tune panel: the Qt face of a TuningController (tune/controller.py), which owns the workload
child, one operation at a time. Load a workload live, pick a kernel node in the Graph view, try a
block shape on the instantiated graph, sweep, confirm with fresh captures, apply and export.

While an operation runs every control that would start another is disabled; the worker gets the
values it needs when it starts (it never reads a widget); progress and Cancel reach the controller.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from graphscope.app.report_dialog import export_report
from graphscope.app.table_copy import make_copyable
from graphscope.app.workers import Task, start
from graphscope.core.errors import BadInputError, GraphscopeError
from graphscope.core.launch_config import LaunchConfig, format_dim, parse_block
from graphscope.core.units import format_ns
from graphscope.graph.model import Dag, DagNode
from graphscope.tune.controller import TuningController
from graphscope.tune.measure import Trial
from graphscope.tune.wording import against_baseline, fresh_confirmation, pdl_confirmation, versus_baseline
from graphscope.workload.session import WorkloadSession

HISTORY = ("change", "how", "median", "95% interval", "vs baseline", "outputs", "status")


class TunePanel(QWidget):
    dag_ready = Signal(object)  # a Dag, for the Graph view

    def __init__(self, store_path: Path | None = None, session_factory: Callable[..., Any] = WorkloadSession) -> None:
        super().__init__()
        self.store_path = store_path
        self.session_factory = session_factory
        self.controller: TuningController | None = None
        self.selected: DagNode | None = None
        self.task: Task | None = None
        self.last_tuning: int | None = None

        self.path = QLineEdit()
        self.path.setPlaceholderText("a workload file")
        self.browse_button = QPushButton("Browse…")
        self.browse_button.clicked.connect(self.browse)
        self.load_button = QPushButton("Load live")
        self.load_button.clicked.connect(self.load)
        self.status = QLabel("load a workload: its graph is captured in a child process")
        self.status.setWordWrap(True)
        self.node_label = QLabel("select a kernel node in the Graph view")
        self.node_label.setWordWrap(True)
        self.block = QComboBox()
        self.block.setEditable(True)  # a shape of one's own: 32x8
        self.block.setMinimumWidth(90)
        self.apply_button = QPushButton("Apply && re-measure")
        self.apply_button.clicked.connect(self.apply_selected)
        self.strategy_label = QLabel("strategy")
        self.strategy = QComboBox()
        self.strategy.addItems(["descent", "brute"])
        self.strategy.setToolTip("descent: knob by knob from the baseline; brute: every candidate of every knob")
        self.sanitizer = QCheckBox("compute-sanitizer")
        self.sanitizer.setToolTip(
            "also run each candidate that measured ok under compute-sanitizer (memcheck, initcheck, racecheck) "
            "before it can win: catches blocks whose outputs match by luck; each candidate takes seconds longer"
        )
        self.sweep_button = QPushButton("Sweep all nodes")
        self.sweep_button.clicked.connect(self.sweep)
        self.confirm_button = QPushButton("Confirm best (fresh capture)")
        self.confirm_button.clicked.connect(self.confirm)
        self.pdl_button = QPushButton("Tune PDL")
        self.pdl_button.setToolTip(
            "programmatic dependent launch: each launch's pdl flag flipped, re-captured and re-measured; the "
            "flips that win measured together, then baseline and best captured afresh (tune/pdl.py)"
        )
        self.pdl_button.clicked.connect(self.tune_pdl)
        self.apply_best_button = QPushButton("Apply best")
        self.apply_best_button.clicked.connect(self.apply_best)
        self.export_button, self.import_button = QPushButton("Export config…"), QPushButton("Import config…")
        self.export_button.clicked.connect(self.export_config)
        self.import_button.clicked.connect(self.import_config)
        self.report_button = QPushButton("Export report…")
        self.report_button.clicked.connect(self.export_report)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.history = QTableWidget(0, len(HISTORY))
        self.history.setHorizontalHeaderLabels(HISTORY)
        self.history.verticalHeader().hide()
        self.history.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        make_copyable(self.history, "trials")

        layout = QVBoxLayout(self)
        for widgets in (
            (self.path, self.browse_button, self.load_button),
            (self.node_label, self.block, self.apply_button),
            (self.strategy_label, self.strategy, self.sanitizer, self.sweep_button, self.confirm_button),
            (self.pdl_button,),
            (self.apply_best_button, self.export_button, self.import_button, self.report_button),
            (self.progress, self.cancel_button),
        ):
            row = QHBoxLayout()
            for widget in widgets:
                row.addWidget(widget, 1 if isinstance(widget, QLineEdit | QLabel | QProgressBar) else 0)
            layout.addLayout(row)
        layout.addWidget(self.status)
        layout.addWidget(self.history, 1)
        self._enable()

    # -- one operation at a time ---------------------------------------------------------------

    def _enable(self) -> None:
        idle = self.task is None
        loaded = self.controller is not None and self.controller.baseline is not None
        for widget in (self.load_button, self.path, self.browse_button):
            widget.setEnabled(idle)
        for widget in (self.sweep_button, self.confirm_button, self.apply_best_button, self.import_button):
            widget.setEnabled(idle and loaded)
        self.pdl_button.setEnabled(idle and loaded)
        self.export_button.setEnabled(loaded)
        self.apply_button.setEnabled(idle and loaded and self.selected is not None)
        self.block.setEnabled(idle and loaded and self.selected is not None)
        self.report_button.setEnabled(idle and self.last_tuning is not None)
        self.progress.setVisible(not idle)
        self.cancel_button.setVisible(not idle)

    def _run(self, work: Callable[..., Any], done: Callable[[Any], None], message: str) -> None:
        """Run one controller operation off the GUI thread: work(progress, cancel) -> result."""
        self.task = Task(work)
        self.task.signals.progressed.connect(self._progress)
        self.task.signals.finished.connect(lambda result: self._finished(done, result))
        self.task.signals.failed.connect(self._failed)
        self.task.signals.cancelled.connect(lambda: self._failed("cancelled; the workload process was stopped"))
        self.status.setStyleSheet("")
        self.status.setText(message)
        self.progress.setValue(0)
        start(self.task)
        self._enable()

    def _progress(self, fraction: float, message: str) -> None:
        self.progress.setValue(int(fraction * 1000))
        self.status.setText(message)

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()
        if self.controller is not None:
            self.controller.cancel()

    def _finished(self, done: Callable[[Any], None], result: Any) -> None:
        self.task = None
        done(result)
        self._enable()

    def _failed(self, message: str) -> None:
        self.task = None
        self.status.setStyleSheet("color: #b3261e; font-weight: bold")
        self.status.setText(message)
        self._enable()

    # -- loading -------------------------------------------------------------------------------

    def load(self) -> None:
        path = Path(self.path.text().strip())
        self.close_session()
        controller = TuningController(path, session_factory=self.session_factory)
        store_path = self.store_path

        def load(progress, cancel):
            from graphscope.store.recorder import Recorder  # sqlite-utils: loaded off the GUI thread

            controller.recorder = Recorder(store_path)
            return controller, controller.load(progress, cancel)

        self._run(
            load,
            self._loaded,
            f"loading {path.name}, capturing its graph, measuring the baseline…",
        )

    def _loaded(self, result: tuple[TuningController, Any]) -> None:
        self.controller, loaded = result
        self.history.setRowCount(0)
        self._add_row("baseline", loaded.baseline)
        self.status.setText(
            f"{len(loaded.dag.nodes)} nodes, {len(loaded.sites)} tunable launch sites; baseline "
            f"{format_ns(loaded.baseline.stats.median)} per replay (in place)"
        )
        self.dag_ready.emit(loaded.dag)

    # -- one node --------------------------------------------------------------------------------

    def select_nodes(self, indices: list[int]) -> None:
        """From the Graph view: offer the block shapes the selected kernel can take."""
        dag = self.controller.dag if self.controller is not None else None
        node = next((dag.nodes[i] for i in indices if dag and i < len(dag.nodes)), None)
        self.selected = node if node is not None and node.site else None
        self.block.clear()
        if self.selected is None:
            why = node.detail.get("tunable", "not a ctx.launch site: not tunable") if node else "select a kernel node"
            self.node_label.setText(
                why if node is None or node.type == "kernel" else f"a {node.type} node: nothing to tune"
            )
            self._enable()
            return
        (knob,) = self.controller.knobs(self.selected.site.split("#")[0])
        self.node_label.setText(
            f"{self.selected.site} ({self.selected.name}, {len(knob.sites)} sites by this name): block"
        )
        for candidate in knob.candidates:
            self.block.addItem(format_dim(candidate), candidate)
        self.block.setCurrentText(format_dim(knob.current(self.controller.config)))
        self._enable()

    def apply_selected(self) -> None:
        if self.selected is None:
            return
        key = self.selected.site.split("#")[0]
        try:
            block = parse_block(self.block.currentText())
        except BadInputError as exc:
            self._failed(exc.message)
            return
        controller = self.controller

        def work(progress, cancel) -> tuple[Trial, Dag]:
            trial = controller.try_block(key, block, cancel)
            return trial, controller.current_dag()

        self._run(work, self._measured, f"applying {key}={format_dim(block)} in place and re-measuring…")

    def _measured(self, result: tuple[Trial, Dag]) -> None:
        trial, dag = result
        self._add_row(f"{trial.knob}={format_dim(trial.block)}", trial)
        self.status.setText(self._compare(trial))
        self.dag_ready.emit(dag)

    def _compare(self, trial: Trial) -> str:
        return against_baseline(trial, self.controller.baseline)

    # -- sweeps, confirmation, configs ------------------------------------------------------------

    def browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a workload", "", "Workloads (*.py)")
        if path:
            self.path.setText(path)

    def sweep(self) -> None:
        strategy, controller = self.strategy.currentText(), self.controller
        note = controller.set_verify("sanitizer" if self.sanitizer.isChecked() else "outputs")
        if note:
            self.sanitizer.setChecked(False)
            self.status.setText(note)
        reps = len(controller.baseline.samples)
        self._run(
            lambda progress, cancel: controller.sweep(strategy, None, reps, progress, cancel),
            self._swept,
            f"{strategy} over every tunable node (each change applied in place)…",
        )

    def _swept(self, result: Any) -> None:
        for trial in result.trials:
            self._add_row(f"{trial.knob}={format_dim(trial.block)}" if trial.knob else "combined", trial)
        for trial in (result.confirmed_baseline, result.confirmed_best):
            if trial is not None:
                self._add_row("fresh capture", trial)
        for knob in result.isolation:
            for block, alone in zip(knob.blocks, knob.alone):
                if alone.status == "ok":
                    self._add_row(f"{knob.knob}={format_dim(block)} alone", alone)
        self.last_tuning = result.tuning_id
        self.status.setText("\n".join([result.conclusion(), *(k.verdict() for k in result.isolation)]))

    def confirm(self) -> None:
        controller = self.controller
        self._run(
            lambda progress, cancel: controller.confirm(cancel),
            self._confirmed,
            "capturing baseline and best afresh and re-measuring…",
        )

    def _confirmed(self, trials: tuple[Trial, Trial]) -> None:
        fresh_baseline, fresh_best = trials
        self._add_row("baseline, fresh capture", fresh_baseline)
        self._add_row("best, fresh capture", fresh_best)
        self.status.setText(fresh_confirmation(fresh_baseline, fresh_best, self.controller.baseline))

    def tune_pdl(self) -> None:
        """Each launch's PDL flag flipped and re-measured (fresh captures); the graph redrawn afterwards."""
        controller = self.controller
        if controller is None:
            return

        def work(progress, cancel) -> tuple[Any, Dag]:
            result = controller.sweep_pdl(None, None, progress, cancel)
            return result, controller.current_dag()

        self._run(work, self._pdl_swept, "flipping each launch's PDL flag, re-capturing and re-measuring…")

    def _pdl_swept(self, found: tuple[Any, Dag]) -> None:
        result, dag = found
        self._add_row("PDL baseline", result.baseline, result.baseline)
        for knob, trial in zip(result.knobs, result.trials):
            sites = f" ({knob.sites} sites)" if knob.sites > 1 else ""
            self._add_row(f"{knob.site}{sites} PDL {'off' if knob.pdl else 'on'}", trial, result.baseline)
        if result.combined is not None:
            self._add_row("PDL flips together", result.combined, result.baseline)
        if result.confirmed is not None:
            self._add_row("PDL baseline, fresh capture", result.confirmed[0], result.confirmed[0])
            self._add_row("PDL best, fresh capture", result.confirmed[1], result.confirmed[0])
        if result.adopt:
            flips = ", ".join(f"{k} {'on' if v else 'off'}" for k, v in result.best.config.pdl.items())
            text = f"PDL adopted: {flips} ({pdl_confirmation(*result.confirmed)})"
        else:
            text = "PDL: " + ("; ".join(result.notes) or "no launch to flip (no kernel follows another)")
        self.status.setText(text)
        self.dag_ready.emit(dag)

    def apply_best(self) -> None:
        self._apply_config(self.controller.best.config, "best")

    def _apply_config(self, config: LaunchConfig, label: str) -> None:
        controller = self.controller
        self._run(
            lambda progress, cancel: controller.apply_config(config, cancel),
            lambda trial: self._measured_config(label, trial),
            f"applying the {label} config…",
        )

    def _measured_config(self, label: str, trial: Trial) -> None:
        self._add_row(label, trial)
        self.status.setText(self._compare(trial))

    def export_config(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export launch config", "tuned.json", "JSON (*.json)")
        if path:
            self.controller.best.config.save(Path(path))
            self.status.setText(f"wrote {path}; use it with `graphscope run --config {path}` (eager and graph)")

    def import_config(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import launch config", "", "JSON (*.json)")
        if path:
            try:
                config = LaunchConfig.load(Path(path))
            except GraphscopeError as exc:
                self._failed(exc.message)
                return
            self._apply_config(config, Path(path).name)

    def export_report(self) -> None:
        """The last sweep's report (baseline against best, every trial) from the session database."""
        from graphscope.report.compose import tuning_report_of

        tuning, store_path = self.last_tuning, self.store_path
        self.report_task = export_report(self, lambda: tuning_report_of(tuning, store_path), f"tuning-{tuning}.html")

    def _add_row(self, label: str, trial: Trial, baseline: Trial | None = None) -> None:
        """One trial; `baseline`: what its speed-up is against (default: the in-place baseline)."""
        row = self.history.rowCount()
        self.history.insertRow(row)
        stats = trial.stats if trial.samples else None
        against = baseline or (self.controller.baseline if self.controller is not None else None)
        versus = versus_baseline(trial, against)
        cells = (
            label,
            trial.how,
            format_ns(stats.median) if stats else "-",
            f"{format_ns(stats.ci_low)}-{format_ns(stats.ci_high)}" if stats else "-",
            versus,
            {True: "match", False: "DIFFER", None: "-"}[trial.outputs_match],
            trial.status + (f": {trial.reason}" if trial.reason and trial.status != "ok" else ""),
        )
        for column, text in enumerate(cells):
            self.history.setItem(row, column, QTableWidgetItem(text))
        self.history.scrollToBottom()

    def close_session(self) -> None:
        if self.controller is not None:
            self.controller.cancel()
            self.controller.close()
            self.controller = None
        self.last_tuning = None
