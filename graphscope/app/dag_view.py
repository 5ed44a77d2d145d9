"""The DAG view: a layered left-to-right drawing of a CUDA graph, nodes coloured by their share of time
or (where the attribution knows it) by the nn.Module that made them, optionally folded by module.

Chains of identical nodes are folded into one box (`Dag.fold`: "x1000"), so the seeds' 1000-node
graph stays a handful of items. Live graphs are laid out in layers with crossings reduced
(graph/layout.py); a trace's graph (no edges) in capture order, a band per stream. Names that do not
fit are elided, the full name in the tooltip. Wheel zooms, drag pans; clicking a node emits
`node_selected`.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPen, QPolygonF, QWheelEvent
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem, QGraphicsRectItem, QGraphicsScene, QGraphicsView

from graphscope.app.dag_conditional import (
    body_origins,
    conditional_tooltip,
    draw_body,
    grid_positions,
    group_size,
    paint_container,
)
from graphscope.core.colours import NO_MODULE_RGB, PDL_EDGE_RGB, PLAIN_EDGE_RGB, RGB, kind_rgb
from graphscope.core.edge_kinds import PDL_UNMEASURED, VERDICT_TEXT, EdgeKind
from graphscope.core.launch_config import format_dim
from graphscope.core.units import format_bytes, format_ns
from graphscope.graph.edges import inner_programmatic, kinds_of
from graphscope.graph.layout import banded, layered
from graphscope.graph.model import Dag, DagNode, Fold

BOX_W, BOX_H, GAP_X, GAP_Y = 170.0, 46.0, 60.0, 22.0


READABLE = 0.85  # the smallest fitted scale: 10-pt box text stays about 11 px (at 0.6 and 8.5 pt: ~7 px)
BOX_POINTS = 10.0


def _luminance(color: QColor) -> float:
    """Relative luminance (WCAG 2)."""
    linear = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in color.getRgbF()[:3]]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def ink_on(background: QColor) -> tuple[QColor, QColor]:
    """Title and subtitle colours that read on a box's fill: whichever of near black and white contrasts
    more with it (grey on the red of the hottest nodes read poorly: near black reads at 4.9:1 or better)."""
    fill = _luminance(background)
    dark = (fill + 0.05) / (_luminance(QColor(20, 20, 20)) + 0.05)
    light = 1.05 / (fill + 0.05)
    if light > dark:
        return QColor(255, 255, 255), QColor(255, 240, 236)
    return QColor(20, 20, 20), QColor(45, 45, 45)


def heat(share: float) -> QColor:
    """White to deep red by share of graph time."""
    share = float(np.clip(share, 0.0, 1.0)) ** 0.5
    return QColor(255, int(245 - 200 * share), int(235 - 215 * share))


class NodeItem(QGraphicsRectItem):
    def __init__(
        self, group: int, fold: Fold, share: float, rect: QRectF, fill: RGB | None = None, module: str | None = None
    ) -> None:
        super().__init__(rect)
        self.group, self.members = group, fold.nodes
        node = fold.first
        if fill is not None:  # coloured by module
            self.setBrush(QBrush(QColor(*fill)))
        else:
            self.setBrush(QBrush(heat(share) if node.duration_ns is not None else QColor(245, 247, 250)))
        pen = QPen(QColor(*kind_rgb(node.type)), 2.0)  # the lanes' colour of its kind
        self.setPen(pen)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        hidden = inner_programmatic(fold.dag, fold.members)  # PDL edges inside a fold: said, as they are not drawn
        self.setToolTip(
            tooltip(node, len(fold), fold.median_ns, fold.module or module)
            + (f"\n{hidden} programmatic (PDL) edges between these nodes" if hidden else "")
        )
        self.top_level = group >= 0  # -1: a box inside a conditional node's body
        self.conditional = node if node.type == "conditional" and len(fold) == 1 else None
        if self.conditional is not None:  # a box holding its body graphs (app/dag_conditional.py)
            self.setToolTip(conditional_tooltip(node))
        self.title = fold.module if fold.module is not None else fold.label  # the module first, where it folds
        self.duration = f"{fold.median_ns / 1e3:.1f} us" if fold.median_ns is not None else ""
        if node.detail.get("launched_by"):  # a library kernel: who launched it says more than its block
            self.subtitle = str(node.detail["launched_by"])
        elif fold.module is not None:  # a module's run: how many nodes, and their GPU time over every replay
            self.subtitle = f"{len(fold):,} nodes · {format_ns(fold.time_ns)}"
        elif node.block:
            self.subtitle = f"block {format_dim(node.block)} · grid {format_dim(node.grid)}"
        elif "bytes" in node.detail:  # a copy or memset: how much (and a copy's direction is in its title)
            self.subtitle = f"{node.type} · {format_bytes(int(node.detail['bytes']))}"
        else:
            self.subtitle = node.type if node.type != "kernel" else ""

    def paint(self, painter: QPainter, option, widget=None) -> None:
        if self.conditional is not None:
            paint_container(painter, self.rect(), self.conditional, self.isSelected())
            return
        painter.setPen(QPen(QColor(255, 200, 0), 4) if self.isSelected() else self.pen())
        painter.setBrush(self.brush())
        painter.drawRoundedRect(self.rect(), 6, 6)
        title_ink, subtitle_ink = ink_on(self.brush().color())
        painter.setPen(title_ink)
        font = QFont(painter.font())
        font.setPointSizeF(BOX_POINTS)
        painter.setFont(font)
        top = self.rect().adjusted(6, 4, -6, -BOX_H / 2)
        metrics = QFontMetricsF(font)
        room = top.width() - metrics.horizontalAdvance(self.duration) - 6
        title = metrics.elidedText(self.title, Qt.TextElideMode.ElideMiddle, room)
        painter.drawText(top, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), title)
        painter.drawText(top, int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), self.duration)
        painter.setPen(subtitle_ink)
        bottom = self.rect().adjusted(6, BOX_H / 2 - 2, -6, -4)
        subtitle = metrics.elidedText(self.subtitle, Qt.TextElideMode.ElideRight, bottom.width())
        painter.drawText(bottom, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), subtitle)


def edge_tooltip(dag: Dag, position: int) -> str:
    """An edge's kind and ports, and for a programmatic one its gap, replay saving and verdict."""
    kinds = kinds_of(dag)
    a, b = dag.edges[position]
    lines = [f"{kinds.describe(position)}: node {dag.nodes[a].index} -> node {dag.nodes[b].index}"]
    if kinds.kind[position] == EdgeKind.PROGRAMMATIC:
        lines[0] = f"programmatic edge (PDL): node {dag.nodes[a].index} -> node {dag.nodes[b].index}"
        lines.append(f"ports {kinds.ports(position)} (from port -> to port)")
        row = kinds.measured.get(position, {})
        if "gap_ns" in row:
            low, high = row["gap_ci_ns"]
            lines.append(f"gap {row['gap_ns']:.0f} ns, 95% interval [{low:.0f}, {high:.0f}]")
        if "replay" in row:
            lines.append(f"made plain the replay costs {row['replay']['saving_ns']:+.0f} ns")
        lines += [f"{v}: {VERDICT_TEXT.get(v, '')}" for v in row.get("verdicts", [PDL_UNMEASURED])]
    return "\n".join(lines)


