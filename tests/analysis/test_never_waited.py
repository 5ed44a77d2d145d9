"""A GPU that never waited for the CPU is never judged launch-bound; it is GPU-bound only while mostly busy.
Mostly idle with its work queued (HTA's 16-rank trace: 35.6% busy, 1.2% waiting for the CPU), it waited on
something else, and the verdict must not say "shorten the GPU work" beside a GPU idle most of its time."""

from __future__ import annotations

from graphscope.analysis.summary import summarize
from graphscope.core.rules import GPU_BOUND_HOST_WAIT, QUEUED_IDLE_SHARE
from graphscope.trace import load_trace
from tests.conftest import DATA

RANK0 = DATA / "kineto" / "hta__rank0_of_16_graph_launches.json.gz"


def test_a_mostly_idle_gpu_that_never_waited_for_the_cpu_is_told_to_look_at_what_it_waited_on():
    summary = summarize(load_trace(RANK0), whole=True)
    (gpu,) = summary["gpu"]
    active = gpu["active_ns"]  # the GPU table, a second way: from its first work to its last
    waited = gpu["active_host_wait_ns"] / active
    queued = (active - gpu["busy_ns"] - gpu["active_host_wait_ns"]) / active
    assert waited < GPU_BOUND_HOST_WAIT and queued > QUEUED_IDLE_SHARE
    launch = summary["launch"]
    assert launch["launch_bound"] is False
    assert launch["judged"]["label"] == "GPU idle waiting for the CPU"
    assert abs(launch["judged"]["value"] - waited) < 1e-6
    verdict = launch["verdict"]
    assert verdict.startswith("not launch-bound: the GPU never waited for the CPU")
    assert f"idle {queued:.0%} of that time with work queued" in verdict
    assert "shorten the GPU work" not in verdict and "GPU-bound" not in verdict


def test_start_up_before_the_first_gpu_work_is_not_waiting_a_graph_could_remove():
    """Lianhang's T4 export: 812 ms of start-up before its first kernel, then 19.3 ms of work 95% busy. The
    GPU-bound rule judges the time from the first work to the last, not the start-up (checked by SQL)."""
    import sqlite3

    path = DATA / "Lianhang666__gpu4__report2.sqlite"
    summary = summarize(load_trace(path), whole=True)
    (gpu,) = summary["gpu"]
    with sqlite3.connect(path) as conn:
        (first, last), = conn.execute(
            "SELECT MIN(s), MAX(e) FROM (SELECT start s, end e FROM CUPTI_ACTIVITY_KIND_KERNEL "
            "UNION ALL SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY)"
        ).fetchall()
    conn.close()
    assert gpu["active_ns"] == last - first
    assert gpu["utilization"] < 0.05 and gpu["busy_ns"] / gpu["active_ns"] > 0.9
    launch = summary["launch"]
    assert launch["verdict"].startswith("GPU-bound: the GPU never waited for the CPU")
    assert launch["judged"]["value"] == round(gpu["active_host_wait_ns"] / gpu["active_ns"], 6)


def test_a_profiler_that_traced_each_replayed_kernel_cannot_judge_graph_launch_calls():
    """torch.profiler recorded every node of the seed's replays (its graph launch calls took 1.5 ms each,
    CUPTI's cost): the verdict must not tell the user the CPU bounds the step."""
    summary = summarize(load_trace(DATA / "kineto" / "h200_seed_vecadd_graph_profile_torch.json.gz"), whole=True)
    verdict = summary["launch"]["verdict"]
    assert summary["graphs"]["node_activities"] > 0 and summary["launch"]["launch_bound"] is None
    assert "cannot judge them" in verdict and "the CPU still bounds the step" not in verdict
