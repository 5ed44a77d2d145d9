"""`graphscope summary FILE`'s answer in one call: the file read, the scope asked for, the capture traces
named, summarised (analysis/summary.py) with the NVTX table and the node attribution asked for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphscope.analysis import summary
from graphscope.analysis.scope import parse_scope
from graphscope.trace import load_trace


def summary_of_file(
    path: Path,
    top: int = 10,
    range_text: str | None = None,
    nvtx: str | None = None,
    whole: bool = False,
    by_nvtx: bool = False,
    capture: list[Path] | None = None,
    stacks: bool = False,
) -> dict[str, Any]:
    """The summary of one export over `range_text` or `nvtx` (analysis/scope.py), its measured reps, or
    all of it (`whole`). `by_nvtx` adds `nvtx_ranges` (one row per range name, analysis/nvtx_table.py);
    `capture_attribution` (what made each replayed node, analysis/capture_ops.py; `stacks`: every node's
    whole stack) comes where the trace holds node work or `capture` names capture traces (files or folders)."""
    trace = load_trace(path)
    scope = parse_scope(trace, range_text, nvtx)
    analysis = summary.analyze(trace) if by_nvtx else None  # else summarize analyses beside its kernel table
    # through the module: a test wraps summarize to watch the cycle collector
    answer = summary.summarize(trace, top, analysis, scope, whole=whole)
    if analysis is not None:
        from graphscope.analysis.nvtx_table import nvtx_table

        answer["nvtx_ranges"] = nvtx_table(trace, analysis)
    if capture is not None or trace.has_node_work:
        from graphscope.analysis.attribution_files import load_captures
        from graphscope.analysis.capture_ops import attribute

        captures, skipped = load_captures(capture, load_trace) if capture else (None, [])
        answer["capture_attribution"] = attribute(trace, captures, stacks=stacks)
        answer["capture_attribution"] |= {"skipped": skipped} if skipped else {}
    from graphscope.analysis.conditional_trace import check_beside

    checked = check_beside(trace, path)  # iterations graphscope counted when it wrote this trace
    answer |= {"conditionals_in_trace": checked} if checked else {}
    return answer
