"""The GUI in a real X window (Xvfb): started as a user starts it, driven with real key presses, and
photographed from outside the process. Skipped where Xvfb or xdotool is absent (README: the system
packages the GUI needs on Debian/Ubuntu)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import FORKJOIN

pytestmark = pytest.mark.skipif(
    not (shutil.which("Xvfb") and shutil.which("xdotool")),
    reason="needs Xvfb and xdotool (apt-get install xvfb xdotool)",
)

GRAB = """
import sys
from PySide6.QtGui import QGuiApplication
app = QGuiApplication(sys.argv[:1])
sys.exit(0 if app.primaryScreen().grabWindow(0).save(sys.argv[1]) else 1)
"""


@pytest.fixture
def display(tmp_path):
    """A private X server; yields the environment to run programs on it."""
    number = 90 + os.getpid() % 500
    server = subprocess.Popen(
        ["Xvfb", f":{number}", "-screen", "0", "1400x900x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    env.update(DISPLAY=f":{number}", XDG_CONFIG_HOME=str(tmp_path / "config"), GRAPHSCOPE_DATA_DIR=str(tmp_path))
    deadline = time.monotonic() + 20
    while not Path(f"/tmp/.X11-unix/X{number}").exists():
        if time.monotonic() > deadline or server.poll() is not None:
            server.kill()
            pytest.skip("Xvfb did not start")
        time.sleep(0.1)
    yield env
    server.kill()
    server.wait()


def xdotool(env, *args, timeout=30) -> str:
    return subprocess.run(["xdotool", *args], env=env, capture_output=True, text=True, timeout=timeout).stdout.strip()


def grab(env, path: Path):
    subprocess.run([sys.executable, "-c", GRAB, str(path)], env=env, check=True, timeout=60)
    from PySide6.QtGui import QImage

    return QImage(str(path))


def wait_for_title(env, text: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        window = xdotool(env, "search", "--name", text).split("\n")[0]
        if window:
            return window
        time.sleep(0.25)
    raise AssertionError(f"no window titled {text!r} appeared")


def test_open_a_trace_zoom_with_keys_and_quit(display, tmp_path):
    app = subprocess.Popen(
        [sys.executable, "-m", "graphscope", "open", str(FORKJOIN)],
        env=display,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        window = wait_for_title(display, FORKJOIN.name)  # the title names the file once it has loaded
        xdotool(display, "windowactivate", "--sync", window)
        xdotool(display, "windowsize", "--sync", window, "1300", "850")
        time.sleep(1.0)
        before = grab(display, tmp_path / "before.png")
        colours = {before.pixel(x, y) for x in range(0, before.width(), 17) for y in range(0, before.height(), 17)}
        assert len(colours) > 20, "the screen looks blank"
        xdotool(display, "mousemove", "--window", window, "700", "300", "click", "1")  # focus the timeline
        for key in ("w", "w", "w", "g"):  # zoom in three times, show idle gaps
            xdotool(display, "key", "--window", window, key)
        time.sleep(1.0)
        after = grab(display, tmp_path / "after.png")
        assert after.width() == before.width() and after != before, "key presses changed nothing on screen"
        xdotool(display, "key", "--window", window, "ctrl+q")
        assert app.wait(timeout=30) == 0
    finally:
        if app.poll() is None:
            app.kill()
        _, errors = app.communicate()
    assert "Traceback" not in errors, errors


def test_a_missing_xcb_library_is_named(monkeypatch):
    import ctypes

    from graphscope.app import main
    from graphscope.core.errors import BadInputError

    def refuse(path, *args, **kwargs):
        raise OSError("libxcb-cursor.so.0: cannot open shared object file: No such file or directory")

    monkeypatch.setattr(ctypes, "CDLL", refuse)
    with pytest.raises(BadInputError, match=r"needs libxcb-cursor\.so\.0.*apt-get install"):
        main.check_xcb_plugin()
