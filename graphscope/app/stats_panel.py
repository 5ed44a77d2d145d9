"""The kernel statistics table: sortable, filtered by name search, rows highlight the timeline."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLineEdit, QTableView, QVBoxLayout, QWidget

from graphscope.app.table_copy import make_copyable
from graphscope.core.symbols import SymbolTable, kernel_labels
from graphscope.core.table import Table
from graphscope.core.units import format_ns
from graphscope.graph.names import demangle

COLUMNS = [
    ("kernel", "short_name"),
    ("count", "count"),
    ("total", "total_ns"),
    ("mean", "mean_ns"),
    ("median", "median_ns"),
    ("min", "min_ns"),
    ("max", "max_ns"),
    ("std", "std_ns"),
]
SORT_ROLE = Qt.ItemDataRole.UserRole


class KernelStatsModel(QAbstractTableModel):
    """A `kernel_stats` table: one row per kernel identity, labelled by short name."""

    def __init__(self) -> None:
        super().__init__()
        self.stats: Table | None = None
        self.symbols = SymbolTable()
        self.labels: list[str] = []

    def set_stats(self, stats: Table, symbols: SymbolTable) -> None:
        self.beginResetModel()
        self.stats, self.symbols = stats, symbols
        shorts = [symbols.name(int(v)) for v in stats["short_name"].tolist()] if len(stats) else []
        fulls = [symbols.name(int(v)) for v in stats.key.tolist()] if len(stats) else []
        fulls = [demangle(f) or f for f in fulls]  # a file may hold the mangled name only
        self.labels = kernel_labels(shorts, fulls)  # rows that share a short name say what tells them apart
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | None = None) -> int:
        return 0 if self.stats is None or (parent is not None and parent.isValid()) else len(self.stats)

    def columnCount(self, parent: QModelIndex | None = None) -> int:
        return len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section][0]
        return None

    def data(self, index: QModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if self.stats is None or not index.isValid():
            return None
        column = COLUMNS[index.column()][1]
        value = self.stats[column][index.row()]
        if role == SORT_ROLE:
            return self.labels[index.row()] if column == "short_name" else float(value)
        if role == Qt.ItemDataRole.DisplayRole:
            if column == "short_name":
                return self.labels[index.row()]
            return f"{int(value):,}" if column == "count" else format_ns(float(value))
        if role == Qt.ItemDataRole.ToolTipRole and column == "short_name":
            return self.symbols.name(int(self.stats.key[index.row()]))
        if role == Qt.ItemDataRole.TextAlignmentRole and column != "short_name":
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def identity(self, row: int) -> int:
        return int(self.stats.key[row])


class StatsPanel(QWidget):
    """Search box plus table. Emits the identities to highlight (empty: clear), and on a double-click the
    identity whose next instance the timeline should show."""

    instance_requested = Signal(int)

    identities_chosen = Signal(object)
    rows_described = Signal(str, object)  # a selection of rows, for Details: title, [(field, value)]

    def __init__(self) -> None:
        super().__init__()
        self.model = KernelStatsModel()
        self.proxy = QSortFilterProxyModel()
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.proxy.setFilterKeyColumn(0)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.search = QLineEdit()
        self.search.setPlaceholderText("search kernels (highlights matches)")
        self.search.setClearButtonEnabled(True)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(2, Qt.SortOrder.DescendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        make_copyable(self.table, "kernels")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.search)
        layout.addWidget(self.table)
        self.search.textChanged.connect(self._on_search)
        self.table.selectionModel().selectionChanged.connect(self._on_rows)
        self.table.doubleClicked.connect(
            lambda index: self.instance_requested.emit(self.model.identity(self.proxy.mapToSource(index).row()))
        )

    def set_stats(self, stats: Table, symbols: SymbolTable) -> None:
        self.model.set_stats(stats, symbols)
        self.table.resizeColumnsToContents()

    def _on_search(self, text: str) -> None:
        self.proxy.setFilterFixedString(text)
        self.table.clearSelection()
        self.identities_chosen.emit(self.visible_identities() if text else np.empty(0, np.int64))

    def _on_rows(self, *_: object) -> None:
        rows = {self.proxy.mapToSource(i).row() for i in self.table.selectionModel().selectedRows()}
        if rows:
            self.identities_chosen.emit(np.array([self.model.identity(r) for r in sorted(rows)], dtype=np.int64))
            self.rows_described.emit(*self.describe(sorted(rows)))
        elif not self.search.text():
            self.identities_chosen.emit(np.empty(0, np.int64))

    def show_identity(self, identity: int) -> bool:
        """Select and scroll to the row of one kernel identity (a kernel selected on the timeline) without
        highlighting its kernels anew; False when the table (its scope, its search) has no such row."""
        rows = [r for r in range(self.model.rowCount()) if self.model.identity(r) == identity]
        if not rows:
            return False
        index = self.proxy.mapFromSource(self.model.index(rows[0], 0))
        if not index.isValid():
            return False
        selection = self.table.selectionModel()
        selection.blockSignals(True)
        self.table.selectRow(index.row())
        selection.blockSignals(False)
        self.table.viewport().update()
        self.table.scrollTo(index)
        return True

    def describe(self, rows: list[int]) -> tuple[str, list[tuple[str, str]]]:
        """What Details says of selected rows (model rows): one kernel's statistics, or the selection's
        totals and names."""
        model, stats = self.model, self.model.stats
        if len(rows) == 1:
            row = rows[0]
            fields = [
                ("kernel", model.labels[row]),
                ("full name", model.symbols.name(int(stats.key[row]))),
                ("launches", f"{int(stats['count'][row]):,}"),
                ("total", format_ns(float(stats["total_ns"][row]))),
                ("median", format_ns(float(stats["median_ns"][row]))),
                ("mean ± std", f"{format_ns(float(stats['mean_ns'][row]))} ± {format_ns(float(stats['std_ns'][row]))}"),
                ("min - max", f"{format_ns(float(stats['min_ns'][row]))} - {format_ns(float(stats['max_ns'][row]))}"),
            ]
            title = "Kernel (Kernels table)"
        else:
            names = [model.labels[r] for r in rows]
            fields = [
                ("launches", f"{int(stats['count'][rows].sum()):,}"),
                ("total", format_ns(float(stats["total_ns"][rows].sum()))),
                ("kernels", "; ".join(names[:8]) + (f"; and {len(names) - 8} more" if len(names) > 8 else "")),
            ]
            title = f"{len(rows)} kernels (Kernels table)"
        fields.append(("on the timeline", "highlighted; double-click a row for its next kernel"))
        return title, fields

    def visible_identities(self) -> np.ndarray:
        rows = [self.proxy.mapToSource(self.proxy.index(r, 0)).row() for r in range(self.proxy.rowCount())]
        return np.array([self.model.identity(r) for r in rows], dtype=np.int64)
