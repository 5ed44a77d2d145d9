"""The overview strip: the whole trace in one row (how busy the GPU was along it) with the timeline's
visible window marked; drag the window to pan, its edges to zoom, click elsewhere to go there (as
Perfetto's and Nsight Systems' overviews do)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from graphscope.app.timeline import TimelineView
from graphscope.app.timeline_items import LaneAxis
from graphscope.view.document import TraceDocument
from graphscope.view.time_origin import x_span

COLUMNS = 600  # busy share per column: read from each lane's level-of-detail pyramid, a few thousand runs
HEIGHT = 44  # px
BUSY_BRUSH = (66, 133, 244, 150)
WINDOW_BRUSH = (255, 190, 0, 70)


def busy_columns(document: TraceDocument, columns: int = COLUMNS) -> tuple[np.ndarray, np.ndarray]:
    """Column edges (timeline x) over the whole trace and, per column, the share of it its GPU streams
    were busy (their mean; every lane's when the trace has no GPU work)."""
    x0, x1 = x_span(*document.trace.span(), document.layout.origin)
    edges = np.linspace(x0, x1, columns + 1)
    width = (x1 - x0) / columns
    lanes = [lane for lane in document.layout.lanes if lane.kind == "gpu"] or document.layout.lanes
    busy = np.zeros(columns)
    for lane in lanes:
        runs = lane.lods[0].visible(x0, x1, width)
        if len(runs):
            at = np.clip(((runs.start - x0) / width).astype(np.int64), 0, columns - 1)
            busy += np.bincount(at, weights=np.asarray(runs.busy, np.float64), minlength=columns)
    share = np.clip(busy / (width * max(len(lanes), 1)), 0.0, 1.0) if lanes else busy
    return edges, share



def bare_strip(widget: pg.PlotWidget, height: int) -> pg.ViewBox:
    """Make `widget` a strip above the lanes: `height` px, no axes, buttons or menu, a left margin as wide
    as the lane names (so its x lines up with the timeline's), the mouse left to the strip's own handlers."""
    widget.setFixedHeight(height)
    plot = widget.getPlotItem()
    plot.hideAxis("bottom")
    margin = plot.getAxis("left")
    margin.setWidth(LaneAxis.WIDTH)
    margin.setStyle(showValues=False, tickLength=0)
    margin.setPen(pg.mkPen(None))
    plot.hideButtons()
    plot.setMenuEnabled(False)
    plot.setContentsMargins(0, 0, 0, 0)
    view = plot.getViewBox()
    view.setMouseEnabled(x=False, y=False)
    return view

class Overview(pg.PlotWidget):
    """The strip above the timeline; hidden until a document with something to draw is shown."""

    def __init__(self, timeline: TimelineView) -> None:
        super().__init__(background="w")
        self.timeline = timeline
        self.view = bare_strip(self, HEIGHT)
        self.curve = pg.PlotDataItem(stepMode="center", fillLevel=0, brush=BUSY_BRUSH, pen=None)
        self.region = pg.LinearRegionItem(brush=WINDOW_BRUSH, pen=pg.mkPen((200, 130, 0), width=1.5))
        self.region.setZValue(10)
        self.addItem(self.curve)
        self.addItem(self.region)
        self.setToolTip("the whole trace: GPU busy share; drag the window to pan, its edges to zoom")
        self._following = False
        timeline.view.sigXRangeChanged.connect(lambda *_: self.follow())
        self.region.sigRegionChanged.connect(self._moved)
        self.scene().sigMouseClicked.connect(self._clicked)
        self.setVisible(False)

    def set_document(self, document: TraceDocument) -> None:
        edges, share = busy_columns(document)
        self.curve.setData(edges, share)
        top = max(float(share.max()) if len(share) else 0.0, 0.05)  # a lightly used GPU still shows its shape
        self.view.setRange(xRange=(edges[0], edges[-1]), yRange=(0, top * 1.1), padding=0)
        self.region.setBounds((edges[0], edges[-1]))
        self.setVisible(any(len(lane) for lane in document.layout.lanes))
        self.follow()

    def follow(self) -> None:
        """Mark the timeline's visible window."""
        (x0, x1), _ = self.timeline.view.viewRange()
        self._following = True
        try:
            self.region.setRegion((x0, x1))
        finally:
            self._following = False

    def _moved(self) -> None:
        if self._following:
            return
        low, high = self.region.getRegion()
        if high > low:
            self.timeline.view.setXRange(low, high, padding=0)

    def _clicked(self, event) -> None:
        """A click beside the window centres the timeline there, at the same zoom."""
        if event.button() != Qt.MouseButton.LeftButton:
            return
        x = float(self.view.mapSceneToView(event.scenePos()).x())
        low, high = self.region.getRegion()
        if low <= x <= high:  # on the window itself: a drag moves it
            return
        (x0, x1), _ = self.timeline.view.viewRange()
        half = (x1 - x0) / 2
        self.timeline.view.setXRange(x - half, x + half, padding=0)
