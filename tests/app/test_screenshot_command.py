"""`graphscope open FILE --screenshot PNG` renders the loaded window and exits (as docs and CI use it)."""

from __future__ import annotations

import os
import subprocess
import sys

from PySide6.QtGui import QImage

from tests.conftest import FORKJOIN


def _run(tmp_path, *args):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(tmp_path / "config")}
    return subprocess.run(
        [sys.executable, "-m", "graphscope", "open", *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_screenshot_of_a_loaded_trace(tmp_path):
    png = tmp_path / "shot.png"
    result = _run(tmp_path, str(FORKJOIN), "--screenshot", str(png), "--size", "1200x800", "--select", "graph:1")
    assert result.returncode == 0, result.stderr
    image = QImage(str(png))
    assert (image.width(), image.height()) == (1200, 800)
    colours = {image.pixel(x, y) for x in range(0, 1200, 15) for y in range(0, 800, 15)}
    assert len(colours) > 8  # lanes were drawn, not a blank window


def test_screenshot_of_a_corrupt_file_fails_with_status_2(tmp_path):
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(FORKJOIN.read_bytes()[:20_000])
    result = _run(tmp_path, str(broken), "--screenshot", str(tmp_path / "x.png"))
    assert result.returncode == 2 and "damaged or truncated" in result.stderr
    assert not (tmp_path / "x.png").exists()


def test_without_a_display_the_window_command_explains_itself(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    result = subprocess.run([sys.executable, "-m", "graphscope"], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 2 and "no display" in result.stderr