def tooltip(node: DagNode, folded: int, median_ns: float | None = None, module: str | None = None) -> str:
    """Everything about a box, in full: name, type, launch configuration, site or why it is not tunable."""
    if module is not None and folded > 1:
        lines = [f"module {module}", f"{folded} nodes made inside it, from {node.type} node {node.index}: {node.name}"]
    else:
        after = f" (and {folded - 1} identical ones after it)" if folded > 1 else ""
        lines = [node.name, f"{node.type} node {node.index}{after}"]
        if module is not None:
            lines.append(f"made inside module {module} during capture")
    if node.detail.get("launched_by"):
        lines.append(f"launched by {node.detail['launched_by']}")
    for key, label in (("frame", "line"), ("shapes", "input shapes")):  # workload/child/op_attribution.py
        if node.detail.get(key):
            lines.append(f"{label} {node.detail[key]}")
    if node.detail.get("full_name"):
        full = str(node.detail["full_name"])  # PyTorch's run to 2,000 characters: the start says which one
        lines.append(full if len(full) <= 240 else full[:240] + "…")
    if node.block:
        lines.append(f"grid {format_dim(node.grid)}, block {format_dim(node.block)}, {node.shared_mem:,} B shared")
    if folded > 1 and median_ns is not None:
        lines.append(f"median {median_ns / 1e3:.2f} us over the {folded} nodes")
    elif node.duration_ns is not None:
        lines.append(f"median {node.duration_ns / 1e3:.2f} us over {node.launches} launches")
    if node.site:
        lines.append(f"launch site {node.site} (tunable)")
    elif node.detail.get("tunable"):
        lines.append(node.detail["tunable"])
    return "\n".join(lines)


