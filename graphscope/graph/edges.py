"""PDL judged per edge of a CUDA graph, and the faces of edge kinds (text lines, DOT attributes, Details).

The kinds themselves (default vs programmatic, their ports) are columns of `EdgeKinds` (graph/edge_table.py,
read from the driver there). `edge_gaps` computes each edge's gap (start of `to` minus end of `from`, per
replay) from a node-level trace's columns; `judge_pdl` turns gaps, replay timings of the graph with the
edge made plain, and the kernels' griddepcontrol use into verdicts per edge. Plain data and numpy: the
child, the CLI and the DAG view all call it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphscope.core import sets
from graphscope.core.edge_kinds import (
    PDL_NO_DEVICE_SYNC,
    PDL_NO_EFFECT,
    PDL_OVERLAP,
    PDL_SHORTER,
    PDL_UNMEASURED,
    EdgeKind,
)
from graphscope.core.events import graph_of, index_in_graph, node_id
from graphscope.core.stats import describe
from graphscope.graph.edge_table import EdgeKinds, read_edges
from graphscope.graph.model import Dag

__all__ = ["EdgeKinds", "edge_gaps", "judge_pdl", "kinds_of", "read_edges"]


def kinds_of(dag: Dag) -> EdgeKinds:
    """The DAG's edge kinds (all default where it has none: a trace's DAG, an older JSON)."""
    kinds = getattr(dag, "edge_kinds", None)
    return kinds if kinds is not None and len(kinds) == len(dag.edges) else EdgeKinds.default(len(dag.edges))


# -- PDL per edge -----------------------------------------------------------------------------------------


def trace_edge_gaps(
    dag: Dag, trace_ids: np.ndarray, starts: np.ndarray, ends: np.ndarray
) -> tuple[dict[int, np.ndarray], int, int] | None:
    """Each edge's gap per replay in a node-level trace's GPU activities (graph node ids, starts, ends):
    the trace's graph is the one with this DAG's node count and the most activities. Returns (gaps by edge
    position, that graph's id, its replays), or None when no graph in the trace has the DAG's node count."""
    graphs = graph_of(trace_ids)
    best, rows = None, 0
    for graph in sets.unique(graphs).tolist():
        mine = graphs == graph
        if int(index_in_graph(trace_ids[mine]).max()) + 1 == len(dag.nodes) and int(mine.sum()) > rows:
            best, rows = int(graph), int(mine.sum())
    if best is None:
        return None
    ids: list[int | None] = [int(node_id(best, i)) for i in range(len(dag.nodes))]
    return edge_gaps(dag, trace_ids, starts, ends, node_ids=ids), best, rows // max(len(dag.nodes), 1)


def edge_gaps(
    dag: Dag,
    trace_ids: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    positions: list[int] | None = None,
    node_ids: list[int | None] | None = None,
) -> dict[int, np.ndarray]:
    """Per edge (position in `dag.edges`; `positions` picks some): the gap in ns between the end of `from`
    and the start of `to` in each replay, from a node-level trace's GPU activities (their graph node ids,
    starts and ends, any order). The k-th execution of one node pairs with the k-th of the other; a
    negative gap is an overlap. `node_ids`: each DAG node's id in that trace (default: its `trace_id`).
    Edges whose nodes have no id or no executions are left out."""
    ids_of = node_ids if node_ids is not None else [n.trace_id for n in dag.nodes]
    order = np.lexsort((starts, trace_ids))
    ids, begin, finish = trace_ids[order], starts[order], ends[order]
    found: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def runs(trace_id: int | None) -> tuple[np.ndarray, np.ndarray] | None:
        if trace_id is None:
            return None
        if trace_id not in found:
            low, high = np.searchsorted(ids, trace_id, "left"), np.searchsorted(ids, trace_id, "right")
            found[trace_id] = (begin[low:high], finish[low:high])
        return found[trace_id] if len(found[trace_id][0]) else None

    gaps = {}
    for position in positions if positions is not None else range(len(dag.edges)):
        a, b = dag.edges[position]
        first, second = runs(ids_of[a]), runs(ids_of[b])
        if first is None or second is None:
            continue
        count = min(len(first[1]), len(second[0]))
        gaps[position] = (second[0][:count] - first[1][:count]).astype(np.float64)
    return gaps


def _interval(samples: np.ndarray | list[float]) -> tuple[float, float, float]:
    stats = describe(np.asarray(samples, dtype=np.float64))
    return stats.median, stats.ci_low, stats.ci_high


def plain_gaps(dag: Dag, gaps: dict[int, np.ndarray]) -> np.ndarray:
    """The gaps of every default edge between two kernel nodes, pooled: what a plain edge costs here."""
    kinds = kinds_of(dag)
    pooled = [
        gaps[p]
        for p in gaps
        if kinds.kind[p] == EdgeKind.DEFAULT
        and dag.nodes[dag.edges[p][0]].type == "kernel"
        and dag.nodes[dag.edges[p][1]].type == "kernel"
    ]
    return np.concatenate(pooled) if pooled else np.empty(0)


def judge_pdl(
    dag: Dag,
    gaps: dict[int, np.ndarray] | None = None,
    reference: np.ndarray | None = None,
    replays: dict[int, dict[str, Any]] | None = None,
) -> dict[int, dict[str, Any]]:
    """One verdict per programmatic edge, stored in `dag.edge_kinds.measured` and returned.

    `gaps`: per edge, its gap per replay (a node-level trace, `edge_gaps`); `reference`: a plain edge's
    gaps (default: this DAG's own plain kernel edges, `plain_gaps`); `replays`: per edge, what the
    child measured replaying the graph with that edge made plain (`saving_ns`, `ci_low_ns`, `ci_high_ns`:
    the as-captured graph's time subtracted, an interval that holds 0 means no effect). Kernel nodes'
    `detail["griddep"]` ({"wait": bool, "trigger": bool}) says whether their code uses griddepcontrol.
    """
    kinds = kinds_of(dag)
    gaps = gaps or {}
    replays = replays or {}
    reference = plain_gaps(dag, gaps) if reference is None else reference
    plain = _interval(reference) if len(reference) else None
    for position in (int(p) for p in kinds.programmatic()):
        a, b = dag.edges[position]
        row: dict[str, Any] = {"from": a, "to": b, "ports": kinds.ports(position)}
        verdict = PDL_UNMEASURED
        if position in gaps and len(gaps[position]):
            median, low, high = _interval(gaps[position])
            row.update(gap_ns=median, gap_ci_ns=[low, high], replays=len(gaps[position]))
            if plain is not None:
                row["plain_gap_ns"], row["plain_gap_ci_ns"] = plain[0], [plain[1], plain[2]]
            if high < 0:
                verdict = PDL_OVERLAP
            elif plain is not None:
                verdict = PDL_SHORTER if high < plain[1] else PDL_NO_EFFECT
        timed = replays.get(position)
        if timed is not None:
            row["replay"] = timed
            if verdict == PDL_UNMEASURED:
                low_ns, high_ns = timed["ci_low_ns"], timed["ci_high_ns"]
                verdict = PDL_NO_EFFECT if low_ns <= 0 <= high_ns or high_ns < 0 else PDL_SHORTER
        code = _griddep(dag, a, b)
        row["verdicts"] = [verdict]
        if code is not None:
            row["griddep"] = code
            if not code["to_waits"] and not code["from_triggers"]:  # said whatever the timing found
                row["no_device_sync"] = True
                timed_gain = verdict in (PDL_OVERLAP, PDL_SHORTER)
                verdict = verdict if timed_gain else PDL_NO_DEVICE_SYNC
                row["verdicts"] = [verdict, PDL_NO_DEVICE_SYNC] if timed_gain else [verdict]
        row["verdict"] = verdict
        kinds.measured[position] = row
    dag.edge_kinds = kinds
    return kinds.measured


def _griddep(dag: Dag, a: int, b: int) -> dict[str, bool] | None:
    """Whether `from` triggers and `to` waits on the device (None when either kernel's code is unknown)."""
    first, second = dag.nodes[a].detail.get("griddep"), dag.nodes[b].detail.get("griddep")
    if not isinstance(first, dict) or not isinstance(second, dict):
        return None
    return {"from_triggers": bool(first.get("trigger")), "to_waits": bool(second.get("wait"))}


# -- faces: text lines and DOT attributes -----------------------------------------------------------------


def edge_summary(dag: Dag) -> str:
    """'31 edges (30 programmatic)' or '31 edges'."""
    count = len(kinds_of(dag).programmatic())
    return f"{len(dag.edges)} edges" + (f" ({count} programmatic)" if count else "")


def pdl_lines(dag: Dag) -> list[str]:
    """The programmatic edges, one line each: nodes, ports, gap, replay saving and verdict."""
    kinds = kinds_of(dag)
    positions = [int(p) for p in kinds.programmatic()]
    if not positions:
        return []
    lines = [f"  programmatic edges (PDL): {len(positions)}", f"  {'edge':<13} {'ports':<27} {'gap':<24} verdict"]
    for position in positions:
        a, b = dag.edges[position]
        row = kinds.measured.get(position, {})
        gap = "-"
        if "gap_ns" in row:
            low, high = row["gap_ci_ns"]
            gap = f"{row['gap_ns']:.0f} ns [{low:.0f}, {high:.0f}]"
        verdict = verdict_words(row)
        if "replay" in row:
            verdict += f"; plain costs {row['replay']['saving_ns']:+.0f} ns/replay"
        nodes = f"{dag.nodes[a].index} -> {dag.nodes[b].index}"
        lines.append(f"  {nodes:<13} {kinds.ports(position):<27} {gap:<24} {verdict}")
    plain = next((r for r in kinds.measured.values() if "plain_gap_ns" in r), None)
    if plain is not None:
        low, high = plain["plain_gap_ci_ns"]
        lines.append(f"  a plain kernel edge's gap here: {plain['plain_gap_ns']:.0f} ns [{low:.0f}, {high:.0f}]")
    return lines


def verdict_words(row: dict[str, Any]) -> str:
    """'shorter gap', or 'shorter gap; no device-side wait/trigger' where both hold."""
    return "; ".join(row.get("verdicts") or [row.get("verdict", PDL_UNMEASURED)])


def dot_attributes(dag: Dag, position: int, colour: str) -> str:
    """' [style=dashed, color="#..", label="programmatic"]' for a programmatic edge; '' for a plain one."""
    kinds = kinds_of(dag)
    if kinds.kind[position] != EdgeKind.PROGRAMMATIC:
        return ""
    verdict = verdict_words(kinds.measured.get(position, {}))
    label = "PDL" + (f": {verdict}" if verdict != PDL_UNMEASURED else "")
    tip = kinds.ports(position)
    return f' [style=dashed, color="{colour}", fontcolor="{colour}", label="{label}", tooltip="ports {tip}"]'


def inner_programmatic(dag: Dag, members: list[int]) -> int:
    """How many programmatic edges join members of one folded box (drawn inside it, so counted on it)."""
    kinds = kinds_of(dag)
    inside = set(members)
    return sum(1 for p in kinds.programmatic() if dag.edges[p][0] in inside and dag.edges[p][1] in inside)


def edge_fields(dag: Dag, indices: list[int]) -> list[tuple[str, str]]:
    """Details rows for the selected nodes: each programmatic edge into or out of them (ports, gap, replay
    saving, verdict and what it means) and their kernels' griddepcontrol use."""
    from graphscope.core.edge_kinds import VERDICT_TEXT

    kinds = kinds_of(dag)
    chosen = {p for p, node in enumerate(dag.nodes) if node.index in set(indices)}
    rows: list[tuple[str, str]] = []
    for position in (int(p) for p in kinds.programmatic()):
        a, b = dag.edges[position]
        if a not in chosen and b not in chosen:
            continue
        row = kinds.measured.get(position, {})
        parts = [f"ports {kinds.ports(position)}"]
        if "gap_ns" in row:
            low, high = row["gap_ci_ns"]
            parts.append(f"gap {row['gap_ns']:.0f} ns (95% [{low:.0f}, {high:.0f}])")
        if "replay" in row:
            timed = row["replay"]
            parts.append(
                f"made plain: {timed['saving_ns']:+.0f} ns a replay ([{timed['ci_low_ns']:.0f}, "
                f"{timed['ci_high_ns']:.0f}])"
            )
        parts += [f"{v}: {VERDICT_TEXT.get(v, '')}" for v in row.get("verdicts", [PDL_UNMEASURED])]
        rows.append((f"PDL edge {dag.nodes[a].index} -> {dag.nodes[b].index}", "; ".join(parts)))
    for position in sorted(chosen):
        code = dag.nodes[position].detail.get("griddep")
        if isinstance(code, dict) and "wait" in code and len(chosen) == 1:
            said = [w for w, on in (("waits (griddepcontrol.wait)", code["wait"]), ("triggers", code["trigger"])) if on]
            rows.append(("griddepcontrol", (", ".join(said) or "none") + f" (read from its {code.get('how', '?')})"))
    return rows
