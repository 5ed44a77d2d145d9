"""The live DAG and in-place tuning on a real GPU."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from graphscope.core.launch_config import LaunchConfig
from graphscope.core.settings import find_nsys
from graphscope.graph.model import Dag
from graphscope.workload.session import WorkloadSession

pytestmark = pytest.mark.gpu
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DATA = Path(__file__).resolve().parents[1] / "data"


def test_the_seed_graph_is_a_chain_of_a_thousand_tunable_kernels():
    with WorkloadSession(EXAMPLES / "seed_vecadd.py") as session:
        dag = Dag.from_json(session.request("dag"))
    assert len(dag.nodes) == 1000 and len(dag.edges) == 999 and dag.chains() == [list(range(1000))]
    assert all(n.type == "kernel" and n.name == "vec_add" for n in dag.nodes)
    assert [n.site for n in dag.nodes[:2]] == ["add#0", "add#1"] and dag.nodes[0].block == (256, 1, 1)
    if dag.graph_id is not None:
        assert dag.nodes[7].trace_id == (dag.graph_id << 32) | 7


def test_the_forkjoin_graph_matches_cupys_own_dump():
    with WorkloadSession(EXAMPLES / "forkjoin.py") as session:
        dag = Dag.from_json(session.request("dag"))
    dot = (DATA / "h200_forkjoin.dot").read_text()
    expected_edges = {tuple(map(int, e)) for e in re.findall(r'graph_1_node_(\d+)" -> "graph_1_node_(\d+)', dot)}
    assert [n.type for n in dag.nodes[:2]] == ["memcpy", "memset"] and len(dag.nodes) == 8
    assert set(dag.edges) == expected_edges
    assert {n.site for n in dag.kernel_nodes()} == {
        "scale_a#0",
        "relu_a#0",
        "scale_b#0",
        "relu_b#0",
        "add2#0",
        "rowsum#0",
    }


def test_applying_a_block_in_place_keeps_outputs_and_costs_far_less_than_a_capture():
    with WorkloadSession(EXAMPLES / "seed_vecadd.py") as session:
        capture = session.request("capture", config=None)
        before = session.request("measure", mode="graph", reps=10, warmup=2)
        applied = session.request("apply", config=LaunchConfig({"add": (128, 1, 1)}).to_json())
        after = session.request("measure", mode="graph", reps=10, warmup=2)
        dag = Dag.from_json(session.request("dag"))
    rebuild = capture["capture_ns"] + capture["instantiate_ns"] + capture["upload_ns"]
    print(
        f"apply 1000 nodes: {applied['apply_ns'] / 1e6:.2f} ms; capture+instantiate+upload {rebuild / 1e6:.2f} ms; "
        f"replay before {np.median(before['gpu_ns']) / 1e6:.3f} ms, after {np.median(after['gpu_ns']) / 1e6:.3f} ms"
    )
    assert applied["applied"] == 1000 and not applied["rejected"]
    assert after["outputs"]["match"] and {n.block for n in dag.nodes} == {(128, 1, 1)}
    assert {n.grid for n in dag.nodes} == {(128, 1, 1)}
    assert applied["apply_ns"] < rebuild


def test_a_block_beyond_the_kernels_limit_is_rejected_not_applied():
    with WorkloadSession(EXAMPLES / "seed_vecadd.py") as session:
        applied = session.request("apply", config=LaunchConfig({"add#5": (2048, 1, 1)}).to_json())
    assert applied["applied"] == 0 and "exceed" in applied["rejected"]["add#5"]


@pytest.mark.skipif(find_nsys() is None, reason="nsys is not installed")
def test_a_tuned_nodes_block_appears_in_the_trace_of_the_tuned_graph(tmp_path):
    from graphscope.trace import load_trace
    from graphscope.workload.nsys import profile_requests

    path = (EXAMPLES / "seed_vecadd.py").resolve()
    requests = [
        {"command": "load", "path": str(path), "config": None},
        {"command": "measure", "mode": "graph", "reps": 1, "warmup": 0},
        {"command": "apply", "config": LaunchConfig({"add#7": (64, 1, 1)}).to_json()},
        {"command": "measure", "mode": "graph", "reps": 2, "warmup": 0, "nvtx": True},
    ]
    files = profile_requests(requests, tmp_path, "tuned", timeout=300)
    trace = load_trace(files["sqlite"])
    kernels = trace.kernels
    nodes = kernels.graph_node >= 0
    index = kernels.graph_node & 0xFFFFFFFF
    tuned = nodes & (index == 7)
    assert set(kernels.block_x[tuned].tolist()) >= {64}  # after the edit
    assert set(kernels.block_x[nodes & (index == 8)].tolist()) == {256}  # its neighbour untouched
    assert set(kernels.grid_x[tuned & (kernels.block_x == 64)].tolist()) == {256}
