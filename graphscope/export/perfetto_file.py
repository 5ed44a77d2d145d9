"""A trace file written as Perfetto / Chrome trace-event JSON, the one call `graphscope export` makes: an
export read from its file is streamed a window at a time (perfetto_stream.py); a PyTorch-profiler trace,
an export the cache holds, or one without windows is read whole (perfetto.py)."""

from __future__ import annotations

from pathlib import Path

from graphscope.analysis.summary import analyze
from graphscope.export import perfetto_stream
from graphscope.export.perfetto import write_perfetto
from graphscope.trace import cache, load_trace
from graphscope.trace.kineto_json import is_kineto


def export_file(source: Path, target: Path) -> dict[str, int]:
    """Write `source` (.sqlite, .nsys-rep, PyTorch-profiler JSON) to `target`; the counts written
    (`slices`, `graph_launches`, `flows`)."""
    counts = None
    if source.suffix == ".nsys-rep":
        from graphscope.trace.nsysrep import export_to_sqlite

        source = export_to_sqlite(source)
    if not is_kineto(source) and cache.open_entry(source) is None:  # an export read from its file: by windows
        counts = perfetto_stream.export_perfetto(source, target)
    if counts is None:
        trace = load_trace(source)
        counts = write_perfetto(trace, analyze(trace), target)
    return counts
