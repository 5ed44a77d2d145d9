"""The timeline: lanes stacked per process and per GPU on one shared time axis."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QCursor, QKeyEvent
from PySide6.QtWidgets import QToolTip

from graphscope.analysis.scope import Scope
from graphscope.app.lane_item import ROW_HEIGHT, GapItem, LaneItem
from graphscope.app.ruler import Ruler
from graphscope.app.timeline_items import GridItem, LaneAxis, LinkItem, ScopeItem, TimeAxis, TimelineViewBox
from graphscope.app.workers import Task, start_behind
from graphscope.view.describe import describe
from graphscope.view.document import TraceDocument
from graphscope.view.gaps import gaps_of
from graphscope.view.layout import API, GRAPH_GROUP, NVTX, STACKED_ROLES
from graphscope.view.links import linked, locate, range_scope, window_scope
from graphscope.view.time_origin import x_of, x_span

GROUP_HEADER = 0.9
CLICK_TOLERANCE_PX = 3
HOVER_FIELDS = 4  # the tooltip's facts: Details has them all
ROW_PIXELS = 30  # a lane row keeps this height whatever the window size, unless the lanes do not fit:
MIN_ROW_PIXELS = 20  # then rows shrink to this (8-pt names and in-bar labels still read) before scrolling


class TimelineView(pg.PlotWidget):
    """Shows a TraceDocument; emits `selected(source, row)` when the user picks an event."""

    selected = Signal(int, int)
    first_frame = Signal()  # once per document, after its lanes were first painted
    scope_requested = Signal(object)  # a Scope (drag on the time axis, an NVTX range clicked) or None (clear)
    lanes_changed = Signal()  # a group or a stack collapsed or expanded from the lane names
    gaps_ready = Signal()  # the idle gaps, found in the background the first time they were shown, are drawn

    def __init__(self, parent=None) -> None:
        self.lane_axis = LaneAxis()
        self.time_axis = TimeAxis("bottom")
        super().__init__(
            parent, viewBox=TimelineViewBox(), axisItems={"bottom": self.time_axis, "left": self.lane_axis}
        )
        self.setBackground("w")
        self.view = self.getViewBox()
        self.view.invertY(True)
        self.view.setMouseEnabled(x=True, y=True)
        self.view.setMenuEnabled(False)
        self.getPlotItem().hideButtons()
        self.grid = GridItem(self.getPlotItem().getAxis("bottom"))
        self.view.addItem(self.grid, ignoreBounds=True)
        self.view.sigRangeChanged.connect(lambda *_: self.grid.prepareGeometryChange())
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.document: TraceDocument | None = None
        self._frame_reported = False
        self._content_height = 0.0
        self.items: dict[int, LaneItem] = {}  # lane index -> item
        self.gap_items: list[GapItem] = []
        self.hidden: set[str] = set()
        self.collapsed: set[str] = set()
        self.flat: set[str] = set()  # keys of nested lanes drawn in one row
        self.flat_roles: set[str] = set(STACKED_ROLES)  # lanes of these roles open flat (MainWindow keeps it)
        self._label_rows: list[tuple[float, float, str, str]] = []  # (top, bottom, "group"/"lane", name)
        self.lane_axis.clicked = self._on_label_click
        self.show_gaps = False
        self.gaps_task: Task | None = None  # finding the document's idle gaps (view/gaps.py)
        self.selection: tuple[int, int] | None = None
        self.link = LinkItem()
        self.scope_item = ScopeItem()
        self.view.addItem(self.scope_item, ignoreBounds=True)
        self.time_axis.dragged = self._on_axis_drag
        self.scene().sigMouseClicked.connect(self._on_click)
        self._hovered = ""
        self.empty_note = pg.TextItem(color=(90, 90, 90), anchor=(0, 0))
        self.scene().sigMouseMoved.connect(self._on_hover)  # hover tooltips, as Nsight Systems and Perfetto have
        self.view.sigResized.connect(lambda _view: self._fit_rows())
        self.ruler = Ruler(self.view)
        self.scope: Scope | None = None
        self._pointer_x: float | None = None
        self._show_axes(False)  # nothing loaded: no 0-20 lane axis, no 0-1 ns time axis

    def _show_axes(self, shown: bool) -> None:
        plot = self.getPlotItem()
        if plot.getAxis("bottom").isVisibleTo(plot) == shown:
            return
        for side in ("left", "bottom"):
            (plot.showAxis if shown else plot.hideAxis)(side)
        self.grid.setVisible(shown)
        plot.layout.activate()  # the axes' room now, not at the next event: a drag may start on them at once

    # -- building -----------------------------------------------------------------------------

    def paintEvent(self, event) -> None:
        super().paintEvent(event)
        if self.document is not None and not self._frame_reported:
            self._frame_reported = True
            self.first_frame.emit()

    def set_document(self, document: TraceDocument) -> None:
        self._frame_reported = False
        self.document = document
        self.selection = None
        self.scope_item.set_windows(None)
        self.flat = {
            lane.key for lane in document.layout.lanes if lane.depth_rows > 1 and lane.role in self.flat_roles
        }
        self.rebuild()
        self.fit_focus()

    def rebuild(self) -> None:
        """Place lane items according to hidden lanes and collapsed groups."""
        for item in [*self.items.values(), *self.gap_items, self.link]:
            if item.scene() is not None:
                self.view.removeItem(item)
        self.items, self.gap_items = {}, []
        if self.document is None:
            return
        ticks, y, current_group = [], 0.0, None
        self._label_rows = []
        names = self.document.trace.symbols
        for index, lane in enumerate(self.document.layout.lanes):
            if lane.key in self.hidden:
                continue
            if lane.group != current_group:
                current_group = lane.group
                collapsed = lane.group in self.collapsed
                ticks.append((y + GROUP_HEADER / 2, ("▸ " if collapsed else "▾ ") + lane.group))
                self._label_rows.append((y, y + GROUP_HEADER, "group", lane.group))
                y += GROUP_HEADER
                group_top = y
                if collapsed:
                    y += ROW_HEIGHT
            collapsed = lane.group in self.collapsed
            item = LaneItem(lane, group_top if collapsed else y, names, flat=lane.key in self.flat)
            item.collapsed = collapsed
            self.view.addItem(item)
            self.items[index] = item
            if not collapsed:
                mark = ("  ▸ " if item.flat else "  ▾ ") if lane.depth_rows > 1 else "    "
                ticks.append((y + item.height / 2, mark + lane.label))
                if lane.depth_rows > 1:
                    self._label_rows.append((y, y + item.height, "lane", lane.key))
                y += item.height
        self.lane_axis.setTicks([[(at, self.lane_axis.fit(text)) for at, text in ticks], []])
        self.view.addItem(self.link)
        self._content_height = y
        self._say_when_empty()
        if self.show_gaps:
            self._add_gaps()
        if self.selection is not None:
            self.select(*self.selection, emit=False)

    def _say_when_empty(self) -> None:
        """A file with nothing to draw says so on the timeline, instead of an empty 0-1 ns plot."""
        if self.empty_note.scene() is not None:
            self.view.removeItem(self.empty_note)
        drawn = any(len(item.lane.start) for item in self.items.values())
        self._show_axes(drawn)
        if self.document is None or drawn:
            return
        hidden = " (every lane is hidden: Lanes panel)" if self.document.layout.lanes and not self.items else ""
        self.empty_note.setText(
            f"nothing to draw in {self.document.trace.path.name}{hidden}:\nno CUDA API calls, GPU work or NVTX "
            "ranges\n(the Summary tab says what the file holds)"
        )
        self.view.addItem(self.empty_note, ignoreBounds=True)
        self.empty_note.setPos(0, 0)

    def _add_gaps(self) -> None:
        """Gap items behind the GPU lanes from the document's gaps; the first time, they are found on
        the background pool (view/gaps.py) and drawn when ready."""
        document = self.document
        if document.gaps is None:
            self._find_gaps(document)
            return
        for item in self.items.values():
            gaps = document.gaps.get(item.lane.key) if item.lane.kind == "gpu" else None
            if gaps is None:
                continue
            gap = GapItem(gaps.start, gaps.end, gaps.cause, item.y, item.height)
            self.view.addItem(gap)
            self.gap_items.append(gap)

    def _find_gaps(self, document: TraceDocument) -> None:
        if self.gaps_task is not None and self.gaps_task.args[0] is document:
            return  # already being found
        if self.gaps_task is not None:
            self.gaps_task.cancel()
        task = self.gaps_task = Task(gaps_of, document)
        task.signals.finished.connect(lambda _gaps: self._on_gaps(task))
        task.signals.failed.connect(lambda _message: setattr(self, "gaps_task", None))
        start_behind(task)

    def _on_gaps(self, task: Task) -> None:
        if task is not self.gaps_task:
            return
        self.gaps_task = None
        if self.show_gaps and self.document is task.args[0] and not self.gap_items:
            self._add_gaps()
            self.gaps_ready.emit()

    def set_gaps_visible(self, visible: bool) -> None:
        self.show_gaps = visible
        self.rebuild()

    def set_lane_hidden(self, key: str, hidden: bool) -> None:
        (self.hidden.add if hidden else self.hidden.discard)(key)
        self.rebuild()

    def set_group_collapsed(self, group: str, collapsed: bool) -> None:
        (self.collapsed.add if collapsed else self.collapsed.discard)(group)
        self.rebuild()

    def set_lane_flat(self, key: str, flat: bool) -> None:
        """Draw a nested lane in one row (its outermost ranges) or with every nesting level; lanes of
        its role in the next files open the same way."""
        (self.flat.add if flat else self.flat.discard)(key)
        lane = next((lane for lane in self.document.layout.lanes if lane.key == key), None) if self.document else None
        if lane is not None and lane.role:
            (self.flat_roles.add if flat else self.flat_roles.discard)(lane.role)
        self.rebuild()

    def _on_label_click(self, y: float) -> None:
        """A click on a group's name collapses or expands the group; on a nested lane's name, its stack."""
        for top, bottom, kind, name in self._label_rows:
            if top <= y < bottom:
                if kind == "group":
                    self.set_group_collapsed(name, name not in self.collapsed)
                else:
                    self.set_lane_flat(name, name not in self.flat)
                self.lanes_changed.emit()
                return

    # -- navigation ---------------------------------------------------------------------------

    def fit_focus(self) -> None:
        """Where the work is: graphscope's measured repetitions, or the window holding most launches and
        GPU work (start-up left out); lanes from the top, the GPU's in view."""
        if self.document is None:
            return
        self.view.setXRange(*x_span(*self.document.focus, self.document.layout.origin), padding=0.03)
        self._fit_rows(top=self._top_showing_gpu())

    def fit_all(self) -> None:
        """The whole process span in time; lanes from the top, the GPU's in view."""
        if self.document is None:
            return
        self.view.setXRange(*x_span(*self.document.trace.span(), self.document.layout.origin), padding=0.02)
        self._fit_rows(top=self._top_showing_gpu())

    def _row_pixels(self) -> float:
        """Pixels per lane row: ROW_PIXELS, or less down to MIN_ROW_PIXELS where that fits every lane."""
        height = max(self.view.height(), 1)
        fitting = height / max(self._content_height + 0.4, 1.0)
        return min(ROW_PIXELS, max(MIN_ROW_PIXELS, fitting))

    def _top_showing_gpu(self) -> float:
        """The first row to show: the top, unless the GPU lanes (below the CPU's) would then be out of
        sight; then as far down as shows them all, the CPU lanes nearest them above."""
        top = -0.2
        gpu = [item for item in self.items.values() if item.lane.kind == "gpu"]
        if not gpu:
            return top
        rows = max(self.view.height(), 1) / self._row_pixels()
        gpu_top = min(item.y for item in gpu) - GROUP_HEADER
        gpu_bottom = max(item.y + (ROW_HEIGHT if item.collapsed else item.height) for item in gpu) + 0.2
        if gpu_bottom > top + rows:
            top = max(top, min(gpu_bottom - rows, gpu_top - 0.2))
        return top

    def _fit_rows(self, top: float | None = None) -> None:
        (_, _), (y0, _) = self.view.viewRange()
        top = y0 if top is None else top
        rows = max(self.view.height(), 1) / self._row_pixels()
        self.view.setLimits(yMin=-0.5, yMax=max(self._content_height + 0.5, top + rows))
        self.view.setYRange(top, top + rows, padding=0)

    def zoom_to_selection(self) -> None:
        """To the selected event, or without one to the scope (a dragged window, an NVTX range)."""
        if self.selection is None:
            if self.scope is not None and self.document is not None:
                low, high = self.document.layout.x_of(self.scope.first), self.document.layout.x_of(self.scope.last)
                pad = max(high - low, 1.0) * 0.03
                self.view.setXRange(low - pad, high + pad, padding=0)
            return
        located = locate(self.document, *self.selection)
        if located is None:
            return
        lane_index, event, bracket = located
        lane = self.document.layout.lanes[lane_index]
        events = lane.brackets if bracket else lane
        start, end = float(events.start[event]), float(events.end[event])
        width = max(end - start, 1000.0)
        self.view.setXRange(start - width, end + width, padding=0)

    def zoom(self, factor: float) -> None:
        (x0, x1), _ = self.view.viewRange()
        center, half = (x0 + x1) / 2, (x1 - x0) / 2 * factor
        self.view.setXRange(center - half, center + half, padding=0)

    def pan(self, fraction: float) -> None:
        (x0, x1), _ = self.view.viewRange()
        self.view.translateBy(x=(x1 - x0) * fraction)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        actions = {
            Qt.Key.Key_W: lambda: self.zoom(0.5),
            Qt.Key.Key_S: lambda: self.zoom(2.0),
            Qt.Key.Key_A: lambda: self.pan(-0.25),
            Qt.Key.Key_D: lambda: self.pan(0.25),
            Qt.Key.Key_F: self.fit_focus,
            Qt.Key.Key_Z: self.zoom_to_selection,
            Qt.Key.Key_Escape: lambda: (self.ruler.clear(), self.clear_selection()),
            Qt.Key.Key_M: self._mark_at_pointer,
            Qt.Key.Key_Backspace: lambda: self.scope_requested.emit(None),
        }
        action = actions.get(Qt.Key(event.key()))
        if event.key() == Qt.Key.Key_F and event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            action = self.fit_all
        if action is None:
            super().keyPressEvent(event)
        else:
            action()
            event.accept()

    # -- selection and linking ----------------------------------------------------------------

    def _hit(self, scene_pos) -> tuple[int, int] | None:
        """(source, row) of the event or graph bracket under a scene position, or None."""
        point = self.view.mapSceneToView(scene_pos)
        tolerance = CLICK_TOLERANCE_PX * (self.view.viewPixelSize()[0] or 1.0)
        for item in self.items.values():
            height = ROW_HEIGHT if item.collapsed else item.height
            if not item.y <= point.y() < item.y + height:
                continue
            bracket = -1 if item.collapsed else item.hit_bracket(point.x(), point.y(), tolerance)
            if bracket >= 0:
                return GRAPH_GROUP, int(item.lane.bracket_rows[bracket])
            event_index = item.hit(point.x(), item.y if item.collapsed else point.y(), tolerance)
            if event_index >= 0:
                return int(item.lane.source[event_index]), int(item.lane.row[event_index])
        return None

    def _on_click(self, event) -> None:
        if self.document is None or event.button() != Qt.MouseButton.LeftButton:
            return
        found = self._hit(event.scenePos())
        if found is None:
            self.clear_selection()
        else:
            self.select(*found)

    def hover_text(self, scene_pos) -> str:
        """What the tooltip over an event says: its title and first facts (name, time, duration, stream)."""
        found = self._hit(scene_pos) if self.document is not None else None
        if found is None:
            return ""
        title, fields = describe(self.document, *found)
        facts = [(name, value) for name, value in fields if str(value) not in title]  # not the name again
        return "\n".join([title, *(f"{name}: {value}" for name, value in facts[:HOVER_FIELDS])])

    def mark(self, x: float) -> None:
        """A ruler mark at timeline x (ns from the origin)."""
        self.ruler.mark(x)

    def ruler_text(self) -> str:
        return self.ruler.text()

    def _mark_at_pointer(self) -> None:
        if self._pointer_x is None:
            (x0, x1), _ = self.view.viewRange()
            self._pointer_x = (x0 + x1) / 2
        self.mark(self._pointer_x)

    def _on_hover(self, scene_pos) -> None:
        self._pointer_x = float(self.view.mapSceneToView(scene_pos).x())
        text = self.hover_text(scene_pos)
        if text != self._hovered:
            self._hovered = text
            if text:
                QToolTip.showText(QCursor.pos(), text, self)
            else:
                QToolTip.hideText()

    def clear_selection(self) -> None:
        self.selection = None
        for item in self.items.values():
            item.set_highlight(None)
            item.set_selected(-1)
            item.set_selected_bracket(-1)
        self.link.set_points(None, None)
        self.selected.emit(-1, -1)

    def select(self, source: int, row: int, emit: bool = True, scope: bool = True) -> None:
        """Select one event and light up what it is linked to (its launch call, or the work it caused);
        an NVTX range also scopes the panels unless `scope` is False (stepping through found events)."""
        document = self.document
        for item in self.items.values():
            item.set_highlight(None)
            item.set_selected(-1)
            item.set_selected_bracket(-1)
        self.selection = (source, row)
        located = locate(self.document, source, row)
        if located is not None and located[0] in self.items:
            lane_index, event, bracket = located
            if bracket:
                self.items[lane_index].set_selected_bracket(event)
            else:
                self.items[lane_index].set_selected(event)
        found = linked(document, source, row)
        self._highlight(found.rows)
        self._draw_link(source, row, found.call)
        if source == NVTX and scope:
            self._scope_to_range(row)
        if emit:
            self.selected.emit(source, row)

    def highlight_rows(self, source: int, rows: np.ndarray | None) -> None:
        """Highlight rows of one source table (a statistics-table filter); None clears."""
        self.selection = None
        self.link.set_points(None, None)
        for item in self.items.values():
            item.set_selected(-1)
            item.set_highlight(None)
        if rows is not None:
            self._highlight({source: rows})
            for item in self.items.values():
                item.dimmed = True
        else:
            for item in self.items.values():
                item.dimmed = False
                item.update()

    def _highlight(self, linked: dict[int, np.ndarray]) -> None:
        per_lane: dict[int, list[np.ndarray]] = {}
        for source, rows in linked.items():
            if source == GRAPH_GROUP:  # brackets: the node kernels they hold light up instead
                continue
            for lane, events in self.document.layout.find(source, np.asarray(rows)):
                per_lane.setdefault(lane, []).append(events)
        for lane, parts in per_lane.items():
            if lane in self.items:
                self.items[lane].set_highlight(np.concatenate(parts))

    # -- scope ----------------------------------------------------------------------------------

    def set_scope(self, scope: Scope | None) -> None:
        """Shade the scope's windows (None: no scope drawn)."""
        origin = self.document.layout.origin if self.document is not None else 0
        self.scope = scope
        self.scope_item.set_windows(None if scope is None else (x_of(scope.start, origin), x_of(scope.end, origin)))

    def _scope_to_range(self, row: int) -> None:
        scope = range_scope(self.document.trace, row)
        if scope is not None:
            self.scope_requested.emit(scope)

    def _on_axis_drag(self, x0: float, x1: float, finished: bool) -> None:
        """A drag along the time axis previews a window, and scopes the panels to it when released."""
        if self.document is None:
            return
        self.scope_item.set_preview(tuple(sorted((x0, x1))) if not finished else None)
        scope = window_scope(self.document.layout, x0, x1) if finished else None
        if scope is not None:
            self.scope_requested.emit(scope)

    def _draw_link(self, source: int, row: int, call: int) -> None:
        if call < 0 or source == API:
            self.link.set_points(None, None)
            return
        work = locate(self.document, source, row)
        cpu = self.document.layout.find(API, np.array([call]))
        if work is None or not cpu or work[0] not in self.items or cpu[0][0] not in self.items:
            self.link.set_points(None, None)
            return
        (cpu_lane, cpu_events), (gpu_lane, gpu_event, bracket) = cpu[0], work
        a_item, b_item = self.items[cpu_lane], self.items[gpu_lane]
        starts = b_item.lane.brackets.start if bracket else b_item.lane.start  # a bracket's own start, not an event's
        a = QPointF(float(a_item.lane.end[cpu_events[0]]), a_item.y + ROW_HEIGHT / 2)
        b = QPointF(float(starts[gpu_event]), b_item.y + ROW_HEIGHT / 2)
        self.link.set_points(a, b)
