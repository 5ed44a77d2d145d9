"""The lane list: show or hide lanes, collapse a process or GPU into one row, a call stack into one row."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import QHeaderView, QTreeWidget, QTreeWidgetItem

from graphscope.view.layout import TimelineLayout

KEY_ROLE = Qt.ItemDataRole.UserRole
PANEL_WIDTH = 360  # px: "CUDA API · thread 1507853888 (66)" whole beside its boxes


class LanesPanel(QTreeWidget):
    """Group rows (process or GPU) with a collapse box; lane rows with a show box, and a collapse box
    where the lane nests (a call stack drawn in one row when collapsed)."""

    lane_toggled = Signal(str, bool)  # lane key, hidden
    group_collapsed = Signal(str, bool)  # group name, collapsed
    lane_flattened = Signal(str, bool)  # lane key, drawn in one row

    def __init__(self) -> None:
        super().__init__()
        self.setHeaderLabels(["lane", "collapse"])
        header = self.header()  # the names take the room left; "collapse" is never cut to "coll"
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # "python3 [144] CUD…" lost what the lane holds
        self.itemChanged.connect(self._on_changed)
        self._filling = False

    def sizeHint(self) -> QSize:
        return QSize(PANEL_WIDTH, super().sizeHint().height())

    def set_layout(
        self, layout: TimelineLayout, hidden: set[str], collapsed: set[str], flat: set[str] | None = None
    ) -> None:
        self._filling = True
        self.clear()
        flat = flat or set()
        groups: dict[str, QTreeWidgetItem] = {}
        for lane in layout.lanes:
            group = groups.get(lane.group)
            if group is None:
                group = QTreeWidgetItem(self, [lane.group, ""])
                group.setData(0, KEY_ROLE, ("group", lane.group))
                group.setToolTip(0, lane.group)
                group.setCheckState(1, Qt.CheckState.Checked if lane.group in collapsed else Qt.CheckState.Unchecked)
                group.setExpanded(True)
                groups[lane.group] = group
            text = f"{lane.label} ({len(lane):,})"
            item = QTreeWidgetItem(group, [text])
            item.setToolTip(0, text + (f", {lane.depth_rows} levels deep" if lane.depth_rows > 1 else ""))
            item.setData(0, KEY_ROLE, ("lane", lane.key))
            item.setCheckState(0, Qt.CheckState.Unchecked if lane.key in hidden else Qt.CheckState.Checked)
            if lane.depth_rows > 1:
                item.setCheckState(1, Qt.CheckState.Checked if lane.key in flat else Qt.CheckState.Unchecked)
        self._filling = False

    def _on_changed(self, item: QTreeWidgetItem, column: int) -> None:
        if self._filling:
            return
        kind, key = item.data(0, KEY_ROLE)
        if kind == "lane" and column == 0:
            self.lane_toggled.emit(key, item.checkState(0) != Qt.CheckState.Checked)
        elif kind == "lane" and column == 1:
            self.lane_flattened.emit(key, item.checkState(1) == Qt.CheckState.Checked)
        elif kind == "group" and column == 1:
            self.group_collapsed.emit(key, item.checkState(1) == Qt.CheckState.Checked)
