"""The one recorder of runs and tuning sessions (core.records.Recorder) over the session database.

Each record opens the database, writes in its own transaction and closes it again, so a recorder made
on the GUI thread can be used from a worker thread, and a killed process keeps every finished record.
Opening it once up front refuses a foreign or newer database before any workload starts.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from graphscope.store.session_db import SessionStore

T = TypeVar("T")


class Recorder:
    def __init__(self, path: Path | None = None) -> None:
        store = SessionStore(path)  # checks it is graphscope's (and creates it) before anything runs
        self.path = store.path
        store.close()

    def _with_store(self, write: Callable[[SessionStore], T]) -> T:
        store = SessionStore(self.path)
        try:
            return write(store)
        finally:
            store.close()

    def run(self, report: dict[str, Any]) -> int:
        return self._with_store(lambda store: store.record_run(report))

    def run_failed(self, workload: Path, kind: str, message: str, settings: dict[str, Any]) -> int | None:
        return self._with_store(lambda store: store.record_failure(workload, kind, message, settings))

    def tuning_started(self, workload: Path, strategy: str, started: float, baseline: dict[str, Any]) -> int:
        return self._with_store(lambda store: store.begin_tuning(workload, strategy, started, baseline))

    def trial(self, tuning_id: int, seq: int, trial: dict[str, Any]) -> None:
        self._with_store(lambda store: store.add_trial(tuning_id, seq, trial))

    def tuning_finished(self, tuning_id: int, tuning: dict[str, Any], status: str = "done") -> None:
        self._with_store(lambda store: store.finish_tuning(tuning_id, tuning, status))

    def plan(self, plan: dict[str, Any]) -> int:
        return self._with_store(lambda store: store.record_plan(plan))
