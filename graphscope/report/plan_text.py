"""The readable form of `graphscope plan` (input: the plan's JSON form)."""

from __future__ import annotations

from typing import Any

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
    order = plan.get("order_effect")
    if order:
        lines.append(
            f"  capture order: largest first took {format_bytes(order['largest_first_bytes'])}, smallest first "
            f"{format_bytes(order['smallest_first_bytes'])}"
        )
    served = plan.get("served")
    if served:
        lines.append("  " + served_line(served))
    lines += ["", "Frontier (expected step time against graph memory)"]
    for point in plan["memory_frontier"][:12]:
        lines.append(
            f"  {format_bytes(point['memory_bytes']):>10}  {format_ns(point['expected_ns']):>10}  "
            f"{len(point['sizes'])} sizes"
        )
    return "\n".join(lines)
