"""Find on the timeline: kernels, NVTX ranges, CUDA API calls, copies and memsets by name; Enter / F3 the
next match after the view's centre, Shift+Enter / Shift+F3 the previous; each match is selected (Details)
and brought into view."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QWidget

from graphscope.app.timeline import TimelineView
from graphscope.view.search import Matches, find_events

EDITING_KEYS = {
    Qt.Key.Key_A,
    Qt.Key.Key_C,
    Qt.Key.Key_V,
    Qt.Key.Key_X,
    Qt.Key.Key_Z,
    Qt.Key.Key_Y,
    Qt.Key.Key_Left,
    Qt.Key.Key_Right,
    Qt.Key.Key_Home,
    Qt.Key.Key_End,
    Qt.Key.Key_Backspace,
    Qt.Key.Key_Delete,
    Qt.Key.Key_Insert,
}
"""Ctrl+ keys the find field keeps (select all, copy, paste, cut, undo, redo, by word); every other
Ctrl+ key is the window's (Ctrl+E: QLineEdit takes it for 'end of line' on X11 and the export never came)."""


class FindField(QLineEdit):
    """A line edit where Enter asks for the next match, Shift+Enter the previous, Esc to leave."""

    stepped = Signal(int)
    left = Signal()

    def event(self, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.ShortcutOverride
            and event.modifiers() & Qt.KeyboardModifier.ControlModifier
            and event.key() not in EDITING_KEYS
        ):
            event.ignore()  # not overridden: the window's shortcut runs
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.stepped.emit(-1 if event.modifiers() & Qt.KeyboardModifier.ShiftModifier else +1)
            event.accept()
            return
        if event.key() == Qt.Key.Key_Escape:
            self.clear()
            self.left.emit()
            event.accept()
            return
        super().keyPressEvent(event)


class FindBar(QWidget):
    def __init__(self, timeline: TimelineView) -> None:
        super().__init__()
        self.timeline = timeline
        self.matches: Matches | None = None
        self.current = -1
        self.field = FindField()
        self.field.stepped.connect(self.step)
        self.field.left.connect(timeline.setFocus)
        self.field.setPlaceholderText("find: kernel, NVTX, API call, memcpy… (Ctrl+F, Enter / Shift+Enter)")
        self.field.setClearButtonEnabled(True)
        self.field.setMinimumWidth(320)
        self.field.textChanged.connect(self._changed)
        self.count = QLabel("")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 4, 0)
        row.addWidget(self.field)
        row.addWidget(self.count)

    def focus(self) -> None:
        self.field.setFocus()
        self.field.selectAll()

    def reset(self) -> None:
        """A new document: old matches mean nothing in it."""
        self.matches, self.current = None, -1
        self._changed(self.field.text())

    def _changed(self, text: str) -> None:
        self.matches, self.current = None, -1
        self.count.setText("" if not text.strip() else "Enter: find")

    def _search(self) -> Matches | None:
        document = self.timeline.document
        if document is None or not self.field.text().strip():
            return None
        if self.matches is None or self.matches.query != self.field.text():
            self.matches = find_events(document.layout, document.trace, self.field.text())
            self.current = -1
        return self.matches

    def step(self, direction: int) -> None:
        """Select the next (+1) or previous (-1) match and bring it into view."""
        matches = self._search()
        if matches is None:
            return
        if not len(matches):
            self.count.setText("no match")
            return
        if self.current < 0:  # the first step starts from the middle of the view
            (x0, x1), _ = self.timeline.view.viewRange()
            middle = (x0 + x1) / 2
            self.current = matches.after(middle) if direction > 0 else matches.before(middle)
        else:
            self.current = (self.current + direction) % len(matches)
        lane = self.timeline.document.layout.lanes[int(matches.lane[self.current])]
        event = int(matches.event[self.current])
        self.timeline.select(int(lane.source[event]), int(lane.row[event]), scope=False)
        self.timeline.zoom_to_selection()
        self.count.setText(f"{self.current + 1} of {len(matches):,}")
