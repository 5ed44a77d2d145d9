"""A job's rank traces as one, in local worker processes: stragglers named with what held them, bad ranks
left out with one line each and the others analysed, a file whose reading kills its worker named while
the finished ranks are kept, a quiet Ctrl-C, and entries of a folder that are no trace files named."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphscope.cli import main
from graphscope.ranks.job import analyse_job, rank_files
from tests.synthetic_ranks import write_rank_set

PLANTED = {"slow_host": {(3, 5): 400_000, (3, 9): 300_000}, "slow_gpu": {(6, 12): 500_000}}
ROOT = Path(__file__).resolve().parents[2]


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
    assert late == {5: (3, "host (CPU)"), 9: (3, "host (CPU)"), 12: (6, "GPU work")}
    step5 = job["steps"][5]
    assert 390_000 < step5["late_ns"] < 410_000 and step5["straggler_gpu_busy"] < 0.3
    assert job["verdict"].startswith("rank 3 holds the job back") and "rank 6 in step 12" in job["verdict"]
    assert job["engine"]["workers"] == 2 and job["engine"]["files"] == 8
    ranks = {r["rank"]: r for r in job["ranks"]}
    assert ranks[3]["straggler_steps"] >= 2 and ranks[0]["verdict"].startswith("launch-bound")
    assert 0.5 < ranks[0]["step_gpu_busy"] < 1 and len(job["gpu_busy"]) == 8 and len(job["gpu_busy"][0]) == 20


def test_a_damaged_rank_is_left_out_and_the_others_analysed(tmp_path):
    folder = tmp_path / "mixed"
    write_rank_set(folder, world=4, steps=6)
    (folder / "rank3.pt.trace.json").write_text('{"traceEvents": [{"ph": "X", "name": ')  # cut short
    result = analyse_job([folder], workers=1)
    assert [r["rank"] for r in result["ranks"]] == [0, 1, 2]
    assert result["problems"] == [f"{folder / 'rank3.pt.trace.json'}: not a complete JSON trace (Input data was "
                                  "truncated)"]  # fmt: skip
    assert result["missing_ranks"] == [3] and result["missing_count"] == 1


def test_a_rank_whose_reading_kills_its_worker_is_named_and_the_finished_ranks_kept(tmp_path, capfd):
    from tests.ranks.helpers import dying_reader

    folder = tmp_path / "ranks"
    write_rank_set(folder, world=4, steps=6)
    os.mkfifo(folder / "pipe.json")  # never opened: reading a FIFO would wait forever
    (folder / "folder.json").mkdir()
    (folder / "loop.sqlite").symlink_to(folder / "loop.sqlite")
    capfd.readouterr()
    result = analyse_job([folder], workers=2, reader=dying_reader)
    assert capfd.readouterr().err == ""  # no KilledWorker traceback, no Dask log lines
    assert [r["rank"] for r in result["ranks"]] == [0, 1, 2] and result["missing_ranks"] == [3]
    assert result["problems"] == [f"{folder / 'rank3.pt.trace.json'}: its worker died reading it (2 times: "
                                  "killed, out of memory or crashed)"]  # fmt: skip
    assert sorted(result["skipped"]) == sorted([
        f"{folder / 'folder.json'}: a folder, not a trace file",
        f"{folder / 'loop.sqlite'}: a symlink loop, not a trace file",
        f"{folder / 'pipe.json'}: a FIFO, not a trace file",
    ])  # fmt: skip


def test_the_command_line_takes_a_folder_and_says_why_it_cannot_reach_a_scheduler(rank_set, capsys):
    assert main(["summary", str(rank_set), "--json", "--workers", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["world_size"] == 8 and len(data["steps"]) == 20 and data["skipped"] == []
    pytest.importorskip("dask.distributed")
    done = subprocess.run(
        [sys.executable, "-m", "graphscope", "summary", str(rank_set), "--scheduler", "tcp://127.0.0.1:9"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2 and done.stderr.startswith("graphscope: error: cannot reach the Dask scheduler")
    assert done.stderr.count("\n") == 1


def test_ctrl_c_on_a_rank_job_says_interrupted_in_one_line(tmp_path):
    write_rank_set(tmp_path, world=2, steps=2)
    script = tmp_path / "slow.py"
    script.write_text(
        "import signal, sys\nif __name__ == '__main__':\n"
        # as a terminal starts it: Ctrl-C neither blocked nor ignored (a mask or disposition pytest's process
        # may hold is inherited through Popen; the full suite once timed out here, SIGINT never arriving)
        "    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})\n"
        "    signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "    import graphscope.ranks.job as job\n"
        "    from tests.ranks.helpers import slow_reader\n    job.rank_rows = slow_reader\n"
        "    from graphscope.cli import main\n"
        f"    sys.exit(main(['summary', {str(tmp_path)!r}, '--workers', '1']))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=env, start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 90
    while not _children(child.pid) and time.monotonic() < deadline:  # until the cluster's worker exists
        time.sleep(0.5)
    time.sleep(3)  # the worker asleep in the reader
    os.killpg(child.pid, signal.SIGINT)  # as a terminal's Ctrl-C does: the whole process group
    out, err = child.communicate(timeout=60)
    assert (child.returncode, out, err) == (130, "", "graphscope: interrupted\n")


def _children(pid: int) -> list[str]:
    """The process's child processes (Linux: every thread's children file)."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            found += (task / "children").read_text().split()
    return found


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


def test_files_named_on_the_command_line_must_be_files(tmp_path):
    os.mkfifo(tmp_path / "rank0.json")
    with pytest.raises(Exception, match="a FIFO, not a trace file"):
        rank_files([tmp_path / "rank0.json"])
    assert rank_files([]) == []
    write_rank_set(tmp_path / "set", world=2, steps=1)
    twice = rank_files([tmp_path / "set", tmp_path / "set" / "rank1.pt.trace.json", tmp_path / "set"])
    assert [p.name for p in twice] == ["rank0.pt.trace.json", "rank1.pt.trace.json"]
