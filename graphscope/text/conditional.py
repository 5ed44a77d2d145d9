"""The readable lines of the conditional-node check (analysis/conditional_trace.py): iterations per step and
their cost in `run`, and whether a trace holds every body execution that ran."""

from __future__ import annotations

from typing import Any


def flag(key: str, result: dict[str, Any]) -> str:
    """'the trace shows 1 of 12 iterations per launch of WHILE decode#0 (mix: 5 recorded where 60 ran)'."""
    launches = max(result["launches"], 1)
    shown, ran = result["iterations_in_trace"] / launches, result["iterations_ran"] / launches
    kind = str(result.get("kind") or "conditional").upper()
    name, count = max(result["kernels_in_trace"].items(), key=lambda item: item[1])
    what = "iterations" if kind == "WHILE" else "body runs"
    return (
        f"the trace shows {shown:.3g} of {ran:.3g} {what} per launch of {kind} {key} ({name}: {count:,} recorded "
        f"where {result['iterations_ran']:,} ran over {result['launches']} launches): the profiler does not record "
        "every execution of a conditional node's body; take its per-iteration times from graphscope's counts"
    )


def run_lines(report: dict[str, Any]) -> list[str]:
    """`run`'s lines for each conditional construct and mode: body runs per step and their cost."""
    from graphscope.core.units import format_ns

    lines = []
    for mode, result in report["modes"].items():
        for key, loop in (result.get("conditionals") or {}).items():
            kind = str(loop.get("kind") or "conditional").upper()
            what = "iterations" if kind == "WHILE" else "body runs"
            runs = loop.get("runs_median")
            line = f"  {kind} {key} ({mode}): {runs:g} {what} per step" if runs is not None else f"  {kind} {key}"
            if loop.get("per_iteration_ns") is not None:
                line += (
                    f"; {format_ns(loop['per_iteration_ns'])} per iteration + {format_ns(loop['fixed_ns'])} fixed "
                    f"(the step with the loop capped at one iteration: {format_ns(loop['one_iteration_median_ns'])})"
                )
            elif loop.get("step_gpu_ns_per_run") is not None:
                line += f"; {format_ns(loop['step_gpu_ns_per_run'])} of the step's GPU span per {what[:-1]}"
            lines.append(line)
    return lines


def trace_lines(seen: dict[str, Any]) -> list[str]:
    """Under a profiled mode's trace line: whether its trace holds every body execution that ran."""
    checked = seen.get("conditionals_in_trace") or {}
    if "error" in checked:
        return [f"    conditional nodes not checked against this trace: {checked['error']}"]
    lines = []
    for key, result in checked.items():
        if result["shortfall"]:
            lines.append("    " + flag(key, result))
        else:
            per = result["iterations_ran"] / max(result["launches"], 1)
            kind = str(result["kind"]).upper()
            lines.append(f"    the trace shows every body execution of {kind} {key} ({per:.3g} per launch)")
    return lines


def summary_lines(checked: dict[str, dict[str, Any]] | None) -> str:
    """`summary`'s text after its report: the conditional nodes' check, where graphscope left counts."""
    if not checked:
        return ""
    return "\n\nConditional nodes (graphscope counted their iterations when it wrote this trace):\n" + "\n".join(
        trace_lines({"conditionals_in_trace": checked})
    )
