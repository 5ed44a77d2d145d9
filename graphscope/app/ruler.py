"""A ruler on the timeline: M marks the time under the pointer, a second M reads the time between."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt

from graphscope.core.units import format_ns, format_time

RULER_COLOR = (200, 30, 120)


class Ruler:
    """Two vertical marks and what lies between them, in the view's time (ns from the layout's origin)."""

    def __init__(self, view: pg.ViewBox) -> None:
        self.view = view
        pen = pg.mkPen(RULER_COLOR, width=1, style=Qt.PenStyle.DashLine)
        self.lines = [pg.InfiniteLine(angle=90, movable=False, pen=pen) for _ in range(2)]
        self.label = pg.TextItem(color=RULER_COLOR, anchor=(0.5, 0), fill=(255, 255, 255, 220))
        for item in (*self.lines, self.label):
            item.setVisible(False)
            view.addItem(item, ignoreBounds=True)
        self.marks: list[float] = []
        view.sigRangeChanged.connect(lambda *_: self._place_label())

    def mark(self, x: float) -> None:
        """A first mark, the second one (then the span is shown), or after two a new first mark."""
        self.marks = [x] if len(self.marks) != 1 else [self.marks[0], x]
        for line, at in zip(self.lines, self.marks):
            line.setPos(at)
            line.setVisible(True)
        self.lines[1].setVisible(len(self.marks) == 2)
        self.label.setText(self.text())
        self.label.setVisible(True)
        self._place_label()

    def clear(self) -> None:
        self.marks = []
        for item in (*self.lines, self.label):
            item.setVisible(False)

    def text(self) -> str:
        if not self.marks:
            return ""
        if len(self.marks) == 1:
            return f"mark {format_time(self.marks[0])}: M again at the second point"
        low, high = sorted(self.marks)  # the points to the ns: a 2 us span at 329 ms reads apart
        return f"{format_ns(high - low)} between {format_time(low)} and {format_time(high)}"

    def _place_label(self) -> None:
        if not self.marks:
            return
        (_, _), (y0, _) = self.view.viewRange()
        self.label.setPos(sum(self.marks) / len(self.marks), y0)
