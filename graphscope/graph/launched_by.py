"""Which PyTorch operator and module launched each kernel node of a live graph.

The workload child profiles one eager step (workload/child/op_attribution.py) and hands over its kernel
launches in order, each with the module and operator around it. Capture records the same step, so the
graph's kernel nodes (capture order) and the profiled launches are the same sequence wherever the step
is deterministic; they are aligned by kernel name (difflib's longest matching blocks), so a kernel that
only one side has (a cuBLAS heuristic that differs under capture, a one-off copy) shifts nothing.
"""

from __future__ import annotations

from difflib import SequenceMatcher
from typing import Any

from graphscope.core.symbols import kernel_short_name
from graphscope.graph.model import DagNode


def launcher_text(module: str | None, op: str | None) -> str | None:
    """'layers.0.self_attn.q_proj / aten::linear', or whichever half is known."""
    parts = [p for p in (module, op) if p]
    return " / ".join(parts) if parts else None


def attach_launchers(nodes: list[DagNode], launches: list[dict[str, Any]]) -> int:
    """Give kernel nodes `detail['module']`, `detail['op']`, `detail['frame']` (the user's line),
    `detail['shapes']` and `detail['launched_by']` from the profiled launches ({'kernel': name, 'module',
    'op', 'frame', 'shapes'}, in launch order); returns how many matched."""
    kernels = [n for n in nodes if n.type == "kernel"]
    ours = [n.name for n in kernels]
    theirs = [kernel_short_name(str(launch["kernel"])) for launch in launches]
    matched = 0
    for block in SequenceMatcher(None, ours, theirs, autojunk=False).get_matching_blocks():
        for offset in range(block.size):
            node, launch = kernels[block.a + offset], launches[block.b + offset]
            text = launcher_text(launch.get("module"), launch.get("op"))
            if text is None:
                continue
            for key in ("module", "op", "frame", "shapes"):
                if launch.get(key):
                    node.detail[key] = launch[key]
            node.detail["launched_by"] = text
            matched += 1
    return matched
