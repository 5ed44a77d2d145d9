"""The tuning controller on a model workload child (tests/tune/fakes.py), loaded and closed per test."""

from __future__ import annotations

import pytest

from graphscope.store.recorder import Recorder
from graphscope.tune.controller import TuningController
from tests.tune.fakes import ModelSession


@pytest.fixture
def controller(tmp_path):
    ModelSession.started.clear()
    workload = tmp_path / "model.py"
    workload.write_text("# a model workload\n")
    made = TuningController(workload, recorder=Recorder(tmp_path / "s.sqlite"), session_factory=ModelSession)
    made.load()
    yield made
    made.close()
