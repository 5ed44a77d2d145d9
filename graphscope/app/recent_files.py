"""The Open recent menu, kept in the user's settings (not read or written for a screenshot)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMenu

MAX_RECENT = 10


class RecentFiles:
    def __init__(self, settings: QSettings, menu: QMenu, open_path: Callable[[Path], None], persist: bool) -> None:
        self.settings = settings
        self.menu = menu
        self.open_path = open_path
        self.persist = persist
        self.refresh()

    def files(self) -> list[str]:
        """Most recent first."""
        if not self.persist:
            return []
        value = self.settings.value("recent_files", [])
        return [value] if isinstance(value, str) else list(value or [])

    def remember(self, path: Path) -> None:
        if not self.persist:
            return
        text = str(path.resolve())
        files = [text] + [f for f in self.files() if f != text]
        self.settings.setValue("recent_files", files[:MAX_RECENT])
        self.refresh()

    def refresh(self) -> None:
        self.menu.clear()
        for text in self.files():
            action = self.menu.addAction(text)
            action.triggered.connect(lambda checked=False, t=text: self.open_path(Path(t)))
        self.menu.setEnabled(bool(self.files()))
