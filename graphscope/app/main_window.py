"""The main window: the timeline in the middle, panels around it, loading in the background."""

from __future__ import annotations

import html
import os
import sys
from concurrent.futures import Future
from pathlib import Path

import numpy as np
from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QDragEnterEvent, QDropEvent, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from graphscope import __version__
from graphscope.analysis.scope import Scope
from graphscope.app.attach_capture import AttachCapture
from graphscope.app.find_bar import FindBar
from graphscope.app.graph_panel import GraphPanel
from graphscope.app.lanes_panel import LanesPanel
from graphscope.app.other_windows import EXPORT_FILTER, OtherWindows
from graphscope.app.overview import Overview
from graphscope.app.panels import DetailsPanel, HistogramPanel, SummaryPanel
from graphscope.app.plan_panel import PlanPanel
from graphscope.app.recent_files import RecentFiles
from graphscope.app.report_dialog import export_perfetto, export_report
from graphscope.app.run_panel import RunPanel
from graphscope.app.stats_panel import StatsPanel
from graphscope.app.step_strip import StepStripWidget
from graphscope.app.timeline import TimelineView
from graphscope.app.tune_panel import TunePanel
from graphscope.app.workers import Task, hold_cache_writes, release_cache_writes, start_behind
from graphscope.core.progress import CancelToken, ProgressCallback
from graphscope.graph.edges import edge_fields
from graphscope.graph.model import Dag
from graphscope.trace.cuda_events import event_records
from graphscope.trace.model import Trace
from graphscope.view.describe import describe, describe_nodes, idle_details
from graphscope.view.document import (
    ScopedView,
    TraceDocument,
    finish_document,
    load_remaining_columns,
    open_document,
    scoped_view,
)
from graphscope.view.layout import KERNEL, NVTX
from graphscope.view.legend import legend_html, scope_banner
from graphscope.view.links import kernels_of, next_instance, node_of

FIRST_FRAME_ENV = "GRAPHSCOPE_REPORT_FIRST_FRAME"
FLAT_ROLES_KEY = "lanes/flat_roles"  # which kinds of nested lane (Python, operators...) open in one row
STATE_VERSION = 2  # bump when docks change, so an older saved layout is not applied
SHORTCUTS = (
    "W / S: zoom in / out · A / D: pan · F: fit the activity · Shift+F: whole process · Z: zoom to selection · "
    "G: idle gaps · drag the time axis: scope · Backspace: clear the scope · "
    "M: ruler mark · Esc: clear selection and ruler · Shift+wheel: scroll lanes"
)
KEYBOARD = "\n".join(
    (
        "Timeline: " + SHORTCUTS,
        "Files: Ctrl+O open · Ctrl+Shift+O compare with another trace · Ctrl+Shift+R a job's rank traces · "
        "Ctrl+Shift+A attach a capture trace · Ctrl+E export a report · "
        "Ctrl+] / Ctrl+[ next / previous window of a large file · Ctrl+Q quit (every window)",
        "Find: Ctrl+F find on the timeline · Enter / F3 next match · Shift+Enter / Shift+F3 previous · "
        "double-click a Kernels row: its next kernel",
        "Graph view: F fit the graph · wheel zoom · drag to pan",
        "Compare window: Ctrl+W close it · Ctrl+Q quit",
    )
)


INSPECTOR_WIDTH, INSPECTOR_MIN_WIDTH = 380, 280  # px: at 110 px (a restored state) it read a word a line
BOTTOM_DOCK_HEIGHT = 260  # px: the Kernels dock's height; above a third of the window it hid the lanes


