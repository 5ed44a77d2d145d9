"""Render assets/icons/graphscope.svg to the PNG sizes a desktop icon theme wants.

QT_QPA_PLATFORM=offscreen python packaging/make_icons.py
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ICONS = Path(__file__).resolve().parent.parent / "assets" / "icons"
SIZES = (16, 32, 48, 64, 128, 256)


def main() -> None:
    app = QGuiApplication([])  # noqa: F841 - Qt needs an application to render text and SVG
    renderer = QSvgRenderer(str(ICONS / "graphscope.svg"))
    for size in SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        image.save(str(ICONS / f"graphscope-{size}.png"))
        print(f"wrote graphscope-{size}.png")


if __name__ == "__main__":
    main()
