"""The readable form of `graphscope plan` (input: the plan's JSON form)."""

from __future__ import annotations

from typing import Any

from graphscope.core.rules import PLAN_EXPECTED, PLAN_PREDICTED, PLAN_SWITCHING, WORTHWHILE_GAIN
from graphscope.core.text import printable_tree
from graphscope.core.units import format_bytes, format_ns


def served_line(served: dict[str, Any]) -> str:
    """The serving check in one line: measured mean against the planner's prediction for the same requests."""
    eager = served["requests"] - served["replayed"]
    error = served.get("error")
    return (
        f"served {served['requests']:,} requests drawn from the traffic through the chosen graphs "
        f"({served['replayed']:,} replayed, {eager:,} eager): mean step {format_ns(served['served_mean_ns'])} "
        f"against {format_ns(served['predicted_ns'])} predicted"
        + (f" ({error:+.1%})" if error is not None else "")
        + (
            f"; {format_ns(served['predicted_here_ns'])} ({served['error_here']:+.1%}) with the sizes re-measured "
            "in the serving child"
            if served.get("error_here") is not None
            else ""
        )
        + _switch_text(served)
    )


def _switch_text(served: dict[str, Any]) -> str:
    """How much of the prediction is switching between graphs, and what serving measured it at."""
    if not served.get("switch_penalty_ns") and served.get("served_switch_ns") is None:
        return ""
    text = (
        f"; {served['switches']:,} switches between graphs priced at {format_ns(served.get('switch_penalty_ns') or 0)}"
        " each"
    )
    if served.get("served_switch_ns") is not None:
        text += (
            f" (serving the same requests grouped by graph: {format_ns(served['grouped_mean_ns'])} mean, "
            f"{format_ns(served['served_switch_ns'])} a switch)"
        )
    return text


def under_rule_lines(plan: dict[str, Any]) -> list[str]:
    """Why each chosen size the per-size table says does not pay is in the plan (plan/explain.py)."""
    lines = []
    for entry in plan.get("kept_under_rule") or []:
        low, high = entry["serves_sizes"]
        sizes = f"size {high}" if low == high else f"sizes {low}-{high}"
        instead = f"pad up to size {entry['instead']}" if entry["instead"] else "run eagerly"
        mine, other = entry["with"], entry["without"]
        text = (
            f"size {entry['size']} is chosen though its graph saves {entry['saving']:.0%} of its eager step "
            f"(under the ~{WORTHWHILE_GAIN:.0%} rule): it serves the {entry['serves_share']:.1%} of requests of "
            f"{sizes}, which without it would {instead}. Without it (with it): {PLAN_EXPECTED} "
            f"{format_ns(other['expected_ns'])} ({format_ns(mine['expected_ns'])}), padding waste "
            f"{other['padding_waste']:.1%} ({mine['padding_waste']:.1%}), {PLAN_SWITCHING} "
            f"{format_ns(other['switch_ns'])} ({format_ns(mine['switch_ns'])}), {PLAN_PREDICTED} "
            f"{format_ns(other['predicted_ns'])} ({format_ns(mine['predicted_ns'])}); it costs "
            f"{format_bytes(entry['memory_bytes'])} of graph memory and {format_ns(entry['startup_ns'])} of capture"
        )
        if other["predicted_ns"] < mine["predicted_ns"]:
            text += (
                f"; with {PLAN_SWITCHING} priced, the set without it predicts less: the optimiser minimises the "
                f"{PLAN_EXPECTED} (exact), and {PLAN_SWITCHING} is added to each set afterwards"
            )
        lines.append(text)
    return lines


def render_plan(plan: dict[str, Any]) -> str:
    plan = printable_tree(plan)  # terminal controls in names escaped
    lines = [f"{plan['workload']}: {len(plan['per_size'])} batch sizes measured ({plan['reps']} repetitions each)"]
    environment = plan.get("environment") or {}
    if environment.get("gpu"):
        lines[0] += f" on {environment['gpu']}"
    lines += ["", f"Plan: {plan['verdict']}", ""]
    lines.append(f"  {'size':>6} {'eager':>10} {'graph':>10} {'saves':>7} {'memory':>10} {'capture':>10}  pays")
    for row in plan["per_size"]:
        lines.append(
            f"  {row['size']:>6} {format_ns(row['eager_ns']):>10} {format_ns(row['graph_ns']):>10} "
            f"{row['saving']:>7.0%} {format_bytes(row['memory_bytes']):>10} {format_ns(row['startup_ns']):>10}  "
            + ("yes" if row["pays"] else "no (under ~20%)")
        )
    if plan.get("stops_paying_above"):
        lines.append(f"  graphs stop paying above size {plan['stops_paying_above']} (the ~20% rule)")
    lines += ["  " + line for line in under_rule_lines(plan)]
    order = plan.get("order_effect")
    if order:
        lines.append(
            f"  capture order: largest first took {format_bytes(order['largest_first_bytes'])}, smallest first "
            f"{format_bytes(order['smallest_first_bytes'])}"
        )
    served = plan.get("served")
    if served:
        lines.append("  " + served_line(served))
    lines += ["", f"Frontier ({PLAN_EXPECTED} against graph memory)"]
    for point in plan["memory_frontier"][:12]:
        lines.append(
            f"  {format_bytes(point['memory_bytes']):>10}  {format_ns(point['expected_ns']):>10}  "
            f"{len(point['sizes'])} sizes"
        )
    return "\n".join(lines)
