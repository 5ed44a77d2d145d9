"""The tuning controller: candidates that fault, hang or cannot launch are recorded with their cause and
the sweep goes on; trials land in the session database as they come; one operation at a time;
cancellation; 2-D block shapes."""

from __future__ import annotations

import threading

import pytest

from graphscope.core.errors import Cancelled
from graphscope.core.launch_config import LaunchConfig
from graphscope.core.progress import CancelToken
from graphscope.store.session_db import SessionStore
from tests.tune.fakes import ModelSession


def test_a_sweep_over_faulting_and_hanging_candidates_completes(controller, tmp_path):
    transpose = controller.knobs("transpose")
    scale = controller.knobs("scale")
    result = controller.sweep("brute", transpose + scale)
    statuses = {(t.knob, t.block): t.status for t in result.trials}
    assert statuses[("transpose", (64, 4, 1))] == "fault" and "IllegalAddress" in next(
        t.reason for t in result.trials if t.status == "fault"
    )
    assert statuses[("scale", (32, 1, 1))] == "timeout"
    assert statuses[("scale", (128, 1, 1))] == "ok"
    assert result.best.config.blocks == {"scale": (128, 1, 1)} and result.adopt
    assert len(controller.restarts) == sum(s in ("fault", "timeout") for s in statuses.values())
    assert "faulted" in result.conclusion() and "timed out" in result.conclusion()
    stored = SessionStore(tmp_path / "s.sqlite").trials(result.tuning_id)
    assert {t["status"] for t in stored} >= {"ok", "fault", "timeout"}


def test_a_block_beyond_the_limit_is_invalid_and_needs_no_restart(controller):
    trial = controller.try_block("relu", (1024, 1, 1))
    assert trial.status == "invalid" and "exceed" in trial.reason and controller.restarts == []


def test_the_baseline_is_measured_again_after_a_restart(controller):
    before = list(controller.baseline.samples)
    controller.try_block("transpose", (64, 4, 1))
    assert controller.restarts and controller.baseline.samples != before
    assert len(ModelSession.started) == 2 and ModelSession.started[0].killed


def test_two_dimensional_launches_get_two_dimensional_shapes(controller):
    (tile,) = controller.knobs("tile")
    assert (16, 16, 1) in tile.candidates and (32, 8, 1) in tile.candidates and (8, 8, 1) in tile.candidates
    assert all(shape[1] > 1 for shape in tile.candidates)
    result = controller.sweep("brute", [tile])
    assert result.best.config.blocks == {"tile": (32, 8, 1)}


def test_user_given_shapes(controller):
    (tile,) = controller.knobs("tile", [(32, 8, 1), (64, 4, 1)])
    assert tile.candidates == ((32, 8, 1), (64, 4, 1))


def test_trials_are_in_the_database_while_the_sweep_runs_and_a_cancelled_sweep_keeps_them(controller, tmp_path):
    token = CancelToken()
    seen = []

    def progress(fraction, message):
        if message.startswith("trial"):
            rows = SessionStore(tmp_path / "s.sqlite").db["trials"].count
            seen.append(rows)
            if len(seen) == 3:
                token.cancel()

    with pytest.raises(Cancelled):
        controller.sweep("brute", controller.knobs("relu"), progress=progress, cancel=token)
    assert seen[0] >= 1 and seen[1] > seen[0]  # stored as they came
    store = SessionStore(tmp_path / "s.sqlite")
    (tuning,) = store.db["tunings"].rows
    assert tuning["status"] == "cancelled" and len(store.trials(tuning["id"])) >= 2
    trial = controller.try_block("relu", (128, 1, 1))  # the next operation restarts the child first
    assert trial.status == "ok" and "after a cancelled operation" in controller.restarts


def test_one_operation_at_a_time(controller):
    release = threading.Event()
    entered = threading.Event()
    original = controller.live.measure

    def slow(config, reps, force=False):
        entered.set()
        release.wait(10)
        return original(config, reps, force)

    controller.live.measure = slow
    worker = threading.Thread(target=lambda: controller.try_block("scale", (128, 1, 1)))
    worker.start()
    entered.wait(10)
    assert controller.busy
    with pytest.raises(RuntimeError, match="busy"):
        controller.apply_config(LaunchConfig({"relu": (64, 1, 1)}))
    release.set()
    worker.join(10)
    assert not controller.busy
