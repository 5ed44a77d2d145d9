"""Which launch calls were made while a stream captured a graph: they build the graph, launch nothing.

A launch call is *capture* when it ran no GPU work in the trace and either

- its thread was inside a stream capture when it began: after a begin-capture call
  (`cudaStreamBeginCapture*`, `cuStreamBeginCapture*`, `hipStreamBeginCapture*`) and before the matching
  end-capture call on that thread (captures nest: a thread may capture several streams at once). Neither
  an Nsight export nor a PyTorch-profiler trace records the stream a CPU call names, so a capture is
  followed per thread. An end with no begin before it (the trace started mid-capture) closes a capture
  that was open from the trace's start; a begin with no end stays open to its end.
- or it began inside an NVTX range `core.events.CAPTURE_RANGES` (graphscope's runner's, the seeds'
  benchmark's) on its own thread.

A call that ran GPU work was not captured (a captured call's work runs only when the graph replays,
under the graph launch's correlation id), so it stays an eager launch even inside the bracket: in
relaxed capture mode a thread may launch eagerly on another stream while it captures one.
"""

from __future__ import annotations

import numpy as np

from graphscope.core import sets
from graphscope.core.events import CAPTURE_BEGIN_PREFIXES, CAPTURE_END_PREFIXES, CAPTURE_RANGES, ApiKind
from graphscope.core.symbols import SymbolTable
from graphscope.trace.model import Trace
from graphscope.trace.schema import NVTX_RANGE_TYPES


def capture_marks(symbols: SymbolTable, names: np.ndarray) -> np.ndarray:
    """Per API row of `names` (symbol ids): +1 a begin-capture call, -1 an end-capture call, 0 any other."""
    marks = np.zeros(len(names), dtype=np.int8)
    for symbol in sets.unique(names).tolist():
        name = symbols.name(int(symbol)) if symbols.valid(np.array([symbol]))[0] else ""
        if name.startswith(CAPTURE_BEGIN_PREFIXES):
            marks[names == symbol] = 1
        elif name.startswith(CAPTURE_END_PREFIXES):
            marks[names == symbol] = -1
    return marks


def capture_calls(trace: Trace, api_kinds: np.ndarray, rows: np.ndarray, first_work: np.ndarray) -> np.ndarray:
    """Mask over launch calls (`rows` of `trace.api`, `first_work` -1 where a call ran nothing): capture.

    `api_kinds` is the `ApiKind` of every API row; begin/end-capture calls are among its GRAPH_BUILD rows,
    so only those few rows are looked at by name."""
    captured = np.zeros(len(rows), dtype=bool)
    idle = np.flatnonzero(first_work < 0)  # only calls that ran nothing can be capture
    if not len(idle):
        return captured
    api = trace.api
    starts, threads = api.start[rows[idle]], api.thread[rows[idle]]
    inside = np.zeros(len(idle), dtype=bool)
    build = np.flatnonzero(api_kinds == ApiKind.GRAPH_BUILD)
    if len(build):
        marks = capture_marks(trace.symbols, api.name[build])
        bracket = build[marks != 0]
        inside |= _inside_brackets(api.start[bracket], api.thread[bracket], marks[marks != 0], starts, threads)
    inside |= _inside_ranges(trace, starts, threads)
    captured[idle[inside]] = True
    return captured


def _inside_brackets(
    when: np.ndarray, thread: np.ndarray, mark: np.ndarray, starts: np.ndarray, threads: np.ndarray
) -> np.ndarray:
    """Per call (`starts`, `threads`): is a capture open on its thread when it begins?"""
    inside = np.zeros(len(starts), dtype=bool)
    for t in sets.unique(thread).tolist():  # the few threads that capture
        mine = thread == t
        order = np.argsort(when[mine], kind="stable")
        at, step = when[mine][order], mark[mine][order].astype(np.int64)
        depth = np.cumsum(step)
        depth += max(0, -int(depth.min()))  # ends with no begin: captures open from the trace's start
        calls = np.flatnonzero(threads == t)
        before = np.searchsorted(at, starts[calls], side="right") - 1  # the last bracket call before each
        open_at = np.where(before >= 0, depth[np.maximum(before, 0)], depth[0] - step[0])
        inside[calls] = open_at > 0
    return inside


def _inside_ranges(trace: Trace, starts: np.ndarray, threads: np.ndarray) -> np.ndarray:
    """Per call: does it begin inside a capture NVTX range of its own thread?"""
    inside = np.zeros(len(starts), dtype=bool)
    nvtx = trace.nvtx
    ids = [i for i in (trace.symbols.lookup(name) for name in CAPTURE_RANGES) if i is not None]
    if not ids or not len(nvtx):
        return inside
    ranges = np.flatnonzero(sets.isin(nvtx.text, ids) & sets.isin(nvtx.event_type, NVTX_RANGE_TYPES))
    for r in ranges.tolist():  # a capture range per graph captured: few
        inside |= (threads == nvtx.thread[r]) & (starts >= nvtx.start[r]) & (starts <= nvtx.end[r])
    return inside
