"""The per-step strip above the lanes: each step coloured by its graph mode (full graph, piecewise,
mixed, eager), the seams inside it shaded (view/step_strip.py computes both); its x follows the
timeline's. Hidden for a trace without steps. Hovering names the step, its mode and its seams."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from graphscope.app.overview import bare_strip
from graphscope.app.timeline import TimelineView
from graphscope.app.workers import Task, start_behind
from graphscope.core.colours import SEAM_COLOUR
from graphscope.view.document import TraceDocument
from graphscope.view.step_strip import StepStrip, step_strip

HEIGHT = 18  # px


class StepStripWidget(pg.PlotWidget):
    """The strip; `set_document` fills it (or hides it) for a newly shown trace."""

    def __init__(self, timeline: TimelineView) -> None:
        super().__init__(background="w")
        self.view = bare_strip(self, HEIGHT)
        self.view.setXLink(timeline.view)
        self.view.setYRange(0, 1, padding=0)
        self.strip: StepStrip | None = None
        self.task: Task | None = None
        self.items: list[pg.BarGraphItem] = []
        self.scene().sigMouseMoved.connect(self._hover)
        self.setVisible(False)

    def set_document(self, document: TraceDocument) -> None:
        """Clear the strip and compute the new trace's below the GUI thread (0.23 s for 10k kernels on this
        2-core machine, growing with the trace); drawn when done, unless another trace came meanwhile."""
        for item in self.items:
            self.removeItem(item)
        self.items, self.strip = [], None
        self.setVisible(False)
        if self.task is not None:
            self.task.cancel()
        self.task = Task(_compute, document.trace, document.analysis, document.layout.origin)
        # bound methods: Qt drops the connection when the widget goes (a window closed mid-computation)
        self.task.signals.finished.connect(self._finished)
        self.task.signals.failed.connect(self._failed)  # no strip, no noise
        start_behind(self.task)

    def _finished(self, strip: StepStrip | None) -> None:
        self._show(self.sender(), strip)

    def _failed(self, _why: str) -> None:
        self._show(self.sender(), None)

    def _show(self, signals: object, strip: StepStrip | None) -> None:
        if self.task is None or signals is not self.task.signals:  # a trace opened since: its own task draws
            return
        self.task = None
        self.strip = strip
        self.setVisible(strip is not None and len(strip) > 0)
        if strip is None or not self.isVisible():
            return
        s = strip
        steps = pg.BarGraphItem(
            x0=s.start.astype(np.float64), x1=s.end.astype(np.float64), y0=0.0, y1=1.0,
            brushes=[pg.mkBrush(*c) for c in s.colours()], pens=[pg.mkPen(255, 255, 255)] * len(s),
        )  # fmt: skip
        self.items.append(steps)
        if len(s.seam_start):
            seams = pg.BarGraphItem(
                x0=s.seam_start.astype(np.float64), x1=s.seam_end.astype(np.float64), y0=0.0, y1=1.0,
                brush=pg.mkBrush(*SEAM_COLOUR), pen=pg.mkPen(None),
            )  # fmt: skip
            self.items.append(seams)
        for item in self.items:
            self.addItem(item)

    def step_at(self, x: float) -> int | None:
        """The step under timeline x, or None."""
        if self.strip is None or not len(self.strip):
            return None
        index = int(np.searchsorted(self.strip.start, x, side="right")) - 1
        return index if index >= 0 and x < self.strip.end[index] else None

    def _hover(self, position) -> None:
        index = self.step_at(float(self.view.mapSceneToView(position).x()))
        self.setToolTip(self.strip.label(index) if index is not None and self.strip is not None else "")


def _compute(trace, analysis, origin: int, progress=None, cancel=None) -> StepStrip | None:
    return step_strip(trace, analysis, origin)