class MainWindow(QMainWindow, OtherWindows, AttachCapture):
    loaded = Signal(object)  # the TraceDocument
    load_failed = Signal(str)
    capture_attached = Signal(object)  # a view.attached.Attachment (it may have matched nothing)
    capture_failed = Signal(str)

    def __init__(self, persist: bool = True) -> None:
        """With `persist` False (a screenshot) the saved layout and recent files are neither read nor written."""
        super().__init__()
        self.persist = persist
        self._shown = False
        self.setWindowTitle("graphscope")
        self.setAcceptDrops(True)
        self.settings = QSettings("graphscope", "graphscope")
        self.document: TraceDocument | None = None
        self.task: Task | None = None
        self.preload: Task | None = None
        self.error_box: QMessageBox | None = None
        self.timeline = TimelineView()
        self.scope_banner = QLabel()
        self.scope_banner.setObjectName("scope")
        self.scope_banner.setTextFormat(Qt.TextFormat.RichText)
        self.scope_banner.linkActivated.connect(self._on_banner_link)
        central = QWidget()
        column = QVBoxLayout(central)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        self.find_bar = FindBar(self.timeline)
        top = QHBoxLayout()
        top.addWidget(self.scope_banner, 1)
        top.addWidget(self.find_bar)
        column.addLayout(top)
        self.overview = Overview(self.timeline)
        column.addWidget(self.overview)
        self.step_strip = StepStripWidget(self.timeline)  # steps by graph mode, seams shaded (work-k)
        column.addWidget(self.step_strip)
        column.addWidget(self.timeline, 1)
        self.setCentralWidget(central)
        self.scope_task: Task | None = None
        self.current_view: ScopedView | None = None  # what Summary, Kernels, Histograms (and idle Details) show
        self.details_idle = True  # Details shows the verdict, not an event
        self.details_event: tuple[int, int] | None = None  # the event Details describes
        self.legend = QTextBrowser()
        self.legend.setHtml(legend_html())
        self.details = DetailsPanel()
        self.summary = SummaryPanel()
        self.stats = StatsPanel()
        self.histograms = HistogramPanel()
        self.lanes = LanesPanel()
        self.graph_panel = GraphPanel()
        self.dag_view = self.graph_panel.dag_view
        self.run_panel = RunPanel()
        self.tune_panel = TunePanel()
        self.plan_panel = PlanPanel()
        self._other_windows()
        self._attach_capture()
        self._docks()
        self._menus()
        self._status()
        self.timeline.selected.connect(self._on_selected)
        self.timeline.scope_requested.connect(self.set_scope)
        if os.environ.get(FIRST_FRAME_ENV):  # benchmarks time a fresh process to its first frame
            self.timeline.first_frame.connect(lambda: print("graphscope: first frame", file=sys.stderr, flush=True))
        self.timeline.first_frame.connect(release_cache_writes)  # held while a file opens (open_path)
        self.stats.identities_chosen.connect(self._on_identities)
        self.stats.instance_requested.connect(self.show_next_instance)
        self.stats.rows_described.connect(self._on_rows_described)
        self.lanes.lane_toggled.connect(self.timeline.set_lane_hidden)
        self.lanes.group_collapsed.connect(self.timeline.set_group_collapsed)
        self.lanes.lane_flattened.connect(self._on_lane_flattened)
        self.timeline.lanes_changed.connect(self._on_lanes_changed)
        self.dag_view.node_selected.connect(self._on_dag_nodes)
        self.run_panel.traces_ready.connect(self.open_comparison)
        self.tune_panel.dag_ready.connect(self.show_live_dag)
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
        right.addTab(self.legend, "Legend")
        self.side_tabs = right
        inspector = self.inspector_dock = self._dock("Inspector", right, Qt.DockWidgetArea.RightDockWidgetArea)
        kernels = self.kernels_dock = self._dock("Kernels", self.stats, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.graph_dock = self._dock("Graph", self.graph_panel, Qt.DockWidgetArea.BottomDockWidgetArea)
        # their forms need 236-417 px; tabbed with Kernels, the tallest set the whole bottom area's height
        run = self._dock("Run", _scrolling(self.run_panel), Qt.DockWidgetArea.BottomDockWidgetArea)
        tune = self._dock("Tune", _scrolling(self.tune_panel), Qt.DockWidgetArea.BottomDockWidgetArea)
        plan = self._dock("Plan", _scrolling(self.plan_panel), Qt.DockWidgetArea.BottomDockWidgetArea)
        for dock in (self.graph_dock, run, tune, plan):
            self.tabifyDockWidget(kernels, dock)
        kernels.raise_()
        lanes = self._dock("Lanes", self.lanes, Qt.DockWidgetArea.LeftDockWidgetArea)
        lanes.hide()
        self.resizeDocks([inspector], [INSPECTOR_WIDTH], Qt.Orientation.Horizontal)
        self.resizeDocks([kernels], [BOTTOM_DOCK_HEIGHT], Qt.Orientation.Vertical)

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
        self.recent = RecentFiles(self.settings, file_menu.addMenu("Open &recent"), self.open_path, self.persist)
        file_menu.addSeparator()
        self._action(file_menu, "&Compare with…", self.choose_comparison, "Ctrl+Shift+O")
        self._action(file_menu, "&Attach capture trace…", self.choose_capture, "Ctrl+Shift+A")
        self.detach_action = self._action(file_menu, "&Detach capture trace", self.detach_capture)
        self.detach_action.setEnabled(False)  # until a capture trace is attached
        self._action(file_menu, "Open &rank traces (a folder)…", self.choose_ranks, "Ctrl+Shift+R")
        self._action(file_menu, "Open de&mo rank set", self.open_demo_ranks)  # assets/demo_ranks (work-k)
        self._action(file_menu, "&Export report…", self.export_report, "Ctrl+E")
        self._action(file_menu, "Export as &Perfetto trace…", self.export_perfetto)
        file_menu.addSeparator()
        self._action(file_menu, "&Quit", self.close, QKeySequence.StandardKey.Quit)
        view = bar.addMenu("&View")
        self._action(view, "&Fit the activity", self.timeline.fit_focus, "F")
        self._action(view, "Fit the &whole process", self.timeline.fit_all, "Shift+F")
        self._action(view, "&Clear the scope", lambda: self.set_scope(None), "Backspace")
        self._action(view, "&Next window of a large file", lambda: self.open_window(+1), "Ctrl+]")
        self._action(view, "&Previous window of a large file", lambda: self.open_window(-1), "Ctrl+[")
        self._action(view, "&Zoom to selection", self.timeline.zoom_to_selection, "Z")
        self._action(view, "&Find on the timeline…", self.find_bar.focus, QKeySequence.StandardKey.Find)
        self._action(view, "Find ne&xt", lambda: self.find_bar.step(+1), "F3")
        self._action(view, "Find pre&vious", lambda: self.find_bar.step(-1), "Shift+F3")
        self.gaps_action = self._action(view, "Show idle &gaps", self.timeline.set_gaps_visible, "G", True)
        view.addSeparator()
        for dock in self.findChildren(QDockWidget):
            view.addAction(dock.toggleViewAction())
        help_menu = bar.addMenu("&Help")
        self._action(help_menu, "&Keyboard", lambda: QMessageBox.information(self, "Keyboard", KEYBOARD))
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
        if not self.persist:
            return
        roles = self.settings.value(FLAT_ROLES_KEY)
        if isinstance(roles, str):  # one string: QSettings reads an empty list back as None
            self.timeline.flat_roles = {role for role in roles.split(",") if role}
        geometry = self.settings.value("geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        state = self.settings.value("window_state")
        if state is not None:
            self.restoreState(state, STATE_VERSION)
        if geometry is None:  # a first start: most of the screen, not Qt's 900x600 size hint
            screen = QGuiApplication.primaryScreen()
            area = screen.availableGeometry() if screen is not None else None
            width, height = (area.width(), area.height()) if area is not None else (1600, 1000)
            self.resize(min(1600, int(width * 0.9)), min(1000, int(height * 0.9)))
        QTimer.singleShot(0, self.sane_docks)  # once the window has its size

    def sane_docks(self) -> None:
        """The Inspector wide enough for a sentence a line and the bottom docks no taller than a third of
        the window, whatever a saved state (from a smaller window, or a dragged splitter) says."""
        inspector, kernels = self.inspector_dock, self.kernels_dock
        if inspector.isVisible() and not inspector.isFloating() and inspector.width() < INSPECTOR_MIN_WIDTH:
            self.resizeDocks([inspector], [INSPECTOR_WIDTH], Qt.Orientation.Horizontal)
        tallest = max(self.height() // 3, BOTTOM_DOCK_HEIGHT)
        if kernels.isVisible() and not kernels.isFloating() and kernels.height() > tallest:
            self.resizeDocks([kernels], [BOTTOM_DOCK_HEIGHT], Qt.Orientation.Vertical)

    def showEvent(self, event) -> None:
        """The keyboard starts on the timeline (W/S/A/D zoom and pan at once), not in the find field,
        the first focusable widget."""
        super().showEvent(event)
        if not self._shown:
            self._shown = True
            self.timeline.setFocus(Qt.FocusReason.OtherFocusReason)

    def closeEvent(self, event) -> None:
        self._close_other_windows()
        self.cancel_loading()
        self.tune_panel.close_session()
        if self.persist:
            self.settings.setValue("geometry", self.saveGeometry())
            self.settings.setValue("window_state", self.saveState(STATE_VERSION))
        super().closeEvent(event)

    # -- opening files ------------------------------------------------------------------------

    def choose_file(self) -> None:
        recent = self.recent.files()
        start_dir = str(Path(recent[0]).parent) if recent else ""
        path, _ = QFileDialog.getOpenFileName(self, "Open a trace", start_dir, EXPORT_FILTER)
        if path:
            self.open_path(Path(path))

    def open_path(self, path: Path, early: Future | None = None, window_start: int | None = None) -> None:
        """Load in the background; the current trace stays until the new one is ready.

        `early`: the same document already being opened on another thread (the first file at start-up).
        `window_start`: for a file too large to hold whole, where the window to read begins.
        """
        self.cancel_loading()
        hold_cache_writes()  # until the first frame (or the load's end without one)
        if early is not None:
            self.task = Task(lambda progress, cancel: early.result())
        else:
            self.task = Task(_open_for_the_window, Path(path), window_start=window_start)
        self.task.signals.progressed.connect(self._on_progress)
        self.task.signals.finished.connect(lambda document, p=Path(path): self._on_loaded(p, document))
        self.task.signals.failed.connect(lambda message, p=Path(path): self._on_failed(p, message))
        self.task.signals.cancelled.connect(self._on_cancelled)
        self._set_busy(True, f"opening {path}")
        start_behind(self.task)

    def _on_cancelled(self) -> None:
        if self.task is None or self.task.token.cancelled:  # not a newer open's: its writes stay held
            release_cache_writes()
        self._set_busy(False, "loading cancelled")

    def cancel_loading(self) -> None:
        for task in (self.task, self.preload, self.attach_task):
            if task is not None:
                task.cancel()

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
        """The lanes are ready: draw them now; the panels fill in when `finish_document` is done."""
        self.task = None
        self.document = document
        self.setWindowTitle(f"graphscope — {path.name}")
        self.timeline.hidden.clear()
        self.timeline.collapsed.clear()
        self.timeline.set_document(document)
        self.overview.set_document(document)
        self.step_strip.set_document(document)
        self.find_bar.reset()
        self._on_lanes_changed()
        self.current_view = None
        self._show_idle_details(None)
        self.recent.remember(path)
        self._set_busy(
            False,
            f"{path.name}: {len(document.trace.kernels):,} kernels, "
            f"{len(document.trace.api):,} CUDA calls.   {SHORTCUTS}",
        )
        if document.view is not None:
            self._on_finished(document)
            return
        self.task = Task(finish_document, document)
        self.task.signals.finished.connect(self._on_finished)
        self.task.signals.failed.connect(lambda message, p=path: self._on_failed(p, message))
        start_behind(self.task)

    def _on_finished(self, document: TraceDocument) -> None:
        """Summary, kernel table and DAGs are ready; then the remaining columns load in the background."""
        if document is not self.document:
            return
        self.task = None
        self._show_view(document.view)
        self.graph_panel.show_trace_dags(document.dags, document.trace.info.graph_trace_mode, document.trace)
        self._show_idle_details(self.current_view.summary)
        if self.preload is not None:
            self.preload.cancel()
        self.preload = start_behind(Task(_preload_for_details, document.trace))  # details and exports need them
        self._attach_on_open()  # a capture trace asked for, or attached to this trace before
        self.loaded.emit(document)

    def _on_lane_flattened(self, key: str, flat: bool) -> None:
        self.timeline.set_lane_flat(key, flat)
        self._remember_flat_roles()

    def _on_lanes_changed(self) -> None:
        """The Lanes panel shows what the timeline does (after a click on a lane's name)."""
        if self.document is not None:
            timeline = self.timeline
            self.lanes.set_layout(self.document.layout, timeline.hidden, timeline.collapsed, timeline.flat)
        self._remember_flat_roles()

    def _remember_flat_roles(self) -> None:
        if self.persist:
            self.settings.setValue(FLAT_ROLES_KEY, ",".join(sorted(self.timeline.flat_roles)))

    # -- windows of files too large to hold, and the scope -------------------------------------

    def _on_banner_link(self, link: str) -> None:
        if link == "clear":
            self.set_scope(None)
        elif link in ("next", "previous"):
            self.open_window(+1 if link == "next" else -1)

    def open_window(self, direction: int) -> None:
        """The next (or previous) window of a file too large to hold whole."""
        window = self.document.window if self.document is not None else None
        if window is None:
            self.status_label.setText("the whole file is loaded: there is no other window")
            return
        if direction > 0 and window.end > window.last:
            self.status_label.setText("this is the last window of the file")
            return
        if direction < 0 and window.start <= window.first:
            self.status_label.setText("this is the first window of the file")
            return
        start = window.end if direction > 0 else max(window.first, window.start - (window.end - window.start))
        self.open_path(Path(self.document.trace.path), window_start=start)

    def set_scope(self, scope: Scope | None) -> None:
        """Scope Summary, Kernels, Histograms and the verdict to some windows (None: back to the default)."""
        if self.document is None or self.document.view is None:
            return
        if self.scope_task is not None:
            self.scope_task.cancel()
        if scope is None and self.document.view.scope is self.document.default_scope:
            self._show_view(self.document.view)
            return
        chosen = scope if scope is not None else self.document.default_scope
        self.scope_task = Task(scoped_view, self.document.trace, self.document.analysis, chosen)
        task = self.scope_task
        task.signals.finished.connect(lambda view: task is self.scope_task and self._show_view(view))
        task.signals.failed.connect(lambda message: self.status_label.setText(f"cannot scope: {message}"))
        whole = "the whole window" if self.document.window else "the whole trace"
        self.scope_banner.setText(f"Scope: computing {html.escape(chosen.label if chosen else whole)}…")
        start_behind(task)

    def _show_view(self, view: ScopedView) -> None:
        document = self.document
        self.scope_task = None
        self.current_view = view
        self.summary.show_summary(view.summary, self._whole())
        if self.details_idle:  # Details shows the verdict: the new scope's, as every other panel
            self._show_idle_details(view.summary)
        elif self.details_event is not None and self.details_event[0] == NVTX:  # the range that scoped
            self._describe_event(*self.details_event)
        self.stats.set_stats(view.stats, document.trace.symbols, document.trace)
        self.histograms.show_values(view.latency_ns, view.duration_ns)
        self.timeline.set_scope(view.scope)
        self.scope_banner.setText(scope_banner(view, document))
        self.scope_banner.setStyleSheet(
            "QLabel#scope { padding: 4px 8px; background: %s; }" % ("#e3ecfd" if view.scope else "#f3f3f5")
        )

    def _whole(self) -> str:
        """What an unscoped view covers: the whole trace, or the loaded window of a file too large to hold."""
        return "the whole window" if self.document is not None and self.document.window else "the whole trace"

    def _show_idle_details(self, summary: dict | None) -> None:
        """Details with nothing selected: the verdict of the scope the panels show (None: being computed)."""
        self.details_idle, self.details_event = True, None
        self.details.show_fields(*idle_details(summary, self._whole()))

    def _describe_event(self, source: int, row: int) -> None:
        """Details on one event; an NVTX range (a click on one scopes the panels) with the verdict of the
        scope the panels show, or "computing…" while it is computed."""
        title, fields = describe(self.document, source, row)
        if source == NVTX:
            pending = self.scope_task is not None or self.current_view is None
            fields = [*fields, *idle_details(None if pending else self.current_view.summary, self._whole())[1][:2]]
        self.details_idle, self.details_event = False, (source, row)
        self.details.show_fields(title, fields)

    def _on_failed(self, path: Path, message: str) -> None:
        self.task = None
        release_cache_writes()  # no first frame comes
        self.pending_captures = None  # asked for with the file that failed, not for the next one
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

    # -- linking panels -------------------------------------------------------------------------

    def _on_selected(self, source: int, row: int) -> None:
        if self.document is None:
            return
        if source < 0:  # Esc or a click on nothing: Details stops describing the old event
            self._show_idle_details(self.current_view.summary if self.current_view is not None else None)
            return
        self._describe_event(source, row)
        if source == KERNEL:  # the other way: the kernel's row in the Kernels table
            self.stats.show_identity(self.document.identity_of(row))
        self.side_tabs.setCurrentWidget(self.details)
        node = node_of(self.document.trace, source, row)
        if node is not None:  # a graph node's work: show it in the DAG too
            self.dag_view.select_nodes([node])

    # -- the graph view ----------------------------------------------------------------------------

    def show_live_dag(self, dag: Dag) -> None:
        """A DAG captured live by the Tune panel (with edges and launch sites)."""
        self.graph_panel.show_live_dag(dag)
        self.graph_dock.raise_()

    def _on_dag_nodes(self, indices: list[int]) -> None:
        """Light up the selected nodes' work in the timeline (matched by node index within the graph)."""
        if self.graph_panel.source == "live":
            self.tune_panel.select_nodes(indices)
        dag = self.dag_view.dag
        if dag is not None and indices:
            by_index = {node.index: node for node in dag.nodes}
            self.details_idle, self.details_event = False, None
            title, fields = describe_nodes([by_index[i] for i in indices if i in by_index])
            self.details.show_fields(title, fields + edge_fields(dag, indices))  # PDL edges, griddepcontrol
            self.side_tabs.setCurrentWidget(self.details)
        if self.document is None or not indices:
            return
        work = self.graph_panel.node_work(self.document.trace, indices)
        if work is not None:
            self.timeline.highlight_rows(*work)

    # -- comparisons and exports -----------------------------------------------------------------

    def export_report(self) -> None:
        """A report of the open trace over the current scope (Compare with… makes one of two traces)."""
        if self.document is None or self.document.view is None or self.current_view is None:
            return
        document, scope = self.document, self.current_view.scope

        def build():  # unscoped: the trace's own default, as `graphscope report FILE` (report/compose.py)
            from graphscope.report.compose import report_of, same_scope, trace_sides

            scopes = None if same_scope(scope, document.default_scope) else (scope, None)
            return report_of(*trace_sides((document.trace, document.analysis), scopes=scopes))

        self.report_task = export_report(self, build, f"{Path(document.trace.path).stem}-report.html")

    def export_perfetto(self) -> None:
        if self.document is not None:
            self.perfetto_task = export_perfetto(
                self, self.document.trace, self.document.analysis, self.status_label.setText
            )

    def show_next_instance(self, identity: int) -> None:
        """A double-clicked Kernels row: its next kernel after the view's centre (wrapping round), selected
        and zoomed to; double-click again for the one after."""
        if self.document is None:
            return
        (x0, x1), _ = self.timeline.view.viewRange()
        found = next_instance(self.document, identity, (x0 + x1) / 2)
        if found is None:
            return
        self.timeline.select(KERNEL, found.row)
        self.timeline.zoom_to_selection()
        self.status_label.setText(f"kernel {found.number + 1} of {found.count:,} with this name and configuration")

    def _on_rows_described(self, title: str, fields: list) -> None:
        """A Kernels-table selection in Details (it stayed at 'Nothing selected')."""
        self.details.show_fields(title, fields)
        self.side_tabs.setCurrentWidget(self.details)

    def _on_identities(self, identities: np.ndarray) -> None:
        if self.document is None:
            return
        if not len(identities):
            self.timeline.highlight_rows(KERNEL, None)
            return
        self.timeline.highlight_rows(KERNEL, kernels_of(self.document, identities))


def _scrolling(widget: QWidget) -> QScrollArea:
    """`widget` in a scroll area: a dock holding it may be shorter than the widget's form."""
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    return area


def _preload_for_details(trace: Trace, progress: ProgressCallback, cancel: CancelToken) -> Trace:
    """The columns the first frame did not need, then the export's CUDA event records (Details of an
    event record or wait reads them: trace/cuda_events.py), so no click waits for the file."""
    load_remaining_columns(trace, progress, cancel)
    cancel.check()
    event_records(trace)
    return trace


def _open_for_the_window(
    path: Path, progress: ProgressCallback, cancel: CancelToken, window_start: int | None
) -> TraceDocument:
    """The document the window shows first, with the reader's modules imported before its first frame:
    a document restored from its saved view reads its remaining columns after that frame, and importing
    pyarrow there held the interpreter lock for 19 ms (one frame over budget; connectorx 9 ms more)."""
    from graphscope.trace.bulk import reader_ready

    document = open_document(path, progress, cancel, panels=False, window_start=window_start)
    reader_ready()
    return document
