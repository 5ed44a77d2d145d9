from __future__ import annotations

from graphscope.graph.layout import longest_path_layers
from graphscope.graph.model import Dag, DagNode


def _forkjoin() -> Dag:
    # the shape of tests/data/h200_forkjoin.dot: memcpy -> memset -> two branches -> add2 -> rowsum
    names = ["memcpy", "memset", "scale", "relu", "scale", "relu", "add2", "rowsum"]
    types = ["memcpy", "memset"] + ["kernel"] * 6
    nodes = [DagNode(i, t, n) for i, (t, n) in enumerate(zip(types, names))]
    edges = [(0, 1), (1, 2), (1, 4), (2, 3), (3, 6), (4, 5), (5, 6), (6, 7)]
    return Dag(nodes, edges, "live")


def test_layers_put_each_node_after_all_its_parents():
    dag = _forkjoin()
    assert longest_path_layers(len(dag.nodes), dag.edges) == [0, 1, 2, 3, 2, 3, 4, 5]


def test_chains_fold_one_to_one_runs():
    chain = Dag([DagNode(i, "kernel", "add") for i in range(1000)], [(i, i + 1) for i in range(999)], "live")
    assert chain.chains() == [list(range(1000))]
    runs = _forkjoin().chains()
    assert sorted(map(len, runs)) == [2, 2, 2, 2] and sum(map(len, runs)) == 8


def test_json_round_trip():
    dag = _forkjoin()
    dag.nodes[2].block, dag.nodes[2].grid, dag.nodes[2].site = (256, 1, 1), (2048, 1, 1), "scale_a#0"
    assert Dag.from_json(dag.to_json()) == dag
