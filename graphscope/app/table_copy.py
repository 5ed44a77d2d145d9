"""Tables a user can take elsewhere: Ctrl+C copies the selected rows (tab-separated, with the header, as
spreadsheets paste them), and the context menu copies or exports the whole table as CSV."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QKeySequence, QShortcut
from PySide6.QtWidgets import QFileDialog, QMenu, QTableView

FORMULA = ("=", "+", "@", "\t", "\r")  # first characters a spreadsheet would run as a formula


def table_rows(view: QTableView, rows: list[int] | None = None) -> list[list[str]]:
    """The header and the given rows (all rows when None) of a table, cells as shown, hidden columns left out."""
    model = view.model()
    if model is None:
        return []
    columns = [c for c in range(model.columnCount()) if not view.isColumnHidden(c)]
    horizontal, display = Qt.Orientation.Horizontal, Qt.ItemDataRole.DisplayRole
    chosen = range(model.rowCount()) if rows is None else rows
    return [[str(model.headerData(c, horizontal, display) or "") for c in columns]] + [
        [str(model.index(row, c).data(display) or "") for c in columns] for row in chosen
    ]


def table_text(view: QTableView, rows: list[int] | None = None, delimiter: str = "\t") -> str:
    """`table_rows` as delimited text (tab-separated by default, as spreadsheets paste it)."""
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=delimiter, lineterminator="\n").writerows(table_rows(view, rows))
    return buffer.getvalue()


def selected_rows(view: QTableView) -> list[int]:
    selection = view.selectionModel()
    if selection is None:
        return []
    return sorted({index.row() for index in selection.selectedIndexes()})


def copy_selection(view: QTableView) -> str:
    """Put the selected rows (every row when none is selected) on the clipboard; returns the text."""
    rows = selected_rows(view)
    text = table_text(view, rows or None)
    QGuiApplication.clipboard().setText(text)
    return text


def export_csv(view: QTableView, path: Path) -> None:
    """The whole table as CSV; a cell a spreadsheet would run as a formula (= + @ first) gets a leading
    apostrophe, as spreadsheet tools advise (a lone '-' and signed numbers are this app's own cells)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerows([("'" + c if c[:1] in FORMULA else c) for c in row] for row in table_rows(view))
    path.write_text(buffer.getvalue())


def make_copyable(view: QTableView, name: str = "table") -> None:
    """Ctrl+C and a context menu (Copy, Copy all as CSV, Export as CSV…) on a table view."""
    shortcut = QShortcut(QKeySequence.StandardKey.Copy, view)
    shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    shortcut.activated.connect(lambda: copy_selection(view))
    view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)

    def menu(position) -> None:
        actions = QMenu(view)
        actions.addAction("Copy selected rows", lambda: copy_selection(view))
        actions.addAction(
            "Copy all as CSV", lambda: QGuiApplication.clipboard().setText(table_text(view, None, delimiter=","))
        )

        def export() -> None:
            path, _ = QFileDialog.getSaveFileName(view, "Export as CSV", f"{name}.csv", "CSV (*.csv)")
            if path:
                export_csv(view, Path(path))

        actions.addAction("Export as CSV…", export)
        actions.exec(view.viewport().mapToGlobal(position))

    view.customContextMenuRequested.connect(menu)
