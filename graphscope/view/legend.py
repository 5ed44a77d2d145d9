"""What the timeline's colours mean, and the line above it that always says what the panels are scoped
to (HTML strings, no Qt)."""

from __future__ import annotations

import html

from graphscope.core.colours import (
    COLOR_GRAPH,
    COLOR_MEMCPY,
    COLOR_MEMSET,
    GAP_LABELS,
    GAP_RGB,
    HOST_WAIT,
    KERNEL_COLORS,
    OTHER_WAIT,
    PALETTE,
)
from graphscope.core.events import ApiKind
from graphscope.core.units import format_ns
from graphscope.view.time_origin import x_of

GAP_COLOURS = tuple((GAP_LABELS[cause], GAP_RGB[cause]) for cause in (HOST_WAIT, OTHER_WAIT))


def _swatch(rgb: tuple[int, int, int], text: str, outline: bool = False) -> str:
    style = f"border:2px solid rgb{rgb};" if outline else f"background:rgb{rgb};"
    return (
        f"<tr><td><span style='{style}'>&nbsp;&nbsp;&nbsp;&nbsp;</span></td>"
        f"<td style='padding-left:6px'>{html.escape(text)}</td></tr>"
    )


def legend_html() -> str:
    """The colour legend of the timeline."""
    api = "".join(_swatch(PALETTE[kind], name) for kind, name in ((k.value, k.label) for k in ApiKind))
    kernels = "".join(f"<span style='background:rgb{PALETTE[i]}'>&nbsp;&nbsp;</span>" for i in KERNEL_COLORS)
    gpu = (
        f"<tr><td>{kernels}</td><td style='padding-left:6px'>kernels, one colour per kernel name</td></tr>"
        + _swatch(PALETTE[COLOR_MEMCPY], "memory copy")
        + _swatch(PALETTE[COLOR_MEMSET], "memset")
        + _swatch(PALETTE[COLOR_GRAPH], "graph launch: a bracket around its node work on each stream", True)
    )
    gaps = "".join(_swatch(rgb, text) for text, rgb in GAP_COLOURS)
    return (
        "<b>CPU: CUDA API calls</b><table>" + api + "</table>"
        "<b>GPU: stream lanes</b><table>" + gpu + "</table>"
        "<p>Bars are as tall as the share of their pixel that was busy: a stream idling between tiny "
        "kernels shows as a low strip. A pixel holding several events takes the colour of the busiest "
        "(zoom in to tell them apart).</p><b>Idle gaps (G)</b><table>" + gaps + "</table>"
        "<p>NVTX ranges are coloured by name. Yellow: highlighted, red outline: selected, blue band: the scope.</p>"
    )


def scope_banner(view, document) -> str:
    """The always-visible line above the timeline: what Summary, Kernels and Histograms describe (and,
    for a file too large to hold whole, which window of it is loaded)."""
    scope = view.scope
    origin = document.layout.origin
    window = _window(document)
    if scope is None:
        whole = "the whole window" if document.window else "the whole trace"
        return f"{window}Scope: <b>{whole}</b> · drag along the time axis or click an NVTX range to scope the panels"
    where = f"{format_ns(x_of(scope.first, origin))} to {format_ns(x_of(scope.last, origin))}"
    back = "the whole trace" if document.default_scope is None else "the default scope"
    clear = "" if scope is document.default_scope else f" · <a href='clear'>Backspace: back to {back}</a>"
    return f"{window}Scope: <b>{html.escape(scope.label)}</b> · {where}{clear}"


def _window(document) -> str:
    window = document.window
    if window is None:
        return ""
    span = window.last - window.first
    links = []
    if window.start > window.first:
        links.append("<a href='previous'>◂ previous (Ctrl+[)</a>")
    if window.end <= window.last:
        links.append("<a href='next'>next window ▸ (Ctrl+])</a>")
    return (
        f"<b>Window</b> {format_ns(window.start - window.first)} to {format_ns(window.end - window.first)} of "
        f"{format_ns(span)}: {window.events:,} of {window.total:,} events (the file does not fit in memory) "
        f"{' '.join(links)}<br>"
    )
