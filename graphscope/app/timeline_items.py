"""Graphics pieces of the timeline besides the lanes: axes, the view box, the grid, the link arrow."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetrics, QPainter, QPen, QPolygonF

from graphscope.core.units import time_unit


class TimeAxis(pg.AxisItem):
    """Ticks in ns/us/ms/s from the start of the trace, the unit chosen by the tick spacing.

    A drag along the axis calls `dragged(x0, x1, finished)` (view coordinates) instead of panning:
    the timeline turns it into a scope.
    """

    dragged = None

    def mouseDragEvent(self, event):
        view = self.linkedView()
        if self.dragged is None or view is None or event.button() != Qt.MouseButton.LeftButton:
            super().mouseDragEvent(event)
            return
        event.accept()
        x0 = view.mapSceneToView(event.buttonDownScenePos()).x()
        x1 = view.mapSceneToView(event.scenePos()).x()
        self.dragged(x0, x1, event.isFinish())

    def tickStrings(self, values, scale, spacing):
        if not len(values):
            return []
        unit_scale, unit = time_unit(max(abs(v) for v in values))
        decimals = max(0, int(np.ceil(-np.log10(max(spacing / unit_scale, 1e-12)) - 1e-9)))
        return [f"{v / unit_scale:.{decimals}f} {unit}" for v in values]


class LaneAxis(pg.AxisItem):
    """Lane names on the left, one tick per lane; a name too wide is elided in the middle, never dropped."""

    WIDTH = 230

    def __init__(self) -> None:
        super().__init__("left")
        self.setWidth(self.WIDTH)
        self.setStyle(tickLength=0)
        self.clicked: Callable[[float], None] | None = None  # called with the lane y clicked

    def mouseClickEvent(self, event) -> None:
        view = self.linkedView()
        if self.clicked is None or view is None or event.button() != Qt.MouseButton.LeftButton:
            return super().mouseClickEvent(event)
        event.accept()
        self.clicked(float(view.mapSceneToView(event.scenePos()).y()))

    def fit(self, text: str) -> str:
        """`text` elided to the axis width (pyqtgraph silently drops labels that do not fit)."""
        metrics = QFontMetrics(self.style.get("tickFont") or self.font())
        return metrics.elidedText(text, Qt.TextElideMode.ElideMiddle, self.WIDTH - 14)


class TimelineViewBox(pg.ViewBox):
    """Wheel zooms time only; the lanes scroll with a drag or Shift+wheel."""

    def wheelEvent(self, event, axis=None):
        if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            (_, _), (y0, y1) = self.viewRange()
            step = (y1 - y0) * 0.1 * (-1 if event.delta() > 0 else 1)
            self.translateBy(y=step)
            event.accept()
            return
        super().wheelEvent(event, axis=0)


class ViewSpanning(pg.GraphicsObject):
    """An item that covers whatever the view shows (it draws only the visible part)."""

    def boundingRect(self) -> QRectF:
        view = self.getViewBox()
        if view is None:
            return QRectF()
        (x0, x1), (y0, y1) = view.viewRange()
        return QRectF(x0, y0, x1 - x0, y1 - y0)


class ScopeItem(ViewSpanning):
    """The scope's windows shaded across every lane, and the window being dragged on the time axis."""

    BRUSH = QBrush(QColor(66, 133, 244, 28))
    EDGE = QPen(QColor(66, 133, 244, 160))
    PREVIEW = QBrush(QColor(66, 133, 244, 60))

    def __init__(self) -> None:
        super().__init__()
        self.EDGE.setCosmetic(True)
        self.windows: list[tuple[float, float]] = []
        self.preview: tuple[float, float] | None = None
        self.setZValue(-5)

    def set_windows(self, windows: tuple[np.ndarray, np.ndarray] | None) -> None:
        """Shade windows (starts, ends: timeline x); None clears."""
        self.windows = [] if windows is None else list(zip(windows[0].tolist(), windows[1].tolist()))
        self.prepareGeometryChange()
        self.update()

    def set_preview(self, window: tuple[float, float] | None) -> None:
        self.preview = window
        self.prepareGeometryChange()
        self.update()

    def paint(self, painter: QPainter, option, widget=None) -> None:
        view = self.getViewBox()
        if view is None or not (self.windows or self.preview):
            return
        (x0, x1), (y0, y1) = view.viewRange()
        painter.setPen(self.EDGE)
        painter.setBrush(self.BRUSH)
        for start, end in self.windows:
            if end >= x0 and start <= x1:
                painter.drawRect(QRectF(start, y0, end - start, y1 - y0))
        if self.preview is not None:
            painter.setBrush(self.PREVIEW)
            start, end = self.preview
            painter.drawRect(QRectF(start, y0, end - start, y1 - y0))


class GridItem(ViewSpanning):
    """Vertical lines at the time axis' major ticks, in an opaque light grey.

    pyqtgraph's own grid (semi-transparent lines across the plot) cost ~18 ms a frame here.
    """

    PEN = QPen(QColor(232, 232, 236))

    def __init__(self, axis: TimeAxis) -> None:
        super().__init__()
        self.axis = axis
        self.PEN.setCosmetic(True)
        self.setZValue(-10)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        view = self.getViewBox()
        if view is None:
            return
        (x0, x1), (y0, y1) = view.viewRange()
        ticks = self.axis.tickValues(x0, x1, max(self.axis.width(), view.width()))
        if not ticks:
            return
        painter.setPen(self.PEN)
        for x in ticks[0][1]:
            painter.drawLine(QPointF(x, y0), QPointF(x, y1))


class LinkItem(pg.GraphicsObject):
    """An arrow from a CPU call to the GPU work it launched, drawn in screen pixels."""

    def __init__(self) -> None:
        super().__init__()
        self.points: tuple[QPointF, QPointF] | None = None
        self.setZValue(10)

    def set_points(self, start: QPointF | None, end: QPointF | None) -> None:
        self.prepareGeometryChange()
        self.points = (start, end) if start is not None and end is not None else None
        self.update()

    def boundingRect(self) -> QRectF:
        if self.points is None:
            return QRectF()
        a, b = self.points
        box = QRectF(a, b).normalized()
        margin = box.width() * 0.1 + 1e3
        return box.adjusted(-margin, -1, margin, 1)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        if self.points is None:
            return
        transform = painter.transform()
        a, b = (transform.map(p) for p in self.points)
        painter.resetTransform()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        pen = QPen(QColor(220, 30, 30), 2)
        painter.setPen(pen)
        painter.drawLine(a, b)
        direction = b - a
        length = max((direction.x() ** 2 + direction.y() ** 2) ** 0.5, 1e-6)
        ux, uy = direction.x() / length, direction.y() / length
        head = [
            b,
            QPointF(b.x() - 10 * ux + 5 * uy, b.y() - 10 * uy - 5 * ux),
            QPointF(b.x() - 10 * ux - 5 * uy, b.y() - 10 * uy + 5 * ux),
        ]
        painter.setBrush(QColor(220, 30, 30))
        painter.drawPolygon(QPolygonF(head))
