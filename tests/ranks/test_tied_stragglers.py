"""Ranks that hold the job back in as many steps as each other are all named by the job verdict (HTA's
sampled ranks 0 and 1, one late step each, read "rank 1 holds the job back in 1 of 2 steps", as if rank 1
alone were the straggler), each with what held it, as the step table says."""

from __future__ import annotations

from collections import Counter

from graphscope.ranks.job import analyse_serially
from tests.synthetic_ranks import write_rank_set

LATE = ("GPU work", "host (CPU)")


def test_ranks_that_hold_the_job_back_equally_often_are_all_named(tmp_path):
    write_rank_set(tmp_path, world=4, steps=8, slow_host={(3, 2): 400_000}, slow_gpu={(1, 5): 500_000})
    job = analyse_serially([tmp_path])
    late = [s for s in job["steps"] if s["held_by"] in LATE]
    assert Counter(s["straggler"] for s in late) == {1: 1, 3: 1}  # the step table, read a second way
    causes = {s["straggler"]: s["held_by"] for s in late}
    assert causes == {1: "GPU work", 3: "host (CPU)"}
    assert job["verdict"].startswith(
        "ranks 1 and 3 each hold the job back in 1 of 8 steps (rank 1: GPU work, rank 3: host (CPU));"
    )


def test_one_rank_late_most_often_is_named_alone(tmp_path):
    write_rank_set(tmp_path, world=4, steps=8, slow_host={(3, 2): 400_000, (3, 6): 300_000}, slow_gpu={(1, 5): 500_000})
    job = analyse_serially([tmp_path])
    assert job["verdict"].startswith("rank 3 holds the job back in 2 of 8 steps (mostly host (CPU));")
