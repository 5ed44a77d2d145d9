"""Progress reporting and cooperative cancellation for long work (loading, runs, sweeps)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from graphscope.core.errors import Cancelled

ProgressCallback = Callable[[float, str], None]
"""Called with a fraction in [0, 1] and a short description of the current step."""


def no_progress(fraction: float, message: str) -> None:
    """A progress callback that ignores every report."""


class CancelToken:
    """Set from any thread to ask a running operation to stop at its next check."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        """Raise `Cancelled` if cancellation was requested."""
        if self._event.is_set():
            raise Cancelled()
