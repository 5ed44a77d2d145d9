"""`graphscope summary FILE`'s answer in one call: the file read, the scope asked for, the capture traces
named, summarised (analysis/summary.py) with the NVTX table and the node attribution asked for.

The answer is kept (core/answer_cache.py) by what it is computed from: the file, its scope, the NVTX table,
the capture traces, the conditional counts beside it; not by how it is shown (`--top`, `--json` or text).
It is kept with the `KEPT_TOP` busiest kernels, so another `--top` or the other format of a summarised
file is its kept answer sliced, before NumPy is imported: the analysis, not the cached columns, is what
a second question cost (10M + 10M kernels: mapping and checking the columns 0.03 s of a 3.5-4.3 s
`--top 11`, cProfile; benchmarks/cache_warm.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from graphscope.core import answer_cache

KEPT_TOP = 100
"""Kernels a kept summary lists: a `--top` up to this (or any, where the trace has fewer names) is answered
from it."""


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
    whole stack) comes where the trace holds node work or `capture` names capture traces (files or folders).
    A summary of the same file and scope computed before (any `--top` up to `KEPT_TOP`) is reused."""
    question = summary_question(path, range_text, nvtx, whole, by_nvtx, capture, stacks)
    kept = kept_summary(path, question, top)
    if kept is not None:
        return kept
    listed = max(top, KEPT_TOP)
    plain = None  # `--by-nvtx` of a summarised scope: the kept summary and only the NVTX table computed
    if by_nvtx and question is not None:
        plain = kept_summary(path, summary_question(path, range_text, nvtx, whole, False, capture, stacks), listed)
    if plain is not None:
        answer = _with_nvtx_table(path, plain)
    else:
        answer = _computed(path, listed, range_text, nvtx, whole, by_nvtx, capture, stacks)
    if question is not None:
        try:  # as JSON gives it back: the first answer is the kept one to the byte (tuples, NaN, keys)
            text = json.dumps({"listed": listed, "summary": answer})
        except (TypeError, ValueError):  # a value JSON cannot hold: answered, not kept
            return {**answer, "top_kernels": answer["top_kernels"][:top]}
        answer_cache.put(path, question, text)
        answer = json.loads(text)["summary"]
    return {**answer, "top_kernels": answer["top_kernels"][:top]}


def kept_summary(path: Path, question: dict[str, Any] | None, top: int) -> dict[str, Any] | None:
    """The summary kept for `question` (`summary_question`) with its `top` busiest kernels, or None: none
    kept, or kept with fewer kernels than asked of a trace that has more."""
    text = answer_cache.get(path, question) if question is not None else None
    if text is None:
        return None
    try:
        kept = json.loads(text)
        listed, answer = int(kept["listed"]), kept["summary"]
        kernels = answer["top_kernels"]
        if not isinstance(answer, dict) or not isinstance(kernels, list):
            return None
    except (ValueError, KeyError, TypeError):
        return None
    if top > listed and len(kernels) >= listed:  # the trace may have more kernel names than were kept
        return None
    return {**answer, "top_kernels": kernels[:top]}


def summary_question(
    path: Path,
    range_text: str | None = None,
    nvtx: str | None = None,
    whole: bool = False,
    by_nvtx: bool = False,
    capture: list[Path] | None = None,
    stacks: bool = False,
) -> dict[str, Any] | None:
    """What a summary depends on, the file's content aside (the answer cache keys on it): the file as
    named (the answer names it), the scope, the tables asked for, the capture traces' and the conditional
    counts' identities. None where it cannot be kept (a file that is not there, which the reader names)."""
    try:
        captured = None
        if capture is not None:
            from graphscope.analysis.attribution_files import capture_files

            captured = [answer_cache.file_key(found, "capture") for found in capture_files(capture)]
        if not path.is_file():
            return None
        from graphscope.core.paths import sidecar_of  # counts graphscope left beside the trace it wrote

        sidecar = sidecar_of(path)
        counted = answer_cache.file_key(sidecar, "conditionals") if sidecar.is_file() else None
    except OSError:
        return None
    asked = {"range": range_text, "nvtx": nvtx, "whole_trace": whole, "by_nvtx": by_nvtx, "stacks": stacks}
    return {"command": "summary-of-file", "file": str(path), **asked, "capture": captured, "counted": counted}


def _with_nvtx_table(path: Path, summary: dict[str, Any]) -> dict[str, Any]:
    """A kept summary with the NVTX table added where a computed `--by-nvtx` answer has it (after the
    summary's own keys, before the node attribution and the conditional counts): the summary is the same
    whichever (a test compares them); the table needs the analysis, not the summary (1M: 0.25-0.32 s of
    CPU where computing both took 0.46-0.51 s, 3 rounds)."""
    from graphscope.analysis import summary as analysed
    from graphscope.analysis.nvtx_table import nvtx_table
    from graphscope.trace import load_trace

    trace = load_trace(path)
    table = nvtx_table(trace, analysed.analyze(trace))
    later: dict[str, Any] = {k: summary[k] for k in ("capture_attribution", "conditionals_in_trace") if k in summary}
    return {**{k: v for k, v in summary.items() if k not in later}, "nvtx_ranges": table, **later}


def _computed(
    path: Path,
    top: int,
    range_text: str | None,
    nvtx: str | None,
    whole: bool,
    by_nvtx: bool,
    capture: list[Path] | None,
    stacks: bool,
) -> dict[str, Any]:
    from graphscope.analysis import summary
    from graphscope.analysis.scope import parse_scope
    from graphscope.trace import load_trace

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
