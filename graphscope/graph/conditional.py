"""Conditional nodes (IF, IF/ELSE, SWITCH, WHILE) of a live CUDA graph, and their body graphs.

`cuGraphNodeGetType` names a node CONDITIONAL on every driver that runs them; what it is (type, handle,
body graphs) is read back with `cuGraphNodeGetParams` only from CUDA 13.2 drivers. On older ones (the
lent H100's 13.0) graphscope knows what the workload built (workload/child/conditional.py records each node's
handle, type and body graphs when it adds it), so the node is described from that record; a conditional
node graphscope did not build is shown as such, its bodies unknown.

A conditional node in the Dag keeps `detail["conditional"]` (kind, bodies, handle, default value, limit,
where the facts come from, iterations measured) and its body graphs as nested Dags (`DagNode.bodies`).
"""

from __future__ import annotations

from typing import Any

from graphscope.graph.model import Dag, DagNode

KIND_LABELS = {"while": "WHILE", "if": "IF", "switch": "SWITCH"}
UNREAD = "a conditional node graphscope did not build: its type and bodies need cuGraphNodeGetParams (CUDA 13.2 driver)"


def label(node: DagNode) -> str:
    """'WHILE', 'IF/ELSE', 'SWITCH (3)', or 'CONDITIONAL' when unread."""
    info = node.detail.get("conditional") or {}
    kind = info.get("kind")
    if kind is None:
        return "CONDITIONAL"
    if kind == "if" and info.get("bodies") == 2:
        return "IF/ELSE"
    if kind == "switch":
        return f"SWITCH ({info.get('bodies')})"
    return KIND_LABELS.get(str(kind), str(kind).upper())


def facts(node: DagNode) -> str:
    """What is known of a conditional node, in a few words: iterations, limit, default value."""
    info = node.detail.get("conditional") or {}
    parts = []
    runs = info.get("runs_median")
    if runs is not None:
        parts.append(f"{runs:g} {'iterations' if info.get('kind') == 'while' else 'bodies run'} per launch")
    per = info.get("per_iteration_ns")
    if per is not None:
        parts.append(f"{per / 1e3:.2f} us per iteration")
    if info.get("limit", -1) not in (-1, None):
        parts.append(f"at most {info['limit']}")
    if info.get("default") is not None:
        parts.append(f"default {info['default']}")
    if not info.get("kind"):
        parts.append("unread")
    return ", ".join(parts)


def _read_params(driver: Any, handle: Any) -> dict[str, Any] | None:
    """The node's conditional parameters from the driver (CUDA 13.2+); None where the call is absent or
    refused (13.0 answers with an error: the binding has the function, the driver not)."""
    get = getattr(driver, "cuGraphNodeGetParams", None)
    if get is None:
        return None
    try:
        result = get(handle)
    except Exception:  # the binding cannot find the symbol in this driver
        return None
    if int(result[0]) != 0:
        return None
    params = result[1].conditional
    kinds = {0: "if", 1: "while", 2: "switch"}
    size = int(params.size)
    out = params.phGraph_out
    graphs = [int(out[i]) for i in range(size)] if isinstance(out, (list, tuple)) else [int(out)]
    return {
        "kind": kinds.get(int(params.type)),
        "bodies": size,
        "handle": int(params.handle),
        "graphs": graphs,
        "source": "read back with cuGraphNodeGetParams",
    }


def describe(reader: Any, node: DagNode, handle: Any, recorded: list[dict[str, Any]]) -> None:
    """Fill a conditional node: its facts (the driver's, else graphscope's record) and its body Dags."""
    mine = next((r for r in recorded if r.get("node") == int(handle)), None)
    info = _read_params(reader.driver, handle)
    if info is None and mine is not None:
        info = {k: mine[k] for k in ("kind", "bodies", "handle", "graphs", "default", "limit", "key")}
        info["source"] = "recorded when the workload built the node (cuGraphNodeGetParams needs CUDA 13.2)"
    elif info is not None and mine is not None:
        info.update(key=mine["key"], limit=mine["limit"], default=mine["default"])
    if info is None:
        node.detail["conditional"] = {"kind": None, "source": UNREAD}
        node.name = "conditional"
        return
    node.detail["conditional"] = {k: v for k, v in info.items() if k != "graphs"}
    node.name = info.get("key") or label(node).lower()
    node.bodies = [reader.body_dag(graph, mine, i) for i, graph in enumerate(info["graphs"])]


def attach_counts(dag: Dag, conditionals: dict[str, dict[str, Any]]) -> None:
    """Put a run's measured iterations and costs (run --json's modes.graph.conditionals) on the DAG's
    conditional nodes, by the key the workload gave them ("decode#0")."""
    for node in walk(dag):
        info = node.detail.get("conditional")
        if not info or info.get("key") not in conditionals:
            continue
        measured = conditionals[info["key"]]
        info["runs_median"] = measured.get("runs_median")
        if measured.get("per_iteration_ns") is not None:
            info["per_iteration_ns"] = measured["per_iteration_ns"]
            info["fixed_ns"] = measured.get("fixed_ns")


def walk(dag: Dag) -> list[DagNode]:
    """Every node of the DAG and of its conditional bodies, depth first."""
    found = []
    for node in dag.nodes:
        found.append(node)
        for body in node.bodies:
            found.extend(walk(body))
    return found


def body_kernel_names(dag: Dag) -> dict[str, list[str]]:
    """Per conditional node key: the kernel names its bodies hold (graphscope's own condition kernels
    left out), to find them in a trace."""
    found: dict[str, list[str]] = {}
    for node in walk(dag):
        info = node.detail.get("conditional")
        if info and info.get("key"):
            names = [n.name for body in node.bodies for n in walk(body) if n.type == "kernel"]
            found[info["key"]] = [n for n in names if not n.startswith("graphscope_")]
    return found


def body_title(node: DagNode, index: int) -> str:
    """'body of WHILE decode#0', 'then-body of IF ...', 'case 2 of SWITCH ...'."""
    kind = (node.detail.get("conditional") or {}).get("kind")
    if kind == "if":
        part = "then-body" if index == 0 else "else-body"
    elif kind == "switch":
        part = f"case {index}"
    else:
        part = "body"
    return f"{part} of {label(node)} {node.name}"


def fields(node: DagNode) -> list[tuple[str, str]]:
    """The Details inspector's rows for a conditional node: type, key, what was measured, where from."""
    from graphscope.core.units import format_ns

    info = node.detail.get("conditional") or {}
    rows = [("conditional", label(node))]
    if info.get("key"):
        rows.append(
            ("built as", f"{info['key']} (ctx.{'while_loop' if info.get('kind') == 'while' else info.get('kind')})")
        )
    if info.get("runs_median") is not None:
        what = "iterations per launch" if info.get("kind") == "while" else "bodies run per launch"
        rows.append((what, f"{info['runs_median']:g}"))
    if info.get("per_iteration_ns") is not None:
        rows.append(("per iteration", format_ns(info["per_iteration_ns"])))
    if info.get("fixed_ns") is not None:
        rows.append(("fixed per launch", format_ns(info["fixed_ns"])))
    if info.get("limit") not in (None, -1):
        rows.append(("at most", f"{info['limit']} iterations"))
    if info.get("default") is not None:
        rows.append(("default value", str(info["default"])))
    if info.get("handle") is not None:
        rows.append(("handle", str(info["handle"])))
    bodies = ", ".join(f"{body_title(node, i)}: {len(b.nodes)} nodes" for i, b in enumerate(node.bodies))
    rows.append(("bodies", bodies or "unknown"))
    rows.append(("read from", str(info.get("source", "-"))))
    return rows
