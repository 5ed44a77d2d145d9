"""stream_overlap takes each stream's rows a block at a time, the latest end carried over: the same counts
and sums as a plain loop over the rows, whatever the block size."""

from __future__ import annotations

import numpy as np
import pytest

from graphscope.analysis import overlap
from graphscope.core.table import Table


def plain(start: np.ndarray, end: np.ndarray, device: np.ndarray, stream: np.ndarray) -> dict:
    """Row by row: per (device, stream), rows starting before the latest end of the rows before them."""
    found: dict[tuple[int, int], list[int]] = {}
    latest: dict[tuple[int, int], int] = {}
    for i in np.lexsort((start, stream, device)).tolist():  # each stream's rows in start order
        key, s, e = (int(device[i]), int(stream[i])), int(start[i]), max(int(end[i]), int(start[i]))
        if key in latest and min(e, latest[key]) > s:  # overlaps by some time (an empty row never does)
            hit = found.setdefault(key, [0, 0])
            hit[0], hit[1] = hit[0] + 1, hit[1] + min(e, latest[key]) - s
        latest[key] = max(latest.get(key, e), e)
    return {k: tuple(v) for k, v in found.items()}


@pytest.mark.parametrize("block", [1, 7, 1000, 1 << 20])
@pytest.mark.parametrize("seed", range(4))
def test_blocks_give_the_counts_of_a_plain_loop(monkeypatch, block, seed):
    monkeypatch.setattr(overlap, "_BLOCK", block)
    rng = np.random.default_rng(seed)
    rows = int(rng.integers(2, 3000))
    start = rng.integers(0, 10**6, rows)
    if seed % 2 == 0:
        start = np.sort(start)  # the usual case: rows in start order (the other: not)
    end = start + rng.integers(-50, 3000, rows)  # some negative durations: clamped to the start
    device, stream = rng.integers(0, 2, rows).astype(np.int8), rng.integers(0, 4, rows).astype(np.int16)
    found = overlap.stream_overlap(Table({"start": start, "end": end, "device": device, "stream": stream}))
    got = {(int(d), int(s)): (int(c), int(n)) for d, s, c, n in zip(found.device, found.stream, found.count,
                                                                     found.overlap_ns)}  # fmt: skip
    assert got == plain(start, end, device, stream) and got
