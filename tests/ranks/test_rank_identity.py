"""Which rank a file is and whether files are one job: distributed metadata first, rank-like names
second, else a one-line refusal; different world sizes, repeated ranks, absurd world sizes and files far
apart in time refused in one line naming the files."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphscope.core.errors import BadInputError
from graphscope.ranks.identity import MAX_WORLD_SIZE, group_of, name_rank
from graphscope.ranks.job import _missing
from tests.ranks.helpers import forkjoin_ranks, serial_job
from tests.synthetic_ranks import write_rank_set

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("name", "rank"),
    [("rank0.pt.trace.json", 0), ("trainer_rank_1.json.gz", 1), ("job-rank-2.sqlite", 2), ("run-r3.nsys-rep", 3),
     ("step_r12_host.sqlite", 12), ("RANK7.json", 7),
     ("2gpu.sqlite", None), ("report2.sqlite", None), ("frank3.json", None), ("h200_forkjoin_node.sqlite", None),
     ("rank1_r2.json", 1), ("rank1_rank2.json", None), ("gpu4_r.sqlite", None)],
)  # fmt: skip
def test_rank_like_names(name, rank):
    assert name_rank(name) == rank


def _edit(path: Path, **info) -> None:
    document = json.loads(path.read_text())
    document["distributedInfo"].update(info)
    path.write_text(json.dumps(document))


def test_metadata_comes_before_the_name_and_a_file_without_either_is_refused(tmp_path):
    paths = write_rank_set(tmp_path, world=2, steps=4)
    paths[0].rename(tmp_path / "rank1_copy.pt.trace.json")  # says rank 0 inside: the metadata wins
    assert [r["path"].endswith("rank1_copy.pt.trace.json") for r in serial_job([tmp_path])["ranks"]] == [True, False]
    forkjoin_ranks(tmp_path / "fj", 2)
    (tmp_path / "fj" / "rank1.sqlite").rename(tmp_path / "fj" / "2gpu.sqlite")
    with pytest.raises(BadInputError, match=r"^2gpu.sqlite: no rank in the trace's metadata .* or in the file's name"):
        serial_job([tmp_path / "fj"], "graph_*")


def test_an_nsight_export_states_its_rank_in_its_environment(tmp_path):
    paths = forkjoin_ranks(tmp_path, 2)
    for rank, path in enumerate(paths):
        with sqlite3.connect(path) as db:
            db.execute("UPDATE META_DATA_CAPTURE SET value = ? WHERE rowid = (SELECT min(rowid) FROM "
                       "META_DATA_CAPTURE WHERE name = 'PROCESS_0:ENVIRONMENT_VARIABLE')", (f"RANK={1 - rank}",))
            db.execute("UPDATE META_DATA_CAPTURE SET value = 'WORLD_SIZE=2' WHERE rowid = (SELECT max(rowid) FROM "
                       "META_DATA_CAPTURE WHERE name = 'PROCESS_0:ENVIRONMENT_VARIABLE')")  # fmt: skip
        path.rename(tmp_path / f"node{rank}.sqlite")
    job = serial_job([tmp_path], "graph_*")
    assert [(r["rank"], Path(r["path"]).name) for r in job["ranks"]] == [(0, "node1.sqlite"), (1, "node0.sqlite")]
    assert job["world_size"] == 2


@pytest.mark.parametrize(
    ("edit", "message"),
    [({"world_size": 4}, r"^not one job: world size 2 \(rank0.pt.trace.json\); world size 4 \(rank1.pt.trace.json\)$"),
     ({"rank": 0}, r"^rank0.pt.trace.json, rank1.pt.trace.json: both are rank 0: not one job$"),
     ({"pg_config": "job-2"}, r"^not one job: process group 'job-1' \(rank0.*; process group 'job-2' \(rank1"),
     ({"rank": 5}, r"^rank1.pt.trace.json: rank 5 of world size 2$"),
     ({"world_size": 1_000_000_000}, rf"/rank1.pt.trace.json: world size '1000000000' is not a job's \(1 to "
                                     rf"{MAX_WORLD_SIZE:,} ranks\)$")],
)  # fmt: skip
def test_files_that_cannot_be_one_job_are_refused_naming_them(tmp_path, edit, message):
    paths = write_rank_set(tmp_path, world=2, steps=4)
    _edit(paths[1], **edit)
    with pytest.raises(BadInputError, match=message):
        serial_job([tmp_path])


def test_exports_far_apart_in_time_are_refused(tmp_path):
    paths = forkjoin_ranks(tmp_path, 3)
    with sqlite3.connect(paths[2]) as db:  # the same program recorded a day later
        db.execute("UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = utcEpochNs + 86400000000000")
    with pytest.raises(BadInputError, match=r"^rank\d.sqlite, rank2.sqlite: their events lie 24.0 hours apart"):
        serial_job([tmp_path], "graph_*")


def test_an_absurd_world_size_is_refused_in_one_line_without_a_set_per_rank(tmp_path):
    paths = write_rank_set(tmp_path, world=2, steps=2)
    for path in paths:
        _edit(path, world_size=1_000_000_000)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "graphscope", "summary", str(tmp_path), "--workers", "1"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)  # fmt: skip
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
    assert done.stderr.startswith("graphscope: error: ") and "world size '1000000000' is not a job's" in done.stderr
    assert time.perf_counter() - started < 60
    # the largest world allowed is counted, never enumerated: its missing ranks are a count and the first few
    missing = _missing([{"rank": 0}, {"rank": 5}], MAX_WORLD_SIZE)
    assert missing == {"missing_ranks": [1, 2, 3, 4, *range(6, 66)], "missing_count": MAX_WORLD_SIZE - 2}


def test_the_default_process_group_identifies_the_job():
    said = "[{'pg_name': '0', 'pg_desc': 'default_pg', 'pg_size': 2, 'ranks': [0, 1]}, {'pg_name': '1', 'ranks': [1]}]"
    other = "[{'pg_name': '0', 'pg_desc': 'default_pg', 'pg_size': 2, 'ranks': [0, 1]}, {'pg_name': '1', 'ranks': [0]}]"
    assert group_of({"pg_config": said}) == group_of({"pg_config": other})  # subgroups differ between ranks
    assert group_of({"backend": "nccl"}) == "nccl" and group_of({}) is None


def test_a_folder_where_no_rank_can_be_read_is_one_line(tmp_path, capsys, monkeypatch):
    from graphscope.cli import main
    from graphscope.ranks import job as rank_job

    monkeypatch.setattr(rank_job, "analyse_job", lambda items, *rest, **kw: rank_job.analyse_serially(items))
    for rank in range(3):
        (tmp_path / f"rank{rank}.json").write_bytes(b"")
    for command in (["summary", str(tmp_path)], ["report", str(tmp_path), "-o", str(tmp_path.parent / "r.md")]):
        assert main(command) == 2  # was exit 2 with nothing on stderr
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1
        assert err.startswith("graphscope: error: no rank could be analysed: ") and "(and 2 more)" in err
