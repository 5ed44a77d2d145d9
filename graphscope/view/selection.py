"""`--select` for `graphscope open`: parsed before the window starts, resolved once the trace is loaded
(no Qt here).

    graph:N      the N-th graph launch (counted from 1, in start order)
    kernel:N     the N-th kernel (counted from 1, in start order)
    kernel:NAME  the first kernel whose short name is NAME
    nvtx:NAME    the first NVTX range whose text is NAME
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphscope.core.errors import BadInputError
from graphscope.view.document import TraceDocument
from graphscope.view.layout import GRAPH_GROUP, KERNEL, NVTX

KINDS = ("graph", "kernel", "nvtx")
USAGE = "--select takes graph:N, kernel:N, kernel:NAME or nvtx:NAME (N counts from 1)"


@dataclass(frozen=True)
class Selection:
    kind: str
    number: int | None  # 1-based ordinal
    name: str | None

    def __str__(self) -> str:
        return f"{self.kind}:{self.number if self.number is not None else self.name}"


def parse_selection(text: str) -> Selection:
    """Check the form of a --select value (a BadInputError names the accepted forms)."""
    kind, colon, value = text.partition(":")
    if not colon or kind not in KINDS or not value:
        raise BadInputError(f"{USAGE}, not {text!r}")
    if kind == "nvtx":
        return Selection(kind, None, value)
    if value.isdigit():
        if int(value) < 1:
            raise BadInputError(f"{USAGE}: {text!r} counts from 1")
        return Selection(kind, int(value), None)
    if kind == "graph":
        raise BadInputError(f"{USAGE}: graph takes a number, not {value!r}")
    return Selection(kind, None, value)


def resolve_selection(document: TraceDocument, selection: Selection) -> tuple[int, int]:
    """(source, row) of the selected event; a BadInputError says what the trace holds instead."""
    trace = document.trace
    if selection.kind == "graph":
        count = len(document.analysis.graphs)
        if selection.number > count:
            raise BadInputError(f"--select {selection}: this trace has {count} graph launches")
        return GRAPH_GROUP, selection.number - 1
    if selection.kind == "kernel" and selection.number is not None:
        count = len(trace.kernels)
        if selection.number > count:
            raise BadInputError(f"--select {selection}: this trace has {count:,} kernels")
        return KERNEL, selection.number - 1
    if selection.kind == "kernel":
        symbol = trace.symbols.lookup(selection.name)
        rows = np.flatnonzero(trace.kernels.short_name == symbol) if symbol is not None else []
        if not len(rows):
            raise BadInputError(f"--select {selection}: no kernel has the short name {selection.name!r}")
        return KERNEL, int(rows[0])
    symbol = trace.symbols.lookup(selection.name)
    rows = np.flatnonzero(trace.nvtx.text == symbol) if symbol is not None else []
    if not len(rows):
        raise BadInputError(f"--select {selection}: no NVTX range is named {selection.name!r}")
    return NVTX, int(rows[0])
