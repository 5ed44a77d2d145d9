"""Conditional nodes on a real GPU: a WHILE decode loop, IF/ELSE and SWITCH built by ctx, read back live."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphscope.graph.conditional import walk
from graphscope.graph.model import Dag
from graphscope.workload.session import WorkloadSession

pytestmark = pytest.mark.gpu
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

BRANCHES = r'''
import numpy as np

STATE = {}
SOURCE = r"""
extern "C" __global__ void add(float* x, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += v;
}
"""


def setup(ctx):
    cp = ctx.cupy
    add = ctx.kernel(SOURCE, "add")
    x = STATE["x"] = cp.zeros(1024, dtype=cp.float32)
    yes = cp.ones(1, dtype=cp.int32)
    no = cp.zeros(1, dtype=cp.int32)
    case = cp.full(1, 2, dtype=cp.int32)
    n = np.int32(1024)
    ctx.outputs(x=x)

    def plus(v):
        return lambda ctx: ctx.launch(add, problem=1024, args=(x, np.float32(v), n), name=f"add{v}")

    def step(ctx):
        ctx.if_else(plus(1), yes, plus(10), name="taken")
        ctx.if_else(plus(100), no, plus(1000), name="other")
        ctx.switch([plus(2), plus(20), plus(200)], case, name="pick")

    return step


def reset(ctx):
    STATE["x"].fill(0)
'''


def test_the_decode_loop_runs_on_the_device_as_often_as_on_the_host_with_the_same_outputs():
    with WorkloadSession(EXAMPLES / "while_decode.py") as session:
        eager = session.request("measure", mode="eager", reps=5, warmup=1)
        graph = session.request("measure", mode="graph", reps=8, warmup=2)
        knobs = {site["key"] for site in session.info["sites"]}
    assert knobs == {"prefill#0", "finish#0"}  # the body's sites are not offered for in-place tuning
    assert graph["outputs"]["match"] and graph["outputs"]["exact"]
    assert eager["conditionals"]["decode#0"]["runs_per_step"] == [12] * 5  # LENGTH tokens per request
    loop = graph["conditionals"]["decode#0"]
    assert loop["runs_per_step"] == [12] * 8 and loop["kind"] == "while" and loop["limit"] == 64
    # one iteration (the loop capped through its counters) costs less than twelve, and the split adds up
    assert 0 < loop["one_iteration_median_ns"] < sorted(graph["gpu_ns"])[4]
    assert loop["per_iteration_ns"] > 0
    print(
        f"WHILE decode: {loop['runs_median']:g} iterations/launch, {loop['per_iteration_ns'] / 1e3:.2f} us per "
        f"iteration, fixed {loop['fixed_ns'] / 1e3:.2f} us; graph step median "
        f"{sorted(graph['gpu_ns'])[4] / 1e3:.1f} us, eager {sorted(eager['gpu_ns'])[2] / 1e3:.1f} us"
    )


def test_the_live_dag_holds_the_while_node_with_its_body_graph():
    with WorkloadSession(EXAMPLES / "while_decode.py") as session:
        dag = Dag.from_json(session.request("dag"))
    names = [n.name for n in dag.nodes]
    assert names[0] == "prefill" and names[-1] == "finish", names
    (node,) = [n for n in dag.nodes if n.type == "conditional"]
    info = node.detail["conditional"]
    assert info["kind"] == "while" and info["bodies"] == 1 and info["key"] == "decode#0"
    assert info["runs_median"] == 12
    (body,) = node.bodies
    assert [n.name for n in body.nodes] == ["mix", "scale", "pick", "graphscope_loop_next"]
    assert body.chains() == [[0, 1, 2, 3]]
    assert [n.site for n in body.nodes[:3]] == ["mix#0", "scale#0", "pick#0"]
    assert {n.site for n in dag.kernel_nodes() if n.site} == {"prefill#0", "finish#0"}
    # the conditional node sits between the condition kernel and finish
    position = dag.nodes.index(node)
    assert (position, names.index("finish")) in dag.edges


def test_if_else_and_switch_nodes_run_the_chosen_bodies_and_read_back(tmp_path):
    workload = tmp_path / "branches.py"
    workload.write_text(BRANCHES)
    with WorkloadSession(workload) as session:
        graph = session.request("measure", mode="graph", reps=3, warmup=1)
        dag = Dag.from_json(session.request("dag"))
    assert graph["outputs"]["match"] and graph["outputs"]["exact"]
    kinds = {n.detail["conditional"]["key"]: n for n in walk(dag) if n.type == "conditional"}
    assert set(kinds) == {"taken#0", "other#0", "pick#0"}
    assert [len(kinds[k].bodies) for k in ("taken#0", "other#0", "pick#0")] == [2, 2, 3]
    assert kinds["pick#0"].detail["conditional"]["kind"] == "switch"
    then, otherwise = kinds["taken#0"].bodies
    assert (then.nodes[0].site, otherwise.nodes[0].site) == ("add1#0", "add10#0")
    assert graph["conditionals"]["taken#0"]["runs_per_step"] == [1, 1, 1]
