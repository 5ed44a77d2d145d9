"""Reading Nsight Systems exports into columnar event tables."""

from graphscope.trace.model import ExportInfo, GpuInfo, Trace
from graphscope.trace.reader import load_trace

__all__ = ["ExportInfo", "GpuInfo", "Trace", "load_trace"]
