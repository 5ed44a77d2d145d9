"""Per launch call: how long the CPU spent in it, how soon the GPU started, how deep the stream queue was."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphscope.analysis.gpu_time import work_column
from graphscope.core.symbols import SymbolTable
from graphscope.core.table import Table
from graphscope.trace.model import Trace
from graphscope.trace.schema import ApiKind, classify_api


def api_kinds(symbols: SymbolTable, name_ids: np.ndarray) -> np.ndarray:
    """`ApiKind` of every API row, classifying each distinct name once (a lookup table, no sort)."""
    if len(name_ids) == 0:
        return np.empty(0, dtype=np.int8)
    size = max(len(symbols), int(name_ids.max()) + 1)
    present = np.zeros(size, dtype=bool)
    present[name_ids[name_ids >= 0]] = True
    lookup = np.zeros(size + 1, dtype=np.int8)  # the extra last slot answers id -1
    for symbol_id in np.flatnonzero(present).tolist():
        lookup[symbol_id] = classify_api(symbols.name(symbol_id))
    return lookup[name_ids]


@dataclass
class LaunchMetrics:
    """One entry per kernel-launch or graph-launch call (rows of `trace.api`)."""

    rows: np.ndarray  # api row index
    kind: np.ndarray  # ApiKind.KERNEL_LAUNCH or ApiKind.GRAPH_LAUNCH
    api_ns: np.ndarray  # time inside the call
    latency_ns: np.ndarray  # first GPU start - call start (NaN: no GPU work recorded)
    first_work: np.ndarray  # index in the `gpu_work` table of the call's first activity (-1: none), int32

    def of_kind(self, kind: ApiKind) -> np.ndarray:
        return self.kind == int(kind)


def launch_metrics(trace: Trace, work: Table) -> LaunchMetrics:
    """Launch duration and latency for every launch call. `work` is `gpu_work(...)`."""
    api = trace.api
    kinds = api_kinds(trace.symbols, api.name)
    rows = np.flatnonzero((kinds == ApiKind.KERNEL_LAUNCH) | (kinds == ApiKind.GRAPH_LAUNCH)).astype(np.int32)
    first = _first_activity(len(api), work)[rows].astype(np.int32)
    has_work = first >= 0
    first_start = np.full(len(rows), -1, dtype=np.int64)
    first_start[has_work] = work.start[first[has_work]]
    latency = np.where(has_work, first_start - api.start[rows], np.nan)
    return LaunchMetrics(rows, kinds[rows], api.end[rows] - api.start[rows], latency, first)


def _first_activity(api_rows: int, work: Table) -> np.ndarray:
    """Per API row, the index in `work` (sorted by start) of the earliest work it caused; -1 if none."""
    first = np.full(api_rows, -1, dtype=np.int64)
    linked = np.flatnonzero(work.api_row >= 0)
    calls = work.api_row[linked]
    first[calls] = linked  # right for calls with one activity (most eager launches)
    repeated = np.bincount(calls, minlength=api_rows)[calls] > 1
    if repeated.any():  # a graph launch's many nodes: the earliest is the first occurrence (work is by start)
        shared, at = np.unique(calls[repeated], return_index=True)
        first[shared] = linked[repeated][at]
    return first


def queue_depth(trace: Trace, work: Table, metrics: LaunchMetrics) -> np.ndarray:
    """Per launch call: on the stream its first activity ran on, work submitted earlier and not yet
    finished when the call began (-1: unknown).

    depth = #(submitted before t) - #(finished by t), counted per stream. With (stream, time) packed
    into one int64 both counts come from one sorted array each: the rows of earlier streams appear
    in both counts and cancel.
    """
    depth = np.full(len(metrics.rows), -1, dtype=np.int32)
    linked = np.flatnonzero(work.api_row >= 0)
    calls = np.flatnonzero(metrics.first_work >= 0)
    if not len(linked) or not len(calls):
        return depth
    context = work_column(trace, work, "context", linked)
    streams = _stream_key(work.process[linked], work.device[linked], context, work.stream[linked])
    distinct = np.unique(streams)
    group = np.searchsorted(distinct, streams).astype(np.int64)
    del streams
    submit = trace.api.start[work.api_row[linked]]
    origin = min(int(submit.min()), int(work.start[linked].min()))
    span_bits = max(int(max(int(submit.max()), int(work.end[linked].max())) - origin).bit_length(), 1)
    if span_bits + int(group.max()).bit_length() > 62:
        return depth  # a trace longer than int64 packing allows: leave depth unknown
    group <<= span_bits
    packed_submit = group | (submit - origin)
    finished = np.sort(group | (work.end[linked] - origin))
    del group, submit
    position = np.searchsorted(linked, metrics.first_work[calls])  # first activities are linked rows
    at = packed_submit[position]
    depth[calls] = np.searchsorted(np.sort(packed_submit), at, side="left") - np.searchsorted(
        finished, at, side="right"
    )
    return depth


def _stream_key(process: np.ndarray, device: np.ndarray, context: np.ndarray, stream: np.ndarray) -> np.ndarray:
    return (
        (process.astype(np.int64) << 48)
        | ((device.astype(np.int64) & 0xFF) << 40)
        | ((context.astype(np.int64) & 0xFF) << 32)
        | (stream.astype(np.int64) & 0xFFFFFFFF)
    )
