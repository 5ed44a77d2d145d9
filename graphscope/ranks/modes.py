"""Each rank's per-step graph mode in a rank job: full graph, piecewise, eager or mixed
(analysis/anatomy.py, core/rules.py STEP_MODES), the steps where a rank's mode changes, and the ranks
whose usual mode is not the job's (one rank falling back to eager while the others replay graphs).

The modes are those of the rank's file, over the steps the anatomy finds in it (its own step family, which
may differ from the family the job aligns ranks by); a file holding several ranks gives each of them its
file's modes. A rank's usual mode is the one most of its steps ran in (steps with no GPU work aside; ties
go to the first in STEP_MODES order); the job's usual mode is the one most ranks usually run in.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from graphscope.core.rules import MODE_IDLE, STEP_MODES

MOST_CHANGES = 8  # a rank's mode changes kept in the job (the count is kept whole)


def file_modes(summary: dict[str, Any]) -> dict[str, Any] | None:
    """A file's per-step modes from its summary's `anatomy` (docs/json.md); None for a file without steps."""
    anatomy = summary.get("anatomy")
    if not anatomy:
        return None
    changes = anatomy.get("changes") or []
    return {
        "steps_from": anatomy.get("steps_from"),
        "modes": [s["mode"] for s in anatomy["steps"]],
        "counts": anatomy.get("modes") or {},
        "change_count": len(changes),
        "changes": [{k: c[k] for k in ("step", "from", "to", "returns")} for c in changes[:MOST_CHANGES]],
    }


def usual_mode(counts: dict[str, int]) -> str | None:
    """The mode most steps ran in (steps without GPU work aside); None when no step did GPU work."""
    working = {mode: n for mode, n in counts.items() if mode != MODE_IDLE and n > 0}
    if not working:
        return None
    return min(working, key=lambda mode: (-working[mode], STEP_MODES.index(mode)))


def job_modes(rows: list[dict[str, Any]], ranks: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The job's `graph_modes` (docs/json.md); each of `ranks` (the combined job's rows) gets `graph_mode`
    (its usual mode), `step_modes` ({mode: steps}) and `mode_changes` (how many steps changed mode).
    None when no rank's file has steps."""
    found: dict[tuple[Any, Any], dict[str, Any]] = {
        (r["path"], r.get("unit")): r.get("graph_modes") or {} for r in rows
    }
    seen: Counter[str] = Counter()
    for rank in ranks:
        modes = found.get((rank["path"], rank.get("unit")))
        rank["graph_mode"] = usual_mode(modes["counts"]) if modes else None
        rank["step_modes"] = modes["counts"] if modes else None
        rank["mode_changes"] = modes["change_count"] if modes else None
        if rank["graph_mode"] is not None:
            seen[rank["graph_mode"]] += 1
    if not seen:
        return None
    usual = min(seen, key=lambda mode: (-seen[mode], STEP_MODES.index(mode)))
    differ = [
        {"rank": r["rank"], "mode": r["graph_mode"], "step_modes": r["step_modes"]}
        for r in ranks
        if r["graph_mode"] is not None and r["graph_mode"] != usual
    ]
    changing = [
        {"rank": r["rank"], "count": r["mode_changes"], "changes": found[(r["path"], r.get("unit"))]["changes"]}
        for r in ranks
        if r["mode_changes"]
    ]
    return {"usual": usual, "ranks": sum(seen.values()), "by_mode": dict(seen), "differ": differ, "changing": changing}
