"""One graphics item per lane: it paints only the visible window, merged to pixel resolution."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from pyqtgraph.Qt.internals import PrimitiveArray
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetricsF, QPainter, QPen

from graphscope.core import sets
from graphscope.core.colours import COLOR_GRAPH, GAP_RGB, OTHER_WAIT, PALETTE
from graphscope.core.symbols import SymbolTable
from graphscope.view.layout import Lane
from graphscope.view.lod import MIXED, LodLane, Runs

ROW_HEIGHT = 1.0
BAR = 0.78  # share of a row a bar fills
MIN_LABEL_PX = 48
MAX_LABELS = 400
BRUSHES = [QBrush(QColor(*rgb)) for rgb in PALETTE]
MIXED_BRUSH = QBrush(QColor(90, 90, 100))
HIGHLIGHT_BRUSH = QBrush(QColor(255, 214, 0))
HIGHLIGHT_PEN = QPen(QColor(20, 20, 20))
SELECT_PEN = QPen(QColor(255, 40, 40))
BRACKET_PEN = QPen(QColor(*PALETTE[COLOR_GRAPH]))
for _pen in (HIGHLIGHT_PEN, SELECT_PEN, BRACKET_PEN):
    _pen.setCosmetic(True)
SELECT_PEN.setWidthF(2.5)
BRACKET_PEN.setWidthF(1.6)
BRACKET_REACH = 0.25  # a click in this top share of a stream row picks the graph launch, not a kernel


def _brush(color: int) -> QBrush:
    return MIXED_BRUSH if color == MIXED or color < 0 else BRUSHES[color % len(BRUSHES)]


MIN_FILL = 0.18  # a run that is barely busy still shows


def draw_runs(
    painter: QPainter,
    rects: PrimitiveArray,
    runs: Runs,
    y: float,
    height: float,
    brush: QBrush | None = None,
    faded: bool = False,
    brushes: list[QBrush] | None = None,
    density: bool = True,
) -> None:
    """Fill one rectangle per run with a single drawRects call per colour.

    With `density`, a run is as tall as its busy share (bottom-aligned): merged sparse work, such as
    a GPU stream idling between tiny kernels, reads as sparse instead of as a solid block.
    """
    if not len(runs):
        return
    painter.setOpacity(0.35 if faded else 1.0)
    colors = np.zeros(len(runs), np.int16) if brush is not None else runs.color
    heights = height * np.maximum(runs.fill, MIN_FILL) if density else np.full(len(runs), height)
    for color in sets.unique(colors):
        mine = colors == color
        rects.resize(int(mine.sum()))
        memory = rects.ndarray()
        memory[:, 0] = runs.start[mine]
        memory[:, 1] = y + height - heights[mine]
        memory[:, 2] = runs.end[mine] - runs.start[mine]
        memory[:, 3] = heights[mine]
        if brush is not None:
            painter.setBrush(brush)
        else:
            painter.setBrush(brushes[int(color)] if brushes is not None else _brush(int(color)))
        painter.drawRects(*rects.drawargs())
    painter.setOpacity(1.0)


class LaneItem(pg.GraphicsObject):
    """Draws a `Lane` between y and y + depth_rows; knows its highlighted and selected events."""

    def __init__(self, lane: Lane, y: float, names: SymbolTable | None = None, flat: bool = False) -> None:
        """`flat`: a nested lane drawn in one row, its outermost events only (a collapsed call stack)."""
        super().__init__()
        self.lane = lane
        self.flat = flat and lane.depth_rows > 1
        self.y = y
        self.names = names  # resolves in-bar labels (None: no labels)
        self._rects = PrimitiveArray(QRectF, 4)
        self._highlight: list[LodLane | None] = [None] * lane.depth_rows
        self._highlight_count = 0
        self.selected = -1
        self.selected_bracket = -1
        self.dimmed = False
        self.collapsed = False  # drawn in its group's single row
        x0 = float(lane.start.min()) if len(lane) else 0.0
        x1 = float(lane.end.max()) if len(lane) else 1.0
        self._bounds = QRectF(x0, y, max(x1 - x0, 1.0), self.height)
        self.setFlag(self.GraphicsItemFlag.ItemUsesExtendedStyleOption)

    def boundingRect(self) -> QRectF:
        return self._bounds

    @property
    def height(self) -> float:
        return self.rows * ROW_HEIGHT

    @property
    def rows(self) -> int:
        """Sub-rows drawn: one for a flat lane."""
        return 1 if self.flat else self.lane.depth_rows

    def set_highlight(self, events: np.ndarray | None) -> None:
        """Highlight lane events (indices into the lane's arrays); None clears."""
        self._highlight = [None] * self.lane.depth_rows
        self._highlight_count = 0 if events is None else len(events)
        if events is not None and len(events):
            events = np.sort(events)
            for d, members in enumerate(self.lane.members):
                mine = events[sets.isin(events, members)] if self.lane.depth_rows > 1 else events
                if len(mine):
                    self._highlight[d] = LodLane(
                        self.lane.start[mine], self.lane.end[mine], np.zeros(len(mine), np.int16)
                    )
        self.update()

    def set_selected(self, event: int) -> None:
        self.selected = event
        self.update()

    def set_selected_bracket(self, bracket: int) -> None:
        self.selected_bracket = bracket
        self.update()

    def row_y(self, depth: int) -> float:
        return self.y + depth * ROW_HEIGHT + (1 - BAR) / 2

    def paint(self, painter: QPainter, option, widget=None) -> None:
        view = self.getViewBox()
        if view is None or not len(self.lane):
            return
        (x0, x1), _ = view.viewRange()
        pixel = self.pixelWidth() or (x1 - x0) / 1000
        painter.setPen(Qt.PenStyle.NoPen)
        for depth, lod in enumerate(self.lane.lods[: self.rows]):
            runs = lod.visible(x0, x1, pixel)
            faded = self.dimmed or self._highlight_count > 0
            draw_runs(painter, self._rects, runs, self.row_y(depth), BAR, faded=faded)
            highlight = self._highlight[depth]
            if highlight is not None:
                painter.setPen(HIGHLIGHT_PEN)
                draw_runs(
                    painter, self._rects, highlight.visible(x0, x1, pixel), self.row_y(depth), BAR, HIGHLIGHT_BRUSH
                )
                painter.setPen(Qt.PenStyle.NoPen)
            if self.names is not None:
                self._draw_labels(painter, depth, runs, x0, x1, pixel)
        if self.lane.brackets is not None:
            self._draw_brackets(painter, x0, x1, pixel)
        if self.selected >= 0:
            self._draw_selected(painter, pixel)

    def _draw_labels(self, painter: QPainter, depth: int, runs: Runs, x0: float, x1: float, pixel: float) -> None:
        """Names inside events wide enough to hold one; candidates come from the visible runs (few)."""
        wide_runs = runs.start[(runs.end - runs.start) >= MIN_LABEL_PX * pixel][:MAX_LABELS]
        if not len(wide_runs):
            return
        lod = self.lane.lods[depth]
        starts = np.searchsorted(lod.start, wide_runs)  # the event that opens each wide run
        starts = starts[starts < len(lod)]
        starts = starts[(lod.end[starts] - lod.start[starts]) >= MIN_LABEL_PX * pixel]
        if not len(starts):
            return
        events = self.lane.members[depth][starts]
        painter.save()
        transform = painter.transform()
        painter.resetTransform()
        font = painter.font()
        font.setPointSizeF(8.0)
        painter.setFont(font)
        metrics = QFontMetricsF(font)
        painter.setPen(QPen(QColor(255, 255, 255)))
        top = transform.map(QPointF(0, self.row_y(depth))).y()
        bottom = transform.map(QPointF(0, self.row_y(depth) + BAR)).y()
        for event in events.tolist():
            name_id = int(self.lane.name[event])
            if name_id < 0:
                continue
            left = transform.map(QPointF(max(self.lane.start[event], x0), 0)).x()
            right = transform.map(QPointF(min(self.lane.end[event], x1), 0)).x()
            if right - left < MIN_LABEL_PX:
                continue
            text = metrics.elidedText(self.names.name(name_id), Qt.TextElideMode.ElideRight, right - left - 4)
            painter.drawText(
                QRectF(left + 2, top, right - left - 4, bottom - top),
                int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft),
                text,
            )
        painter.restore()

    def _draw_brackets(self, painter: QPainter, x0: float, x1: float, pixel: float) -> None:
        """Each graph launch as a bracket around its node work on this stream: an open box above and
        below the bars, merged to pixel resolution like the events."""
        runs = self.lane.brackets.visible(x0, x1, pixel)
        top, bottom = self.y + 0.04, self.y + ROW_HEIGHT - 0.04
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(BRACKET_PEN)
        if len(runs):
            self._rects.resize(len(runs))
            memory = self._rects.ndarray()
            memory[:, 0] = runs.start
            memory[:, 1] = top
            memory[:, 2] = np.maximum(runs.end - runs.start, pixel)
            memory[:, 3] = bottom - top
            painter.drawRects(*self._rects.drawargs())
        if self.selected_bracket >= 0:
            start = float(self.lane.brackets.start[self.selected_bracket])
            end = float(self.lane.brackets.end[self.selected_bracket])
            painter.setPen(SELECT_PEN)
            painter.drawRect(QRectF(start, top, max(end - start, pixel), bottom - top))
        painter.setPen(Qt.PenStyle.NoPen)

    def hit_bracket(self, x: float, y: float, tolerance: float) -> int:
        """Index of the graph-launch bracket under (x, y) when y is in the row's top band, else -1."""
        if self.lane.brackets is None or not self.y <= y < self.y + BRACKET_REACH * ROW_HEIGHT:
            return -1
        return self.lane.brackets.hit(x, tolerance)

    def _draw_selected(self, painter: QPainter, pixel: float) -> None:
        event = self.selected
        depth = 0 if self.flat else int(self.lane.depth[event])  # flat: inside its outermost range
        start, end = float(self.lane.start[event]), float(self.lane.end[event])
        painter.setPen(SELECT_PEN)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(QRectF(start, self.row_y(depth), max(end - start, pixel), BAR))

    def hit(self, x: float, y: float, tolerance: float) -> int:
        """Index of the lane event at (x, y), or -1."""
        depth = int((y - self.y) // ROW_HEIGHT)
        if not 0 <= depth < self.rows:
            return -1
        found = self.lane.lods[depth].hit(x, tolerance)
        return int(self.lane.members[depth][found]) if found >= 0 else -1


GAP_ALPHA = (90, 70, 60)  # per cause: the lane's own bars show through
GAP_BRUSHES = [QBrush(QColor(*rgb, alpha)) for rgb, alpha in zip(GAP_RGB, GAP_ALPHA)]


class GapItem(pg.GraphicsObject):
    """Idle gaps behind a GPU lane: orange where the GPU waited for the CPU, grey otherwise."""

    def __init__(self, start: np.ndarray, end: np.ndarray, cause: np.ndarray, y: float, height: float) -> None:
        super().__init__()
        self.lod = LodLane(start, end, cause.astype(np.int16), dominant=False)  # a mix is never all host-wait
        self.y, self.height = y, height
        self._rects = PrimitiveArray(QRectF, 4)
        x0 = float(start.min()) if len(start) else 0.0
        x1 = float(end.max()) if len(end) else 1.0
        self._bounds = QRectF(x0, y, max(x1 - x0, 1.0), height)
        self.setZValue(-1)

    def boundingRect(self) -> QRectF:
        return self._bounds

    def paint(self, painter: QPainter, option, widget=None) -> None:
        view = self.getViewBox()
        if view is None:
            return
        (x0, x1), _ = view.viewRange()
        runs = self.lod.visible(x0, x1, self.pixelWidth() or (x1 - x0) / 1000)
        painter.setPen(Qt.PenStyle.NoPen)
        # a merged run mixes causes: show it as host-wait only if all of it was
        colors = np.where(runs.color == MIXED, OTHER_WAIT, runs.color).astype(np.int16)
        gaps = Runs(runs.start, runs.end, colors, runs.busy)
        draw_runs(painter, self._rects, gaps, self.y, self.height, brushes=GAP_BRUSHES, density=False)
