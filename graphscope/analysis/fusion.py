"""What fusing a piecewise step's seams would buy (the full-graph step predicted from the piecewise one),
and the summary's `anatomy` key that carries it with the steps (`anatomy_json`).

The prediction for one piecewise step (analysis/anatomy.py) rests on the ASSUMPTIONS below, printed
with it. One graph would hold the step's work from its first graph launch to its last (the interior
islands captured too), so the step loses the GPU idle inside that span spent waiting for the CPU
(`span_host_wait_ns`: the seams and the gaps between an island's kernels alike, the host work between
pieces that one graph replaces); and the merged graph's first node starts later than the first piece's
did, by the launch cost of the nodes it adds: (merged nodes - first piece's nodes) x the per-node launch
latency. That per-node latency is the trace's own where its graph launches show it (the slope of first
node start after the call over node count, across the pieces: a profiler tracing each node pays about
a microsecond a node, an untraced launch about a nanosecond), else the launch-cost model's
(core/launch_cost.py). A graph-trace-mode export (nodes not traced) keeps the first piece's latency.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphscope.analysis.anatomy import COLUMNS, Anatomy, changes, mode_counts
from graphscope.core import sets, stats
from graphscope.core.launch_cost import LaunchCost, model
from graphscope.core.rules import MODE_PIECEWISE, STEP_MODES

ASSUMPTIONS = (
    "the work from the step's first graph launch to its last (interior islands included) is captured into "
    "one graph and runs as long as it ran; islands before the first graph and after the last stay eager",
    "the GPU idle in that span spent waiting for the CPU to submit the next piece disappears (the replay's "
    "own node-to-node cost is not added); idle with the next work already queued (waiting on another stream, "
    "an event, a copy) stays",
    "the merged graph's first node starts later than the first piece's by the per-node launch latency "
    "times the nodes it adds (the trace's own per-node latency where its launches show it, else the model's)",
    "nothing else on the host bounds the step (its other CPU work fits under the GPU's)",
)


CHECKED_ON_GPU: dict[str, object] | None = {
    # benchmarks/fusion_check.py on the lent H100 (README, benchmarks/RESULTS.md; tests/analysis/test_decoder_traces.py
    # keeps it on the shipped traces): a Llama-style 8-layer decode step, one graph / a graph per piece with
    # attention eager / eager, same weights, torch.profiler traces of 6 steps each
    "summary": "an 8-layer decoder step on an H100, predicted from its piecewise trace (1.40 ms a step): "
    "806 us, against 761 us measured in the full-graph trace: +6.0% (95% interval +3.5% to +7.4%)",
    "error": 0.060,
    "interval": [0.035, 0.074],
}

TRACED_FACTOR = 10.0  # a trace's per-node launch latency over 10x the model's: its tracing pays it
MIN_NODE_SPREAD = 4  # node counts across the pieces spanning at least this many nodes show a slope


def latency_per_node(
    found: Anatomy, steps: np.ndarray, cost: LaunchCost | None = None
) -> tuple[float, str]:
    """The per-node launch latency (ns) and where it came from: the slope of first-node latency over node
    count across the graph launches of `steps` (medians per node count, least squares, never negative),
    where their node counts spread over MIN_NODE_SPREAD nodes or more; else the model's."""
    cost = cost or model()
    step, nodes, latency = found.launch_latency
    mine = sets.isin(step, steps) & (nodes >= 0)
    counts = sets.unique(nodes[mine])
    if len(counts) >= 2 and counts[-1] - counts[0] >= MIN_NODE_SPREAD:
        medians = np.array([stats.median_of(latency[mine & (nodes == c)]) for c in counts.tolist()], float)
        slope = float(np.polyfit(counts.astype(float), medians, 1)[0])
        return max(slope, 0.0), f"this trace's graph launches ({len(counts)} node counts, {int(mine.sum())} launches)"
    return float(cost.per_node_ns + cost.per_edge_ns), "the launch-cost model"


