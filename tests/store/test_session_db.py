from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from graphscope.core.errors import BadInputError
from graphscope.store.session_db import SCHEMA_VERSION, SessionStore
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


def test_wal_mode_and_a_busy_timeout(store):
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.db.execute("PRAGMA busy_timeout").fetchone()[0] >= 10_000


WRITER = """
import sys, time
from pathlib import Path
from graphscope.store.session_db import SessionStore
from tests.workload.fakes import fake_report
store = SessionStore(Path(sys.argv[1]))
for i in range(15):
    store.record_run(fake_report(Path(sys.argv[2])).to_json())
"""


def test_two_processes_writing_at_once_both_land(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "shared.sqlite"
    SessionStore(path).close()
    workload = tmp_path / "w.py"
    workload.write_text("# workload\n")
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(workload)], cwd=Path(__file__).parents[2])
        for _ in range(2)
    ]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    store = SessionStore(path)
    assert len(store.runs()) == 30 and store.db["measurements"].count == 30 * 60
    assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_database_from_a_newer_graphscope_is_refused(tmp_path):
    path = tmp_path / "s.sqlite"
    SessionStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(BadInputError, match="newer graphscope"):
        SessionStore(path)


def test_a_foreign_database_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "notes.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE recipes (name TEXT)")
    before = path.read_bytes()
    with pytest.raises(BadInputError, match="not a graphscope session database"):
        SessionStore(path)
    assert path.read_bytes() == before


def test_a_file_that_is_not_sqlite_is_refused(tmp_path):
    path = tmp_path / "s.sqlite"
    path.write_text("hello" * 200)
    with pytest.raises(BadInputError, match="not a usable session database"):
        SessionStore(path)


def test_a_first_release_database_is_migrated(tmp_path):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:  # the first release: no status column, user_version 0
        conn.execute(
            "CREATE TABLE tunings (id INTEGER PRIMARY KEY, workload_id INTEGER, started FLOAT, finished FLOAT, "
            "strategy TEXT, baseline TEXT, best TEXT, summary TEXT)"
        )
        conn.execute("INSERT INTO tunings (strategy) VALUES ('descent')")
    store = SessionStore(path)
    assert "status" in store.db["tunings"].columns_dict and store.db["tunings"].count == 1
    assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_trials_are_kept_as_they_come(store, tmp_path):
    """A sweep killed after two trials keeps them; the session says it never finished."""
    tuning = store.begin_tuning(tmp_path / "w.py", "descent", 1.0, {"blocks": {}})
    trial = {"config": {"blocks": {"add": [64, 1, 1]}}, "how": "in-place", "status": "ok", "median_ns": 5.0}
    store.add_trial(tuning, 0, trial)
    store.add_trial(tuning, 1, {**trial, "status": "fault", "reason": "cudaErrorIllegalAddress"})
    reopened = SessionStore(store.path)
    assert [t["status"] for t in reopened.trials(tuning)] == ["ok", "fault"]
    assert reopened.db["tunings"].get(tuning)["status"] == "running"


@pytest.mark.parametrize(
    "schema",
    [
        "CREATE TABLE runs (name TEXT, score REAL)",  # sqlite-utils once raised BadPrimaryKey here
        "CREATE TABLE workloads (path TEXT, owner TEXT); CREATE TABLE measurements (x REAL, y REAL)",
    ],
)
def test_another_programs_database_with_our_table_names_is_refused_untouched(tmp_path, schema):
    path = tmp_path / "theirs.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(schema)
    before = path.read_bytes()
    with pytest.raises(BadInputError, match="not a graphscope session database"):
        SessionStore(path)
    assert path.read_bytes() == before  # not switched to WAL, no tables added
    assert not (tmp_path / "theirs.sqlite-wal").exists() and not (tmp_path / "theirs.sqlite-shm").exists()


def test_damage_found_after_opening_is_called_a_damaged_session_database(store, tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(store.db, "query", broken)
    with pytest.raises(BadInputError, match="the session database is damaged"):
        store.runs()


def test_a_read_only_session_database_serves_reports(tmp_path):
    from graphscope.cli import main
    from tests.workload.fakes import fake_report

    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "s.sqlite"
    store = SessionStore(path)
    run_id = store.record_run({"ok": True, **fake_report(tmp_path / "seed.py").to_json()})
    store.close()
    path.chmod(0o444)
    folder.chmod(0o555)
    try:
        assert main(["report", f"run:{run_id}", "--session", str(path), "-o", str(tmp_path / "r.json")]) == 0
    finally:
        folder.chmod(0o755)


def _damaged_database(path: Path) -> bytes:
    """A graphscope session database whose third page's b-tree header is garbage (quick_check finds it)."""
    store = SessionStore(path)
    for i in range(30):
        store.record_failure(path.parent / f"w{i}.py", "capture_failed", "x" * 500, {"modes": ("graph",)})
    store.close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode = DELETE")
    data = bytearray(path.read_bytes())
    page = 4096
    data[page * 2 : page * 2 + 12] = bytes.fromhex("0dffff0000ffffff00000000")
    path.write_bytes(bytes(data))
    return bytes(data)


def test_a_damaged_database_is_refused_before_anything_is_written(tmp_path, capsys):
    """`run WORKLOAD --session damaged.sqlite` on a machine without a GPU wrote (WAL switch, migration)
    into the damaged file before the run was refused."""
    from graphscope.cli import main

    path = tmp_path / "damaged.sqlite"
    before = _damaged_database(path)
    with pytest.raises(BadInputError, match=r"the session database is damaged .*nothing was written"):
        SessionStore(path)
    workload = tmp_path / "w.py"
    workload.write_text("def setup(ctx):\n    return lambda ctx: None\n")
    assert main(["run", str(workload), "--session", str(path)]) == 2
    err = capsys.readouterr().err
    assert "the session database is damaged" in err and err.count("\n") == 1
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["damaged.sqlite", "w.py"]
