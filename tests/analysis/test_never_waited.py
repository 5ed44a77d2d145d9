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
    wall = gpu["busy_ns"] + gpu["idle_ns"]
    waited, queued = gpu["host_wait_idle_ns"] / wall, gpu["other_idle_ns"] / wall  # the GPU table, a second way
    assert waited < GPU_BOUND_HOST_WAIT and queued > QUEUED_IDLE_SHARE
    launch = summary["launch"]
    assert launch["launch_bound"] is False
    assert launch["judged"]["label"] == "GPU idle waiting for the CPU"
    assert abs(launch["judged"]["value"] - waited) < 1e-6
    verdict = launch["verdict"]
    assert verdict.startswith("not launch-bound: the GPU never waited for the CPU")
    assert f"idle {queued:.0%} of its time with work queued" in verdict
    assert "shorten the GPU work" not in verdict and "GPU-bound" not in verdict
