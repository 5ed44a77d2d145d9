"""Qt tests run offscreen, with settings kept in a temporary folder."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(scope="package", autouse=True)
def collect_garbage_on_the_gui_thread(qapp):
    """As the app does (workers.collect_garbage_on_gui_thread), for the Qt tests only: after the last of
    them the cycle collector runs as usual again, for the tests that follow."""
    import gc

    from graphscope.app.workers import collect_garbage_on_gui_thread

    collector = collect_garbage_on_gui_thread()
    yield collector
    collector.timer.stop()
    gc.enable()
    gc.collect()


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path, monkeypatch):
    pytest.importorskip("PySide6")
    from PySide6.QtCore import QSettings

    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "settings"))
    yield


@pytest.fixture
def window(qtbot):
    from graphscope.app.main_window import MainWindow

    main = MainWindow()
    main.resize(1400, 800)
    qtbot.addWidget(main)
    main.show()
    qtbot.waitExposed(main)
    return main


@pytest.fixture
def open_trace(qtbot, window):
    """open_trace(path) -> the loaded TraceDocument (waits for the background load)."""

    def load(path):
        with qtbot.waitSignal(window.loaded, timeout=30_000) as blocker:
            window.open_path(path)
        return blocker.args[0]

    return load
