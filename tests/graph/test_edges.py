"""Edge kinds (default / programmatic, their ports) in the Dag model, its JSON, DOT and text, and PDL judged
per edge, on DAGs built by hand (the GPU tests check the same on a captured chain)."""

from __future__ import annotations

import json
import types

import numpy as np
import pytest

from graphscope.core.colours import PDL_EDGE_RGB, hex_of
from graphscope.core.edge_kinds import (
    PDL_NO_DEVICE_SYNC,
    PDL_NO_EFFECT,
    PDL_OVERLAP,
    PDL_SHORTER,
    PDL_UNMEASURED,
    EdgeKind,
    Port,
    kind_word,
    port_word,
)
from graphscope.core.events import node_id
from graphscope.graph.edges import EdgeKinds, edge_gaps, judge_pdl, kinds_of, read_edges
from graphscope.graph.export import to_dot
from graphscope.graph.model import Dag, DagNode
from graphscope.text.tune import render_dag

PDL = (EdgeKind.PROGRAMMATIC, Port.PROGRAMMATIC, Port.DEFAULT)
PLAIN = (EdgeKind.DEFAULT, Port.DEFAULT, Port.DEFAULT)


def chain(kinds, names=None, graph=7):
    """A chain of len(kinds) + 1 kernel nodes whose i-th edge has kinds[i]."""
    count = len(kinds) + 1
    names = names or [f"k{i}" for i in range(count)]
    nodes = [
        DagNode(i, "kernel", names[i], grid=(16, 1, 1), block=(256, 1, 1), trace_id=node_id(graph, i))
        for i in range(count)
    ]
    return Dag(nodes, [(i, i + 1) for i in range(count - 1)], "live", True, graph, [], EdgeKinds.of(list(kinds)))


def test_edge_kinds_survive_json_and_an_older_json_reads_as_default():
    dag = chain([PLAIN, PDL, PDL])
    data = json.loads(json.dumps(dag.to_json()))
    assert data["edge_kinds"]["kind"] == ["default", "programmatic", "programmatic"]
    assert data["edge_kinds"]["from_port"] == ["default", "programmatic", "programmatic"]
    back = Dag.from_json(data)
    assert back.edge_kinds.kind.tolist() == [0, 1, 1] and back.edge_kinds.from_port.tolist() == [0, 1, 1]
    del data["edge_kinds"]
    older = Dag.from_json(data)
    assert older.edge_kinds is None and kinds_of(older).kind.tolist() == [0, 0, 0]


def test_unknown_codes_from_a_newer_driver_are_named_not_dropped():
    assert kind_word(1) == "programmatic" and kind_word(9) == "type 9"
    assert port_word(2) == "launch order" and port_word(5) == "port 5"
    dag = chain([(9, 5, 0)])
    assert Dag.from_json(json.loads(json.dumps(dag.to_json()))).edge_kinds.kind.tolist() == [9]


class FakeDriver:
    """cuGraphGetEdges as cuda.bindings answers it: (error, from, to, edge data, count)."""

    def __init__(self, edges, data):
        self.edges, self.data = edges, data

    def cuGraphGetEdges(self, graph, count):
        if count == 0:
            return (0, None, None, None, len(self.edges))
        data = (
            None
            if self.data is None
            else [types.SimpleNamespace(type=t, from_port=f, to_port=p) for t, f, p in self.data]
        )
        return (0, [a for a, _ in self.edges], [b for _, b in self.edges], data, len(self.edges))


def test_read_edges_maps_handles_to_positions_with_each_edges_data():
    position = {100: 0, 200: 1, 300: 2}
    edges, kinds = read_edges(FakeDriver([(100, 200), (200, 300)], [(0, 0, 0), (1, 1, 0)]), None, position)
    assert edges == [(0, 1), (1, 2)] and kinds.kind.tolist() == [0, 1] and kinds.from_port.tolist() == [0, 1]
    edges, kinds = read_edges(FakeDriver([(100, 200)], None), None, position)  # a binding without edge data
    assert edges == [(0, 1)] and kinds.kind.tolist() == [0]


def test_an_error_from_the_driver_is_raised_with_its_name():
    class Error(int):
        name = "CUDA_ERROR_LOSSY_QUERY"

    failing = types.SimpleNamespace(cuGraphGetEdges=lambda graph, count: (Error(402), None, None, None, 0))
    with pytest.raises(RuntimeError, match="LOSSY_QUERY"):
        read_edges(failing, None, {})


def trace_of(dag, gaps_per_edge, duration=2000.0, replays=5, seed=1):
    """Node activities of `replays` replays of a chain whose edge i has gap gaps_per_edge[i] (+ noise),
    returned shuffled: (ids, starts, ends)."""
    rng = np.random.default_rng(seed)
    ids, starts, ends = [], [], []
    for replay in range(replays):
        t = replay * 1e6
        for i, node in enumerate(dag.nodes):
            if i:
                t += gaps_per_edge[i - 1] + rng.normal(0, 5)
            ids.append(node.trace_id)
            starts.append(t)
            ends.append(t + duration)
            t += duration
    order = rng.permutation(len(ids))
    return np.array(ids)[order], np.array(starts)[order], np.array(ends)[order]


