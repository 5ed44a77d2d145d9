"""The Run panel's "where the graph departs from eager" section: the graph's kernel, copy and memset nodes
in capture order
(diverge's answer), the first differing node selected, and the selected node's captured launch beside the
eager one, rows that differ marked."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QHeaderView, QLabel, QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from graphscope.app.dag_view import DagView
from graphscope.app.table_copy import make_copyable
from graphscope.graph.model import Dag, DagNode
from graphscope.text.diverge import divergence_lines, launch_rows

DIFFERS_RGB = (255, 228, 196)


def chain(launches: list[dict[str, Any]], found: int | None) -> Dag:
    """The kernel, copy and memset nodes as a chain in capture order (the order the search bisects on)."""
    nodes = []
    for position, launch in enumerate(launches):
        node = DagNode(
            index=position,
            type=str(launch.get("type", "kernel")),
            name=str(launch.get("name", "?")),
            grid=tuple(launch.get("grid") or (1, 1, 1)),  # type: ignore[arg-type]
            block=tuple(launch.get("block") or (1, 1, 1)),  # type: ignore[arg-type]
            shared_mem=int(launch.get("shared_mem", 0)),
            site=launch.get("site"),
        )
        if position == found:
            node.detail["diverges"] = "the first node whose buffers differ from eager's"
        nodes.append(node)
    edges = [(i, i + 1) for i in range(len(nodes) - 1)]
    return Dag(nodes, edges, "live", False, notes=["kernel, copy and memset nodes in capture order"])


class DivergeSection(QWidget):
    """Hidden until a run's outputs differ and the search answered."""

    def __init__(self) -> None:
        super().__init__()
        self.result: dict[str, Any] = {}
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.dag = DagView()
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(("", "captured (graph)", "eager"))
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        make_copyable(self.table, "launches")
        split = QSplitter()
        split.addWidget(self.dag)
        split.addWidget(self.table)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(split, 1)
        self.dag.node_selected.connect(self._picked)
        self.hide()

    def show_result(self, result: dict[str, Any] | None) -> None:
        """Show diverge's answer (None or no node found: a line, or nothing)."""
        self.result = result or {}
        launches = self.result.get("graph_launches") or []
        if not result:
            self.hide()
            return
        self.title.setText("\n".join(line.strip() for line in divergence_lines(self.result)))
        position = self.result.get("position")
        self.show()
        if not launches:
            self.dag.show_message("no kernel, copy or memset node to show")
            self.table.setRowCount(0)
            return
        self.dag.show_dag(chain(launches, position))
        self.show_node(position if position is not None else 0)

    def _picked(self, indices: list[int]) -> None:
        if indices:
            self.show_node(min(indices))

    def show_node(self, position: int) -> None:
        """The node's captured launch beside the eager one (for ctx.launch sites the eager launch itself,
        else the fresh capture's node at the same position)."""
        graph = self.result.get("graph_launches") or []
        reference = self.result.get("reference_launches") or []
        captured = graph[position] if position < len(graph) else None
        if position == self.result.get("position") and self.result.get("eager"):
            eager = self.result["eager"]
        else:
            eager = reference[position] if position < len(reference) else None
        self.dag.select_nodes([position])
        rows = launch_rows(captured, eager)
        self.table.setRowCount(len(rows))
        bold = QFont()
        bold.setBold(True)
        for row, (label, left, right, differs) in enumerate(rows):
            for column, text in enumerate((label, left, right)):
                item = QTableWidgetItem(text)
                if differs:
                    item.setBackground(QBrush(QColor(*DIFFERS_RGB)))
                    item.setFont(bold)
                self.table.setItem(row, column, item)
        self.table.resizeColumnsToContents()
