"""The Graph dock: a chooser of DAGs (one per graph the trace ran, or a live capture) above the DAG view."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QComboBox, QVBoxLayout, QWidget

from graphscope.app.dag_view import DagView
from graphscope.graph.model import Dag
from graphscope.trace import Trace
from graphscope.view.links import node_work


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
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.choice)
        column.addWidget(self.dag_view, 1)
        self.choice.currentIndexChanged.connect(self._on_choice)

    def show_trace_dags(self, dags: list[Dag], graph_trace_mode: str | None) -> None:
        """The DAGs a node-mode trace ran (edges unknown), or why there are none."""
        self.dags = dags
        self._set_choices(
            [f"graph {dag.graph_id} from the trace: {len(dag.nodes)} nodes (edges unknown)" for dag in dags]
        )
        self.source = "trace"
        if dags:
            self.dag_view.show_dag(dags[0])
        else:
            self.dag_view.show_message(no_graph_message(graph_trace_mode))

    def show_live_dag(self, dag: Dag) -> None:
        """A DAG captured live by the Tune panel (with edges and launch sites)."""
        self.source = "live"
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
            self.dag_view.show_dag(self.dags[index])
