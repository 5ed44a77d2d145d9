"""Steps timed from their CPU range's start to the end of the GPU work launched in it, GPU busy per rank
and step, and files that hold several ranks: checked against plain SQL/JSON over the rank files."""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

import pytest

from graphscope.cli import main
from tests.ranks.helpers import forkjoin_ranks, serial_job
from tests.synthetic_ranks import write_rank_set

TRIPLE = "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start + 3 * (end - start);"
WORK = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")


def union_in(intervals: list[tuple[int, int]], low: int, high: int) -> int:
    """The time [low, high) is covered by at least one interval: a plain sweep."""
    total, reach = 0, low
    for start, end in sorted((max(s, low), min(e, high)) for s, e in intervals):
        if end > reach and end > start:
            total += end - max(start, reach)
            reach = end
    return total


def sql_steps(path: Path, pattern: str = "graph_%") -> list[tuple[int, int, int]]:
    """(start, end, GPU busy) per step by SQL: a step ends at the later of its range's end and the end of
    the GPU work whose runtime call started in the range; busy is the union of all GPU work inside it."""
    with sqlite3.connect(path) as db:
        work_union = " UNION ALL ".join(f"SELECT start, end, correlationId FROM {t}" for t in WORK)
        steps = db.execute(
            f"SELECT n.start, max(n.end, coalesce(max(w.end), 0)) FROM NVTX_EVENTS n "
            f"LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.start >= n.start AND r.start < n.end "
            f"LEFT JOIN ({work_union}) w ON w.correlationId = r.correlationId "
            f"WHERE n.text LIKE ? GROUP BY n.start, n.end ORDER BY n.start", (pattern,),
        ).fetchall()  # fmt: skip
        work = db.execute(f"SELECT start, end FROM ({work_union})").fetchall()
        session = db.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()[0]
    return [(s + session, e + session, union_in(work, s, e)) for s, e in steps]


@pytest.mark.parametrize("step", ["graph_*", None])
def test_a_rank_with_kernels_three_times_as_long_is_the_straggler_in_every_step(tmp_path, step):
    paths = forkjoin_ranks(tmp_path, 8, {5: TRIPLE})
    job = serial_job([tmp_path], step)
    assert job["step_name"] == "graph_*"  # without --step too: the family the other seven files chose
    assert [(s["straggler"], s["held_by"]) for s in job["steps"]] == [(5, "GPU work")] * 5
    by_sql = {rank: sql_steps(paths[rank]) for rank in (0, 5)}
    for s in job["steps"]:
        k = s["step"]
        late = (by_sql[5][k][1] - by_sql[5][k][0]) - (by_sql[0][k][1] - by_sql[0][k][0])  # same starts
        assert s["late_ns"] == late and s["start_skew_ns"] == 0 and s["end_skew_ns"] == late
    ranks = {r["rank"]: r for r in job["ranks"]}
    for rank in (0, 5):
        steps = by_sql[rank]
        assert [round(b, 4) for b in job["gpu_busy"][rank]] == [round(b / (e - s), 4) for s, e, b in steps]
        total = sum(b for _, _, b in steps) / sum(e - s for s, e, _ in steps)
        assert ranks[rank]["step_gpu_busy"] == pytest.approx(total, abs=1e-9)
    assert 0.5 < ranks[0]["step_gpu_busy"] < ranks[5]["step_gpu_busy"]  # was "GPU busy 0%" for every rank


def test_the_command_line_names_the_slow_gpu_rank(tmp_path, capsys):
    forkjoin_ranks(tmp_path, 8, {5: TRIPLE})
    assert main(["summary", str(tmp_path), "--step", "graph_*", "--workers", "1"]) == 0
    text = capsys.readouterr().out
    assert "Verdict: rank 5 holds the job back in 5 of 5 steps (mostly GPU work); the latest end of a step" in text
    rows = [line.split() for line in text.splitlines() if line.strip()[:1].isdigit() and "launch" in line]
    assert [row[3] for row in rows] == ["57%"] * 5 + ["92%"] + ["57%"] * 2  # GPU busy in steps