def make_box(
    fold: Fold, rect: QRectF, group: int = -1, share: float = 0.0, fill: RGB | None = None, module: str | None = None
) -> NodeItem:
    """A box for `fold` (group -1: inside a conditional body); a conditional node's holds its bodies."""
    item = NodeItem(group, fold, share, rect, fill, module)
    if item.conditional is not None:
        for body, origin in zip(item.conditional.bodies, body_origins(rect, item.conditional)):
            draw_body(item, body, origin, make_box)
    return item


class DagView(QGraphicsView):
    """Draws a Dag; `node_selected(list of node indices)` when the user picks a box (a fold picks all)."""

    node_selected = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.setScene(QGraphicsScene(self))
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.dag: Dag | None = None
        self.items_by_group: list[NodeItem] = []
        self.edge_items: list[QGraphicsPathItem] = []  # one per drawn edge (a pair of boxes)
        self.group_of: dict[int, int] = {}
        self._fitted = False
        self.scene().selectionChanged.connect(self._on_selection)

    def show_message(self, text: str) -> None:
        """No DAG to draw: say why (a trace without graph node activity, say)."""
        self.scene().clear()
        self.dag, self.items_by_group, self.group_of = None, [], {}
        item = self.scene().addText(text)
        item.setTextWidth(520)
        self.fit()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self._fitted:  # drawn while the dock was hidden: fit now that it has a size
            self.fit()

    def show_dag(
        self,
        dag: Dag,
        modules: list[str | None] | None = None,
        colours: dict[str, RGB] | None = None,
        fold_modules: bool = False,
    ) -> None:
        """Draw `dag`; with `colours` (module -> fill) each node whose module (`modules`, one per node) is
        known is filled in its module's colour, others in NO_MODULE_RGB; with `fold_modules` consecutive
        nodes of one module are one box."""
        self.scene().clear()
        self.dag = dag
        groups = dag.fold(modules=modules if fold_modules else None)
        self.group_of = {member: g for g, fold in enumerate(groups) for member in fold.members}
        total = dag.total_time_ns()
        position = self._positions(dag, groups)
        self.items_by_group = []
        for g, fold in enumerate(groups):
            x, y = position[g]
            fill, module = None, modules[fold.members[0]] if modules is not None else None
            if colours is not None:
                fill = colours.get(module or "", NO_MODULE_RGB)
            share = fold.time_ns / total if total else 0.0
            item = make_box(fold, QRectF(x, y, *group_size(fold)), g, share, fill, module)
            self.scene().addItem(item)
            self.items_by_group.append(item)
        self._edges(dag)
        self._edge_legend(dag)
        if not dag.edges_known:
            note = self.scene().addText("edges unknown: a trace does not record dependencies (capture live for them)")
            note.setPos(0, -40)
        self.fit()

    def _positions(self, dag: Dag, groups: list[Fold]) -> dict[int, tuple[float, float]]:
        """Live graphs: layers left to right, crossings reduced; traces (no edges): capture order in
        bands per stream. Every box has a cell of its own: none overlap."""
        if dag.edges_known:
            group_edges = sorted(
                {(self.group_of[a], self.group_of[b]) for a, b in dag.edges if self.group_of[a] != self.group_of[b]}
            )
            cells = layered(len(groups), group_edges)
        else:
            cells = banded([fold.first.stream or 0 for fold in groups])
        positions, _, _ = grid_positions(cells, [group_size(fold) for fold in groups])  # conditionals are larger
        return dict(enumerate(positions))

    def _edges(self, dag: Dag) -> None:
        """One curve per pair of boxes: grey and solid for plain edges, dashed in PDL_EDGE_RGB where the edge is
        programmatic (its tooltip names the ports, the gap and the verdict where measured)."""
        kinds = kinds_of(dag)
        plain, programmatic = QPen(QColor(*PLAIN_EDGE_RGB), 1.4), QPen(QColor(*PDL_EDGE_RGB), 1.8)
        programmatic.setStyle(Qt.PenStyle.DashLine)
        seen = set()
        self.edge_items = []
        for position, (a, b) in enumerate(dag.edges):
            ga, gb = self.group_of[a], self.group_of[b]
            if ga == gb or (ga, gb) in seen:
                continue
            seen.add((ga, gb))
            pdl = bool(kinds.kind[position] == EdgeKind.PROGRAMMATIC)
            pen = programmatic if pdl else plain
            start = self.items_by_group[ga].rect()
            end = self.items_by_group[gb].rect()
            p0 = QPointF(start.right(), start.center().y())
            p1 = QPointF(end.left(), end.center().y())
            path = QPainterPath(p0)
            path.cubicTo(QPointF(p0.x() + GAP_X / 2, p0.y()), QPointF(p1.x() - GAP_X / 2, p1.y()), p1)
            item = QGraphicsPathItem(path)
            item.setPen(pen)
            item.setZValue(-1)
            item.setToolTip(edge_tooltip(dag, position))
            self.scene().addItem(item)
            self.edge_items.append(item)
            head = QPolygonF([p1, QPointF(p1.x() - 9, p1.y() - 4.5), QPointF(p1.x() - 9, p1.y() + 4.5)])
            solid = QPen(pen.color(), pen.widthF())
            self.scene().addPolygon(head, solid, QBrush(pen.color())).setZValue(-1)

    def _edge_legend(self, dag: Dag) -> None:
        """Above the drawing, where the DAG has programmatic edges: what the two kinds of line mean."""
        if not len(kinds_of(dag).programmatic()):
            return
        x, y = 0.0, -70.0
        for label, rgb, dashed in (
            ("plain edge: starts after its parent ends", PLAIN_EDGE_RGB, False),
            ("programmatic edge (PDL): may start before its parent ends", PDL_EDGE_RGB, True),
        ):
            pen = QPen(QColor(*rgb), 1.8)
            if dashed:
                pen.setStyle(Qt.PenStyle.DashLine)
            line = self.scene().addLine(x, y + 9, x + 36, y + 9, pen)
            line.setData(0, "legend")
            text = self.scene().addText(label)
            text.setPos(x + 42, y - 3)
            x += 60 + text.boundingRect().width()

    def fit(self) -> None:
        """The whole drawing in view, at most life size (a 3-box graph is not blown up) and never below
        READABLE (a long graph in a short dock scrolls instead of shrinking to unreadable boxes)."""
        self._fitted = self.isVisible() and self.viewport().width() > 50
        self.resetTransform()
        bounds = self.scene().itemsBoundingRect().adjusted(-20, -50, 20, 20)
        if bounds.width() > self.viewport().width() or bounds.height() > self.viewport().height():
            self.fitInView(bounds, Qt.AspectRatioMode.KeepAspectRatio)
            if self.transform().m11() < READABLE:
                self.resetTransform()
                self.scale(READABLE, READABLE)
                self.centerOn(bounds.left() + self.viewport().width() / (2 * READABLE), bounds.center().y())
                return
        self.centerOn(bounds.center())

    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_F:  # as F fits the timeline
            self.fit()
            return
        super().keyPressEvent(event)

    def wheelEvent(self, event: QWheelEvent) -> None:
        factor = 1.2 if event.angleDelta().y() > 0 else 1 / 1.2
        self.scale(factor, factor)

    def select_nodes(self, indices: list[int]) -> None:
        """Select the boxes that hold these node indices (from the timeline, say) and show them."""
        self.scene().blockSignals(True)
        self.scene().clearSelection()
        position = {node.index: p for p, node in enumerate(self.dag.nodes)} if self.dag else {}
        for index in indices:
            group = self.group_of.get(position.get(index, -1))
            if group is not None:
                self.items_by_group[group].setSelected(True)
                self.ensureVisible(self.items_by_group[group])
        self.scene().blockSignals(False)
        self.viewport().update()

    def _on_selection(self) -> None:
        # boxes inside a conditional node's body are not nodes of this graph (a Python flag: asking Qt for
        # an item's parent here crashed the thousand-node test while its view was torn down)
        picked = [i for i in self.scene().selectedItems() if isinstance(i, NodeItem) and i.top_level]
        self.node_selected.emit([n.index for item in picked for n in item.members])