def fused(
    found: Anatomy, cost: LaunchCost | None = None, per_node: float | None = None
) -> dict[str, np.ndarray]:
    """Per step (every step; meaningful for piecewise ones): the predicted full-graph step and its parts.
    `per_node`: the per-node launch latency to price the added nodes with (None: latency_per_node's)."""
    cost = cost or model()
    s = found.steps
    length = (s.end - s.start).astype(np.int64)
    piecewise = np.flatnonzero(s.mode == STEP_MODES.index(MODE_PIECEWISE))
    if per_node is None:
        per_node, _ = latency_per_node(found, piecewise, cost)
    merged = np.where(s.graph_nodes >= 0, s.graph_nodes + s.island_work, -1)
    added = np.where((merged >= 0) & (s.first_graph_nodes >= 0), merged - s.first_graph_nodes, 0)
    relaunch = added * per_node
    return {
        "step_ns": length,
        "seam_ns": s.seam_ns.astype(np.int64),
        "removed_ns": s.span_host_wait_ns.astype(np.int64),
        "relaunch_ns": relaunch,  # the merged graph's first node later than the first piece's by this
        "predicted_ns": length - s.span_host_wait_ns + relaunch,
        "merged_nodes": merged,
        "host_launch_ns": (s.graph_launch_ns + s.island_launch_ns).astype(np.int64),  # measured, now
        "host_launch_after_ns": np.where(merged >= 0, cost.launch_ns(np.maximum(merged, 0)), np.nan),
        "graph_launch_ns": s.graph_launch_ns.astype(np.int64),  # measured: the step's graph launch calls
        # the model's price of those same launches (nodes untraced: their fixed part only)
        "graph_launch_model_ns": s.graph_launches * cost.fixed_ns + np.maximum(s.graph_nodes, 0) * cost.per_node_ns,
    }


def fusion_json(found: Anatomy, cost: LaunchCost | None = None) -> dict[str, Any] | None:
    """The prediction for every piecewise step, with the medians, the model and its assumptions (None when
    no step is piecewise)."""
    cost = cost or model()
    piecewise = np.flatnonzero(found.steps.mode == STEP_MODES.index(MODE_PIECEWISE))
    if not len(piecewise):
        return None
    parts = fused(found, cost)
    steps = []
    for i in piecewise.tolist():
        after = parts["host_launch_after_ns"][i]
        steps.append(
            {
                "step": found.names[i],
                "index": i,
                "step_ns": int(parts["step_ns"][i]),
                "seam_ns": int(parts["seam_ns"][i]),
                "removed_ns": int(parts["removed_ns"][i]),
                "relaunch_ns": round(float(parts["relaunch_ns"][i]), 1),
                "predicted_ns": round(float(parts["predicted_ns"][i]), 1),
                "merged_nodes": int(parts["merged_nodes"][i]) if parts["merged_nodes"][i] >= 0 else None,
                "host_launch_ns": int(parts["host_launch_ns"][i]),
                "host_launch_after_ns": None if np.isnan(after) else round(float(after), 1),
                "graph_launch_ns": int(parts["graph_launch_ns"][i]),
                "graph_launch_model_ns": round(float(parts["graph_launch_model_ns"][i]), 1),
            }
        )
    step = float(stats.median_of(parts["step_ns"][piecewise]))
    predicted = float(stats.median_of(parts["predicted_ns"][piecewise]))
    per_node, source = latency_per_node(found, piecewise, cost)
    untraced = None
    model_per_node = cost.per_node_ns + cost.per_edge_ns
    if per_node > TRACED_FACTOR * max(model_per_node, 0.1):  # the trace's launches pay for its tracing
        untraced = float(stats.median_of(fused(found, cost, model_per_node)["predicted_ns"][piecewise]))
    return {
        "steps": steps,
        "median_step_ns": step,
        "median_predicted_ns": predicted,
        "speedup": round(step / predicted, 4) if predicted > 0 else None,
        "latency_per_node_ns": round(per_node, 3),
        # where the trace's own per-node latency is its tracing's: the step with untraced launches
        "median_predicted_untraced_ns": untraced,
        "latency_per_node_from": source,
        "launch_cost": cost.to_json(),
        "assumptions": list(ASSUMPTIONS),
        "checked_on_gpu": CHECKED_ON_GPU,
    }


def anatomy_json(found: Anatomy | None, origin: int = 0) -> dict[str, object] | None:
    """The summary's `anatomy` key (docs/json.md); None for a trace without steps."""
    if found is None:
        return None
    s = found.steps
    columns = {
        "name": found.names,
        "start_ns": (s.start - origin).tolist(),
        "duration_ns": (s.end - s.start).tolist(),
        "mode": found.modes,
        "graph_share": np.round(found.graph_share, 6).tolist(),
        **{c: s[c].tolist() for c in COLUMNS},
    }
    keys = list(columns)
    steps = [dict(zip(keys, values, strict=True)) for values in zip(*columns.values(), strict=True)]
    return {
        "steps_from": found.source,
        "steps": steps,
        "modes": mode_counts(found),
        "changes": changes(found),
        "fusion": fusion_json(found),
    }
