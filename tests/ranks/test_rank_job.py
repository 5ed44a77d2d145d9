"""A job's rank traces as one, on a Dask LocalCluster: stragglers named with what held them, bad ranks
left out with one line each, the others analysed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from graphscope.analysis.rank_skew import combine
from graphscope.cli import main
from graphscope.ranks.job import analyse_job, rank_files
from tests.synthetic_ranks import write_rank_set

pytest.importorskip("dask.distributed")
PLANTED = {"slow_host": {(3, 5): 400_000, (3, 9): 300_000}, "slow_gpu": {(6, 12): 500_000}}


@pytest.fixture(scope="module")
def rank_set(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ranks")
    write_rank_set(folder, world=8, steps=20, **PLANTED)
    return folder


@pytest.fixture(scope="module")
def job(rank_set):
    return analyse_job([rank_set], workers=2)


def test_the_planted_stragglers_are_named_with_what_held_them(job):
    assert [r["rank"] for r in job["ranks"]] == list(range(8)) and not job["problems"]
    late = {s["step"]: (s["straggler"], s["held_by"]) for s in job["steps"] if s["late_ns"] > 100_000}
    assert late == {5: (3, "launch-bound host"), 9: (3, "launch-bound host"), 12: (6, "GPU work")}
    step5 = job["steps"][5]
    assert 390_000 < step5["late_ns"] < 410_000 and step5["straggler_gpu_busy"] < 0.3
    assert job["verdict"].startswith("rank 3 holds the job back") and "rank 6 in step 12" in job["verdict"]
    assert job["engine"]["workers"] == 2 and job["engine"]["files"] == 8
    ranks = {r["rank"]: r for r in job["ranks"]}
    assert ranks[3]["straggler_steps"] >= 2 and ranks[0]["verdict"].startswith("launch-bound")


def test_a_damaged_rank_and_another_jobs_rank_are_left_out_and_the_others_analysed(rank_set, tmp_path):
    folder = tmp_path / "mixed"
    write_rank_set(folder, world=4, steps=6)
    (folder / "rank3.pt.trace.json").write_text('{"traceEvents": [{"ph": "X", "name": ')  # cut short
    other = write_rank_set(tmp_path / "other", world=8, steps=6, job="job-2")[5]
    (folder / "rank5.pt.trace.json").write_bytes(other.read_bytes())
    result = analyse_job([folder], workers=1)
    assert [r["rank"] for r in result["ranks"]] == [0, 1, 2]
    assert len(result["problems"]) == 2
    assert any("rank3.pt.trace.json" in p for p in result["problems"])
    assert any("rank5.pt.trace.json: another job's rank (world size 8" in p for p in result["problems"])
    assert result["missing_ranks"] == [3]


def test_the_command_line_takes_a_folder_and_says_why_it_cannot_reach_a_scheduler(rank_set, capsys):
    assert main(["summary", str(rank_set), "--json", "--workers", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["world_size"] == "8" and len(data["steps"]) == 20
    done = subprocess.run(
        [sys.executable, "-m", "graphscope", "summary", str(rank_set), "--scheduler", "tcp://127.0.0.1:9"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2 and done.stderr.startswith("graphscope: error: cannot reach the Dask scheduler")
    assert done.stderr.count("\n") == 1


def test_ranks_are_combined_by_their_own_numbers_without_dask():
    def row(rank, path, world="2"):
        return {"path": path, "rank": rank, "job": {"world_size": world, "pg_config": "j"}, "step_name": "s",
                "start": [0, 100], "end": [90, 190], "arrive": [80, 180], "compute_busy_ns": [70, 70],
                "host_ns": [10, 10], "comm_ns": [10, 10]}  # fmt: skip

    result = combine([row(0, "a"), row(0, "b"), row(None, "c"), {"path": "d", "error": "not a trace"}])
    assert [r["rank"] for r in result["ranks"]] == [0] and result["missing_ranks"] == [1]
    assert any("rank 0 again (a)" in p for p in result["problems"]) and any(
        "d: not a trace" in p for p in result["problems"]
    )
    assert any("no rank in the file" in p for p in result["problems"])
    assert rank_files([]) == []


def test_a_folder_of_ranks_reports_its_stragglers_in_every_format(rank_set, tmp_path):
    out = tmp_path / "ranks.html"
    assert main(["report", str(rank_set), "-o", str(out), "--workers", "1"]) == 0
    page = out.read_text()
    assert "rank job: 8 ranks of 8" in page and "each rank&#x27;s lateness at each step" in page
    assert "rank 3, step 5: 398" in page  # the planted straggler's cell, named in its tooltip
    assert main(["report", str(rank_set), "-o", str(tmp_path / "ranks.json"), "--workers", "1"]) == 0
    data = json.loads((tmp_path / "ranks.json").read_text())
    assert data["ranks"]["verdict"].startswith("rank 3 holds the job back")
    assert [row[1] for row in data["tables"][0]["rows"][:3]] == ["6", "3", "3"]  # the latest first
