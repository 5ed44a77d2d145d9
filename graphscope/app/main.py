"""Start the GUI (optionally render one screenshot and exit).

Everything a user can get wrong is checked before Qt starts: the size, the selection, where the
screenshot goes, and whether Qt can open a window here at all (Qt itself would abort the process).
"""

from __future__ import annotations

import ctypes
import os
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from graphscope.core.errors import BadInputError
from graphscope.core.paths import refuse_inputs, write_replacing
from graphscope.core.settings import demo_trace
from graphscope.core.text import shown_path

if TYPE_CHECKING:
    from PySide6.QtGui import QPixmap

    from graphscope.view.selection import Selection

INVISIBLE_PLATFORMS = ("offscreen", "minimal")
XCB_PACKAGES = "libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxkbcommon-x11-0 libegl1 libfontconfig1"
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp")


def check_display(offscreen_ok: bool) -> None:
    """Make sure Qt can show a window (or, for a screenshot, render without one); say what to do if not."""
    platform = os.environ.get("QT_QPA_PLATFORM", "")
    if platform in INVISIBLE_PLATFORMS and not offscreen_ok:
        raise BadInputError(
            f"QT_QPA_PLATFORM={platform} renders no visible window; unset it to open the window, "
            "or add --screenshot PNG to render one"
        )
    if platform or sys.platform != "linux":
        return
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        if offscreen_ok:
            os.environ["QT_QPA_PLATFORM"] = "offscreen"  # a screenshot needs no screen
            return
        raise BadInputError(
            "no display to open a window on (DISPLAY is not set); run it on a desktop or under Xvfb "
            f"(on Debian/Ubuntu: apt-get install xvfb {XCB_PACKAGES}; then xvfb-run graphscope), "
            "or use `graphscope summary FILE` / `graphscope open FILE --screenshot PNG`"
        )
    if os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        check_xcb_plugin()


def check_xcb_plugin() -> None:
    """Load Qt's X11 platform plugin the way Qt will: a missing system library is named, instead of Qt
    aborting with 'could not load the Qt platform plugin "xcb"'."""
    import PySide6

    plugin = Path(PySide6.__file__).parent / "Qt" / "plugins" / "platforms" / "libqxcb.so"
    if not plugin.exists():
        return
    try:
        ctypes.CDLL(str(plugin))
    except OSError as exc:
        missing = str(exc).split(":")[0].strip()
        raise BadInputError(
            f"Qt cannot open a window on X11: its xcb plugin needs {missing}, which is not installed "
            f"(on Debian/Ubuntu: apt-get install {XCB_PACKAGES})"
        ) from None


def parse_size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise BadInputError(f"--size takes WIDTHxHEIGHT, such as 1600x1000, not {text!r}") from None
    if not (200 <= width <= 16384 and 150 <= height <= 16384):
        raise BadInputError(f"--size {text}: width and height must lie between 200x150 and 16384x16384")
    return width, height


