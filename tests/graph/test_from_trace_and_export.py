from __future__ import annotations

import re

from graphscope.analysis.graphs import node_durations
from graphscope.graph.export import to_dot
from graphscope.graph.from_trace import dags_from_trace
from graphscope.graph.model import Dag, DagNode
from graphscope.trace import load_trace
from tests.conftest import DATA, FORKJOIN, H200_NODE


def _dags(path):
    trace = load_trace(path)
    created = trace.graph_nodes.node[trace.graph_nodes.original_node >= 0]
    return dags_from_trace(node_durations(trace), trace.symbols, created)


def test_forkjoin_trace_gives_the_eight_executed_nodes_plus_the_idle_ones():
    (dag,) = _dags(FORKJOIN)
    assert dag.graph_id == 2 and not dag.edges_known and dag.edges == []
    executed = [n for n in dag.nodes if n.type != "other"]
    assert [n.name for n in executed] == ["memcpy DtoD", "memset", "scale", "relu", "scale", "relu", "add2", "rowsum"]
    assert all(n.launches == 5 and n.duration_ns > 0 for n in executed)
    assert {n.stream for n in executed} == {13, 16}
    dot = (DATA / "h200_forkjoin.dot").read_text()
    assert len(executed) == len(re.findall(r"graph_1_node_\d+\"\[", dot))  # as many as CuPy's own dump shows


def test_seed_trace_gives_a_thousand_vec_add_nodes():
    (dag,) = _dags(H200_NODE)
    assert len(dag.kernel_nodes()) == 1000 and {n.name for n in dag.kernel_nodes()} == {"vec_add"}


def test_dot_folds_long_chains_of_identical_nodes():
    nodes = [DagNode(i, "kernel", "vec_add", grid=(64, 1, 1), block=(256, 1, 1), site=f"add#{i}") for i in range(1000)]
    dag = Dag(nodes, [(i, i + 1) for i in range(999)], "live")
    dot = to_dot(dag)
    assert "x1000 in a chain" in dot and dot.count("->") == 0 and dot.count("shape=box") == 1
    assert to_dot(dag, fold=False).count("->") == 999


def test_every_face_folds_a_trace_dag_alike_with_the_median_of_its_nodes():
    from graphscope.report.svg import dag as svg_dag
    from graphscope.text.tune import render_dag

    (dag,) = _dags(H200_NODE)  # 1000 vec_add nodes, edges unknown: folded in capture order
    durations = sorted(n.duration_ns for n in dag.nodes)
    median = (durations[499] + durations[500]) / 2
    (box,) = dag.fold()
    assert len(box) == 1000 and box.median_ns == median and box.median_ns != dag.nodes[0].duration_ns
    assert to_dot(dag).count("shape=box") == 1 and "x1000 in capture order" in to_dot(dag)
    text = render_dag(dag, "trace")
    assert len(text.splitlines()) == 4 and text.splitlines()[-1].split()[0] == "0-999" and "1.06 us median" in text
    assert svg_dag(dag, "nodes").count("<rect") == 1 and "vec_add x1000" in svg_dag(dag, "nodes")


def test_nodes_on_other_streams_break_a_fold():
    nodes = [
        DagNode(i, "kernel", "k", grid=(1, 1, 1), block=(32, 1, 1), stream=13 if i != 5 else 16) for i in range(10)
    ]
    groups = Dag(nodes, [], "trace", edges_known=False).fold()
    assert [len(g) for g in groups] == [5, 1, 4]


def test_copy_and_memset_nodes_of_a_trace_dag_carry_bytes_and_direction():
    """Checked against plain SQL: forkjoin's memcpy node moved 2 MiB device to device (copyKind 8), its
    memset node 2,048 bytes."""
    import sqlite3

    from graphscope.analysis.graphs import node_activities
    from graphscope.export.dags import trace_dags
    from graphscope.trace import load_trace
    from tests.conftest import DATA

    path = DATA / "h200_forkjoin_node.sqlite"
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        copy = db.execute(
            "SELECT DISTINCT bytes, copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE graphNodeId IS NOT NULL"
        ).fetchall()
        memset = db.execute(
            "SELECT DISTINCT bytes FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE graphNodeId IS NOT NULL"
        ).fetchall()
    assert copy == [(2097152, 8)] and memset == [(2048,)]
    trace = load_trace(path)
    (dag,) = trace_dags(trace, node_activities(trace))
    by_type = {n.type: n for n in dag.nodes if n.type != "kernel"}
    assert by_type["memcpy"].name == "memcpy DtoD"
    assert by_type["memcpy"].detail == {"bytes": 2097152, "direction": "DtoD"}
    assert by_type["memset"].detail == {"bytes": 2048}
