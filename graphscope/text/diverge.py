"""`graphscope diverge` as text: the outputs' comparison, the first differing node with its captured launch
beside the eager one and what differs, the buffers that differ, how the search went, and the audit."""

from __future__ import annotations

from typing import Any

from graphscope.diverge.audit import FLAGS
from graphscope.diverge.launches import difference_text, launch_text, node_title, param_text

COLUMN = 48


def _pool_only(diff: dict[str, Any]) -> bool:
    """A pointer both of whose sides lie in the graphs' own pool: where each capture put an intermediate."""
    return diff.get("what") == "pointer" and set(diff.get("memory") or ()) == {"graph_pool"}


def difference_lines(diffs: list[dict[str, Any]], indent: str) -> list[str]:
    """Each difference on its line; pointers that only moved inside the graphs' pool summed up in one."""
    lines = [f"{indent}{difference_text(d)}" for d in diffs if not _pool_only(d)]
    moved = sum(1 for d in diffs if _pool_only(d))
    if moved:
        lines.append(f"{indent}{moved} pointer(s) into the graphs' own pool differ: where each capture put its "
                     "intermediates, not a fault by itself")
    return lines


def side_by_side(left: list[str], right: list[str], titles: tuple[str, str]) -> list[str]:
    """Two launches in two columns; a line whose halves differ is marked with '*'."""
    lines = [f"    {titles[0]:<{COLUMN}}  {titles[1]}"]
    for index in range(max(len(left), len(right))):
        a = left[index] if index < len(left) else ""
        b = right[index] if index < len(right) else ""
        mark = "*" if a != b else " "
        shown = a if len(a) <= COLUMN else a[: COLUMN - 1] + "~"
        lines.append(f"  {mark} {shown:<{COLUMN}}  {b}")
    return lines


def _outputs_line(result: dict[str, Any]) -> str:
    outputs = result.get("outputs") or {}
    poisoned = result.get("poisoned_outputs") or {}
    if outputs.get("match") is False:
        return (
            f"outputs: the graph's differ from eager's ({outputs.get('worst') or 'an output'}: max |diff| "
            f"{outputs.get('max_abs_diff', 0.0):.3g})"
        )
    if result.get("hidden") or poisoned.get("match") is False:
        return (
            "outputs: match on a plain replay, but differ once the buffers are poisoned: the graph leaves part "
            "of its work undone and eager's values, still in memory, stand in for it"
        )
    return "outputs: the graph's match eager's"


def render_search(result: dict[str, Any]) -> str:
    """The search's answer as the CLI prints it."""
    lines = [f"graphscope diverge: {result.get('workload', '')}", _outputs_line(result)]
    if result.get("error"):
        return "\n".join([*lines, f"the search failed: {result['error']}"])
    position = result.get("position")
    if position is None:
        lines.append(result.get("note") or "no node differs")
        return "\n".join(lines)
    captured, reference = result.get("captured"), result.get("reference")
    structural = " (the two captures launch different kernels from here)" if result.get("structural") else ""
    lines.append(f"first differing node: {node_title(captured, position)}{structural}")
    trials = result.get("trials") or []
    lines.append(
        f"  found in {len(trials)} prefix trials ({result.get('search_replays', 0)} replays) over "
        f"{result.get('nodes', 0)} kernel, copy and memset nodes; {result.get('inputs', 0)} of "
        f"{result.get('regions', 0)} buffers "
        f"are inputs ({result.get('classify_replays', 0)} replays to tell); {result.get('seconds', 0.0):.2f} s"
    )
    if result.get("note"):
        lines.append(f"  note: {result['note']}")
    eager = result.get("eager")
    diffs = result.get("eager_differences") if eager else result.get("differences")
    against = "eager launch (ctx.launch)" if eager else "eager launch (a fresh capture of the eager step)"
    if diffs:
        lines.append(f"  what differs, captured vs {against}:")
        lines.extend(difference_lines(diffs, "    "))
    else:
        lines.append(
            "  the node's launch is the same as eager's: it reads a buffer something before it (a copy, a memset, "
            "work outside the graph) left different"
        )
    if result.get("buffers"):
        lines.append("  buffers that differ after the node:")
    for buffer in result.get("buffers") or []:
        which = f" ({buffer['which']})" if buffer.get("which") else ""
        text = f"    argument {buffer['arg']}{which}: {buffer['differing_bytes']:,} of {buffer['bytes']:,} bytes differ"
        if "first_byte" in buffer:
            text += f", from byte {buffer['first_byte']:,}"
        if "values" in buffer:
            graph, eager_value = buffer["values"]
            text += f" (element {buffer['first_element']}: graph {graph:.6g}, eager {eager_value:.6g})"
        lines.append(text)
    other = eager or reference
    if captured and other:
        lines.extend(side_by_side(launch_text(captured), launch_text(other), ("captured", "eager")))
    return "\n".join(lines)


