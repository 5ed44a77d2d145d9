from __future__ import annotations

import pytest

from graphscope.store.session_db import SessionStore
from tests.workload.fakes import fake_report


@pytest.fixture
def store(tmp_path):
    s = SessionStore(tmp_path / "nested" / "session.sqlite")
    yield s
    s.close()


def test_a_run_is_stored_with_every_repetition(store, tmp_path):
    workload = tmp_path / "seed.py"
    workload.write_text("def setup(ctx): ...\n")
    report = fake_report(workload).to_json()
    run_id = store.record_run(report)
    (row,) = store.runs(workload)
    assert row["id"] == run_id and row["status"] == "ok" and row["modes"] == "eager,graph"
    assert 5.0 < row["speedup_wall"] < 5.3 and row["outputs_match"] == 1
    assert len(store.measurements(run_id)) == 60
    modes = {r["mode"]: r for r in store.db["run_modes"].rows}
    assert modes["graph"]["capture_ns"] == 5_600_000 and modes["eager"]["capture_ns"] is None


def test_an_edited_workload_is_a_new_workload(store, tmp_path):
    workload = tmp_path / "seed.py"
    workload.write_text("# v1\n")
    first = store.workload_id(workload)
    assert store.workload_id(workload) == first
    workload.write_text("# v2\n")
    assert store.workload_id(workload) != first


def test_a_failure_is_recorded_too(store, tmp_path):
    store.record_failure(tmp_path / "w.py", "capture_failed", "the step cannot be captured", {"modes": ("graph",)})
    (row,) = store.runs()
    assert row["status"] == "failed" and row["error_kind"] == "capture_failed"


def test_a_crash_while_writing_loses_only_that_run(store, tmp_path):
    workload = tmp_path / "seed.py"
    store.record_run(fake_report(workload).to_json())
    broken = fake_report(workload).to_json()
    broken["modes"]["graph"]["samples"]["wall_ns"] = None  # fails half-way through the inserts
    with pytest.raises(TypeError):
        store.record_run(broken)
    assert len(store.runs()) == 1 and store.db["measurements"].count == 60
    reopened = SessionStore(store.path)
    assert len(reopened.runs()) == 1
    reopened.close()