def _second_process(path: Path, slower: int) -> None:
    """Make the export hold a second process (pid + 1000) running the same work, its kernels `slower`x."""
    shift = 1000 << 24
    with sqlite3.connect(path) as db:
        for table, column in [(t, "globalPid") for t in WORK] + [
            ("CUPTI_ACTIVITY_KIND_RUNTIME", "globalTid"), ("NVTX_EVENTS", "globalTid")]:  # fmt: skip
            db.execute(f"CREATE TEMP TABLE t AS SELECT * FROM {table}")
            db.execute(f"UPDATE t SET {column} = {column} + {shift}")
            if table == "CUPTI_ACTIVITY_KIND_KERNEL":
                db.execute(f"UPDATE t SET end = start + {slower} * (end - start)")
            db.execute(f"INSERT INTO {table} SELECT * FROM t")
            db.execute("DROP TABLE t")
        db.execute(f"INSERT INTO PROCESSES SELECT globalPid + {shift}, pid + 1000, name FROM PROCESSES "
                   "WHERE globalPid = (SELECT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1)")  # fmt: skip


def test_an_export_of_two_processes_is_two_ranks(tmp_path):
    (path,) = forkjoin_ranks(tmp_path, 1)
    _second_process(path, 3)
    job = serial_job([tmp_path], "graph_*")
    assert [(r["rank"], r["unit"]) for r in job["ranks"]] == [(0, "pid 1042, GPU 0"), (1, "pid 2042, GPU 0")]
    assert [(s["straggler"], s["held_by"]) for s in job["steps"]] == [(1, "GPU work")] * 5
    assert job["ranks"][1]["step_gpu_busy"] > job["ranks"][0]["step_gpu_busy"] > 0.5


def test_a_process_without_step_ranges_is_no_rank(tmp_path):
    (path,) = forkjoin_ranks(tmp_path, 1)
    with sqlite3.connect(path) as db:  # a launcher process that copied a few bytes to the GPU once
        db.execute("CREATE TEMP TABLE t AS SELECT * FROM CUPTI_ACTIVITY_KIND_MEMCPY LIMIT 1")
        db.execute(f"UPDATE t SET globalPid = globalPid + {7 << 24}")
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY SELECT * FROM t")
    job = serial_job([tmp_path], "graph_*")
    assert [(r["rank"], r["unit"]) for r in job["ranks"]] == [(0, "pid 1042, GPU 0")] and len(job["steps"]) == 5
    assert job["problems"] == [f"{path} (pid {(1042 + 7)}, GPU 0): no 'graph_*' ranges: left out"]


def _second_gpu(path: Path) -> None:
    """Give a generated rank a second GPU in the same process: each launch and kernel again, the kernels
    on device 1 and 30 us later (that GPU reaches each all-reduce 30 us after the first)."""
    document = json.loads(path.read_text())
    del document["distributedInfo"]  # one process: no distributed job of its own
    extra = []
    for event in document["traceEvents"]:
        if event.get("cat") in ("kernel", "cuda_runtime") and "correlation" in event.get("args", {}):
            copy = json.loads(json.dumps(event))
            copy["args"]["correlation"] += 1_000_000
            if event["cat"] == "kernel":
                copy["args"]["device"], copy["pid"] = 1, 1
                copy["ts"] = event["ts"] + 30
            extra.append(copy)
    document["traceEvents"] += extra
    path.write_text(json.dumps(document))


def test_a_process_driving_two_gpus_is_two_ranks(tmp_path):
    (path,) = write_rank_set(tmp_path, world=1, steps=6)
    _second_gpu(path)
    job = serial_job([tmp_path])
    assert [r["unit"] for r in job["ranks"]] == ["pid 1, GPU 0", "pid 1, GPU 1"]
    assert [s["straggler"] for s in job["steps"]] == [1] * 6
    assert all(29_990 <= s["late_ns"] <= 30_010 and s["held_by"] != "on time" for s in job["steps"])
    kernels = [e for e in json.loads(path.read_text())["traceEvents"] if e.get("cat") == "kernel"]
    assert job["ranks"][0]["events"] == job["ranks"][1]["events"]  # one file: its counts are the file's
    assert sum(1 for e in kernels if e["args"]["device"] == 1) == len(kernels) // 2


def test_op_level_ranges_are_never_steps(tmp_path):
    paths = write_rank_set(tmp_path, world=2, steps=6)
    for path in paths:  # the step ranges renamed as per-operator ranges
        text = path.read_text()
        for k in range(6):
            text = text.replace(f'"ProfilerStep#{k}"', f'"aten::to, op_id = {317177 + k}"')
        path.write_text(text)
    job = serial_job([tmp_path])
    assert job["steps"] == [] and job["verdict"].startswith("2 ranks, but no step ranges")
    asked = serial_job([tmp_path], "aten::to*")
    assert len(asked["ranks"]) == 0 and all("names only op-level ranges" in p for p in asked["problems"])
    assert gzip  # (imported for the compressed ranks below)
