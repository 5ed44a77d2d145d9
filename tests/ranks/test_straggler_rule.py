"""The straggler rule at any rank count: a planted late rank is found at 2, 3, 4 and 64 ranks (the
four-MAD rule could never flag it at 2), in exactly the steps it was planted in, and ranks of plain
jitter, or identical ranks, raise no alarm. Each job is read by the workers' own reader, without Dask."""

from __future__ import annotations

import pytest

from graphscope.analysis.rank_skew import combine, jitter_z
from tests.ranks.helpers import forkjoin_ranks, serial_job
from tests.synthetic_ranks import write_rank_set


def late_steps(job):
    return {s["step"]: s["straggler"] for s in job["steps"] if s["held_by"] in ("GPU work", "host (CPU)")}


@pytest.mark.parametrize("world", [2, 3, 4, 64])
def test_a_planted_straggler_is_found_at_every_rank_count_and_plain_jitter_is_not(world, tmp_path):
    late = world - 1
    # a step is ~160 us; 60 us is a third of it, some 12 standard deviations of the two-rank gap's jitter
    plant = {(late, 3): 60_000, (late, 7): 5_000_000, (0, 11): 80_000}
    write_rank_set(tmp_path / "late", world=world, steps=14, slow_host=plant, seed=world)
    job = serial_job([tmp_path / "late"])
    assert late_steps(job) == {3: late, 7: late, 11: 0}
    steps = {s["step"]: s for s in job["steps"]}
    assert 48_000 < steps[3]["late_ns"] < 72_000 and steps[3]["held_by"] == "host (CPU)"
    assert 4_988_000 < steps[7]["late_ns"] < 5_012_000  # planted, give or take the jitter (sd ~5 us)
    assert all(s["threshold_ns"] >= int(max(2_000, 0.05 * s["median_step_ns"])) for s in job["steps"])
    write_rank_set(tmp_path / "plain", world=world, steps=14, seed=world + 100)
    plain = serial_job([tmp_path / "plain"])
    assert late_steps(plain) == {} and plain["verdict"].endswith("no straggler")


def test_with_two_ranks_a_rank_late_in_every_step_is_late_in_every_step(tmp_path):
    plant = {(1, step): 50_000 for step in range(14)}  # 30% of each step, 10 sd of the two ranks' gap
    write_rank_set(tmp_path, world=2, steps=14, slow_host=plant)
    job = serial_job([tmp_path])
    assert late_steps(job) == dict.fromkeys(range(14), 1)
    assert job["verdict"].startswith("rank 1 holds the job back in 14 of 14 steps") and "other rank" in job["verdict"]
    assert [r["straggler_steps"] for r in job["ranks"]] == [0, 14]


def test_identical_ranks_raise_no_alarm(tmp_path):
    forkjoin_ranks(tmp_path, 3)
    job = serial_job([tmp_path], "graph_*")
    assert len(job["steps"]) == 5 and late_steps(job) == {}
    assert all(s["late_ns"] == 0 and s["start_skew_ns"] == 0 for s in job["steps"])


def test_the_jitter_allowance_grows_with_the_rank_count():
    # the latest of n arrivals of plain jitter exceeds z(n) standard deviations in one step in 1,000
    assert [round(jitter_z(n), 2) for n in (2, 3, 4, 64)] == [3.29, 3.4, 3.48, 4.16]
    # estimated from 28 values (2 ranks x 14 steps) the deviation may be low: Student's t widens it
    assert round(jitter_z(2, 28), 2) == 4.47 and round(jitter_z(64, 64 * 14), 2) == 4.22


def test_two_ranks_with_fewer_than_three_steps_are_judged_by_the_floor_alone():
    def row(rank, arrive):
        return {"path": f"r{rank}", "rank": rank, "step_name": "s", "start": [0, 1000_000], "end": [100_000, 1100_000],
                "arrive": arrive, "compute_busy_ns": [50_000, 50_000], "host_ns": [0, 0], "comm_ns": [0, 0],
                "gpu_busy_ns": [50_000, 50_000]}  # fmt: skip

    job = combine([row(0, [80_000, 1_080_000]), row(1, [86_000, 1_084_000])])
    # the floor: 5% of the 100 us step = 5 us; 6 us late is late, 4 us is not
    assert [(s["straggler"], s["late_ns"], s["held_by"]) for s in job["steps"]] == [
        (1, 6_000, "host (CPU)"), (1, 4_000, "on time")]  # fmt: skip
