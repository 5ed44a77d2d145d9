"""The frozen-at-capture audit: two captures of one step taken at two states (the graph as it was captured,
and a fresh capture after the workload's reset, when a request's values are in place), diffed kernel node
by kernel node, before any wrong answer shows.

A launch value that differs between the two captures is one the graph freezes: replayed at the other
state it launches the first capture's value (a pointer the eager step re-allocates, a scalar, a grid from
a dummy size, a host value read at capture). Pointers into memory the allocator holds as free, and
pointers outside the graph's pool and the workload's buffers, are flagged in either capture. A node whose
arguments are one opaque blob (cuBLASLt) or whose layout the driver cannot give is not audited; the share
of nodes and of GPU time that was audited is said.
"""

from __future__ import annotations

from typing import Any

from graphscope.diverge.launches import auditable, difference_text, differences

FLAGS = {
    "frozen_pointer": "a pointer that moves between the two states: the graph keeps the one it captured",
    "frozen_scalar": "a scalar that differs between the two states: the graph keeps the one it captured",
    "frozen_grid": "a launch shape (grid, block, shared memory) that differs between the two states",
    "freed": "a pointer into memory the allocator holds as free",
    "outside": "a pointer outside the graph's memory pool and the workload's buffers",
    "structure": "the two captures launch different kernels from here on",
}
"""What each audit flag means (rendered beside the node)."""

OUTSIDE_KINDS = ("device", "freed")


def _kind(what: str) -> str:
    return {"pointer": "frozen_pointer", "scalar": "frozen_scalar"}.get(what, "frozen_grid")


def audit_launches(
    first: list[dict[str, Any]],
    second: list[dict[str, Any]],
    times: list[float] | None = None,
    allocator_known: bool = False,
    control: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Flags per kernel node of `first` (the graph under test) against `second` (the other state's capture),
    and the share of nodes and GPU time (`times`, ns per node of `first`) that could be audited.
    `allocator_known`: every allocation of the framework is known (PyTorch's allocator snapshot), so memory
    outside it is foreign; without it (CuPy's pool is not listed) only freed memory is flagged. `control`:
    a third capture at the second's state; scalar bytes that differ between it and `second` are host bytes
    nobody sets (measured on the H100: CuPy's elementwise kernels pass an index field left as it was, which
    flagged 2 sound nodes of 17 runs) and are not held against the graph."""
    nodes: list[dict[str, Any]] = []
    for position, launch in enumerate(first):
        other = second[position] if position < len(second) else None
        entry: dict[str, Any] = {"position": position, "name": launch.get("name"), "auditable": auditable(launch)}
        for key in ("site", "line", "operator", "module"):
            if launch.get(key):
                entry[key] = launch[key]
        flags: list[dict[str, Any]] = []
        if other is None or other.get("name") != launch.get("name"):
            flags.append({"flag": "structure", "text": f"the other capture launches {(other or {}).get('name')}"})
            entry["flags"] = flags
            nodes.append(entry)
            continue
        unstable = _unstable(other, control[position]) if control and position < len(control) else {}
        for diff in differences(launch, other):
            if diff["what"] == "scalar" and not _moved(launch, other, diff["index"], unstable.get(diff["index"])):
                continue
            if diff["what"] == "pointer" and set(diff.get("memory") or ()) == {"graph_pool"}:
                continue  # each capture's own intermediates: where they land is the graph's business
            if diff["what"] == "scalar" and not entry["auditable"]:
                continue  # an opaque blob: its scalars cannot be told from padding or handles
            flags.append({"flag": _kind(diff["what"]), "text": difference_text(diff).replace("eager", "other state")})
        for index, param in enumerate(launch.get("params") or []):
            if param.get("pointer") and param.get("memory") in (OUTSIDE_KINDS if allocator_known else ("freed",)):
                flag = "freed" if param["memory"] == "freed" else "outside"
                flags.append({"flag": flag, "text": f"argument {index} points into {param['memory']} memory"})
        entry["flags"] = flags
        nodes.append(entry)
    audited = [n for n in nodes if n["auditable"]]
    result: dict[str, Any] = {
        "nodes": nodes,
        "kernel_nodes": len(first),
        "other_nodes": len(second),
        "audited_nodes": len(audited),
        "node_share": len(audited) / len(first) if first else None,
        "flagged": [n["position"] for n in nodes if n["flags"]],
    }
    if times is not None and len(times) == len(first) and sum(times) > 0:
        result["time_share"] = sum(t for t, n in zip(times, nodes) if n["auditable"]) / sum(times)
        result["gpu_ns"] = sum(times)
    return result


def audit_sizes(small: list[dict[str, Any]], large: list[dict[str, Any]], sizes: tuple[int, int]) -> dict[str, Any]:
    """Two captures of a SIZES workload at two batch sizes: arguments may differ (each size has its own
    graph), but a node whose scalar arguments change with the size while its grid stays the same was
    probably given a grid chosen for one size (a split count picked for a dummy batch). Kernels that
    size their grid to the GPU (persistent, grid-stride) look the same: the flag is a lead, not a verdict.
    Nodes are compared up to the first position where the two sizes launch different kernels."""
    nodes: list[dict[str, Any]] = []
    compared = 0
    for position, (a, b) in enumerate(zip(small, large)):
        if a.get("name") != b.get("name"):
            break
        compared += 1
        entry: dict[str, Any] = {"position": position, "name": a.get("name"), "auditable": auditable(a), "flags": []}
        for key in ("site", "line"):
            if a.get(key):
                entry[key] = a[key]
        found = differences(a, b)
        scalars = [d for d in found if d["what"] == "scalar"]
        if entry["auditable"] and scalars and not any(d["what"] == "grid" for d in found):
            text = difference_text(scalars[0]).replace("captured", f"at {sizes[0]}").replace("eager", f"at {sizes[1]}")
            entry["flags"].append(
                {"flag": "frozen_grid", "text": f"grid {_grid(a)} at both sizes while {text}"}
            )
        nodes.append(entry)
    audited = [n for n in nodes if n["auditable"]]
    return {
        "sizes": list(sizes),
        "nodes": nodes,
        "kernel_nodes": len(small),
        "other_nodes": len(large),
        "compared_nodes": compared,
        "audited_nodes": len(audited),
        "node_share": len(audited) / len(small) if small else None,
        "flagged": [n["position"] for n in nodes if n["flags"]],
    }


def _grid(launch: dict[str, Any]) -> str:
    return "x".join(str(v) for v in launch.get("grid") or ())


def _unstable(second: dict[str, Any], control: dict[str, Any]) -> dict[int, set[int]]:
    """Per parameter, the byte offsets that differ between two captures at one state."""
    found: dict[int, set[int]] = {}
    if second.get("name") != control.get("name"):
        return found
    for index, (a, b) in enumerate(zip(second.get("params") or [], control.get("params") or [])):
        if a["hex"] != b["hex"]:
            x, y = bytes.fromhex(a["hex"]), bytes.fromhex(b["hex"])
            found[index] = {i for i in range(min(len(x), len(y))) if x[i] != y[i]}
    return found


def _moved(launch: dict[str, Any], other: dict[str, Any], index: int, unstable: set[int] | None) -> bool:
    """Does parameter `index` differ in a byte that is stable at one state?"""
    if not unstable:
        return True
    x, y = bytes.fromhex(launch["params"][index]["hex"]), bytes.fromhex(other["params"][index]["hex"])
    return any(x[i] != y[i] for i in range(min(len(x), len(y))) if i not in unstable)
