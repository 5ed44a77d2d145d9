"""Tables leave the app as users expect: selected rows to the clipboard, the whole table as CSV."""

import csv

from PySide6.QtGui import QGuiApplication, QShortcut
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem

from graphscope.app.table_copy import copy_selection, export_csv, make_copyable, table_text


def _table(qtbot):
    table = QTableWidget(3, 2)
    qtbot.addWidget(table)
    table.setHorizontalHeaderLabels(["kernel", "total"])
    for row, (name, total) in enumerate([("vec_add", "1.2 ms"), ("gemm, tn", "800 us"), ('=cmd|"x"', "1 us")]):
        table.setItem(row, 0, QTableWidgetItem(name))
        table.setItem(row, 1, QTableWidgetItem(total))
    make_copyable(table, "kernels")
    return table


def test_ctrl_c_copies_the_selected_rows_with_the_header(qtbot):
    table = _table(qtbot)
    table.selectRow(1)
    (shortcut,) = table.findChildren(QShortcut)
    shortcut.activated.emit()  # what Ctrl+C does (offscreen windows do not take key focus reliably)
    assert QGuiApplication.clipboard().text() == "kernel\ttotal\ngemm, tn\t800 us\n"
    table.clearSelection()
    assert copy_selection(table).count("\n") == 4  # nothing selected: every row


def test_the_whole_table_exports_as_csv_that_reads_back(qtbot, tmp_path):
    table = _table(qtbot)
    out = tmp_path / "k.csv"
    export_csv(table, out)
    rows = list(csv.reader(out.open()))
    assert rows == [["kernel", "total"], ["vec_add", "1.2 ms"], ["gemm, tn", "800 us"], ['\'=cmd|"x"', "1 us"]]
    assert table_text(table, [0]) == "kernel\ttotal\nvec_add\t1.2 ms\n"
