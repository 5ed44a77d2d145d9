"""Idle gaps behind the GPU lanes (key G), computed once per document off the GUI thread (no Qt).

Before, the timeline recomputed every GPU lane's gaps from the whole work table on the GUI thread at
each rebuild (a lane hidden, a group collapsed, a stack flattened) while gaps were shown. Now the
window asks `gaps_of` on its background pool the first time gaps are shown; every later rebuild
draws the document's copy. At 1M kernels on four streams (benchmarks/synthetic_export.py, this
2-core machine) finding them took 88-101 ms, five frames' time, at every rebuild; the copy is free.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphscope.analysis.gpu_time import idle_gaps
from graphscope.core.colours import HOST_WAIT, OTHER_WAIT, UNKNOWN_WAIT
from graphscope.core.progress import CancelToken, ProgressCallback, no_progress
from graphscope.view.document import TraceDocument


@dataclass
class LaneGaps:
    """Idle gaps of one GPU stream lane, in timeline x, with the cause code each is drawn in."""

    start: np.ndarray  # float64 timeline x
    end: np.ndarray
    cause: np.ndarray  # int8: HOST_WAIT, OTHER_WAIT or UNKNOWN_WAIT (core/colours.py)

    def __len__(self) -> int:
        return len(self.start)


def lane_gaps(
    document: TraceDocument, progress: ProgressCallback = no_progress, cancel: CancelToken | None = None
) -> dict[str, LaneGaps]:
    """Every GPU stream lane's idle gaps, by lane key."""
    lanes = [lane for lane in document.layout.lanes if lane.kind == "gpu"]
    found: dict[str, LaneGaps] = {}
    for done, lane in enumerate(lanes):
        if cancel is not None:
            cancel.check()
        progress(done / max(len(lanes), 1), "finding idle gaps")
        gaps = idle_gaps(document.trace, document.analysis.work, lane.device, lane.stream)
        cause = np.where(gaps.host_wait, HOST_WAIT, np.where(gaps.unknown, UNKNOWN_WAIT, OTHER_WAIT)).astype(np.int8)
        found[lane.key] = LaneGaps(document.layout.x_of(gaps.start), document.layout.x_of(gaps.end), cause)
    progress(1.0, "idle gaps found")
    return found


def gaps_of(
    document: TraceDocument, progress: ProgressCallback = no_progress, cancel: CancelToken | None = None
) -> dict[str, LaneGaps]:
    """The document's idle gaps, computed the first time they are asked for and kept on it."""
    if document.gaps is None:
        document.gaps = lane_gaps(document, progress, cancel)
    return document.gaps
