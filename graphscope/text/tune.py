"""The readable forms of `graphscope dag` and `graphscope tune` (inputs: their JSON forms)."""

from __future__ import annotations

from typing import Any

from graphscope.core.launch_config import format_dim
from graphscope.core.text import printable, printable_tree
from graphscope.core.units import format_ns
from graphscope.graph.edges import edge_summary, pdl_lines
from graphscope.graph.model import Dag


def _dim(value: list[int] | tuple[int, ...] | None) -> str:
    return format_dim(value, whole=True)


def render_dag(dag: Dag, title: str) -> str:
    """One row per box of the folded DAG (`Dag.fold`): a run of identical nodes is one row with its median."""
    kinds: dict[str, int] = {}
    for node in dag.nodes:
        kinds[node.type] = kinds.get(node.type, 0) + 1
    tunable = sum(1 for n in dag.nodes if n.site)
    title = printable(title)
    lines = [
        f"{title}: " + (f"graph {dag.graph_id}, " if dag.graph_id is not None else "") + f"{len(dag.nodes)} nodes "
        f"({', '.join(f'{v} {k}' for k, v in sorted(kinds.items()))}), "
        + (edge_summary(dag) if dag.edges_known else "edges unknown")
        + f", {tunable} tunable launch sites"
    ]
    lines += [f"  note: {printable(note)}" for note in dag.notes]
    attributed = any(n.detail.get("launched_by") for n in dag.nodes)
    wide = max([8] + [len(n.type) for n in dag.nodes])  # "conditional" is wider than the usual kinds
    header = f"  {'nodes':<11} {'type':<{wide}} {'name':<22} {'grid':<12} {'block':<10} {'site':<14} {'duration':<15}"
    lines.append(header + (" launched by" if attributed else ""))
    for fold in dag.fold():
        first = fold.first
        site = first.site or "-"
        if len(fold) > 1 and first.site:
            site = f"{site}.. ({len(fold)})"
        duration = format_ns(fold.median_ns) if fold.median_ns is not None else "-"
        if len(fold) > 1 and fold.median_ns is not None:
            duration += " median"
        lines.append(
            f"  {fold.span:<11} {first.type:<{wide}} {printable(first.name)[:22]:<22} {_dim(first.grid):<12} "
            f"{_dim(first.block):<10} {site:<14} {duration:<15}"
            + (f" {printable(str(first.detail.get('launched_by', '-')))}" if attributed else "")
        )
        if first.type == "conditional":  # its facts, then each body graph indented (graph/conditional.py)
            lines += _conditional_lines(first)
    lines += pdl_lines(dag)  # programmatic edges (PDL), with their gaps and verdicts where measured
    return "\n".join(line.rstrip() for line in lines)


def _conditional_lines(node: Any) -> list[str]:
    from graphscope.graph.conditional import body_title, facts, label

    lines = [f"    {label(node)}: {printable(facts(node) or 'nothing measured')}"]
    for i, body in enumerate(node.bodies):
        lines += ["    " + line for line in render_dag(body, body_title(node, i)).splitlines()]
    return lines


def render_tuning(result: dict[str, Any]) -> str:
    result = printable_tree(result)  # terminal controls in names escaped
    summary = result["summary"]
    lines = [
        f"{result['workload']}: strategy {result['strategy']}, {result['reps']} replays per trial "
        f"(enough for a +-1% interval of the median)"
    ]
    for key, knob in result["knobs"].items():
        blocks = ", ".join(format_dim(c) for c in knob["candidates"])
        lines.append(
            f"  knob {key}: {knob['sites']} launch sites, baseline block {format_dim(knob['baseline'])}, "
            f"candidates {blocks}"
        )
    lines.append("")
    lines.append(f"  {'trial':<28} {'how':<14} {'median':>10}  {'95% interval':<22} status")
    for position, trial in enumerate(result["trials"]):
        if trial.get("site") and trial.get("block"):
            label = f"{trial['site']}={format_dim(trial['block'])}"
        elif position == 0:  # the in-place baseline comes first
            label = "baseline"
        else:
            label = ", ".join(f"{k}={format_dim(v)}" for k, v in trial["config"]["blocks"].items()) or "baseline"
        interval = (
            f"{format_ns(trial['ci_low_ns'])}-{format_ns(trial['ci_high_ns'])}"
            if trial.get("median_ns") is not None
            else "-"
        )
        median = format_ns(trial["median_ns"]) if trial.get("median_ns") is not None else "-"
        status = trial["status"] + (f" ({trial['reason']})" if trial.get("reason") else "")
        lines.append(f"  {label[:28]:<28} {trial['how']:<14} {median:>10}  {interval:<22} {status}")
    lines.append("")
    if summary.get("median_apply_ns") is not None and result.get("capture"):
        capture = result["capture"]
        rebuild = capture["capture_ns"] + capture["instantiate_ns"] + capture["upload_ns"]
        lines.append(
            f"  applying a config in place: {format_ns(summary['median_apply_ns'])} (median); "
            f"capture + instantiate + upload: {format_ns(rebuild)}"
        )
    if summary.get("in_place_penalty"):
        lines.append(f"  in-place replay / fresh-capture replay of the same config: {summary['in_place_penalty']:.3f}")
    for restart in result.get("restarts", []):
        lines.append(f"  the workload process was restarted {restart}")
    lines += render_isolation(summary.get("isolation") or [])
    lines.append(f"Conclusion: {summary['conclusion']}")
    return "\n".join(lines)


def render_isolation(isolation: list[dict[str, Any]]) -> list[str]:
    """Each knob's candidates in the graph (whole step, in place) and alone (the kernel by itself)."""
    if not isolation:
        return []
    lines = ["", "In the graph vs alone (each candidate from the baseline; alone = the kernel by itself):"]
    for knob in isolation:
        lines.append(f"  {knob['verdict']}")
        lines.append(f"    {'block':<10} {'in the graph':>14} {'rank':>5}  {'alone':>10} {'rank':>5}  status")
        rows = knob["candidates"]
        graph_rank = _ranks([c["in_graph"] for c in rows])
        alone_rank = _ranks([c["alone"] for c in rows])
        for row, g, a in zip(rows, graph_rank, alone_rank):
            graph, alone = row["in_graph"], row["alone"]
            lines.append(
                f"    {format_dim(row['block']):<10} {ok_median(graph):>14} {g:>5}  {ok_median(alone):>10} {a:>5}  "
                + candidate_status(row)
            )
    return lines


def candidate_status(row: dict[str, Any]) -> str:
    """'ok', or the failing side's status with its cause: the graph's first (what failed there is not run alone)."""
    graph, alone = row["in_graph"], row["alone"]
    status = graph["status"] if graph["status"] != "ok" else alone["status"]
    reason = graph.get("reason") or alone.get("reason") or ""
    return status + (f" ({reason})" if reason and status != "ok" else "")


def ok_median(trial: dict[str, Any]) -> str:
    """A measured trial's median, '-' for one that was not."""
    return format_ns(trial["median_ns"]) if trial.get("median_ns") is not None and trial["status"] == "ok" else "-"


def _ranks(trials: list[dict[str, Any]]) -> list[str]:
    """1 for the fastest usable trial, '-' for the rest that were not measured."""
    usable = sorted((t["median_ns"], i) for i, t in enumerate(trials) if t["status"] == "ok" and t.get("median_ns"))
    ranks = ["-"] * len(trials)
    for rank, (_, i) in enumerate(usable, 1):
        ranks[i] = str(rank)
    return ranks
