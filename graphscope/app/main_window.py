"""The main window: the timeline in the middle, panels around it, loading in the background."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtGui import QAction, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QTabWidget,
    QWidget,
)

from graphscope import __version__
from graphscope.app.describe import describe
from graphscope.app.document import TraceDocument, open_document
from graphscope.app.lanes_panel import LanesPanel
from graphscope.app.layout import KERNEL
from graphscope.app.panels import DetailsPanel, HistogramPanel, SummaryPanel
from graphscope.app.stats_panel import StatsPanel
from graphscope.app.timeline import TimelineView
from graphscope.app.workers import Task, start

MAX_RECENT = 10
EXPORT_FILTER = "Nsight Systems exports (*.sqlite *.nsys-rep);;All files (*)"
SHORTCUTS = (
    "W / S: zoom in / out · A / D: pan · F: fit all · Z: zoom to selection · G: idle gaps · "
    "Esc: clear selection · Shift+wheel: scroll lanes"
)


class MainWindow(QMainWindow):
    loaded = Signal(object)  # the TraceDocument
    load_failed = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle("graphscope")
        self.setAcceptDrops(True)
        self.settings = QSettings("graphscope", "graphscope")
        self.document: TraceDocument | None = None
        self.task: Task | None = None
        self.error_box: QMessageBox | None = None
        self.timeline = TimelineView()
        self.setCentralWidget(self.timeline)
        self.details = DetailsPanel()
        self.summary = SummaryPanel()
        self.stats = StatsPanel()
        self.histograms = HistogramPanel()
        self.lanes = LanesPanel()
        self._docks()
        self._menus()
        self._status()
        self.timeline.selected.connect(self._on_selected)
        self.stats.identities_chosen.connect(self._on_identities)
        self.lanes.lane_toggled.connect(self.timeline.set_lane_hidden)
        self.lanes.group_collapsed.connect(self.timeline.set_group_collapsed)
        self._restore()

    # -- construction -------------------------------------------------------------------------

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(title)
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _docks(self) -> None:
        right = QTabWidget()
        right.addTab(self.details, "Details")
        right.addTab(self.summary, "Summary")
        right.addTab(self.histograms, "Histograms")
        self.side_tabs = right
        inspector = self._dock("Inspector", right, Qt.DockWidgetArea.RightDockWidgetArea)
        kernels = self._dock("Kernels", self.stats, Qt.DockWidgetArea.BottomDockWidgetArea)
        lanes = self._dock("Lanes", self.lanes, Qt.DockWidgetArea.LeftDockWidgetArea)
        lanes.hide()
        self.resizeDocks([inspector], [380], Qt.Orientation.Horizontal)
        self.resizeDocks([kernels], [190], Qt.Orientation.Vertical)

    def _action(self, menu, text: str, slot, shortcut: str | QKeySequence | None = None, checkable=False) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.setCheckable(checkable)
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    def _menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        self._action(file_menu, "&Open…", self.choose_file, QKeySequence.StandardKey.Open)
        self.recent_menu = file_menu.addMenu("Open &recent")
        file_menu.addSeparator()
        self._action(file_menu, "&Quit", self.close, QKeySequence.StandardKey.Quit)
        view = bar.addMenu("&View")
        self._action(view, "&Fit all", self.timeline.fit_all, "F")
        self._action(view, "&Zoom to selection", self.timeline.zoom_to_selection, "Z")
        self.gaps_action = self._action(view, "Show idle &gaps", self.timeline.set_gaps_visible, "G", True)
        view.addSeparator()
        for dock in self.findChildren(QDockWidget):
            view.addAction(dock.toggleViewAction())
        help_menu = bar.addMenu("&Help")
        self._action(help_menu, "&Keyboard", lambda: QMessageBox.information(self, "Keyboard", SHORTCUTS))
        self._action(
            help_menu,
            "&About",
            lambda: QMessageBox.about(
                self,
                "graphscope",
                f"graphscope {__version__}: is this pipeline launch-bound, how much does a "
                "CUDA graph save, and how should each node be launched?",
            ),
        )
        self._refresh_recent()

    def _status(self) -> None:
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(240)
        self.progress.setRange(0, 1000)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel_loading)
        self.status_label = QLabel(SHORTCUTS)
        status = self.statusBar()
        status.addWidget(self.status_label, 1)
        status.addPermanentWidget(self.progress)
        status.addPermanentWidget(self.cancel_button)
        self._set_busy(False)

    def _restore(self) -> None:
        geometry = self.settings.value("geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        state = self.settings.value("window_state")
        if state is not None:
            self.restoreState(state)

    def closeEvent(self, event) -> None:
        self.cancel_loading()
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("window_state", self.saveState())
        super().closeEvent(event)

    # -- opening files ------------------------------------------------------------------------

    def choose_file(self) -> None:
        start_dir = str(Path(self.recent_files()[0]).parent) if self.recent_files() else ""
        path, _ = QFileDialog.getOpenFileName(self, "Open an Nsight Systems export", start_dir, EXPORT_FILTER)
        if path:
            self.open_path(Path(path))

    def open_path(self, path: Path) -> None:
        """Load in the background; the current trace stays until the new one is ready."""
        self.cancel_loading()
        self.task = Task(open_document, Path(path))
        self.task.signals.progressed.connect(self._on_progress)
        self.task.signals.finished.connect(lambda document, p=Path(path): self._on_loaded(p, document))
        self.task.signals.failed.connect(lambda message, p=Path(path): self._on_failed(p, message))
        self.task.signals.cancelled.connect(lambda: self._set_busy(False, "loading cancelled"))
        self._set_busy(True, f"opening {path}")
        start(self.task)

    def cancel_loading(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def _set_busy(self, busy: bool, message: str | None = None) -> None:
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)
        self.progress.setValue(0)
        if message:
            self.status_label.setText(message)

    def _on_progress(self, fraction: float, message: str) -> None:
        self.progress.setValue(int(fraction * 1000))
        self.status_label.setText(message)

    def _on_loaded(self, path: Path, document: TraceDocument) -> None:
        self.task = None
        self.document = document
        self.setWindowTitle(f"graphscope — {path.name}")
        self.timeline.hidden.clear()
        self.timeline.collapsed.clear()
        self.timeline.set_document(document)
        self.summary.show_summary(document.summary)
        self.stats.set_stats(document.stats, document.trace.symbols)
        self.histograms.show_document(document)
        self.lanes.set_layout(document.layout, self.timeline.hidden, self.timeline.collapsed)
        self.details.show_fields("Nothing selected", [("verdict", document.summary["launch"]["verdict"])])
        self._remember(path)
        self._set_busy(
            False,
            f"{path.name}: {len(document.trace.kernels):,} kernels, "
            f"{len(document.trace.api):,} CUDA calls.   {SHORTCUTS}",
        )
        self.loaded.emit(document)

    def _on_failed(self, path: Path, message: str) -> None:
        self.task = None
        self._set_busy(False, f"could not open {path.name}")
        self.load_failed.emit(message)
        if self.isVisible():  # non-blocking, so a failed open never stalls the event loop
            self.error_box = QMessageBox(
                QMessageBox.Icon.Warning, "Cannot open file", message, QMessageBox.StandardButton.Ok, self
            )
            self.error_box.open()

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        urls = [u for u in event.mimeData().urls() if u.isLocalFile()]
        if urls:
            self.open_path(Path(urls[0].toLocalFile()))

    # -- recent files -------------------------------------------------------------------------

    def recent_files(self) -> list[str]:
        value = self.settings.value("recent_files", [])
        return [value] if isinstance(value, str) else list(value or [])

    def _remember(self, path: Path) -> None:
        text = str(path.resolve())
        files = [text] + [f for f in self.recent_files() if f != text]
        self.settings.setValue("recent_files", files[:MAX_RECENT])
        self._refresh_recent()

    def _refresh_recent(self) -> None:
        self.recent_menu.clear()
        for text in self.recent_files():
            action = self.recent_menu.addAction(text)
            action.triggered.connect(lambda checked=False, t=text: self.open_path(Path(t)))
        self.recent_menu.setEnabled(bool(self.recent_files()))

    # -- linking panels -------------------------------------------------------------------------

    def _on_selected(self, source: int, row: int) -> None:
        if self.document is None or source < 0:
            return
        title, fields = describe(self.document, source, row)
        self.details.show_fields(title, fields)
        self.side_tabs.setCurrentWidget(self.details)

    def _on_identities(self, identities: np.ndarray) -> None:
        if self.document is None:
            return
        if not len(identities):
            self.timeline.highlight_rows(KERNEL, None)
            return
        rows = np.concatenate([self.document.kernels_of(int(i)) for i in identities])
        self.timeline.highlight_rows(KERNEL, rows)
