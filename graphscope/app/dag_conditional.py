"""A conditional node in the DAG view: a box holding its body graph(s), titled with its type and facts.

    +- WHILE decode#0 --------------------------------------------+
    | 12 iterations per launch, 4.31 us per iteration, at most 64  |
    |  body  [mix] -> [scale] -> [pick] -> [graphscope_loop_next]  |
    +--------------------------------------------------------------+

Bodies are laid out as the top level is (layers left to right, folded runs), one band per body (an
IF/ELSE's then and else, a SWITCH's cases), nested conditionals inside them. Boxes inside a body are
selectable for their tooltips but are not nodes of the top-level graph (their indices are the body's).
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem, QGraphicsPolygonItem

from graphscope.graph.conditional import body_title, facts, label
from graphscope.graph.layout import layered
from graphscope.graph.model import Dag, DagNode, Fold

BOX_W, BOX_H, GAP_X, GAP_Y = 170.0, 46.0, 60.0, 22.0  # as dag_view's boxes
PAD, TITLE_H, BODY_LABEL_H = 12.0, 40.0, 18.0
FILL = QColor(240, 244, 252)
EDGE = QColor(120, 120, 130)


def group_size(fold: Fold) -> tuple[float, float]:
    """A box's size: the usual one, or a conditional node's with room for its bodies."""
    node = fold.first
    if node.type != "conditional" or len(fold) > 1:
        return BOX_W, BOX_H
    width, height = BOX_W * 1.6, TITLE_H
    for body in node.bodies:
        _, body_w, body_h = _layout(body)
        width = max(width, body_w + 2 * PAD)
        height += BODY_LABEL_H + body_h + PAD
    return width, height + (PAD if node.bodies else 0)


def grid_positions(
    cells: list[tuple[float, float]], sizes: list[tuple[float, float]]
) -> tuple[list[tuple[float, float]], float, float]:
    """Top-left corners for boxes in (column, row) cells (graph/layout.py) of varying sizes: each column
    as wide as its widest box, each row as tall as its tallest; and the whole drawing's width and height.
    Cells are numbered by the distinct coordinates in order (a layout's half steps stay apart)."""
    column_of = {c: i for i, c in enumerate(sorted({c for c, _ in cells}))}
    row_of = {r: i for i, r in enumerate(sorted({r for _, r in cells}))}
    widths, heights = [0.0] * len(column_of), [0.0] * len(row_of)
    for (column, row), (w, h) in zip(cells, sizes):
        widths[column_of[column]] = max(widths[column_of[column]], w)
        heights[row_of[row]] = max(heights[row_of[row]], h)
    xs = [sum(widths[:c]) + c * GAP_X for c in range(len(widths))]
    ys = [sum(heights[:r]) + r * GAP_Y for r in range(len(heights))]
    positions = [(xs[column_of[c]], ys[row_of[r]]) for c, r in cells]
    width = sum(widths) + GAP_X * max(len(widths) - 1, 0)
    return positions, width, sum(heights) + GAP_Y * max(len(heights) - 1, 0)


def _layout(dag: Dag) -> tuple[list[tuple[Fold, tuple[float, float], tuple[float, float]]], float, float]:
    """A body's folded boxes with their positions (relative to the body's corner) and sizes."""
    groups = dag.fold()
    group_of = {member: g for g, fold in enumerate(groups) for member in fold.members}
    edges = sorted({(group_of[a], group_of[b]) for a, b in dag.edges if group_of[a] != group_of[b]})
    cells = layered(len(groups), edges)
    sizes = [group_size(fold) for fold in groups]
    positions, width, height = grid_positions(cells, sizes)
    return list(zip(groups, positions, sizes)), width, height


def draw_body(parent: QGraphicsItem, dag: Dag, origin: QPointF, make_box: object) -> None:
    """Boxes and edges of one body graph as children of `parent`, from `origin` (scene coordinates)."""
    placed, _, _ = _layout(dag)
    group_of = {member: g for g, (fold, _, _) in enumerate(placed) for member in fold.members}
    rects = []
    for fold, (x, y), (w, h) in placed:
        rect = QRectF(origin.x() + x, origin.y() + y, w, h)
        box = make_box(fold, rect)  # type: ignore[operator]
        box.setParentItem(parent)
        rects.append(rect)
    pen = QPen(EDGE, 1.2)
    seen = set()
    for a, b in dag.edges:
        ga, gb = group_of[a], group_of[b]
        if ga == gb or (ga, gb) in seen:
            continue
        seen.add((ga, gb))
        p0 = QPointF(rects[ga].right(), rects[ga].center().y())
        p1 = QPointF(rects[gb].left(), rects[gb].center().y())
        path = QPainterPath(p0)
        path.cubicTo(QPointF(p0.x() + GAP_X / 2, p0.y()), QPointF(p1.x() - GAP_X / 2, p1.y()), p1)
        line = QGraphicsPathItem(path, parent)
        line.setPen(pen)
        head = QPolygonF([p1, QPointF(p1.x() - 8, p1.y() - 4), QPointF(p1.x() - 8, p1.y() + 4)])
        arrow = QGraphicsPolygonItem(head, parent)
        arrow.setPen(pen)
        arrow.setBrush(QBrush(EDGE))


def conditional_tooltip(node: DagNode) -> str:
    """The conditional node's facts in full: type, key, bodies, where the facts come from, costs."""
    info = node.detail.get("conditional") or {}
    lines = [f"{label(node)} conditional node {node.index}: {node.name}"]
    known = facts(node)
    if known:
        lines.append(known)
    if info.get("fixed_ns") is not None:
        lines.append(f"fixed cost per launch {info['fixed_ns'] / 1e3:.2f} us (the step with the loop capped at one)")
    lines.append(f"{len(node.bodies)} body graph(s): " + ", ".join(f"{len(b.nodes)} nodes" for b in node.bodies))
    if info.get("source"):
        lines.append(str(info["source"]))
    return "\n".join(lines)


def paint_container(painter: QPainter, rect: QRectF, node: DagNode, selected: bool) -> None:
    """The container's frame and title band: type and key, then what is known."""
    painter.setPen(QPen(QColor(255, 200, 0), 4) if selected else QPen(QColor(70, 90, 160), 2.0, Qt.PenStyle.DashLine))
    painter.setBrush(QBrush(FILL))
    painter.drawRoundedRect(rect, 10, 10)
    font = QFont(painter.font())
    font.setPointSizeF(10.0)
    font.setBold(True)
    painter.setFont(font)
    painter.setPen(QColor(30, 40, 90))
    metrics = QFontMetricsF(font)
    top = QRectF(rect.left() + PAD, rect.top() + 3, rect.width() - 2 * PAD, TITLE_H / 2)
    name = node.name if node.name != "conditional" else ""  # an unread node has no name of its own
    title = metrics.elidedText(f"{label(node)}  {name}", Qt.TextElideMode.ElideRight, top.width())
    painter.drawText(top, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), title)
    font.setBold(False)
    painter.setFont(font)
    below = top.translated(0, TITLE_H / 2 - 3)
    known = QFontMetricsF(font).elidedText(
        facts(node) or "nothing measured", Qt.TextElideMode.ElideRight, below.width()
    )
    painter.drawText(below, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), known)
    y = rect.top() + TITLE_H
    for i, body in enumerate(node.bodies):
        area = QRectF(rect.left() + PAD, y, rect.width() - 2 * PAD, BODY_LABEL_H)
        painter.setPen(QColor(80, 80, 90))
        painter.drawText(area, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), body_title(node, i))
        y += BODY_LABEL_H + _layout(body)[2] + PAD


def body_origins(rect: QRectF, node: DagNode) -> list[QPointF]:
    """Where each body's drawing starts inside the container."""
    origins, y = [], rect.top() + TITLE_H
    for body in node.bodies:
        origins.append(QPointF(rect.left() + PAD, y + BODY_LABEL_H))
        y += BODY_LABEL_H + _layout(body)[2] + PAD
    return origins
