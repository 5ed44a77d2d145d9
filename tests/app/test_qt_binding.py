"""Guards against a Qt binding that breaks drawing (PySide6 6.12.0 under Python 3.11: every void
QPainter call dropped a reference to None, and the process died after a few thousand draws)."""

from __future__ import annotations

import sys

from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QBrush, QColor, QImage, QPainter


def test_painting_keeps_references_to_none(qapp):
    image = QImage(64, 64, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        before = sys.getrefcount(None)
        for _ in range(500):
            painter.setBrush(QBrush(QColor(1, 2, 3)))
            painter.drawRect(QRectF(0, 0, 4, 4))
            painter.drawRects([QRectF(0, 0, 2, 2)])
            painter.drawLine(QPointF(0, 0), QPointF(3, 3))
        assert sys.getrefcount(None) - before > -100
    finally:
        painter.end()
