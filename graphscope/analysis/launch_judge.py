"""A trace's graph launches judged against the launch-cost model (core/launch_cost.py, issue #45).

Per graph (graph id), over its launches with a recorded call: the median call time against what its node
count costs by the model, the first node's start after the call began, the replay. A call far slower than
the model (SLOW_FACTOR and SLOW_MIN_NS) pays something else, named from what the trace shows:

- graph-level tracing: an Nsight export made with --cuda-graph-trace=graph, whose launch calls the
  measurement prices too (`traced_graph`);
- node-level tracing: nodes were traced one by one (Nsight's --cuda-graph-trace=node, a PyTorch profiler
  recording replayed kernels), which the measurement prices per node where it was traced (`traced_node`);
- a first launch without an upload: the graph's first call, far slower than its others;
- blocking: calls during which GPU work ended (analysis/steady.py's rule: they waited on the GPU);
- else something the trace does not show (host nodes run on the CPU inside the launch's stream; a busy
  driver; a preempted thread).

And what splitting the graph into two pipelined graphs would save: the GPU starts the first half after
the first-node latency of N/2 nodes instead of N, while the second launch overlaps the first half's replay;
so about latency(N) - latency(N/2) a launch. Untraced, the first node starts a constant 1-2 us after the
call returns (measured under Nsight), so that is the call's price for N/2 nodes: a microsecond or two
at 5,000 nodes on the H100, where a traced call pays 157 ns (graph trace mode) to 728 ns (node mode) a node.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphscope.core import stats
from graphscope.core.launch_cost import LaunchCost
from graphscope.core.launch_cost import model as current_model

SLOW_FACTOR = 3.0  # a call over 3x the model's price ...
SLOW_MIN_NS = 10_000  # ... and 10 us over it pays something the model leaves out
FIRST_FACTOR = 3.0  # a first call over 3x the graph's median call: a first launch (upload, set-up)


def _term(cost: LaunchCost, *keys: str) -> dict[str, float] | None:
    value: Any = cost.other
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, dict) and "per_node_ns" in value else None


def _line(fit: dict[str, float], nodes: float) -> float:
    return float(fit["fixed_ns"] + fit["per_node_ns"] * nodes)


def first_node_ns(cost: LaunchCost, nodes: float) -> float:
    """The modelled time from an untraced launch call's start to its graph's first node: the call's price
    (measured under Nsight on the H100, the first node of a chain started 0.7-2.3 us after its call
    returned, whatever its size: a constant the split leaves as it is)."""
    return float(cost.launch_ns(nodes))


def split_saving_ns(cost: LaunchCost, nodes: float) -> float:
    """What two pipelined graphs of nodes/2 would save a launch against one of `nodes` (module docstring)."""
    return max(first_node_ns(cost, nodes) - first_node_ns(cost, nodes / 2), 0.0)


def judge(
    calls: np.ndarray,
    call_ns: np.ndarray,
    call_start: np.ndarray,
    graphs,
    blocked: np.ndarray,
    node_traced: bool,
    cost: LaunchCost | None = None,
    graph_traced: bool = False,
) -> list[dict[str, Any]]:
    """Per graph id, the judgement (module docstring). `calls`: per graph launch its call's row in the
    launch metrics (-1: not recorded); `call_ns`, `call_start`, `blocked`: per launch-metrics row."""
    cost = cost or current_model()
    known = np.flatnonzero(calls >= 0)
    if not len(known):
        return []
    ids = graphs.graph_id[known]
    known = known[np.lexsort((call_start[calls[known]], ids))]  # by graph, then call start: one pass
    bounds = np.flatnonzero(np.r_[True, graphs.graph_id[known][1:] != graphs.graph_id[known][:-1], True])
    result = []
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        mine = known[lo:hi]
        gid = int(graphs.graph_id[mine[0]])
        took = call_ns[calls[mine]].astype(np.float64)
        nodes = graphs.nodes[mine]
        n = float(stats.median_of(nodes)) if (nodes >= 0).all() else None
        median = float(stats.median_of(took))
        model = float(cost.launch_ns(n)) if n is not None else None
        entry: dict[str, Any] = {
            "graph": int(gid),
            "launches": len(mine),
            "nodes": None if n is None else int(n),
            "median_call_ns": median,
            "first_call_ns": float(took[0]),
            "model_ns": model,
            "median_first_node_ns": float(stats.median_of(graphs.start[mine] - call_start[calls[mine]])),
            "median_replay_ns": float(stats.median_of(graphs.end[mine] - graphs.start[mine])),
            "paid": [],
            "split_saving_ns": None if n is None or n < 2 else round(split_saving_ns(cost, n), 1),
        }
        slow = model is not None and median > max(SLOW_FACTOR * model, model + SLOW_MIN_NS)
        if len(mine) > 1 and took[0] > FIRST_FACTOR * float(stats.median_of(took[1:])) and took[0] > SLOW_MIN_NS:
            fit = _term(cost, "first_no_upload")
            priced = f"; the model's first launch without upload: {_line(fit, n) / 1000:.1f} us" if fit and n else ""
            first = f"a first launch: {took[0] / 1000:.1f} us against {median / 1000:.1f} us after{priced}"
            entry["paid"].append(first)
        if slow or (model is None and median > SLOW_MIN_NS):
            entry["paid"] += _why_slow(cost, n, median, node_traced, int(blocked[calls[mine]].sum()), graph_traced)
        result.append(entry)
    return result


def _why_slow(
    cost: LaunchCost, n: float | None, median: float, node_traced: bool, blocked: int, graph_traced: bool = False
) -> list[str]:
    why = []
    if graph_traced:
        fit = _term(cost, "traced_graph", "host")
        measured = (
            f" (Nsight's --cuda-graph-trace=graph measured {fit['per_node_ns']:.0f} ns a node on the {cost.gpu})"
            if fit
            else ""
        )
        why.append(f"graph-level tracing: Nsight tracing each graph launch slows the call too{measured}")
    if node_traced:
        fit = _term(cost, "traced_node", "host")
        traced = (
            f" (Nsight's node tracing measured {fit['per_node_ns'] / 1000:.2f} us a node on the {cost.gpu}: "
            f"~{fit['per_node_ns'] * n / 1000:.1f} us for {n:,.0f} nodes)"
            if fit and n
            else ""
        )
        why.append(f"node-level tracing: each node traced slows the launch call{traced}")
    if blocked:
        why.append(f"blocking: {blocked} calls returned only after GPU work ended (they waited on the GPU)")
    if not why:
        hosts = cost.other.get("host_nodes") or {}
        each = (
            f", each measured to add {hosts['host_ns_each'] / 1000:.1f} us to the launch call and "
            f"{hosts['gpu_ns_each'] / 1000:.1f} us to the replay"
            if hosts.get("host_ns_each") is not None
            else ""
        )
        why.append(
            f"something the trace does not show (host nodes run on the CPU inside the launch's stream{each}; "
            "a busy driver; a preempted thread)"
        )
    return why


def graph_launch_cost(
    trace, analysis, node_traced: bool, cost: LaunchCost | None = None
) -> dict[str, Any] | None:
    """The summary's `graph_launch_cost` key (docs/json.md): the model and each graph's judgement; None
    without graph launches whose call was recorded. `analysis`: summary.TraceAnalysis."""
    from graphscope.analysis.steady import blocked_calls
    from graphscope.core.events import ApiKind

    cost = cost or current_model()
    graphs, launches = analysis.graphs, analysis.launches
    if not len(graphs) or not (graphs.api_row >= 0).any():
        return None
    at = np.full(len(trace.api), -1, np.int64)
    at[launches.rows] = np.arange(len(launches.rows))
    calls = np.where(graphs.api_row >= 0, at[np.maximum(graphs.api_row, 0)], -1)
    steady = launches.of_kind(ApiKind.GRAPH_LAUNCH) & ~launches.capture & (launches.first_work >= 0)
    blocked, _, _ = blocked_calls(launches, analysis.work, steady)
    call_start = launches.call_start[launches.rows].astype(np.int64)
    graph_traced = trace.info.graph_trace_mode == "graph"  # an Nsight export traced graph by graph
    found = judge(calls, launches.api_ns, call_start, graphs, blocked, node_traced, cost, graph_traced)
    return {"model": cost.to_json(), "node_traced": node_traced, "graphs": found}