def check_screenshot_path(path: Path) -> None:
    """Fail before anything is drawn if the screenshot cannot be written where asked."""
    if path.suffix.lower() not in IMAGE_SUFFIXES:
        raise BadInputError(f"--screenshot {path}: name a .png (or .jpg, .bmp) file")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise BadInputError(f"--screenshot {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise BadInputError(f"--screenshot {path}: cannot write there (permission denied)")


def save_image(image: QPixmap, path: Path) -> None:
    """Save `image` beside `path` and rename it over it once whole: a full disk leaves the previous
    picture as it was (Qt's own save truncates it first)."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    encoded = QByteArray()
    buffer = QBuffer(encoded)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, path.suffix[1:].upper()):  # in memory: Qt never sees the name (it may not be UTF-8)
        raise BadInputError(f"{shown_path(path)}: the image could not be encoded")
    buffer.close()
    write_replacing(path, bytes(encoded.data()), "the image")


def run_gui(
    path: Path | None,
    screenshot: Path | None = None,
    size: str = "1600x1000",
    select: str | None = None,
    captures: list[Path] | None = None,
) -> int:
    """Open the main window on `path` (the bundled demo when None); with `screenshot`, save and exit.
    `captures`: capture traces to attach to it (File > Attach capture trace…); a screenshot waits for them.

    A screenshot ignores the saved window layout and recent files (the same command gives the same
    picture) and leaves them untouched.
    """
    dimensions = parse_size(size)
    selection = None
    if select:
        from graphscope.view.selection import parse_selection

        selection = parse_selection(select)
    if screenshot is not None:
        check_screenshot_path(screenshot)
        refuse_inputs(screenshot, [path], "--screenshot")
    if path is not None and not Path(path).exists():
        raise BadInputError(f"{path}: no such file or folder")
    for capture in captures or []:
        if not Path(capture).exists():
            raise BadInputError(f"--capture {capture}: no such file or folder")
    check_display(screenshot is not None)
    ranks = Path(path) if path is not None and Path(path).is_dir() else None  # a job's rank traces
    if ranks is not None and screenshot is not None:
        raise BadInputError(f"{path}: --screenshot takes a trace file, not a folder of rank traces")
    if ranks is not None and captures:
        raise BadInputError(f"{path}: --capture attaches to one replay trace, not a folder of rank traces")
    target = Path(path) if path is not None else demo_trace()
    if ranks is None:  # the cache's writes wait for the first frame (app/workers.hold_cache_writes; no Qt yet)
        from graphscope.core import answer_cache

        answer_cache.hold_writes(True)
    early = _start_loading(target) if ranks is None else None  # reading overlaps Qt's start-up (~0.5 s)
    from graphscope.trace.bulk import reader_ready

    reader_ready()  # Qt's imports would hold the GIL against the reader's own until the read starts
    from PySide6.QtCore import QTimer, QtMsgType, qInstallMessageHandler
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from graphscope.app.main_window import MainWindow
    from graphscope.app.workers import (
        collect_garbage_on_gui_thread,
        hand_the_interpreter_over_quickly,
        release_cache_writes,
        wait_for_tasks,
    )
    from graphscope.core.settings import asset_path

    if screenshot is not None:  # the offscreen plugin's notices ("no propagateSizeHints") are noise here
        qInstallMessageHandler(
            lambda kind, context, text: (
                kind in (QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg) and print(text, file=sys.stderr)
            )
        )
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.garbage_collector = collect_garbage_on_gui_thread()
    hand_the_interpreter_over_quickly()
    app.setApplicationName("graphscope")
    app.setDesktopFileName("graphscope")
    app.setWindowIcon(QIcon(str(asset_path("icons/graphscope.svg"))))
    window = MainWindow(persist=screenshot is None)
    if screenshot is not None:
        window.resize(*dimensions)
    window.show()
    outcome = {"status": 0}

    def fail(message: str) -> None:
        print(f"graphscope: error: {message}", file=sys.stderr)
        outcome["status"] = 2
        app.quit()

    def select_first(document: object) -> None:
        if selection is None:
            return
        try:
            apply_selection(window, selection)
        except BadInputError as exc:
            fail(exc.message)

    if screenshot is not None:  # an unexpected error in a slot must end the run, not leave it hanging
        sys.excepthook = lambda kind, value, tb: (
            print(f"graphscope: internal error: {kind.__name__}: {value}", file=sys.stderr),
            outcome.update(status=1),
            app.quit(),
        )
    window.loaded.connect(select_first)
    if screenshot is not None:

        def save() -> None:
            try:
                save_image(window.grab(), screenshot)
            except BadInputError as exc:
                fail(f"--screenshot {exc.message}")
            app.quit()

        ready = window.capture_attached if captures else window.loaded  # the picture shows the attachment
        ready.connect(lambda _found: outcome["status"] or QTimer.singleShot(200, save))
        window.load_failed.connect(fail)
        window.capture_failed.connect(fail)
    if ranks is not None:
        window.open_ranks(ranks)  # the overview; a double-clicked rank opens in this window
    else:
        window.open_path(target, early=early)
        if captures:
            window.attach_captures([Path(c) for c in captures])
    app.exec()
    window.cancel_loading()  # background reads end before Qt objects go away
    wait_for_tasks(30_000)
    release_cache_writes()  # a window closed before its first frame: what it read is still kept
    return outcome["status"]


def _start_loading(path: Path) -> Future:
    """Open the document on a plain thread before Qt is even imported (the loader needs no Qt).

    The read starts as soon as the reader's own modules are in; the analysis and layout modules load
    meanwhile, on the main thread (the window imports them too), instead of delaying it. The reader's
    modules are imported here, before the thread starts: imported by both threads at once, the package
    could be seen half-initialised ("cannot import name 'load_trace'", seen once the thread started a
    moment later).
    """
    from graphscope.core.process import lower_this_threads_priority
    from graphscope.trace.reader import load_for_view

    def load():
        lower_this_threads_priority()  # as the window's own loads (workers.start_behind): measured there
        trace, window = load_for_view(path)
        from graphscope.view.document import build_document

        return build_document(trace, window, panels=False)

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="graphscope-open")
    future = pool.submit(load)
    pool.shutdown(wait=False)
    return future


def apply_selection(window, selection: Selection) -> None:
    """Select an event and zoom to it (a BadInputError when the trace has no such event)."""
    from graphscope.view.selection import resolve_selection

    source, row = resolve_selection(window.document, selection)
    window.timeline.select(source, row)
    window.timeline.zoom_to_selection()
