"""Conditional nodes in the DAG model, its text, JSON and DOT forms, and their reading from a live graph
(a stand-in for cuda.bindings: the 13.0 driver without cuGraphNodeGetParams, and a 13.2 one with it)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import types
from enum import Enum

import pytest

from graphscope.core.launch_config import Site
from graphscope.graph.conditional import attach_counts, body_kernel_names, facts, label, walk
from graphscope.graph.export import to_dot
from graphscope.graph.model import Dag, DagNode
from graphscope.text.tune import render_dag
from tests.graph.conditional_dags import branches_dag, decode_dag, while_node


def test_a_conditional_node_keeps_its_type_facts_and_nested_bodies_through_json():
    dag = branches_dag()
    again = Dag.from_json(dag.to_json())
    assert again.to_json() == dag.to_json()
    branch = again.nodes[1]
    assert [len(b.nodes) for b in branch.bodies] == [1, 2]
    switch = branch.bodies[1].nodes[0]
    assert switch.detail["conditional"]["kind"] == "switch" and [b.nodes[0].name for b in switch.bodies] == [
        "case0",
        "case1",
        "case2",
    ]
    assert "bodies" not in again.nodes[0].to_json()  # plain nodes' JSON is as before


def test_labels_name_the_type_and_say_what_is_known():
    dag = branches_dag()
    assert [label(n) for n in walk(dag) if n.type == "conditional"] == ["IF/ELSE", "SWITCH (3)", "CONDITIONAL"]
    node = while_node(runs_median=12.0, per_iteration_ns=5200.0)
    assert label(node) == "WHILE"
    assert facts(node) == "12 iterations per launch, 5.20 us per iteration, at most 64, default 0"
    assert facts(dag.nodes[3]) == "unread"


def test_identical_conditional_nodes_in_a_chain_are_never_folded():
    nodes = [while_node(i) for i in range(5)]
    dag = Dag(nodes, [(i, i + 1) for i in range(4)], "live")
    assert [len(f) for f in dag.fold()] == [1] * 5
    plain = Dag(
        [DagNode(i, "kernel", "k", (1, 1, 1), (1, 1, 1)) for i in range(5)], [(i, i + 1) for i in range(4)], "live"
    )
    assert [len(f) for f in plain.fold()] == [5]


def test_the_dag_text_shows_the_loop_with_its_facts_and_its_body_indented():
    text = render_dag(decode_dag(runs_median=12.0, per_iteration_ns=5200.0), "live capture")
    lines = text.splitlines()
    row = next(i for i, line in enumerate(lines) if "conditional" in line and "decode#0" in line)
    assert lines[row + 1].strip() == "WHILE: 12 iterations per launch, 5.20 us per iteration, at most 64, default 0"
    assert lines[row + 2].strip().startswith("body of WHILE decode#0: 4 nodes (4 kernel), 3 edges")
    body_rows = [line for line in lines[row + 3 :] if line.startswith("      ")]
    assert [line.split()[2] for line in body_rows[1:]] == ["mix", "scale", "pick", "graphscope_loop_next"]
    assert lines[-1].split()[2] == "finish"  # the top level goes on after the body


def test_nested_bodies_are_indented_once_per_level():
    text = render_dag(branches_dag(), "t")
    (case,) = [line for line in text.splitlines() if "case 1 of SWITCH (3) pick#0" in line]
    (else_body,) = [line for line in text.splitlines() if "else-body of IF/ELSE taken#0" in line]
    assert len(case) - len(case.lstrip()) == len(else_body) - len(else_body.lstrip()) + 4


def test_dot_puts_each_conditional_in_a_cluster_with_its_bodies():
    dot = to_dot(branches_dag())
    assert "subgraph cluster_n1 {" in dot and "subgraph cluster_n1_b0 {" in dot and "subgraph cluster_n1_b1 {" in dot
    assert "subgraph cluster_n1_b1_0 {" in dot  # the SWITCH inside the else-body, a cluster of its own
    assert "n1_b1_0_b2_0 [shape=box" in dot  # its third case's kernel
    assert re.search(r"\bn0 -> n1;", dot) and re.search(r"\bn1 -> n2;", dot)  # the top level still chained
    assert "n1 -> n1_b0_0 [style=dashed];" in dot
    assert dot.count("{") == dot.count("}")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_graphviz_accepts_the_clusters():
    result = subprocess.run(["dot", "-Tsvg"], input=to_dot(branches_dag()), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_measured_counts_land_on_the_node_of_their_key_and_body_kernels_are_named():
    dag = decode_dag()
    attach_counts(dag, {"decode#0": {"runs_median": 7.0, "per_iteration_ns": 3100.0, "fixed_ns": 9000.0}, "x#0": {}})
    info = dag.nodes[2].detail["conditional"]
    assert info["runs_median"] == 7.0 and info["per_iteration_ns"] == 3100.0 and info["fixed_ns"] == 9000.0
    assert body_kernel_names(dag) == {"decode#0": ["mix", "scale", "pick"]}


# -- reading a live graph: cuda.bindings stood in for ------------------------------------------------


class NodeType(Enum):
    CU_GRAPH_NODE_TYPE_KERNEL = 0
    CU_GRAPH_NODE_TYPE_CONDITIONAL = 13


class Handle:
    def __init__(self, value: int = 0, init_value: int | None = None) -> None:
        self.value = init_value if init_value is not None else value

    def __int__(self) -> int:
        return self.value


class FakeDriver(types.SimpleNamespace):
    """Graphs by handle: {graph: (node handles, edges)}; kernels by node handle; conditional params."""

    def __init__(self, graphs, kernels, conditionals, get_params: str = "absent") -> None:
        super().__init__(CUgraph=Handle, CUgraphExec=Handle)
        self.graphs, self.kernels, self.conditionals = graphs, kernels, conditionals
        if get_params == "present":
            self.cuGraphNodeGetParams = self._get_params
        elif get_params == "refused":  # a 13.3 binding on a 13.0 driver
            self.cuGraphNodeGetParams = lambda node: (Handle(500), None)

    def cuGraphGetNodes(self, graph, count):
        nodes = [Handle(h) for h in self.graphs[int(graph)][0]]
        return (0, nodes if count else None, len(nodes))

    def cuGraphGetEdges(self, graph, count):
        edges = self.graphs[int(graph)][1]
        return (0, [Handle(a) for a, _ in edges], [Handle(b) for _, b in edges], None, len(edges))

    def cuGraphNodeGetType(self, node):
        kind = "CONDITIONAL" if int(node) in self.conditionals else "KERNEL"
        return (0, NodeType[f"CU_GRAPH_NODE_TYPE_{kind}"])

    def cuGraphKernelNodeGetParams(self, node):
        fields = dict(gridDimX=4, gridDimY=1, gridDimZ=1, blockDimX=256, blockDimY=1, blockDimZ=1, sharedMemBytes=0)
        return (0, types.SimpleNamespace(func=self.kernels[int(node)], **fields))

    def cuFuncGetName(self, func):
        return (0, func.encode())

    def _get_params(self, node):
        kind, graphs = self.conditionals[int(node)]
        conditional = types.SimpleNamespace(
            type=kind, size=len(graphs), handle=77, phGraph_out=[Handle(g) for g in graphs]
        )
        return (0, types.SimpleNamespace(conditional=conditional))


def _live(monkeypatch, get_params: str, recorded: bool):
    """prefill(1) -> enter(2) -> WHILE(3){mix(11) -> next(12)} -> finish(4); body graph 200."""
    graphs = {100: ([1, 2, 3, 4], [(1, 2), (2, 3), (3, 4)]), 200: ([11, 12], [(11, 12)])}
    kernels = {1: "prefill", 2: "graphscope_loop_enter", 4: "finish", 11: "mix", 12: "graphscope_loop_next"}
    driver = FakeDriver(graphs, kernels, {3: (1, [200])}, get_params)
    runtime = types.SimpleNamespace(cudaGraphExec_t=Handle, cudaGraphExecGetId=lambda e: (1, None))
    package = types.ModuleType("cuda.bindings")
    package.driver, package.runtime = driver, runtime
    monkeypatch.setitem(sys.modules, "cuda.bindings", package)
    monkeypatch.setitem(sys.modules, "cuda", types.ModuleType("cuda"))
    from graphscope.graph.live import LiveGraph

    def site(name: str, ordinal: int = 0) -> Site:
        return Site(name, ordinal, name, (1024, 1, 1), (256, 1, 1), (4, 1, 1), 0, 1024, 16)

    sites = [site("prefill"), site("mix"), site("finish")]
    record = {"key": "decode#0", "kind": "while", "bodies": 1, "limit": 64, "node": 3, "graphs": [200], "handle": 5}
    record.update(default=0, sites=[1, 2])
    return LiveGraph(100, 101, sites, [record] if recorded else [])


@pytest.mark.parametrize("get_params", ["absent", "refused"])
def test_on_a_13_0_driver_the_node_is_read_from_what_the_workload_recorded(monkeypatch, get_params):
    dag = _live(monkeypatch, get_params, recorded=True).dag()
    node = dag.nodes[2]
    info = node.detail["conditional"]
    assert node.type == "conditional" and node.name == "decode#0" and label(node) == "WHILE"
    assert info["source"].startswith("recorded when the workload built the node")
    assert [n.name for n in node.bodies[0].nodes] == ["mix", "graphscope_loop_next"] and node.bodies[0].edges == [
        (0, 1)
    ]
    assert node.bodies[0].nodes[0].site == "mix#0"  # the site launched inside the body names its kernel
    assert [n.site for n in dag.nodes] == ["prefill#0", None, None, "finish#0"]  # the body's site is not top-level
    assert dag.nodes[1].detail["tunable"].startswith("graphscope's condition kernel")
    assert not any("library kernels" in note for note in dag.notes)  # its own kernels are not called library ones


def test_on_a_13_2_driver_the_node_is_read_back_even_when_graphscope_did_not_build_it(monkeypatch):
    dag = _live(monkeypatch, "present", recorded=False).dag()
    info = dag.nodes[2].detail["conditional"]
    assert info["kind"] == "while" and info["bodies"] == 1 and info["handle"] == 77
    assert info["source"] == "read back with cuGraphNodeGetParams"
    assert [n.name for n in dag.nodes[2].bodies[0].nodes] == ["mix", "graphscope_loop_next"]


def test_a_conditional_node_nobody_can_read_says_so(monkeypatch):
    dag = _live(monkeypatch, "absent", recorded=False).dag()
    node = dag.nodes[2]
    assert label(node) == "CONDITIONAL" and node.bodies == [] and "CUDA 13.2" in node.detail["conditional"]["source"]


def test_details_list_the_loop_s_facts_in_words_not_a_dict():
    from graphscope.view.describe import describe_nodes

    dag = decode_dag(runs_median=12.0, per_iteration_ns=4300.0, fixed_ns=9100.0)
    title, rows = describe_nodes([dag.nodes[2]])
    found = dict(rows)
    assert (
        title == "Graph node 2" and found["conditional"] == "WHILE" and found["built as"] == "decode#0 (ctx.while_loop)"
    )
    assert found["iterations per launch"] == "12" and found["per iteration"] == "4.3 us"
    assert found["fixed per launch"] == "9.1 us" and found["bodies"] == "body of WHILE decode#0: 4 nodes"
    assert "launch site" not in found and not any(str(v).startswith("{") for v in found.values())


def test_each_body_is_named_by_its_own_sites_and_nested_ones_are_left_to_the_nested_node(monkeypatch):
    live = _live(monkeypatch, "absent", recorded=True)  # any LiveGraph: body_sites reads its sites and records
    live.sites = ["head", "then", "else1", "nested", "else2", "tail"]
    outer = {"key": "if#0", "sites": [1, 5], "body_sites": [[1, 2], [2, 5]]}
    live.conditionals = [{"key": "inner#0", "sites": [3, 4], "body_sites": [[3, 4]]}, outer]
    assert live.body_sites(outer, 0) == ["then"] and live.body_sites(outer, 1) == ["else1", "else2"]
    assert live.body_sites(live.conditionals[0], 0) == ["nested"]
