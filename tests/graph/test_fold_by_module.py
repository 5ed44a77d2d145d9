"""Dag.fold by module: consecutive nodes one nn.Module made become one box (graph/model.py)."""

from __future__ import annotations

from graphscope.graph.model import Dag, DagNode


def _dag(names: list[str], streams: list[int] | None = None) -> Dag:
    streams = streams or [7] * len(names)
    nodes = [DagNode(i, "kernel", name, duration_ns=10.0 * (i + 1), launches=2, stream=s)
             for i, (name, s) in enumerate(zip(names, streams, strict=True))]
    return Dag(nodes, [], "trace", edges_known=False)


def test_consecutive_nodes_of_one_module_fold_whatever_their_kernels():
    dag = _dag(["gemm", "bias", "gelu", "gemm", "add", "norm"])
    modules = ["mlp.fc1", "mlp.fc1", "mlp.act", "mlp.fc2", "mlp.fc2", None]
    groups = dag.fold(modules=modules)
    assert [(g.members, g.module) for g in groups] == [
        ([0, 1], "mlp.fc1"),
        ([2], None),  # one node of a module is a box of its own, its kernel's name
        ([3, 4], "mlp.fc2"),
        ([5], None),
    ]
    assert groups[0].label == "mlp.fc1 · 2 nodes" and groups[1].label == "gelu"
    assert groups[2].time_ns == 2 * (40.0 + 50.0)  # every launch of both members
    assert [g.members for g in dag.fold()] == [[i] for i in range(6)]  # without modules: as before


def test_a_module_run_stops_at_another_module_a_stream_change_or_an_unknown_node():
    dag = _dag(["a", "b", "c", "d", "e", "f"], streams=[7, 7, 9, 9, 9, 9])
    modules = ["m", "m", "m", None, "m", "n"]
    assert [(g.members, g.module) for g in dag.fold(modules=modules)] == [
        ([0, 1], "m"),
        ([2], None),
        ([3], None),
        ([4], None),
        ([5], None),
    ]


def test_unattributed_identical_nodes_still_fold_by_count_but_not_into_a_module_s_nodes():
    dag = _dag(["vec_add"] * 6)
    modules = [None, None, None, None, "m", "m"]
    groups = dag.fold(modules=modules)
    assert [(g.members, g.module) for g in groups] == [([0, 1, 2, 3], None), ([4, 5], "m")]
    assert groups[0].label == "vec_add x4"
