"""Hand-built DAGs holding conditional nodes, as graph/live.py builds them from a WHILE decode capture."""

from __future__ import annotations

from graphscope.graph.model import Dag, DagNode


def kernel(index: int, name: str, site: str | None = None, threads: int = 256) -> DagNode:
    return DagNode(index, "kernel", name, grid=(16, 1, 1), block=(threads, 1, 1), site=site)


def while_body() -> Dag:
    nodes = [kernel(0, "mix", "mix#0"), kernel(1, "scale", "scale#0"), kernel(2, "pick", "pick#0", 1)]
    nodes.append(kernel(3, "graphscope_loop_next", threads=1))
    return Dag(nodes, [(0, 1), (1, 2), (2, 3)], "live")


def while_node(index: int = 2, **measured: float) -> DagNode:
    info = {"kind": "while", "bodies": 1, "limit": 64, "default": 0, "key": "decode#0", "handle": 4, **measured}
    return DagNode(index, "conditional", "decode#0", detail={"conditional": info}, bodies=[while_body()])


def decode_dag(**measured: float) -> Dag:
    """prefill -> condition kernel -> WHILE{mix, scale, pick, next} -> finish."""
    nodes = [kernel(0, "prefill", "prefill#0"), kernel(1, "graphscope_loop_enter", threads=1)]
    nodes += [while_node(2, **measured), kernel(3, "finish", "finish#0")]
    return Dag(nodes, [(0, 1), (1, 2), (2, 3)], "live")


def branches_dag() -> Dag:
    """An IF/ELSE whose else-body holds a SWITCH of three cases (nesting), then a kernel."""
    cases = [Dag([kernel(0, f"case{i}")], [], "live") for i in range(3)]
    switch = DagNode(
        0,
        "conditional",
        "pick#0",
        detail={"conditional": {"kind": "switch", "bodies": 3, "key": "pick#0"}},
        bodies=cases,
    )
    then = Dag([kernel(0, "yes")], [], "live")
    otherwise = Dag([switch, kernel(1, "after_switch")], [(0, 1)], "live")
    branch = DagNode(
        1,
        "conditional",
        "taken#0",
        detail={"conditional": {"kind": "if", "bodies": 2, "key": "taken#0"}},
        bodies=[then, otherwise],
    )
    unread = DagNode(3, "conditional", "conditional", detail={"conditional": {"kind": None, "source": "unread"}})
    return Dag([kernel(0, "head"), branch, kernel(2, "tail"), unread], [(0, 1), (1, 2), (2, 3)], "live")
