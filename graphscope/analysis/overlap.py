"""Work that starts before the previous work on its own stream ends: overlap, not a clock error.

A stream runs its work in order, yet CUPTI timestamps show a kernel starting before its predecessor on
the same stream ends when the two overlap on purpose: programmatic dependent launch (PDL; the next
kernel's prologue runs while the previous one finishes, `cudaLaunchAttributeProgrammaticStreamSerialization`)
and graph nodes launched with programmatic edges. Such rows are counted here per stream (how many, and
for how long they overlap the work before them); they are never negative gaps and never damaged rows:
busy time stays the union of the work (analysis/intervals.py), and gaps start at the latest end so far.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphscope.core.table import Table


@dataclass(frozen=True)
class StreamOverlap:
    """Per (device, stream) with overlapping work: rows that started before the stream's latest end so
    far, and the time they overlap it (ns)."""

    device: np.ndarray
    stream: np.ndarray
    count: np.ndarray
    overlap_ns: np.ndarray

    def to_json(self) -> dict[str, object]:
        return {
            "count": int(self.count.sum()),
            "ns": int(self.overlap_ns.sum()),
            "streams": [
                {"device": int(d), "stream": int(s), "count": int(c), "ns": int(n)}
                for d, s, c, n in zip(self.device, self.stream, self.count, self.overlap_ns, strict=True)
            ],
        }


def stream_overlap(work: Table) -> StreamOverlap:
    """The overlap on each stream of the work table (analysis.gpu_time.gpu_work, or some of its rows)."""
    empty = np.empty(0, np.int64)
    if len(work) < 2:
        return StreamOverlap(empty, empty, empty, empty)
    start, end = np.asarray(work.start, np.int64), np.asarray(work.end, np.int64)
    device, stream = np.asarray(work.device), np.asarray(work.stream)
    order = _stream_order(device, stream, start)
    code_device, code_stream = device[order], stream[order]
    first = np.flatnonzero(np.r_[True, (code_device[1:] != code_device[:-1]) | (code_stream[1:] != code_stream[:-1])])
    bounds = np.r_[first, len(start)]
    result: tuple[list[int], list[int], list[int], list[int]] = ([], [], [], [])
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):  # one stream at a time: few
        if hi - lo < 2:
            continue
        count, overlap_ns = _overlap(start, end, order[lo:hi])
        if count:
            for column, value in zip(result, (code_device[lo], code_stream[lo], count, overlap_ns), strict=True):
                column.append(int(value))
    return StreamOverlap(*(np.array(column, np.int64) for column in result))


_BLOCK = 1 << 20  # rows a pass: the stream's rows are taken a block at a time, not reordered whole


def _overlap(start: np.ndarray, end: np.ndarray, rows: np.ndarray) -> tuple[int, int]:
    """Rows of one stream (`rows`, in start order) that start before the latest end so far, and by how much
    in all. A block of rows at a time, the latest end carried over: the whole stream's starts and ends
    reordered at once held 32 B a row beside the trace (10M kernels: 0.3 GiB, the summary's peak)."""
    count, total, reach = 0, 0, None
    for lo in range(0, len(rows), _BLOCK):
        block = rows[lo : lo + _BLOCK]
        first, last = start[block], np.maximum(end[block], start[block])
        ends = np.maximum.accumulate(last if reach is None else np.r_[reach, last])  # the latest end so far
        later = slice(1, None) if reach is None else slice(0, None)  # the rows with work before them
        overlap = np.minimum(last[later], ends[:-1]) - first[later]
        early = overlap > 0
        count, total = count + int(early.sum()), total + int(overlap[early].sum())
        reach = ends[-1]
    return count, total


def _stream_order(device: np.ndarray, stream: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Rows by (device, stream, start). The work table is in start order already, so a stable sort on one
    small (device, stream) code keeps each stream's rows in it: a radix sort when the code fits 16 bits
    (1M rows on four streams: ~10 ms, against ~150 ms for a three-key lexsort)."""
    if not bool(np.all(start[1:] >= start[:-1])):
        return np.lexsort((start, stream, device))
    d0, s0 = int(device.min()), int(stream.min())
    width = int(stream.max()) - s0 + 1
    codes = (int(device.max()) - d0 + 1) * width
    if codes > 1 << 15:
        return np.lexsort((start, stream, device))
    code = (device.astype(np.int32) - d0) * width + (stream.astype(np.int32) - s0)
    return np.argsort(code.astype(np.int16), kind="stable")