def test_gaps_pair_each_replays_executions_as_a_plain_loop_does():
    dag = chain([PLAIN, PDL, PDL, PLAIN])
    ids, starts, ends = trace_of(dag, [800, 400, -300, 800])
    gaps = edge_gaps(dag, ids, starts, ends)
    for position, (a, b) in enumerate(dag.edges):  # the second way: replay by replay, in time order
        a_ends = sorted(e for i, e in zip(ids, ends) if i == dag.nodes[a].trace_id)
        b_starts = sorted(s for i, s in zip(ids, starts) if i == dag.nodes[b].trace_id)
        assert np.allclose(gaps[position], np.array(b_starts) - np.array(a_ends))
    assert abs(np.median(gaps[2]) + 300) < 20


def test_verdicts_overlap_shorter_no_effect_and_unmeasured():
    dag = chain([PLAIN, PDL, PDL, PDL, PLAIN, PDL])
    ids, starts, ends = trace_of(dag, [800, 400, -300, 800, 800, 0], replays=40)
    gaps = edge_gaps(dag, ids, starts, ends, positions=[0, 1, 2, 3, 4])  # edge 5 not in the trace
    judged = judge_pdl(dag, gaps)
    assert judged[1]["verdict"] == PDL_SHORTER and judged[2]["verdict"] == PDL_OVERLAP
    assert judged[3]["verdict"] == PDL_NO_EFFECT and judged[5]["verdict"] == PDL_UNMEASURED
    low, high = judged[1]["plain_gap_ci_ns"]
    assert low <= 800 <= high and judged[1]["ports"] == "programmatic -> default"
    assert set(judged) == {1, 2, 3, 5} and dag.edge_kinds.measured is judged


def test_replay_timing_judges_an_edge_the_trace_did_not_and_code_without_griddepcontrol_is_named():
    dag = chain([PDL, PDL, PDL])
    for node, (wait, trigger) in zip(dag.nodes, [(True, True), (True, True), (False, False), (False, False)]):
        node.detail["griddep"] = {"wait": wait, "trigger": trigger, "how": "sass"}
    replays = {
        0: {"saving_ns": 400.0, "ci_low_ns": 350.0, "ci_high_ns": 450.0},
        1: {"saving_ns": 390.0, "ci_low_ns": 340.0, "ci_high_ns": 440.0},
        2: {"saving_ns": 5.0, "ci_low_ns": -30.0, "ci_high_ns": 40.0},
    }
    dag.nodes[3].detail["griddep"] = {"wait": False, "trigger": False, "how": "sass"}
    dag.nodes.append(DagNode(4, "kernel", "k4", detail={"griddep": {"wait": False, "trigger": False}}))
    dag.edges.append((3, 4))
    dag.edge_kinds = EdgeKinds.of([PDL] * 4)
    replays[3] = {"saving_ns": 300.0, "ci_low_ns": 250.0, "ci_high_ns": 350.0}
    judged = judge_pdl(dag, replays=replays)
    assert judged[3]["verdict"] == PDL_SHORTER and judged[3]["verdicts"] == [PDL_SHORTER, PDL_NO_DEVICE_SYNC]
    assert "shorter gap; no device-side wait/trigger" in render_dag(dag, "x")
    assert judged[0]["verdict"] == PDL_SHORTER
    assert judged[1]["verdict"] == PDL_SHORTER and judged[1]["griddep"] == {"from_triggers": True, "to_waits": False}
    assert judged[2]["verdict"] == PDL_NO_DEVICE_SYNC  # neither waits nor triggers, and no time saved


def test_dot_draws_programmatic_edges_dashed_in_their_colour_with_the_verdict():
    dag = chain([PLAIN, PDL])
    judge_pdl(dag, replays={1: {"saving_ns": 1.0, "ci_low_ns": -5.0, "ci_high_ns": 6.0}})
    dot = to_dot(dag)
    assert "n0 -> n1;" in dot
    assert f'n1 -> n2 [style=dashed, color="{hex_of(PDL_EDGE_RGB)}"' in dot and 'label="PDL: no effect"' in dot


def test_a_fold_says_how_many_programmatic_edges_it_hides():
    dag = chain([PDL] * 9, names=["same"] * 10)
    dot = to_dot(dag)
    assert "x10 in a chain" in dot and "9 programmatic edges inside" in dot


def test_dag_text_counts_programmatic_edges_and_lists_each_with_its_verdict():
    dag = chain([PLAIN, PDL, PLAIN])
    ids, starts, ends = trace_of(dag, [800, -200, 800], replays=20)
    judge_pdl(dag, edge_gaps(dag, ids, starts, ends))
    text = render_dag(dag, "live capture of w.py")
    assert "3 edges (1 programmatic)" in text.splitlines()[0]
    row = next(line for line in text.splitlines() if line.strip().startswith("1 -> 2"))
    assert "programmatic -> default" in row and PDL_OVERLAP in row
    assert "a plain kernel edge's gap here: 800 ns" in text
    assert "programmatic" not in render_dag(chain([PLAIN]), "x")
