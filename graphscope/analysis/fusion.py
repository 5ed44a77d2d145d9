"""What fusing a piecewise step's seams would buy (the full-graph step predicted from the piecewise one),
and the summary's `anatomy` key that carries it with the steps (`anatomy_json`).

The prediction for one piecewise step (analysis/anatomy.py) rests on the ASSUMPTIONS below, printed
with it: the step loses its seams' GPU idle spent waiting for the CPU (the host work between pieces that
one graph replaces), and its graph launch calls plus its islands' launch calls
become one graph launch priced by a launch-cost model (core/launch_cost.py). Re-pricing k graph launches
of n_1..n_k nodes and the islands' w pieces of work as one graph of sum(n) + w nodes changes the modelled
launch time by (1 - k) x fixed + w x per-node, whatever the graphs' node counts (so a graph-trace-mode
export, which does not trace nodes, is predicted too).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphscope.analysis.anatomy import COLUMNS, Anatomy, changes, mode_counts
from graphscope.core.launch_cost import DEFAULT, LaunchCost
from graphscope.core.rules import MODE_PIECEWISE, STEP_MODES

ASSUMPTIONS = (
    "the islands' work is captured into the graph and runs as long as it ran eagerly",
    "the seams' GPU idle spent waiting for the CPU to submit the next graph or island disappears (the "
    "replay's own node-to-node cost is not added); seam idle with the next work already queued (waiting on "
    "another stream, an event, a copy) stays",
    "the step's graph launch calls and its islands' launch calls become one graph launch, priced by the "
    "launch-cost model",
    "nothing else on the host bounds the step (its other CPU work fits under the GPU's)",
)


def fused(found: Anatomy, cost: LaunchCost = DEFAULT) -> dict[str, np.ndarray]:
    """Per step (every step; meaningful for piecewise ones): the predicted full-graph step and its parts."""
    s = found.steps
    length = (s.end - s.start).astype(np.int64)
    relaunch = (1 - s.graph_launches) * cost.fixed_ns + s.island_work * cost.per_node_ns
    merged = np.where(s.graph_nodes >= 0, s.graph_nodes + s.island_work, -1)
    return {
        "step_ns": length,
        "seam_ns": s.seam_ns.astype(np.int64),
        "removed_ns": s.seam_host_wait_ns.astype(np.int64),
        "relaunch_ns": relaunch,  # modelled change of the graph launch time (negative: saved)
        "predicted_ns": length - s.seam_host_wait_ns + relaunch,
        "merged_nodes": merged,
        "host_launch_ns": (s.graph_launch_ns + s.island_launch_ns).astype(np.int64),  # measured, now
        "host_launch_after_ns": np.where(merged >= 0, cost.launch_ns(np.maximum(merged, 0)), np.nan),
        "graph_launch_ns": s.graph_launch_ns.astype(np.int64),  # measured: the step's graph launch calls
        # the model's price of those same launches (nodes untraced: their fixed part only)
        "graph_launch_model_ns": s.graph_launches * cost.fixed_ns + np.maximum(s.graph_nodes, 0) * cost.per_node_ns,
    }


def fusion_json(found: Anatomy, cost: LaunchCost = DEFAULT) -> dict[str, Any] | None:
    """The prediction for every piecewise step, with the medians, the model and its assumptions (None when
    no step is piecewise)."""
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
    step = float(np.median(parts["step_ns"][piecewise]))
    predicted = float(np.median(parts["predicted_ns"][piecewise]))
    return {
        "steps": steps,
        "median_step_ns": step,
        "median_predicted_ns": predicted,
        "speedup": round(step / predicted, 4) if predicted > 0 else None,
        "launch_cost": cost.to_json(),
        "assumptions": list(ASSUMPTIONS),
        "checked_on_gpu": False,
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
