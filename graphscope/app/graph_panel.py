"""The Graph dock: a chooser of DAGs (one per graph the trace ran, or a live capture) above the DAG view;
a trace's DAG coloured by the nn.Module that made each node where the attribution knows it (with a
legend), and optionally folded by module."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import numpy as np
import shiboken6
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from graphscope.analysis.attribution import NodeAttribution
from graphscope.analysis.capture_ops import node_attribution
from graphscope.app.dag_view import DagView
from graphscope.app.workers import Task, start_behind
from graphscope.core.colours import NO_MODULE_RGB, RGB, hex_of
from graphscope.graph.model import Dag
from graphscope.trace import Trace
from graphscope.view.links import node_work
from graphscope.view.module_stats import NOT_ATTRIBUTED, dag_modules, module_colours, module_rows

COLOUR_BY = ("time share", "module")
LEGEND_AT_MOST = 12  # modules named in the legend; the rest are counted


def no_graph_message(mode: str | None) -> str:
    """What the Graph view says about a trace with no graph node activity."""
    if mode == "graph":
        return (
            "This trace recorded CUDA graph launches as whole graphs (--cuda-graph-trace=graph): their nodes "
            "were not traced. Profile with --cuda-graph-trace=node to see each node, or capture the graph "
            "live from its workload (Tune > Load live)."
        )
    return (
        "This trace has no CUDA graph node activity: the program launched no CUDA graphs while it was "
        "profiled. Tune > Load live captures a workload's step as a graph and shows its DAG."
    )


class GraphPanel(QWidget):
    def __init__(self) -> None:
        super().__init__()
        self.dag_view = DagView()
        self.choice = QComboBox()
        self.source = "trace"  # where the shown DAG came from: "trace" or "live"
        self.dags: list[Dag] = []
        self.trace: Trace | None = None
        self.attribution: Callable[[Trace], NodeAttribution] = node_attribution  # tests give a capture's
        self.nodes: NodeAttribution | None = None  # the trace's attribution, once computed
        self.colours: dict[str, RGB] = {}
        self.module_task: Task | None = None
        self.colour_by = QComboBox()
        self.colour_by.addItems(list(COLOUR_BY))
        self.colour_by.setToolTip("fill: the node's share of the graph's time, or the nn.Module that made it")
        self.fold_modules = QCheckBox("fold by module")
        self.fold_modules.setToolTip("consecutive nodes one module made (on one stream) drawn as one box")
        self.legend = QLabel()
        self.legend.setWordWrap(True)
        self.legend.hide()
        top = QHBoxLayout()
        top.addWidget(self.choice, 1)
        top.addWidget(QLabel("colour by"))
        top.addWidget(self.colour_by)
        top.addWidget(self.fold_modules)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(top)
        column.addWidget(self.legend)
        column.addWidget(self.dag_view, 1)
        self._modules_known(False)
        self.choice.currentIndexChanged.connect(self._on_choice)
        self.colour_by.currentIndexChanged.connect(lambda _: self._redraw())
        self.fold_modules.toggled.connect(lambda _: self._redraw())

    def show_trace_dags(self, dags: list[Dag], graph_trace_mode: str | None, trace: Trace | None = None) -> None:
        """The DAGs a node-mode trace ran (edges unknown), or why there are none; with the trace, its
        nodes' modules are looked up behind the GUI thread and, where any is known, colour the DAG."""
        self.dags = dags
        self._set_choices(
            [f"graph {dag.graph_id} from the trace: {len(dag.nodes)} nodes (edges unknown)" for dag in dags]
        )
        self.source = "trace"
        self.trace, self.nodes, self.colours, self.module_task = trace, None, {}, None
        self._modules_known(False)
        if dags:
            self.dag_view.show_dag(dags[0])
        else:
            self.dag_view.show_message(no_graph_message(graph_trace_mode))
        if dags and trace is not None:
            task = Task(_attribution, trace, self.attribution)
            task.signals.finished.connect(lambda found: self._attributed(task, trace, found))
            self.module_task = start_behind(task)

    def _attributed(self, task: Task, trace: Trace, found: tuple[NodeAttribution, dict[str, RGB]]) -> None:
        if not shiboken6.isValid(self):  # the window closed while the attribution ran (a lambda outlives it)
            return
        if task is not self.module_task or trace is not self.trace or self.source != "trace":
            return  # another file, a live capture or an attached capture came meanwhile
        self.module_task = None
        self.nodes, self.colours = found
        self._modules_known(bool(self.colours))
        if self.colours:
            self.colour_by.blockSignals(True)
            self.colour_by.setCurrentText("module")
            self.colour_by.blockSignals(False)
            self._redraw()

    def _modules_known(self, known: bool) -> None:
        self.colour_by.setEnabled(known)
        self.fold_modules.setEnabled(known)
        why = "" if known else " (no module known: the trace's capture recorded none)"
        self.colour_by.setToolTip(
            "fill: the node's share of the graph's time, or the nn.Module that made it" + why
        )
        if not known:
            for box in (self.colour_by, self.fold_modules):  # nothing to colour or fold by (a new trace)
                box.blockSignals(True)
            self.colour_by.setCurrentText("time share")
            self.fold_modules.setChecked(False)
            for box in (self.colour_by, self.fold_modules):
                box.blockSignals(False)
            self.legend.hide()

    def _redraw(self) -> None:
        if self.source != "trace" or not self.dags:
            return
        self._draw(self.dags[max(self.choice.currentIndex(), 0)])

    def _draw(self, dag: Dag) -> None:
        if self.nodes is None or not self.colours:
            self.dag_view.show_dag(dag)
            return
        modules = dag_modules(dag, self.nodes)
        by_module = self.colour_by.currentText() == "module"
        fold = self.fold_modules.isChecked()
        self.dag_view.show_dag(dag, modules, self.colours if by_module else None, fold)
        self.legend.setVisible(by_module)
        if by_module:
            self.legend.setText(legend_html(modules, self.colours))

    def show_live_dag(self, dag: Dag) -> None:
        """A DAG captured live by the Tune panel (with edges and launch sites)."""
        self.source = "live"
        self.legend.hide()
        self._modules_known(False)
        self._set_choices([f"live capture: {len(dag.nodes)} nodes, {len(dag.edges)} edges"])
        self.dag_view.show_dag(dag)

    def node_work(self, trace: Trace, indices: list[int]) -> tuple[int, np.ndarray] | None:
        """The timeline rows (source, rows) of the work of these nodes of the shown DAG, matched by node
        index (and graph id, for a DAG from this trace); None when the trace holds none."""
        dag = self.dag_view.dag
        graph_id = dag.graph_id if self.source == "trace" and dag is not None else None
        return node_work(trace, indices, graph_id)

    def _set_choices(self, labels: list[str]) -> None:
        self.choice.blockSignals(True)
        self.choice.clear()
        self.choice.addItems(labels)
        self.choice.blockSignals(False)

    def _on_choice(self, index: int) -> None:
        if self.source == "trace" and 0 <= index < len(self.dags):
            self._draw(self.dags[index])


def _attribution(trace: Trace, attribution: Callable[[Trace], NodeAttribution], **_: Any) -> Any:
    nodes = attribution(trace)
    return nodes, module_colours(module_rows(nodes))


def legend_html(modules: list[str | None], colours: dict[str, RGB]) -> str:
    """The modules of the shown DAG, each with its fill, most replay time first (the colours' order)."""
    shown = set(modules)
    named = [m for m in colours if m in shown]
    swatch = '<span style="background:{};">&nbsp;&nbsp;&nbsp;&nbsp;</span>&nbsp;{}'
    parts = [swatch.format(hex_of(colours[m]), html.escape(m)) for m in named[:LEGEND_AT_MOST]]
    if len(named) > LEGEND_AT_MOST:
        parts.append(f"and {len(named) - LEGEND_AT_MOST} more modules")
    if None in shown:
        parts.append(swatch.format(hex_of(NO_MODULE_RGB), NOT_ATTRIBUTED))
    return " &nbsp; ".join(parts)
