"""Side panels: event details, the summary with its verdict, and histograms of latency and duration."""

from __future__ import annotations

import html
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from graphscope.core.colours import PALETTE, kind_rgb
from graphscope.core.events import Activity, ApiKind
from graphscope.core.units import format_bytes, format_ns
from graphscope.text.summary import active_phrase, launch_rows
from graphscope.view.describe import Fields


def _table(fields: Fields) -> str:
    rows = "".join(
        f"<tr><td style='color:#555;padding-right:10px'>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>"
        for k, v in fields
    )
    return f"<table cellspacing=2>{rows}</table>"


class DetailsPanel(QTextBrowser):
    """Everything known about the selected event."""

    def __init__(self) -> None:
        super().__init__()
        self.setOpenLinks(False)
        self.show_fields("Nothing selected", [("tip", "click an event; W/S zoom, A/D pan, F fits, Z zooms to it")])

    def show_fields(self, title: str, fields: Fields) -> None:
        self.setHtml(f"<h3>{html.escape(title)}</h3>{_table(fields)}")


def scope_span(summary: dict[str, Any]) -> str:
    """The span of what the summary covers: the scope's own (first to last of its windows, and the time
    inside them), else the trace's."""
    scope = summary.get("scope")
    if not scope:
        return format_ns(summary["span_ns"])
    span = scope["end_ns"] - scope["start_ns"]
    inside = "" if scope["covered_ns"] == span else f", {format_ns(scope['covered_ns'])} inside its windows"
    where = f"{format_ns(scope['start_ns'])} to {format_ns(scope['end_ns'])}{inside}"
    return f"{format_ns(span)} ({where}; the trace spans {format_ns(summary['span_ns'])})"


def recorded_by(summary: dict[str, Any]) -> str:
    """The profiler that wrote the file: "PyTorch profiler (Kineto)" for a PyTorch trace, never
    "Nsight Systems: unknown"."""
    platform = summary.get("platform") or ""
    if not summary.get("nsys_version") and "Kineto" in platform:
        return platform
    return f"Nsight Systems {summary.get('nsys_version') or '(version not recorded)'}" + (
        f" on {platform}" if platform else ""
    )


class SummaryPanel(QTextBrowser):
    """The launch-overhead verdict and the numbers behind it."""

    def show_summary(self, summary: dict[str, Any], whole: str = "the whole trace") -> None:
        """`whole`: what an unscoped summary covers ('the whole window' of a file too large to hold)."""
        launch = summary["launch"]
        bound = launch["launch_bound"]
        colour = {True: "#b3261e", False: "#1e7b34", None: "#555"}[bound]
        scope = summary.get("scope")
        fields = [
            ("file", summary["file"]),
            ("scope", scope["label"] if scope else whole),
            ("recorded by", recorded_by(summary)),
            ("span", scope_span(summary)),
            ("kernels", f"{summary['kernels']['count']:,} ({format_ns(summary['kernels']['total_ns'])})"),
            ("memcpy", f"{summary['memcpy']['count']:,} ({format_bytes(summary['memcpy']['bytes'])})"),
            ("memset", f"{summary['memset']['count']:,}"),
            (
                "CUDA API calls",
                f"{summary['api']['count']:,} ({summary['api']['launches']:,} kernel launches, "
                f"{summary['api']['graph_launches']:,} graph launches)",
            ),
            ("graph trace mode", summary["graph_trace_mode"] or "-"),
            (
                "graph launches",
                f"{summary['graphs']['launches']:,} ({summary['graphs']['node_activities']:,} node activities)",
            ),
            *launch_rows(launch),
        ]
        for gpu in summary["gpu"]:
            fields.append(
                (
                    f"GPU {gpu['device']}",
                    f"{gpu['utilization']:.1%} busy; idle {format_ns(gpu['idle_ns'])}, "
                    f"{format_ns(gpu['host_wait_idle_ns'])} of it waiting for the CPU{active_phrase(gpu)}",
                )
            )
        notes = "".join(f"<li>{html.escape(t)}</li>" for t in summary["lacks"] + summary["warnings"])
        self.setHtml(
            f"<p style='color:{colour};font-weight:bold'>{html.escape(launch['verdict'])}</p>"
            f"{_table(fields)}" + (f"<p>Notes:</p><ul>{notes}</ul>" if notes else "")
        )


class LogTimeAxis(pg.AxisItem):
    """An axis over log10(ns) that reads in time units at powers of ten (100 ns, 1 us, 10 us...)."""

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, list[float]]]:
        low, high = int(np.floor(minVal)), int(np.ceil(maxVal))
        decades = [float(v) for v in range(low, high + 1) if minVal <= v <= maxVal]
        minor = [d + np.log10(k) for d in range(low - 1, high + 1) for k in range(2, 10)]
        return [(1.0, decades), (0.1, [v for v in minor if minVal <= v <= maxVal])]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        if spacing < 1.0:
            return ["" for _ in values]  # minor ticks: marks only
        return [format_ns(10**v) for v in values]


class HistogramPanel(QWidget):
    """Log-scaled histograms of kernel-launch latency and of kernel duration.

    The plots are built when the panel is first shown (it starts on a hidden tab, and two plot widgets
    cost the window's start-up 15 ms); values given before that are drawn then.
    """

    def __init__(self) -> None:
        super().__init__()
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self.latency: pg.PlotWidget | None = None
        self.duration: pg.PlotWidget | None = None
        self._pending: tuple[np.ndarray, np.ndarray] | None = None

    def showEvent(self, event) -> None:
        if self.latency is None:
            self.latency = self._plot("launch latency (log scale)")
            self.duration = self._plot("kernel duration (log scale)")
            self._layout.addWidget(self.latency)
            self._layout.addWidget(self.duration)
            if self._pending is not None:
                self.show_values(*self._pending)
        super().showEvent(event)

    @staticmethod
    def _plot(title: str) -> pg.PlotWidget:
        plot = pg.PlotWidget(title=title, axisItems={"bottom": LogTimeAxis(orientation="bottom")})
        plot.setBackground("w")
        plot.setMouseEnabled(x=False, y=False)
        plot.getPlotItem().hideButtons()
        plot.setMinimumHeight(120)
        return plot

    def show_values(self, latency_ns: np.ndarray, duration_ns: np.ndarray) -> None:
        """Kernel launch latencies and kernel durations (of the current scope)."""
        self._pending = (latency_ns, duration_ns)
        if self.latency is None:
            return
        self._fill(self.latency, latency_ns, PALETTE[ApiKind.KERNEL_LAUNCH])  # the lanes' launch calls
        self._fill(self.duration, duration_ns, kind_rgb(Activity.KERNEL))  # not the old DAG's memcpy green

    @staticmethod
    def _fill(plot: pg.PlotWidget, values: np.ndarray, rgb: tuple[int, int, int]) -> None:
        plot.clear()
        values = values[values > 0]
        if not len(values):
            return
        counts, edges = np.histogram(np.log10(values), bins=60)
        plot.addItem(
            pg.PlotCurveItem(edges, counts, stepMode="center", fillLevel=0, brush=(*rgb, 150), pen=pg.mkPen(rgb))
        )
        median = float(np.log10(np.median(values)))
        plot.addItem(
            pg.InfiniteLine(
                median,
                pen=pg.mkPen((200, 30, 30), style=pg.QtCore.Qt.PenStyle.DashLine),
                label=f"median {format_ns(10**median)}",
                labelOpts={"position": 0.85},
            )
        )
