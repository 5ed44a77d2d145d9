"""The rank overview: a job's rank traces as one (ranks/job.py, run as `graphscope summary FOLDER --json` in
a child process, so its worker processes or Dask client never live in the GUI), one row a rank, the lateness chart; a
double-clicked rank opens its lanes in the main window (only the ranks opened are loaded)."""

from __future__ import annotations

import html
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtSvgWidgets import QSvgWidget
from PySide6.QtWidgets import QAbstractItemView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from graphscope.core.errors import BadInputError, Cancelled
from graphscope.core.progress import CancelToken, ProgressCallback, no_progress
from graphscope.report.ranks_report import lateness_chart, rank_cells
from graphscope.text.ranks import where_analysed

COLUMNS = ("rank", "median step", "GPU busy in steps", "straggler steps", "graph launches", "launch verdict", "file")


def job_of_folder(
    folder: Path, progress: ProgressCallback = no_progress, cancel: CancelToken | None = None
) -> dict[str, Any]:
    """The job's cross-rank view, from `graphscope summary FOLDER --json` in a child process."""
    progress(0.1, f"analysing the rank traces in {folder.name}…")
    if cancel is not None:
        cancel.check()  # cancelled before it began: no child at all
    command = [sys.executable, "-m", "graphscope", "summary", str(folder), "--json"]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while True:
        try:
            out, err = child.communicate(timeout=0.2)
            break
        except subprocess.TimeoutExpired:
            if cancel is not None and cancel.cancelled:
                child.kill()
                child.communicate()
                raise Cancelled() from None
    if cancel is not None:
        cancel.check()  # cancelled while a small job (0.17 s) finished: the user asked for no answer
    if child.returncode not in (0, 2) or not out.strip():
        lines = [line for line in err.strip().splitlines() if line.strip()]
        raise BadInputError(lines[-1].removeprefix("graphscope: error: ") if lines else f"{folder}: no rank traces")
    progress(1.0, "ranks analysed")
    return json.loads(out)


class RanksWindow(QWidget):
    """One job: its verdict, a row per rank, each rank's lateness at each step."""

    def __init__(self, job: dict[str, Any], folder: Path, open_rank: Callable[[Path], None]) -> None:
        super().__init__()
        self.job, self.open_rank = job, open_rank
        self.setWindowTitle(f"graphscope — ranks of {folder.name}")
        self.resize(1100, 700)
        ranks = job["ranks"]
        engine = job.get("engine", {})
        world = f", world size {job['world_size']}" if job.get("world_size") else ""
        self.header = QLabel(
            f"<b>{len(ranks)} ranks</b>{world}, {len(job['steps'])} steps of {job.get('step_name') or '-'} "
            f"(analysed {html.escape(where_analysed(engine))})<br>"
            f"Verdict: {html.escape(job['verdict'])}"
            + "".join(f"<br>left out: {html.escape(problem)}" for problem in job["problems"])
            + "".join(f"<br>skipped: {html.escape(entry)}" for entry in job.get("skipped", []))
            + "<br><i>double-click a rank to open its lanes</i>"
        )
        self.header.setWordWrap(True)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.table = QTableWidget(len(ranks), len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        for row, rank in enumerate(ranks):
            for column, text in enumerate(_cells(rank)):
                self.table.setItem(row, column, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()
        self.table.cellDoubleClicked.connect(lambda row, _column: self.open_row(row))
        self.chart = QSvgWidget()
        svg = lateness_chart(job.get("late_ns") or [], [r["rank"] for r in ranks], "each rank's lateness at each step")
        if svg:
            self.chart.load(QByteArray(svg.encode("utf-8")))
            self.chart.setFixedSize(self.chart.renderer().defaultSize() * 1.5)  # its own proportions, not the window's
        else:
            self.chart.hide()
        layout = QVBoxLayout(self)
        layout.addWidget(self.header)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.chart)
        QShortcut(QKeySequence("Ctrl+W"), self, activated=self.close)

    def open_row(self, row: int) -> None:
        """Open one rank's trace in the main window."""
        self.open_rank(Path(self.job["ranks"][row]["path"]))


def _cells(rank: dict[str, Any]) -> tuple[str, ...]:
    """The report's cells for the rank, its verdict's first words, and its file."""
    *cells, verdict = rank_cells(rank)
    return (*cells, verdict.split(":")[0], Path(rank["path"]).name)
