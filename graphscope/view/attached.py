"""A capture trace attached to an opened replay trace (File > Attach capture trace…, `graphscope open
TRACE --capture CAPTURE`): the GUI's face of `summary --capture` (Qt-free).

A graph replay shows kernels but not who asked for them; a separate trace of the graphs' capture does
(analysis/capture_ops.py). `attach` reads the capture files (a folder: one file per size and rank, as
vLLM and SGLang write them), matches the replay's nodes to them and says in one line what it found: how
many replayed kernels got an operator or module, and the share of replay GPU time each field covers,
counted as `summary --json`'s capture_attribution.coverage counts it. `use` makes the result the trace's
attribution, which Details, the Kernels table grouped by module and the DAG by module all read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from graphscope.analysis.attribution import NodeAttribution
from graphscope.analysis.attribution_files import capture_files, load_captures
from graphscope.analysis.capture_ops import attribution, hold
from graphscope.core.events import Activity
from graphscope.core.progress import CancelToken, ProgressCallback, no_progress
from graphscope.core.text import shown_path
from graphscope.trace.model import Trace


@dataclass
class Attachment:
    """What attaching capture files to a replay trace found; `nodes` is None when nothing matched (the
    trace keeps its own attribution)."""

    paths: list[Path]
    nodes: NodeAttribution | None
    kernels: int  # replayed kernels (every replay of every kernel node)
    attributed: int  # of them, those whose node the capture names something of (operator, module, line...)
    coverage: dict[str, Any] = field(default_factory=dict)  # share of replay GPU time with each field
    graphs: int = 0  # graphs the replay ran
    unmatched: int = 0  # of them, those no capture matches
    skipped: list[str] = field(default_factory=list)  # a folder's files that are not traces
    reason: str | None = None  # why nothing was attributed

    @property
    def matched(self) -> bool:
        return self.nodes is not None

    def names(self) -> str:
        """The capture files as a line names them: one file by name, more by count."""
        if len(self.paths) == 1:
            return shown_path(self.paths[0].name)
        return f"{len(self.paths)} capture files"

    def message(self) -> str:
        """One line: what the capture attributed, or why it attributed nothing."""
        if not self.matched:
            return f"capture {self.names()} attributes nothing: {self.reason}"
        share = self.coverage
        parts = [f"{label} {100 * share[name]:.0f}%" for name, label in _SHARES]
        line = (
            f"capture {self.names()}: {self.attributed:,} of {self.kernels:,} replayed kernels attributed "
            f"(replay GPU time with {', '.join(parts)})"
        )
        if self.unmatched:
            line += f"; {self.unmatched} of {self.graphs} graphs match no capture"
        return line


_SHARES = (("operator", "an operator"), ("module", "a module"), ("frame", "a line"))


def attach(
    trace: Trace,
    paths: list[Path],
    load: Callable[[Path], Trace] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> Attachment:
    """Read the capture files (or folders) and attribute the replay's nodes from them (off the GUI
    thread: a capture of a large model holds ~100,000 calls). A file that is no trace is refused with
    its one-line reason (BadInputError); a capture that matches nothing is an answer, not an error."""
    if load is None:
        from graphscope.trace.reader import load_trace

        load = load_trace
    files = capture_files(paths)
    progress(0.0, f"reading the capture trace {', '.join(shown_path(p.name) for p in files[:3])}…")
    captures, skipped = load_captures(paths, load)
    if cancel is not None:
        cancel.check()
    progress(0.6, "matching the replay's graph nodes to the capture…")
    nodes, meta = attribution(trace, captures)
    kernel = nodes.kind == int(Activity.KERNEL)
    matched = np.zeros(len(nodes.node), bool)  # by the capture: not by the trace's own creation events
    for graph in meta["graphs"]:
        matched[nodes.rows_of(graph["graph"])] = True
    told = np.zeros(len(nodes.node), bool)  # a field known: where several captures disagree, none may be
    for name in ("operator", "module", "shapes", "frame"):  # the call alone (api) names no code
        told |= nodes.fields[name] >= 0
    matched &= told
    graphs = len(nodes.graphs())
    found = Attachment(
        paths=files,
        nodes=nodes,
        kernels=int(nodes.activities[kernel].sum()),
        attributed=int(nodes.activities[kernel & matched].sum()),
        coverage=nodes.coverage(),
        graphs=graphs,
        unmatched=graphs - len(meta["graphs"]),
        skipped=skipped,
    )
    reason = None
    if not len(nodes.node):
        reason = "this trace holds no graph replays with their work (profile in node mode)"
    elif not meta["windows"]:
        reason = "it holds no stream capture (cudaStreamBeginCapture ... EndCapture)"
    elif not meta["graphs"]:
        reason = f"no graph the replay ran ({graphs}) matches one of its captures (node counts or kinds differ)"
    elif not np.any(matched):
        reason = "the captures that match the replay's graphs disagree on every node (several of one shape)"
    if reason is not None:
        found.nodes, found.attributed, found.reason = None, 0, reason
    return found


def use(trace: Trace, attachment: Attachment | None) -> None:
    """Make an attachment the trace's attribution (None, or one that matched nothing: its own again)."""
    hold(trace, attachment.nodes if attachment is not None else None)
