"""What a recorder of results must do (the session database's `store.recorder.Recorder` does it).

Running a workload and tuning one never import the store: the caller (CLI or GUI) hands them a
recorder, so the measuring layers stay below persistence and tests can record into a list.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol


class Recorder(Protocol):
    path: Path

    def run(self, report: dict[str, Any]) -> int:
        """Store a finished run's JSON form; returns its id."""

    def run_failed(self, workload: Path, kind: str, message: str, settings: dict[str, Any]) -> int | None:
        """Store a run that started and failed (None: refused before it started, so not stored)."""

    def tuning_started(self, workload: Path, strategy: str, started: float, baseline: dict[str, Any]) -> int:
        """Open a tuning session; returns its id."""

    def trial(self, tuning_id: int, seq: int, trial: dict[str, Any]) -> None:
        """Store one trial as soon as it is measured."""

    def tuning_finished(self, tuning_id: int, tuning: dict[str, Any], status: str = "done") -> None:
        """Close a tuning session ('done', 'cancelled' or 'failed') with its trials and conclusion."""

    def plan(self, plan: dict[str, Any]) -> int:
        """Store a capture-size plan with its measurements; returns its id."""
