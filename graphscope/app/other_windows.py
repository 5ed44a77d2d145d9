"""The windows the main window opens beside itself: a comparison of two traces on one time axis, and the
overview of a job's rank traces (whose ranks open back in the main window). A mixin of MainWindow: it
uses the window's document, status line and open_path."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QMessageBox

from graphscope.app.compare import CompareWindow
from graphscope.app.ranks_window import RanksWindow, job_of_folder
from graphscope.app.workers import Task, start

EXPORT_FILTER = ";;".join(
    (
        "Traces graphscope reads (*.sqlite *.nsys-rep *.json *.json.gz *.pt.trace.json.gz)",
        "Nsight Systems exports (*.sqlite)",
        "Nsight Systems reports (*.nsys-rep)",
        "PyTorch-profiler traces (*.json *.json.gz *.pt.trace.json.gz)",
        "All files (*)",
    )
)
"""File > Open and Compare with…: one filter listing every format the readers take, then one per kind."""


class OtherWindows:
    """Compare windows and rank overviews, kept so that quitting the main window closes them."""

    def _other_windows(self) -> None:
        self.compare_windows: list[CompareWindow] = []
        self.rank_windows: list[RanksWindow] = []
        self.ranks_task: Task | None = None

    def _close_other_windows(self) -> None:
        for window in [*self.compare_windows, *self.rank_windows]:  # File > Quit ends the program
            window.close()
        if self.ranks_task is not None:
            self.ranks_task.cancel()

    def choose_comparison(self) -> None:
        """Open another export one above the current one, on an aligned time axis."""
        if self.document is None:
            QMessageBox.information(self, "Compare", "open a trace first, then choose the one to compare it with")
            return
        path, _ = QFileDialog.getOpenFileName(self, "Compare with", str(self.document.trace.path.parent), EXPORT_FILTER)
        if path:
            self.compare_with(Path(path))

    def choose_ranks(self) -> None:
        """A folder of one job's rank traces (one per rank: Nsight exports or PyTorch-profiler JSON)."""
        folder = QFileDialog.getExistingDirectory(self, "Open the rank traces of one job")
        if folder:
            self.open_ranks(Path(folder))

    def open_demo_ranks(self) -> None:
        """File > Open demo rank set: the bundled two ranks of a real job (assets/demo_ranks)."""
        from graphscope.core.settings import demo_ranks

        self.open_ranks(demo_ranks())

    def open_ranks(self, folder: Path) -> None:
        """Analyse the folder's ranks in the background, then show the rank overview."""
        task = self.ranks_task = Task(job_of_folder, Path(folder))
        task.signals.progressed.connect(lambda _f, message: self.status_label.setText(message))
        task.signals.failed.connect(lambda message: self.status_label.setText(f"cannot analyse the ranks: {message}"))
        task.signals.finished.connect(lambda job: self._show_ranks(job, Path(folder)))
        start(task)

    def _show_ranks(self, job: dict, folder: Path) -> RanksWindow:
        self.ranks_task = None
        window = RanksWindow(job, folder, self.open_path)
        self.rank_windows.append(window)
        window.show()
        self.status_label.setText(f"{len(job['ranks'])} ranks of {folder.name}: {job['verdict']}")
        return window

    def compare_with(self, other: Path) -> CompareWindow:
        current = Path(self.document.trace.path)
        labels = (f"A: {current.name}", f"B: {other.name}")
        return self.open_comparison({labels[0]: current, labels[1]: other})

    def open_comparison(self, traces: dict) -> CompareWindow:
        """Open two traces one above the other on one time axis (a run's eager and graph, or any two)."""
        window = CompareWindow(traces)
        self.compare_windows.append(window)
        window.show()
        return window
