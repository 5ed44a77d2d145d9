"""The Tune panel: load a workload live, pick a node in its DAG, change its block size on the
instantiated graph, re-measure, sweep, confirm with a fresh capture, keep and export the best."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from graphscope.app.workers import Task, start
from graphscope.core.launch_config import LaunchConfig, Site
from graphscope.core.stats import speedup
from graphscope.core.units import format_ns
from graphscope.graph.model import Dag, DagNode
from graphscope.store.session_db import SessionStore
from graphscope.tune.measure import LiveMeasurer, Trial
from graphscope.tune.session import detour_config, tune
from graphscope.tune.space import Knob, knobs_for
from graphscope.workload.session import WorkloadSession

REPS = 50
HISTORY = ("change", "how", "median", "95% interval", "vs baseline", "outputs", "status")


class TunePanel(QWidget):
    dag_ready = Signal(object)  # a Dag, for the Graph view

    def __init__(
        self, store_path: Path | None = None, session_factory: Callable[[Path], Any] = WorkloadSession
    ) -> None:
        super().__init__()
        self.store_path = store_path
        self.session_factory = session_factory
        self.session: Any = None
        self.measurer: LiveMeasurer | None = None
        self.sites: list[Site] = []
        self.dag: Dag | None = None
        self.config = LaunchConfig()
        self.baseline: Trial | None = None
        self.best: Trial | None = None
        self.selected: DagNode | None = None
        self.task: Task | None = None

        self.path = QLineEdit()
        self.path.setPlaceholderText("a workload file")
        load = QPushButton("Load live")
        load.clicked.connect(self.load)
        self.status = QLabel("load a workload: its graph is captured in a child process")
        self.status.setWordWrap(True)
        self.node_label = QLabel("select a kernel node in the Graph view")
        self.block = QComboBox()
        self.apply_button = QPushButton("Apply && re-measure")
        self.apply_button.clicked.connect(self.apply_selected)
        self.strategy = QComboBox()
        self.strategy.addItems(["descent", "brute"])
        self.sweep_button = QPushButton("Sweep all nodes")
        self.sweep_button.clicked.connect(self.sweep)
        self.confirm_button = QPushButton("Confirm best (fresh capture)")
        self.confirm_button.clicked.connect(self.confirm)
        self.apply_best_button = QPushButton("Apply best")
        self.apply_best_button.clicked.connect(self.apply_best)
        export, import_ = QPushButton("Export config…"), QPushButton("Import config…")
        export.clicked.connect(self.export_config)
        import_.clicked.connect(self.import_config)
        self.history = QTableWidget(0, len(HISTORY))
        self.history.setHorizontalHeaderLabels(HISTORY)
        self.history.verticalHeader().hide()

        layout = QVBoxLayout(self)
        for widgets in (
            (self.path, load),
            (self.node_label, self.block, self.apply_button),
            (self.strategy, self.sweep_button, self.confirm_button),
            (self.apply_best_button, export, import_),
        ):
            row = QHBoxLayout()
            for widget in widgets:
                row.addWidget(widget, 1 if isinstance(widget, QLineEdit | QLabel) else 0)
            layout.addLayout(row)
        layout.addWidget(self.status)
        layout.addWidget(self.history, 1)
        self._enable(False)

    def _enable(self, loaded: bool) -> None:
        for widget in (self.apply_button, self.sweep_button, self.confirm_button, self.apply_best_button, self.block):
            widget.setEnabled(loaded and self.task is None)

    def _run(self, work: Callable[..., Any], done: Callable[[Any], None], message: str) -> None:
        """One request at a time, off the GUI thread."""
        self.task = Task(lambda progress, cancel: work())
        self.task.signals.finished.connect(lambda result: self._finished(done, result))
        self.task.signals.failed.connect(self._failed)
        self.status.setStyleSheet("")
        self.status.setText(message)
        self._enable(False)
        start(self.task)

    def _finished(self, done: Callable[[Any], None], result: Any) -> None:
        self.task = None
        done(result)
        self._enable(self.session is not None)

    def _failed(self, message: str) -> None:
        self.task = None
        self.status.setStyleSheet("color: #b3261e; font-weight: bold")
        self.status.setText(message)
        self._enable(self.session is not None)

    # -- loading -------------------------------------------------------------------------------

    def load(self) -> None:
        path = Path(self.path.text().strip())
        if self.session is not None:
            self.session.close()
            self.session = None

        def work() -> tuple[Any, Dag, Trial]:
            session = self.session_factory(path)
            measurer = LiveMeasurer(session)
            dag = Dag.from_json(session.request("dag"))
            start = LaunchConfig(workload=path.name)
            sites = [Site.from_json(s) for s in session.info["sites"]]
            baseline = measurer.baseline(start, REPS, detour_config(knobs_for(sites), start) if sites else None)
            return session, dag, baseline

        self._run(work, self._loaded, f"loading {path.name}, capturing its graph, measuring the baseline…")

    def _loaded(self, result: tuple[Any, Dag, Trial]) -> None:
        self.session, self.dag, self.baseline = result
        self.measurer = LiveMeasurer(self.session)
        self.sites = [Site.from_json(s) for s in self.session.info["sites"]]
        self.config = self.baseline.config
        self.best = self.baseline
        self.history.setRowCount(0)
        self._add_row("baseline", self.baseline)
        self.status.setText(
            f"{len(self.dag.nodes)} nodes, {len(self.sites)} tunable launch sites; baseline "
            f"{format_ns(self.baseline.stats.median)} per replay (in place)"
        )
        self.dag_ready.emit(self.dag)

    # -- one node --------------------------------------------------------------------------------

    def select_nodes(self, indices: list[int]) -> None:
        """From the Graph view: offer the block sizes the selected kernel can take."""
        node = next((self.dag.nodes[i] for i in indices if self.dag and i < len(self.dag.nodes)), None)
        self.selected = node if node is not None and node.site else None
        self.block.clear()
        if self.selected is None:
            self.node_label.setText("not tunable (not a ctx.launch site)" if node else "select a kernel node")
            return
        knob = self._knob(self.selected.site.split("#")[0])
        self.node_label.setText(
            f"{self.selected.site} ({self.selected.name}, {len(knob.sites)} sites by this name): block"
        )
        for candidate in knob.candidates:
            self.block.addItem(str(candidate[0]), candidate)
        self.block.setCurrentText(str(knob.current(self.config)[0]))

    def _knob(self, name: str) -> Knob:
        return knobs_for(self.sites, only=name)[0]

    def apply_selected(self) -> None:
        if self.selected is None or self.block.currentData() is None:
            return
        name = self.selected.site.split("#")[0]
        config = self.config.with_block(name, self.block.currentData())

        def work() -> tuple[Trial, Dag]:
            trial = self.measurer.measure(config, len(self.baseline.samples))
            trial.knob, trial.block = name, config.blocks[name]
            return trial, Dag.from_json(self.session.request("dag"))

        self._run(work, self._measured, f"applying {name}={config.blocks[name][0]} in place and re-measuring…")

    def _measured(self, result: tuple[Trial, Dag]) -> None:
        trial, self.dag = result
        self._add_row(f"{trial.knob}={trial.block[0]}", trial)
        if trial.usable:
            self.config = trial.config
            if trial.beats(self.best):
                self.best = trial
        self.status.setText(self._compare(trial))
        self.dag_ready.emit(self.dag)

    def _compare(self, trial: Trial) -> str:
        if not trial.usable:
            return f"{trial.status}: {trial.reason}"
        ratio = speedup(self.baseline.samples, trial.samples)
        if not ratio.significant:
            return f"no significant difference from the baseline ({ratio.value:.3f}x, {ratio.low:.3f}-{ratio.high:.3f})"
        return f"{ratio.value:.3f}x the baseline's speed ({ratio.low:.3f}-{ratio.high:.3f}), in place"

    # -- sweeps, confirmation, configs ------------------------------------------------------------

    def sweep(self) -> None:
        strategy = self.strategy.currentText()
        knobs = knobs_for(self.sites)

        def work() -> Any:
            return tune(Path(self.path.text()), knobs, self.measurer, strategy, self.config, len(self.baseline.samples))

        self._run(work, self._swept, f"{strategy} over {len(knobs)} knobs (each change applied in place)…")

    def _swept(self, result: Any) -> None:
        for trial in result.trials:
            self._add_row(f"{trial.knob}={trial.block[0]}" if trial.knob else "combined", trial)
        for trial in (result.confirmed_baseline, result.confirmed_best):
            if trial is not None:
                self._add_row("fresh capture", trial)
        if result.adopt:
            self.best = result.best
        store = SessionStore(self.store_path)
        store.record_tuning(result.to_json())
        store.close()
        self.status.setText(result.conclusion())

    def confirm(self) -> None:
        best, baseline = self.best, self.baseline

        def work() -> tuple[Trial, Trial]:
            return self.measurer.confirm(baseline.config, REPS), self.measurer.confirm(best.config, REPS)

        self._run(work, self._confirmed, "capturing baseline and best afresh and re-measuring…")

    def _confirmed(self, trials: tuple[Trial, Trial]) -> None:
        fresh_baseline, fresh_best = trials
        self._add_row("baseline, fresh capture", fresh_baseline)
        self._add_row("best, fresh capture", fresh_best)
        ratio = speedup(fresh_baseline.samples, fresh_best.samples)
        penalty = self.baseline.stats.median / fresh_baseline.stats.median
        verdict = "significant" if ratio.significant else "not significant"
        self.status.setText(
            f"fresh captures: best is {ratio.value:.3f}x the baseline ({verdict}); in-place replay "
            f"of the baseline was {penalty:.2f}x its fresh replay"
        )

    def apply_best(self) -> None:
        self._apply_config(self.best.config if self.best else self.config, "best")

    def _apply_config(self, config: LaunchConfig, label: str) -> None:
        def work() -> Trial:
            return self.measurer.measure(config, len(self.baseline.samples))

        self._run(work, lambda trial: self._measured_config(label, trial), f"applying the {label} config…")

    def _measured_config(self, label: str, trial: Trial) -> None:
        self._add_row(label, trial)
        if trial.usable:
            self.config = trial.config
        self.status.setText(self._compare(trial))

    def export_config(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export launch config", "tuned.json", "JSON (*.json)")
        if path:
            (self.best.config if self.best else self.config).save(Path(path))
            self.status.setText(f"wrote {path}; use it with `graphscope run --config {path}` (eager and graph)")

    def import_config(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import launch config", "", "JSON (*.json)")
        if path:
            self._apply_config(LaunchConfig.load(Path(path)), Path(path).name)

    def _add_row(self, label: str, trial: Trial) -> None:
        row = self.history.rowCount()
        self.history.insertRow(row)
        stats = trial.stats if trial.samples else None
        versus = ""
        if stats and self.baseline is not None and trial is not self.baseline:
            versus = f"{speedup(self.baseline.samples, trial.samples).value:.3f}x"
        cells = (
            label,
            trial.how,
            format_ns(stats.median) if stats else "-",
            f"{format_ns(stats.ci_low)}-{format_ns(stats.ci_high)}" if stats else "-",
            versus,
            {True: "match", False: "DIFFER", None: "-"}[trial.outputs_match],
            trial.status,
        )
        for column, text in enumerate(cells):
            self.history.setItem(row, column, QTableWidgetItem(text))
        self.history.scrollToBottom()

    def close_session(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None
