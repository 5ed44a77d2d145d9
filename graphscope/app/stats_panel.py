"""The kernel statistics table: sortable, filtered by name search, rows highlight the timeline; grouped by
kernel, or (replayed graph work) by the nn.Module that made it during capture (view/module_stats.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from graphscope.analysis.attribution import NodeAttribution
from graphscope.analysis.capture_ops import node_attribution
from graphscope.app.table_copy import make_copyable
from graphscope.app.workers import Task, start_behind
from graphscope.core.symbols import SymbolTable, kernel_labels
from graphscope.core.table import Table
from graphscope.core.units import format_ns
from graphscope.graph.names import demangle
from graphscope.trace.model import Trace
from graphscope.view.module_stats import ModuleRow, module_rows

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
GROUPS = ("kernel", "module")
MODULE_COLUMNS = [
    ("module", "module"),
    ("kernels run", "kernels"),
    ("replayed", "replayed"),
    ("GPU time", "gpu_ns"),
    ("share", "share"),
]
MODULE_TIPS = {
    "kernels": "kernels the graph replays ran, made during capture inside this module",
    "replayed": "all replayed graph work of this module: kernels, copies and memsets",
    "share": "share of all replayed graph work's GPU time",
}


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


_ROOT = QModelIndex()


class ModuleStatsModel(QAbstractTableModel):
    """Replayed graph work per module (view/module_stats.py rows)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[ModuleRow] = []

    def set_rows(self, rows: list[ModuleRow]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        return len(MODULE_COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return MODULE_COLUMNS[section][0]
        if role == Qt.ItemDataRole.ToolTipRole:
            return MODULE_TIPS.get(MODULE_COLUMNS[section][1])
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        column = MODULE_COLUMNS[index.column()][1]
        value = getattr(self.rows[index.row()], column)
        if role == SORT_ROLE:
            return value if column == "module" else float(value)
        if role == Qt.ItemDataRole.DisplayRole:
            if column == "module":
                return value
            if column == "gpu_ns":
                return format_ns(float(value))
            return f"{100 * value:.1f}%" if column == "share" else f"{int(value):,}"
        if role == Qt.ItemDataRole.ToolTipRole and column == "module":
            return value
        if role == Qt.ItemDataRole.TextAlignmentRole and column != "module":
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


def _module_rows(trace: Trace, attribution: Callable[[Trace], NodeAttribution], **_: Any) -> list[ModuleRow]:
    return module_rows(attribution(trace))


class StatsPanel(QWidget):
    """Search box plus table. Emits the identities to highlight (empty: clear), and on a double-click the
    identity whose next instance the timeline should show."""

    instance_requested = Signal(int)

    identities_chosen = Signal(object)
    rows_described = Signal(str, object)  # a selection of rows, for Details: title, [(field, value)]

    def __init__(self) -> None:
        super().__init__()
        self.model = KernelStatsModel()
        self.modules = ModuleStatsModel()
        self.trace: Trace | None = None
        self.attribution: Callable[[Trace], NodeAttribution] = node_attribution  # tests give a capture's
        self.module_task: Task | None = None
        self.modules_of: Trace | None = None  # the trace whose modules the table holds
        self.attached: str | None = None  # what an attached capture trace attributed (app/attach_capture.py)
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
        self.group = QComboBox()
        self.group.addItems(list(GROUPS))
        self.group.setToolTip(
            "kernel: every kernel of the scope; module: the whole trace's replayed graph work by the nn.Module "
            "that made it during capture"
        )
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.hide()
        top = QHBoxLayout()
        top.addWidget(self.search, 1)
        top.addWidget(QLabel("group by"))
        top.addWidget(self.group)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.note)
        layout.addWidget(self.table)
        self.group.currentTextChanged.connect(self._on_group)
        self.search.textChanged.connect(self._on_search)
        self.table.selectionModel().selectionChanged.connect(self._on_rows)
        self.table.doubleClicked.connect(self._on_double_click)

    def by_module(self) -> bool:
        return self.group.currentText() == "module"

    def set_stats(self, stats: Table, symbols: SymbolTable, trace: Trace | None = None) -> None:
        self.model.set_stats(stats, symbols)
        if trace is not None and trace is not self.trace:
            self.trace, self.attached = trace, None
            if self.by_module():
                self._on_group("module")
        self.table.resizeColumnsToContents()

    def _on_double_click(self, index: QModelIndex) -> None:
        if not self.by_module():
            self.instance_requested.emit(self.model.identity(self.proxy.mapToSource(index).row()))

    def _on_group(self, group: str) -> None:
        """Kernel rows (the scope's), or the whole trace's replayed graph work by module, computed behind
        the GUI thread once per trace (matching a capture reads every capture window's ranges)."""
        self.table.clearSelection()
        if group == "kernel":
            self.note.hide()
            self._show(self.model, 2)
            self.identities_chosen.emit(self.visible_identities() if self.search.text() else np.empty(0, np.int64))
            return
        self.identities_chosen.emit(np.empty(0, np.int64))
        self._show(self.modules, 3)
        if self.trace is None or self.modules_of is self.trace:
            self._say_modules()
            return
        self.modules.set_rows([])
        self.note.setText("grouping replayed graph work by module…")
        self.note.show()
        trace = self.trace
        task = Task(_module_rows, trace, self.attribution)
        task.signals.finished.connect(lambda rows: self._modules_found(task, trace, rows))
        task.signals.failed.connect(lambda message: self.note.setText(f"cannot group by module: {message}"))
        self.module_task = start_behind(task)

    def _modules_found(self, task: Task, trace: Trace, rows: list[ModuleRow]) -> None:
        if task is not self.module_task or trace is not self.trace:
            return  # another file was opened, or a capture attached, meanwhile
        self.module_task = None
        self.modules_of = trace
        self.modules.set_rows(rows)
        if self.by_module():
            self.table.resizeColumnsToContents()
        self._say_modules()

    def _say_modules(self) -> None:
        rows = self.modules.rows
        if not rows:
            self.note.setText("no graph replays with their work in the trace (profile in node mode)")
        elif all(r.module == "(not attributed)" for r in rows) and self.attached:
            self.note.setText(
                "the attached capture names no module for any replayed node (torch.profiler "
                "records modules with with_modules=True)"
            )
        elif all(r.module == "(not attributed)" for r in rows):
            self.note.setText(
                "the trace's capture names no module for any replayed node (torch.profiler records modules "
                "with with_modules=True; File > Attach capture trace… matches a separate capture trace)"
            )
        else:
            self.note.setText("replayed graph work of the whole trace, by the module that made it during capture")
        if self.attached:
            self.note.setText(f"{self.note.text()} — {self.attached}")
        self.note.show()

    def attribution_changed(self, attached: str | None) -> None:
        """The trace's attribution is another (a capture trace attached or detached): the modules are
        grouped again, now if shown, else when next shown; `attached` says what the capture attributed."""
        self.attached, self.modules_of = attached, None
        if self.module_task is not None:
            self.module_task.cancel()
            self.module_task = None
        if self.by_module():
            self._on_group("module")

    def _show(self, model: QAbstractTableModel, sort_column: int) -> None:
        if self.proxy.sourceModel() is not model:
            self.proxy.setSourceModel(model)
            self.table.sortByColumn(sort_column, Qt.SortOrder.DescendingOrder)
            self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
            self.table.resizeColumnsToContents()

    def _on_search(self, text: str) -> None:
        self.proxy.setFilterFixedString(text)
        self.table.clearSelection()
        if not self.by_module():
            self.identities_chosen.emit(self.visible_identities() if text else np.empty(0, np.int64))

    def _on_rows(self, *_: object) -> None:
        rows = {self.proxy.mapToSource(i).row() for i in self.table.selectionModel().selectedRows()}
        if self.by_module():
            if rows:
                self.rows_described.emit(*self.describe_modules(sorted(rows)))
            return
        if rows:
            self.identities_chosen.emit(np.array([self.model.identity(r) for r in sorted(rows)], dtype=np.int64))
            self.rows_described.emit(*self.describe(sorted(rows)))
        elif not self.search.text():
            self.identities_chosen.emit(np.empty(0, np.int64))

    def show_identity(self, identity: int) -> bool:
        """Select and scroll to the row of one kernel identity (a kernel selected on the timeline) without
        highlighting its kernels anew; False when the table (its scope, its search, its grouping) has no such row."""
        if self.by_module():
            return False
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

    def describe_modules(self, rows: list[int]) -> tuple[str, list[tuple[str, str]]]:
        """What Details says of selected module rows: their replayed work, GPU time and share."""
        chosen = [self.modules.rows[r] for r in rows]
        fields = [
            ("module" if len(chosen) == 1 else "modules", "; ".join(r.module for r in chosen[:8])),
            ("replayed kernels", f"{sum(r.kernels for r in chosen):,}"),
            ("replayed graph work", f"{sum(r.replayed for r in chosen):,} (kernels, copies, memsets)"),
            ("graph nodes", f"{sum(r.nodes for r in chosen):,}"),
            ("GPU time", format_ns(float(sum(r.gpu_ns for r in chosen)))),
            ("share of replay GPU time", f"{100 * sum(r.share for r in chosen):.1f}%"),
        ]
        title = "Module (Kernels table)" if len(chosen) == 1 else f"{len(chosen)} modules (Kernels table)"
        return title, fields

    def visible_identities(self) -> np.ndarray:
        if self.by_module():
            return np.empty(0, np.int64)
        rows = [self.proxy.mapToSource(self.proxy.index(r, 0)).row() for r in range(self.proxy.rowCount())]
        return np.array([self.model.identity(r) for r in rows], dtype=np.int64)
