"""Start the GUI (optionally render one screenshot and exit)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from graphscope.core.errors import BadInputError
from graphscope.core.settings import demo_trace


def check_display(offscreen_ok: bool) -> None:
    """On Linux without a display Qt aborts the process; say what to do instead."""
    if sys.platform != "linux" or os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return
    if os.environ.get("QT_QPA_PLATFORM"):
        return
    if offscreen_ok:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # a screenshot needs no screen
        return
    raise BadInputError(
        "no display to open a window on (DISPLAY is not set); run it on a desktop, under Xvfb, "
        "or use `graphscope summary FILE` / `graphscope open FILE --screenshot PNG`"
    )


def parse_size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise BadInputError(f"--size takes WIDTHxHEIGHT, not {text!r}") from None
    return width, height


def run_gui(
    path: Path | None, screenshot: Path | None = None, size: str = "1600x1000", select: str | None = None
) -> int:
    """Open the main window on `path` (the bundled demo when None); with `screenshot`, save and exit."""
    check_display(screenshot is not None)
    from PySide6.QtCore import QTimer
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from graphscope.app.main_window import MainWindow
    from graphscope.core.settings import asset_path

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("graphscope")
    app.setDesktopFileName("graphscope")
    app.setWindowIcon(QIcon(str(asset_path("icons/graphscope.svg"))))
    window = MainWindow()
    if screenshot is not None:
        window.resize(*parse_size(size))
    window.show()
    outcome = {"status": 0}
    if screenshot is not None:

        def capture(document: object) -> None:
            if select:
                apply_selection(window, select)
            QTimer.singleShot(200, lambda: (window.grab().save(str(screenshot)), app.quit()))

        def fail(message: str) -> None:
            print(f"graphscope: error: {message}", file=sys.stderr)
            outcome["status"] = 2
            app.quit()

        window.loaded.connect(capture)
        window.load_failed.connect(fail)
    window.open_path(Path(path) if path is not None else demo_trace())
    app.exec()
    return outcome["status"]


def apply_selection(window, select: str) -> None:
    """Select an event for a screenshot: 'graph:N' (the Nth graph launch) or 'kernel:ROW'."""
    from graphscope.app.layout import GRAPH_GROUP, KERNEL

    kind, _, index = select.partition(":")
    sources = {"graph": GRAPH_GROUP, "kernel": KERNEL}
    if kind not in sources or not index.isdigit():
        raise BadInputError(f"--select takes graph:N or kernel:ROW, not {select!r}")
    window.timeline.select(sources[kind], int(index))