def launch_rows(captured: dict[str, Any] | None, eager: dict[str, Any] | None) -> list[tuple[str, str, str, bool]]:
    """(field, captured, eager, differs) rows of one node's two launches: what the Run panel's table shows."""
    a, b = captured or {}, eager or {}

    def dim(value: Any) -> str:
        return "x".join(str(v) for v in value) if isinstance(value, list | tuple) else str(value or "")

    rows = [
        ("kernel", str(a.get("name", "")), str(b.get("name", ""))),
        ("from", ", ".join(str(a[k]) for k in ("site", "line", "module", "operator") if a.get(k)),
         ", ".join(str(b[k]) for k in ("site", "line", "module", "operator") if b.get(k))),
        ("grid", dim(a.get("grid")), dim(b.get("grid"))),
        ("block", dim(a.get("block")), dim(b.get("block"))),
        ("shared memory", f"{a.get('shared_mem', 0)} B", f"{b.get('shared_mem', 0)} B"),
    ]
    mine, theirs = a.get("params") or [], b.get("params") or []
    for index in range(max(len(mine), len(theirs))):
        left = param_text(mine[index]) if index < len(mine) else ""
        right = param_text(theirs[index]) if index < len(theirs) else ""
        param = mine[index] if index < len(mine) else theirs[index]
        rows.append((param.get("label") or f"arg {index} @{param['offset']}", left, right))
    hexes = [(p["hex"] if i < len(mine) else None) for i, p in enumerate(mine)]
    out = []
    for index, (label, left, right) in enumerate(rows):
        differs = left != right
        if index >= 5 and index - 5 < len(hexes) and index - 5 < len(theirs):
            differs = hexes[index - 5] != theirs[index - 5]["hex"]  # the bytes, not their rendering
        if label == "from":
            differs = False  # a capture of eager and the graph come from the same line
        out.append((label, left, right, differs))
    return out


def divergence_lines(result: dict[str, Any]) -> list[str]:
    """The lines `graphscope run` adds when a graph's outputs differ: the node and what differs."""
    if result.get("error"):
        return [f"  where the graph departs: the search failed ({result['error']})"]
    position = result.get("position")
    if position is None:
        return [f"  where the graph departs: {result.get('note') or 'no kernel node differs'}"]
    lines = [f"  first node that differs: {node_title(result.get('captured'), position)}"]
    diffs = result.get("eager_differences") if result.get("eager") else result.get("differences")
    lines.extend(difference_lines(diffs or [], "    "))
    return lines


def render_audit(audit: dict[str, Any]) -> str:
    """The frozen-at-capture audit: shares audited, then each flagged node with its findings."""
    share = audit.get("node_share")
    time_share = audit.get("time_share")
    lines = [
        "frozen-at-capture audit (the graph against a capture at a second state):",
        f"  audited {audit.get('audited_nodes', 0)} of {audit.get('kernel_nodes', 0)} kernel, copy and memset nodes"
        + (f" ({share:.0%})" if share is not None else "")
        + (f", {time_share:.0%} of their GPU time" if time_share is not None else "")
        + "; the rest pass their arguments as one opaque blob (cuBLASLt) or have no readable layout",
    ]
    flagged = [n for n in audit.get("nodes", []) if n.get("flags")]
    if not flagged:
        lines.append("  nothing flagged: every audited argument is the same at both states")
    for node in flagged:
        lines.append(f"  {node_title(node, node['position'])}")
        for flag in node["flags"]:
            lines.append(f"    {flag['flag']}: {flag['text']}")
    if flagged:
        lines.append("  " + "; ".join(f"{k}: {v}" for k, v in FLAGS.items() if any(
            f["flag"] == k for n in flagged for f in n["flags"])))
    sizes = audit.get("sizes")
    if sizes and sizes.get("error"):
        lines.append(f"  at two batch sizes: not audited ({sizes['error']})")
    elif sizes:
        small, large = sizes["sizes"]
        lines.append(
            f"  at batch sizes {small} and {large}: {sizes['compared_nodes']} of {sizes['kernel_nodes']} kernel nodes "
            "compared (up to the first that differs in kernel), a grid that stays while the size changes flagged"
        )
        for node in (n for n in sizes["nodes"] if n["flags"]):
            lines.append(f"  {node_title(node, node['position'])}")
            lines.extend(f"    {flag['flag']}: {flag['text']}" for flag in node["flags"])
    return "\n".join(lines)


def render(result: dict[str, Any]) -> str:
    """Search, then audit where there is one."""
    text = render_search(result)
    if result.get("audit"):
        text += "\n" + render_audit(result["audit"])
    return text
