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


def test_a_screenshot_that_fails_midway_leaves_the_previous_picture(tmp_path, qapp, monkeypatch):
    """Qt truncates a file before it writes the image: a full disk would leave neither picture."""
    import errno

    import pytest
    from PySide6.QtGui import QPixmap

    from graphscope.app.main import save_image
    from graphscope.core import paths
    from graphscope.core.errors import BadInputError

    png = tmp_path / "s.png"
    png.write_bytes(b"last week's picture")
    real = os.write

    def half_then_full(fd, data):
        real(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(paths.os, "write", half_then_full)
    with pytest.raises(BadInputError, match=r"s\.png: cannot write the image \(No space left on device\)"):
        save_image(QPixmap(40, 30), png)
    assert png.read_bytes() == b"last week's picture" and sorted(p.name for p in tmp_path.iterdir()) == ["s.png"]
    monkeypatch.undo()
    name = tmp_path / os.fsdecode(b"s\xff.png")  # a name that is not UTF-8, which Qt cannot be given
    save_image(QPixmap(40, 30), name)
    image = QImage()
    assert image.loadFromData(name.read_bytes()) and (image.width(), image.height()) == (40, 30)


def test_a_screenshot_over_its_own_trace_is_refused(tmp_path):
    import pytest

    from graphscope.app.main import run_gui
    from graphscope.core.errors import BadInputError

    trace = tmp_path / "t.sqlite"
    trace.write_bytes(FORKJOIN.read_bytes())
    (tmp_path / "shot.png").symlink_to(trace)
    with pytest.raises(BadInputError, match=r"--screenshot .*shot\.png: is one of the inputs"):
        run_gui(trace, screenshot=tmp_path / "shot.png")
    assert trace.read_bytes() == FORKJOIN.read_bytes()
