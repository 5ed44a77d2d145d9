"""The summary's per-step graph anatomy as text (analysis/anatomy.py; the `anatomy` key of docs/json.md)."""

from __future__ import annotations

from typing import Any

from graphscope.core.units import format_ns

ROWS = 12  # steps shown; --json has them all


def _shown(steps: list[dict[str, Any]], changed: list[int]) -> list[int]:
    """The steps a table shows: all when few, else the first ones and every change with the step before."""
    if len(steps) <= ROWS:
        return list(range(len(steps)))
    keep = {0, 1, 2, len(steps) - 1}
    for i in changed:
        keep |= {i - 1, i}
    return sorted(keep)[:ROWS]


def overlap_lines(found: dict[str, Any] | None) -> list[str]:
    """One line under GPUs when work started before the previous work on its stream ended."""
    if not found or not found["count"]:
        return []
    count, streams = found["count"], len(found["streams"])
    times, on = f"{count:,} time{'s' if count > 1 else ''}", f"{streams} stream{'s' if streams > 1 else ''}"
    return [
        f"  overlap on a stream: work began {times} before the previous work on its stream ended "
        f"({format_ns(found['ns'])} in all, on {on}; programmatic dependent launch shows this way; busy time "
        "counts it once)"
    ]


def anatomy_lines(found: dict[str, Any] | None) -> list[str]:
    """The 'Steps' section: modes, a table of steps, the mode changes and the fusion prediction."""
    if not found:
        return []
    steps = found["steps"]
    lines = ["", f"Steps and their graphs ({found['steps_from']})"]
    lines.append("  modes: " + ", ".join(f"{n} {mode}" for mode, n in found["modes"].items()))
    width = min(24, max(len(s["name"]) for s in steps))
    lines.append(
        f"  {'step':<{width}}  {'mode':<11}  {'graphs':>6}  {'islands':>7}  {'eager kernels':>13}  "
        f"{'seams':>5}  {'seam idle':>9}  {'in graphs':>9}  {'duration':>9}"
    )
    shown = _shown(steps, [c["index"] for c in found["changes"]])
    last = -1
    for i in shown:
        if i > last + 1:
            lines.append(f"  … {i - last - 1} steps")
        s = steps[i]
        name = s["name"] if len(s["name"]) <= width else s["name"][: width - 1] + "…"
        lines.append(
            f"  {name:<{width}}  {s['mode']:<11}  {s['graph_launches']:>6,}  {s['islands']:>7,}  "
            f"{s['island_kernels']:>13,}  {s['seams']:>5,}  {format_ns(s['seam_ns']):>9}  "
            f"{s['graph_share']:>9.0%}  {format_ns(s['duration_ns']):>9}"
        )
        last = i
    if last < len(steps) - 1:
        lines.append(f"  … {len(steps) - 1 - last} more steps (--json has them all)")
    for change in found["changes"]:
        back = ", and back after it" if change["returns"] else ""
        lines.append(f"  {change['step']}: {change['from']} -> {change['to']}{back}: {'; '.join(change['why'])}")
    fusion = found.get("fusion")
    if fusion:
        speedup = f"{fusion['speedup']:.2f}x" if fusion["speedup"] else "-"
        removed = sorted(s["removed_ns"] for s in fusion["steps"])[len(fusion["steps"]) // 2]
        lines.append(
            f"  one graph instead of the pieces ({len(fusion['steps'])} piecewise steps, medians): step "
            f"{format_ns(fusion['median_step_ns'])} -> predicted {format_ns(fusion['median_predicted_ns'])} "
            f"({speedup}), {format_ns(removed)} of GPU idle waiting for the CPU removed"
        )
        middle = len(fusion["steps"]) // 2
        measured = sorted(s["graph_launch_ns"] for s in fusion["steps"])[middle]
        modelled = sorted(s["graph_launch_model_ns"] for s in fusion["steps"])[middle]
        lines.append(
            f"    graph launch calls now: {format_ns(measured)} a step, against {format_ns(modelled)} the model "
            "prices them at (calls far slower than the model pay something else: tracing, a first launch, blocking)"
        )
        cost = fusion["launch_cost"]
        lines.append(
            f"    the merged graph's first node priced {fusion['latency_per_node_ns']:,.2f} ns later per added node "
            f"({fusion['latency_per_node_from']}); the launch-cost model: {cost['fixed_ns'] / 1000:.2f} us + "
            f"{cost['per_node_ns']:.2f} ns per node ({cost['gpu']}; {cost['source']})"
        )
        if fusion.get("median_predicted_untraced_ns") is not None:
            lines.append(
                f"    this trace's launches pay for its tracing: with untraced launches the step would be "
                f"{format_ns(fusion['median_predicted_untraced_ns'])}"
            )
        lines += [f"    assumes {text}" for text in fusion["assumptions"]]
        checked = fusion["checked_on_gpu"]
        if not checked:
            lines.append("    the prediction has not been checked against a measured full-graph step on a GPU yet")
        else:
            lines.append(f"    checked on a GPU: {checked['summary']}")
    return lines


def anatomy_tables(sides: list[tuple[str, dict[str, Any] | None]]) -> list[dict[str, Any]]:
    """A report's table of each side's steps by mode (medians over the steps of each mode), for sides whose
    trace has steps: `sides` is [(label, that side's summary or None)]."""
    columns = ["side", "mode", "steps", "graph launches", "islands", "eager kernels", "seam idle", "in graphs",
               "duration"]  # fmt: skip
    rows = []
    for label, summary in sides:
        found = (summary or {}).get("anatomy")
        if not found:
            continue
        for mode, count in found["modes"].items():
            mine = [s for s in found["steps"] if s["mode"] == mode]

            def median(key: str, mine: list[dict[str, Any]] = mine) -> float:
                values = sorted(s[key] for s in mine)
                middle = len(values) // 2
                return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2

            rows.append(
                [label, mode, count, f"{median('graph_launches'):g}", f"{median('islands'):g}",
                 f"{median('island_kernels'):g}", format_ns(median("seam_ns")), f"{median('graph_share'):.0%}",
                 format_ns(median("duration_ns"))]
            )  # fmt: skip
    if not rows:
        return []
    return [{"title": "Steps and their graphs (medians per mode)", "columns": columns, "rows": rows}]


def graph_launch_lines(found: dict[str, Any] | None, shown: int = 4) -> list[str]:
    """The graph launches judged against the launch-cost model (analysis/launch_judge.py), the graphs with
    the most launch time first."""
    if not found or not found["graphs"]:
        return []
    model = found["model"]
    edge = f" + {model['per_edge_ns']:.2f} ns per edge" if model.get("per_edge_ns") else ""
    lines = [
        "",
        f"Graph launches against the launch-cost model ({model['fixed_ns'] / 1000:.2f} us + "
        f"{model['per_node_ns']:.2f} ns per node{edge}; {model['gpu']})",
    ]
    for g in sorted(found["graphs"], key=lambda e: -e["median_call_ns"] * e["launches"])[:shown]:
        call = f"{g['median_call_ns'] / 1000:.1f} us"
        if g["nodes"] is None:
            lines.append(f"  graph {g['graph']}: launch call {call} (median of {g['launches']}); nodes not traced")
        else:
            nodes = f"{g['nodes']:,} node{'s' if g['nodes'] != 1 else ''}"
            lines.append(
                f"  graph {g['graph']}: {nodes}; its launch call took {call} (median of "
                f"{g['launches']}), what {nodes} cost by the model is {g['model_ns'] / 1000:.1f} us"
                + (
                    f"; splitting it into two pipelined graphs would save ~{g['split_saving_ns'] / 1000:.1f} us "
                    "a launch"
                    if (g["split_saving_ns"] or 0) >= 1000
                    else ""
                )
            )
        lines += [f"    also paid: {p}" for p in g["paid"]]
    return lines
