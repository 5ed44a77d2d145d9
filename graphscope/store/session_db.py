"""The session database: workloads, runs, per-repetition measurements, traces and tuning history.

One SQLite file (sqlite-utils), by default in the user's data folder, in WAL mode with a busy
timeout, so several graphscope processes can write it at once. Each run is written in one
transaction and each tuning trial as it is measured, so a crash or a kill loses at most the
measurement in flight. `PRAGMA user_version` holds the schema version: a database made by a newer
graphscope, or one that is not graphscope's, is refused rather than altered. Inputs are the plain
JSON forms of reports, so this module needs nothing from the runner.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sqlite3
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from graphscope.core.errors import BadInputError
from graphscope.core.settings import default_session_db
from graphscope.core.text import shown_path

SCHEMA_VERSION = 3  # 1: the first release (user_version 0); 2: tuning status, trials written as they come; 3: plans
BUSY_TIMEOUT_MS = 30_000
REFUSED_BEFORE_START = ("no_gpu", "bad_workload", "missing_library")
"""Failures that mean the workload never ran (no GPU, not a workload): not stored as runs."""

SCHEMA: dict[str, tuple[dict[str, type], dict[str, Any]]] = {
    "workloads": ({"id": int, "path": str, "name": str, "sha256": str, "first_seen": float}, {"pk": "id"}),
    "runs": (
        {
            "id": int,
            "workload_id": int,
            "started": float,
            "finished": float,
            "status": str,
            "modes": str,
            "reps": int,
            "warmup": int,
            "error_kind": str,
            "error": str,
            "environment": str,
            "config": str,
            "speedup_wall": float,
            "speedup_wall_low": float,
            "speedup_wall_high": float,
            "speedup_gpu": float,
            "verdict": str,
            "outputs_match": int,
        },
        {"pk": "id", "foreign_keys": [("workload_id", "workloads")]},
    ),
    "run_modes": (
        {
            "run_id": int,
            "mode": str,
            "median_gpu_ns": float,
            "median_wall_ns": float,
            "median_submit_ns": float,
            "ci_low_wall_ns": float,
            "ci_high_wall_ns": float,
            "capture_ns": int,
            "instantiate_ns": int,
            "upload_ns": int,
            "outputs_match": int,
            "max_abs_diff": float,
        },
        {"pk": ("run_id", "mode"), "foreign_keys": [("run_id", "runs")]},
    ),
    "measurements": (
        {"run_id": int, "mode": str, "rep": int, "gpu_ns": float, "wall_ns": float, "submit_ns": float},
        {"pk": ("run_id", "mode", "rep"), "foreign_keys": [("run_id", "runs")]},
    ),
    "traces": (
        {"run_id": int, "mode": str, "sqlite": str, "report": str},
        {"pk": ("run_id", "mode"), "foreign_keys": [("run_id", "runs")]},
    ),
    "tunings": (
        {
            "id": int,
            "workload_id": int,
            "started": float,
            "finished": float,
            "strategy": str,
            "status": str,  # running, done, cancelled, failed
            "baseline": str,
            "best": str,
            "summary": str,
        },
        {"pk": "id", "foreign_keys": [("workload_id", "workloads")]},
    ),
    "plans": (
        {"id": int, "workload_id": int, "started": float, "finished": float, "verdict": str, "data": str},
        {"pk": "id", "foreign_keys": [("workload_id", "workloads")]},
    ),
    "trials": (
        {
            "tuning_id": int,
            "seq": int,
            "config": str,
            "site": str,
            "block": str,
            "how": str,
            "median_ns": float,
            "ci_low_ns": float,
            "ci_high_ns": float,
            "reps": int,
            "outputs_match": int,
            "status": str,
            "reason": str,
            "apply_ns": int,
        },
        {"pk": ("tuning_id", "seq"), "foreign_keys": [("tuning_id", "tunings")]},
    ),
}


def _file_hash(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


def _one_line(exc: BaseException | str) -> str:
    return " ".join(str(exc).split())


def _damaged(method: Any) -> Any:
    """A read or write that finds the database damaged says so in one line (never 'not an export')."""

    @functools.wraps(method)
    def guarded(self: SessionStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:  # text that is not UTF-8: damaged too
            raise BadInputError(f"{self.path}: the session database is damaged ({_one_line(exc)})") from None

    return guarded


class SessionStore:
    """Opens (or creates) the session database and writes and reads its records."""

    def __init__(self, path: Path | None = None, read_only: bool = False) -> None:
        """Open (or create) the database; `read_only` opens an existing one for reading only (reports of
        stored runs), altering nothing, so a database on read-only media or of another user serves too."""
        self.path = Path(path) if path is not None else default_session_db()
        if self.path.is_dir():
            raise BadInputError(f"{self.path}: is a directory, not a session database")
        if read_only and not self.path.is_file():
            raise BadInputError(f"{self.path}: no such session database")
        try:
            if read_only:
                # without a -wal beside it the file is complete: immutable needs no -shm (a read-only folder)
                merged = not Path(str(self.path) + "-wal").exists()
                where = urllib.parse.quote(os.fsencode(self.path.resolve()))  # bytes: a name that is not UTF-8 too
                uri = "file:" + where + "?mode=ro" + "&immutable=1" * merged
                self.db = Database(sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000))
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.db = Database(sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000))
            self.db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self._check_schema()  # before anything is written: a refused database is left as it was
            if not read_only:
                self._check_intact()
                self.db.execute("PRAGMA journal_mode = WAL")
                with self._writing():
                    self._create_or_migrate()
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            raise BadInputError(f"{self.path}: not a usable session database ({_one_line(exc)})") from None
        except OSError as exc:
            raise BadInputError(f"{self.path}: cannot be opened ({exc.strerror or exc})") from None

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """A write transaction that takes the write lock at once (BEGIN IMMEDIATE): a deferred one that
        reads first would fail with 'database is locked' when another process writes, busy timeout or not."""
        if self.db.conn.in_transaction:
            with self.db.atomic():
                yield
            return
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.conn.rollback()
            raise
        self.db.conn.commit()

    def _check_schema(self) -> None:
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise BadInputError(
                f"{self.path}: made by a newer graphscope (schema {version}, this one knows {SCHEMA_VERSION}); "
                "upgrade graphscope or use another --session"
            )
        names = set(self.db.table_names())
        foreign = names - set(SCHEMA)
        if not foreign and version == 0:  # graphscope's first release set no version: its tables, its columns
            foreign = {t for t in names if not set(self.db.table(t).columns_dict) <= set(SCHEMA[t][0]) | {"rowid"}}
            foreign |= {t for t in names if SCHEMA[t][1]["pk"] == "id" and "id" not in self.db.table(t).columns_dict}
        if foreign:
            raise BadInputError(
                f"{self.path}: not a graphscope session database (it holds {', '.join(sorted(foreign)[:3])}); "
                "choose another --session"
            )

    def _check_intact(self) -> None:
        """Refuse a damaged database before the first write (switching to WAL rewrites its header; a
        write into a damaged b-tree spreads the damage). `PRAGMA quick_check` reads every page once:
        a few milliseconds for a session database of thousands of runs."""
        if not self.path.is_file() or self.path.stat().st_size == 0:
            return
        problems = [str(row[0]) for row in self.db.execute("PRAGMA quick_check(3)").fetchall()]
        if problems != ["ok"]:
            raise BadInputError(
                f"{shown_path(self.path)}: the session database is damaged ({_one_line('; '.join(problems))[:160]}); "
                "nothing was written to it: move it aside or use another --session"
            )

    def _create_or_migrate(self) -> None:
        for name, (columns, options) in SCHEMA.items():
            table = self.db.table(name)
            if not table.exists():
                table.create(columns, **options)
                continue
            present = set(table.columns_dict)
            for column, kind in columns.items():
                if column not in present:
                    table.add_column(column, kind)
        self.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _insert(self, name: str, record: dict[str, Any]) -> int:
        """Insert one row; its rowid (sqlite-utils sets `last_pk` on every insert)."""
        table = self.db.table(name)
        table.insert(record)
        if table.last_pk is None:
            raise RuntimeError(f"sqlite-utils gave no rowid for the row inserted into {name}")
        return int(table.last_pk)

    def close(self) -> None:
        self.db.close()

    def workload_id(self, path: Path) -> int:
        path = Path(path).resolve()
        digest = _file_hash(path)
        found = list(self.db.table("workloads").rows_where("path = ? AND sha256 = ?", [str(path), digest], limit=1))
        if found:
            return int(found[0]["id"])
        record = {"path": str(path), "name": path.stem, "sha256": digest, "first_seen": time.time()}
        return self._insert("workloads", record)

    @_damaged
    def record_run(self, report: dict[str, Any]) -> int:
        """Store a RunReport's JSON form (measurements included) in one transaction; returns the run id."""
        wall = report.get("speedup", {}).get("wall_ns", {})
        gpu = report.get("speedup", {}).get("gpu_ns", {})
        with self._writing():
            run_id = self._insert(
                "runs",
                {
                    "workload_id": self.workload_id(Path(report["workload"])),
                    "started": report["started"],
                    "finished": report["finished"],
                    "status": "ok",
                    "modes": ",".join(report["modes"]),
                    "reps": report["reps"],
                    "warmup": report["warmup"],
                    "environment": json.dumps(report["environment"]),
                    "config": json.dumps(report.get("config")),
                    "speedup_wall": wall.get("value"),
                    "speedup_wall_low": wall.get("low"),
                    "speedup_wall_high": wall.get("high"),
                    "speedup_gpu": gpu.get("value"),
                    "verdict": report["verdict"],
                    "outputs_match": int(bool(report.get("outputs_match"))),
                },
            )
            for mode, result in report["modes"].items():
                stats, capture, outputs = result["stats"], result.get("capture") or {}, result["outputs"]
                self.db.table("run_modes").insert(
                    {
                        "run_id": run_id,
                        "mode": mode,
                        "median_gpu_ns": stats["gpu_ns"]["median"],
                        "median_wall_ns": stats["wall_ns"]["median"],
                        "median_submit_ns": stats["submit_ns"]["median"],
                        "ci_low_wall_ns": stats["wall_ns"]["ci_low"],
                        "ci_high_wall_ns": stats["wall_ns"]["ci_high"],
                        "capture_ns": capture.get("capture_ns"),
                        "instantiate_ns": capture.get("instantiate_ns"),
                        "upload_ns": capture.get("upload_ns"),
                        "outputs_match": outputs.get("match"),
                        "max_abs_diff": outputs.get("max_abs_diff"),
                    }
                )
                samples = result["samples"]
                self.db.table("measurements").insert_all(
                    {"run_id": run_id, "mode": mode, "rep": rep, "gpu_ns": g, "wall_ns": w, "submit_ns": s}
                    for rep, (g, w, s) in enumerate(zip(samples["gpu_ns"], samples["wall_ns"], samples["submit_ns"]))
                )
            for mode, files in report.get("traces", {}).items():
                self.db.table("traces").insert({"run_id": run_id, "mode": mode, **files})
        return run_id

    @_damaged
    def record_failure(self, workload: Path, kind: str, message: str, settings: dict[str, Any]) -> int | None:
        """Store a run that started and failed; returns its id (None for a run refused before it started)."""
        if kind in REFUSED_BEFORE_START:
            return None
        now = time.time()
        with self._writing():
            return self._insert(
                "runs",
                {
                    "workload_id": self.workload_id(workload),
                    "started": settings.get("started", now),
                    "finished": now,
                    "status": "failed",
                    "modes": ",".join(settings.get("modes", ())),
                    "reps": settings.get("reps"),
                    "warmup": settings.get("warmup"),
                    "error_kind": kind,
                    "error": message,
                },
            )

    @_damaged
    def begin_tuning(self, workload: Path, strategy: str, started: float, baseline: dict[str, Any]) -> int:
        """Open a tuning session (status 'running'); its trials follow one by one."""
        with self._writing():
            record = {
                "workload_id": self.workload_id(Path(workload)),
                "started": started,
                "strategy": strategy,
                "status": "running",
                "baseline": json.dumps(baseline),
            }
            return self._insert("tunings", record)

    @_damaged
    def add_trial(self, tuning_id: int, seq: int, trial: dict[str, Any]) -> None:
        """Store one trial as soon as it is measured (its own transaction: a kill loses only the next one)."""
        with self._writing():
            self.db.table("trials").upsert(_trial_row(tuning_id, seq, trial), pk=("tuning_id", "seq"))

    @_damaged
    def finish_tuning(self, tuning_id: int, tuning: dict[str, Any], status: str = "done") -> None:
        """Close a tuning session with its conclusion and the full list of trials."""
        with self._writing():
            self.db.table("tunings").update(
                tuning_id,
                {
                    "finished": tuning.get("finished", time.time()),
                    "status": status,
                    "best": json.dumps(tuning.get("best")),
                    "summary": json.dumps(tuning.get("summary")),
                },
            )
            self.db.table("trials").upsert_all(
                (_trial_row(tuning_id, seq, t) for seq, t in enumerate(tuning.get("trials", []))),
                pk=("tuning_id", "seq"),
            )

    @_damaged
    def record_tuning(self, tuning: dict[str, Any]) -> int:
        """Store a finished tuning session and every trial in one transaction; returns its id."""
        with self._writing():
            tuning_id = self.begin_tuning(
                Path(tuning["workload"]), tuning["strategy"], tuning["started"], tuning["baseline"]
            )
            self.finish_tuning(tuning_id, tuning)
        return tuning_id

    @_damaged
    def record_plan(self, plan: dict[str, Any]) -> int:
        """Store a capture-size plan (its measurements included) in one transaction; returns its id."""
        with self._writing():
            record = {
                "workload_id": self.workload_id(Path(plan["workload"])),
                "started": plan["started"],
                "finished": plan["finished"],
                "verdict": plan["verdict"],
                "data": json.dumps(plan),
            }
            return self._insert("plans", record)

    @_damaged
    def plan(self, plan_id: int) -> dict[str, Any] | None:
        """A stored plan's JSON form; None if there is no such plan."""
        found = list(self.db.table("plans").rows_where("id = ?", [plan_id]))
        if not found:
            return None
        try:  # a record edited or damaged in the file: one line (store/plan_record.py checks the rest)
            record = json.loads(found[0]["data"])
        except (KeyError, TypeError, ValueError, RecursionError):
            record = None
        if not isinstance(record, dict):
            raise BadInputError(f"{self.path}: plan {plan_id} is damaged (its record is not a plan)")
        return {**record, "plan_id": plan_id}

    @_damaged
    def runs(self, workload: Path | None = None) -> list[dict[str, Any]]:
        """Runs, newest first, with their workload's path."""
        where, args = ("WHERE w.path = ?", [str(Path(workload).resolve())]) if workload else ("", [])
        sql = f"SELECT r.*, w.path FROM runs r JOIN workloads w ON w.id = r.workload_id {where} ORDER BY r.id DESC"
        return [dict(row) for row in self.db.query(sql, args)]

    @_damaged
    def run(self, run_id: int) -> dict[str, Any] | None:
        """One run with its workload's path, per-mode rows and traces; None if there is no such run."""
        found = list(
            self.db.query(
                "SELECT r.*, w.path FROM runs r JOIN workloads w ON w.id = r.workload_id WHERE r.id = ?", [run_id]
            )
        )
        if not found:
            return None
        run = dict(found[0])
        run["modes_detail"] = {r["mode"]: r for r in self.db.table("run_modes").rows_where("run_id = ?", [run_id])}
        run["traces"] = {r["mode"]: r for r in self.db.table("traces").rows_where("run_id = ?", [run_id])}
        return run

    @_damaged
    def tuning(self, tuning_id: int) -> dict[str, Any] | None:
        """One tuning session with its workload's path and trials; None if there is no such session."""
        found = list(
            self.db.query(
                "SELECT t.*, w.path FROM tunings t JOIN workloads w ON w.id = t.workload_id WHERE t.id = ?", [tuning_id]
            )
        )
        if not found:
            return None
        return {**dict(found[0]), "trials": self.trials(tuning_id)}

    @_damaged
    def measurements(self, run_id: int) -> list[dict[str, Any]]:
        return list(self.db.table("measurements").rows_where("run_id = ?", [run_id], order_by="mode, rep"))

    @_damaged
    def trials(self, tuning_id: int) -> list[dict[str, Any]]:
        return list(self.db.table("trials").rows_where("tuning_id = ?", [tuning_id], order_by="seq"))


def _trial_row(tuning_id: int, seq: int, t: dict[str, Any]) -> dict[str, Any]:
    return {
        "tuning_id": tuning_id,
        "seq": seq,
        "config": json.dumps(t["config"]),
        "site": t.get("site"),
        "block": json.dumps(t.get("block")),
        "how": t["how"],
        "median_ns": t.get("median_ns"),
        "ci_low_ns": t.get("ci_low_ns"),
        "ci_high_ns": t.get("ci_high_ns"),
        "reps": t.get("reps"),
        "outputs_match": t.get("outputs_match"),
        "status": t["status"],
        "reason": t.get("reason"),
        "apply_ns": t.get("apply_ns"),
    }
