"""Inline SVG charts for reports: no script, no network, every user-controlled string escaped."""

from __future__ import annotations

import html
from typing import Any

import numpy as np

from graphscope.core.colours import hex_of, kind_rgb
from graphscope.core.units import format_bytes, format_ns
from graphscope.graph.model import Dag

A_COLOUR, B_COLOUR = "#4285f4", "#f4a000"
FONT_FAMILY = "font-family='Helvetica,Arial,sans-serif'"
FONT = f"{FONT_FAMILY} font-size='11'"


def _text(x: float, y: float, text: str, anchor: str = "start", extra: str = "") -> str:
    """A text element; `extra` may set its own font-size (an attribute given twice is not XML, and Qt's
    SVG renderer refuses the whole picture)."""
    font = FONT_FAMILY if "font-size" in extra else FONT
    return f"<text x='{x:.1f}' y='{y:.1f}' text-anchor='{anchor}' {font} {extra}>{html.escape(text)}</text>"


def _svg(width: int, height: int, body: list[str], title: str) -> str:
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' viewBox='0 0 {width} {height}' "
        f"role='img'><title>{html.escape(title)}</title>{''.join(body)}</svg>"
    )


def kernel_bars(kernels: list[dict[str, Any]], labels: tuple[str, str | None], limit: int = 15) -> str:
    """Median duration per kernel with its 95% interval, side A above side B."""
    rows = [k for k in kernels if k.get("a") or k.get("b")][:limit]
    if not rows:
        return ""
    top = max(max((k[s] or {}).get("ci_high_ns", 0) for s in ("a", "b")) for k in rows) or 1.0
    left, width, bar, gap = 230, 460, 9, 10
    height = 30 + len(rows) * (2 * bar + gap)
    body = [_legend(labels, 10)]
    for i, k in enumerate(rows):
        y = 28 + i * (2 * bar + gap)
        body.append(_text(left - 6, y + bar + 3, k["name"][:34], "end"))
        for j, side in enumerate(("a", "b")):
            stats = k.get(side)
            if not stats:
                continue
            colour = (A_COLOUR, B_COLOUR)[j]
            yy, scale = y + j * bar, width / top
            length = stats["median_ns"] * scale
            body.append(f"<rect x='{left}' y='{yy}' width='{length:.1f}' height='{bar - 1}' fill='{colour}'/>")
            low, high = stats["ci_low_ns"] * scale + left, stats["ci_high_ns"] * scale + left
            body.append(
                f"<line x1='{low:.1f}' x2='{high:.1f}' y1='{yy + bar / 2:.1f}' y2='{yy + bar / 2:.1f}' stroke='#222'/>"
            )
            body.append(
                _text(
                    left + stats["median_ns"] * scale + 4,
                    yy + bar - 1,
                    format_ns(stats["median_ns"]),
                    extra="font-size='9'",
                )
            )
    return _svg(left + width + 80, height, body, "median kernel duration with 95% interval")


def _legend(labels: tuple[str, str | None], y: float) -> str:
    parts = []
    for i, (label, colour) in enumerate(zip(labels, (A_COLOUR, B_COLOUR))):
        if label is None:
            continue
        x = 10 + i * 300
        parts.append(f"<rect x='{x}' y='{y - 8}' width='10' height='10' fill='{colour}'/>")
        parts.append(_text(x + 14, y + 1, label[:44]))
    return "".join(parts)


def histogram(a: np.ndarray, b: np.ndarray | None, labels: tuple[str, str | None], title: str) -> str:
    """Two distributions on a log10 time axis, as outlines with the medians marked."""
    series = [v[v > 0] for v in (a, b) if v is not None]
    if not any(len(v) for v in series):
        return ""
    logs = [np.log10(v) for v in series]
    low = min(float(v.min()) for v in logs if len(v))
    high = max(float(v.max()) for v in logs if len(v)) + 1e-9
    edges = np.linspace(low, high, 41)
    width, height, left, bottom = 580, 170, 40, 140
    # bins and a range, not an array of edges: numpy then bins by arithmetic instead of sorting 1M values
    counts = [np.histogram(v, bins=40, range=(low, high))[0] / max(len(v), 1) if len(v) else None for v in logs]
    top = max(c.max() for c in counts if c is not None) or 1.0
    body = [_legend(labels, 12), _text(width / 2, height - 4, title, "middle")]
    x_of = lambda value: left + (value - edges[0]) / (edges[-1] - edges[0]) * (width - left - 40)  # noqa: E731
    for c, values, colour in zip(counts, series, (A_COLOUR, B_COLOUR)):
        if c is None:
            continue
        heights = bottom - c / top * 110
        points = " ".join(
            f"{x_of(edges[i]):.1f},{heights[i]:.1f} {x_of(edges[i + 1]):.1f},{heights[i]:.1f}" for i in range(len(c))
        )
        body.append(f"<polyline points='{points}' fill='none' stroke='{colour}' stroke-width='2'/>")
        median = x_of(np.log10(np.median(values)))
        dashed = f"stroke='{colour}' stroke-dasharray='4 3'"
        body.append(f"<line x1='{median:.1f}' x2='{median:.1f}' y1='24' y2='{bottom}' {dashed}/>")
    for value in np.linspace(edges[0], edges[-1], 5):
        body.append(_text(x_of(value), bottom + 13, format_ns(10**value), "middle", "font-size='9'"))
    body.append(f"<line x1='{left}' x2='{width - 40}' y1='{bottom}' y2='{bottom}' stroke='#888'/>")
    return _svg(width, height, body, title)


def _lane_label(label: str, limit: int = 31) -> str:
    """A lane's label within the timeline's margin: elided in the middle, so its start (the thread or GPU)
    and its end (what the lane holds) both stay ("thread 3113936 launch ca" was cut off at 24)."""
    if len(label) <= limit:
        return label
    keep = limit - 1
    return f"{label[: keep - keep // 2]}…{label[-(keep // 2):]}"


def timeline(excerpt: dict[str, Any] | None, title: str, span: int | None = None) -> str:
    """One step's lanes: launch calls per thread and work per stream, events merged below a pixel and
    drawn as tall as the share of their pixels that was busy. `span` (ns) sets a common time scale."""
    if not excerpt or not excerpt["lanes"]:
        return ""
    low, high = excerpt["start_ns"], excerpt["end_ns"]
    width, left, row = 900, 200, 22  # a 200 px margin holds 31 characters at 11 px: a lane's whole label
    span = max(span or high - low, 1)
    step = excerpt.get("step_ns", high - low)
    caption = f"{title}: {format_ns(step)}"
    if high - low < step:  # a dense step: its first events only
        caption += f", its first {format_ns(high - low)} drawn"
    body = [_text(left, 12, caption)]
    for i, lane in enumerate(excerpt["lanes"]):
        y = 20 + i * row
        body.append(_text(left - 6, y + 14, _lane_label(lane["label"]), "end"))
        starts = (np.asarray(lane["start"], dtype=np.float64) - low) / span * (width - left - 10) + left
        ends = (np.asarray(lane["end"], dtype=np.float64) - low) / span * (width - left - 10) + left
        kinds = lane.get("kinds") or ["api"] * len(starts)
        for x0, x1, kind, busy in _merged(starts, ends, kinds):
            colour = hex_of(kind_rgb(kind))  # the timeline's colour of its kind (core/colours.py)
            tall = (row - 7) * max(min(busy / max(x1 - x0, 0.8), 1.0), 0.2)
            body.append(
                f"<rect x='{x0:.1f}' y='{y + row - 4 - tall:.1f}' width='{max(x1 - x0, 0.8):.1f}' "
                f"height='{tall:.1f}' fill='{colour}'/>"
            )
    return _svg(width, 30 + len(excerpt["lanes"]) * row, body, title)


def _merged(starts: np.ndarray, ends: np.ndarray, kinds: list[str]) -> list[tuple[float, float, str, float]]:
    """Events closer than one pixel merged, with the width they were busy (thousands of kernels stay a
    few hundred rectangles, and a stream that idles between tiny kernels does not look solid)."""
    merged: list[list] = []
    for x0, x1, kind in zip(starts.tolist(), ends.tolist(), kinds):
        x1 = max(x1, x0)
        if merged and x0 <= merged[-1][1] + 1.0 and merged[-1][2] == kind:
            merged[-1][1] = max(merged[-1][1], x1)
            merged[-1][3] += x1 - x0
        else:
            merged.append([x0, x1, kind, x1 - x0])
    return [tuple(m) for m in merged]


def dag(graph: Dag | None, title: str) -> str:
    """A traced graph's boxes (`Dag.fold`: runs of identical nodes folded) in capture order, by time share."""
    if graph is None or not graph.nodes:
        return ""
    groups = graph.fold()
    total = graph.total_time_ns() or 1.0
    box_w, box_h, per_row = 150, 40, 5
    width = 20 + per_row * (box_w + 20)
    height = 40 + ((len(groups) + per_row - 1) // per_row) * (box_h + 24)
    body = [_text(10, 14, f"{title}: graph {graph.graph_id}, {len(graph.nodes)} nodes (edges are not traced)")]
    for i, group in enumerate(groups[:200]):
        share = group.time_ns / total
        x, y = 10 + (i % per_row) * (box_w + 20), 26 + (i // per_row) * (box_h + 24)
        heat = int(235 - 200 * min(share, 1.0) ** 0.5)
        fill = f"fill='rgb(255,{heat},{heat})' stroke='#4285f4'"
        node = group.first
        about = [node.name, node.detail.get("launched_by"), str(node.detail.get("full_name", ""))[:240]]
        hover = html.escape("\n".join(a for a in about if a))  # a browser's tooltip: the whole name, who launched it
        body.append(
            f"<rect x='{x}' y='{y}' width='{box_w}' height='{box_h}' rx='5' {fill}><title>{hover}</title></rect>"
        )
        name = group.first.name[:20] + (f" x{len(group)}" if len(group) > 1 else "")
        body.append(_text(x + 6, y + 15, name))
        each = f", {format_ns(group.median_ns)} each" if group.median_ns is not None else ""
        body.append(_text(x + 6, y + 31, f"{share:.0%} of time{each}", extra="font-size='9'"))
        if i % per_row:
            body.append(f"<line x1='{x - 20}' x2='{x}' y1='{y + box_h / 2}' y2='{y + box_h / 2}' stroke='#aaa'/>")
    return _svg(width, height, body, title)


def frontier(points: list[dict[str, Any]], chosen: list[int], title: str) -> str:
    """Expected step time (y) against graph memory (x) along the Pareto frontier; the chosen set ringed."""
    if not points:
        return ""
    width, height, left, bottom = 640, 260, 70, 40
    xs = [p["memory_bytes"] for p in points]
    ys = [p["expected_ns"] for p in points]
    x_max, y_max = max(max(xs), 1), max(max(ys), 1)

    def place(x: float, y: float) -> tuple[float, float]:
        return left + (width - left - 20) * x / x_max, height - bottom - (height - bottom - 20) * y / y_max

    body = [_text(10, 14, title)]
    path = " ".join(
        f"{'M' if i == 0 else 'L'}{place(x, y)[0]:.1f},{place(x, y)[1]:.1f}" for i, (x, y) in enumerate(zip(xs, ys))
    )
    body.append(f"<path d='{path}' fill='none' stroke='{A_COLOUR}' stroke-width='1.5'/>")
    for point in points:
        x, y = place(point["memory_bytes"], point["expected_ns"])
        ring = point["sizes"] == chosen
        body.append(
            f"<circle cx='{x:.1f}' cy='{y:.1f}' r='{5 if ring else 2.5}' fill='{B_COLOUR if ring else A_COLOUR}'/>"
        )
    body.append(_text(left, height - 12, f"graph memory (0 to {format_bytes(x_max)})"))
    body.append(_text(6, 30, f"up to {format_ns(y_max)}", extra="font-size='9'"))
    return _svg(width, height, body, title)


STATUS_MARKS = {"ok": "#2ca02c", "mismatch": "#d62728", "invalid": "#7f7f7f", "fault": "#d62728",
                "timeout": "#ff7f0e", "sanitizer": "#9467bd"}  # fmt: skip


def trial_medians(rows: list[dict[str, Any]], title: str) -> str:
    """Per tuned node, its in-place trials left to right: the median with its 95% interval, a failed
    trial as a cross at the foot coloured by its status; the baseline's median dashed across."""
    nodes: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if row.get("site") and row["how"] == "in-place":  # trials that moved several knobs share one panel
            nodes.setdefault(row["site"] if "," not in row["site"] else "joint", []).append(row)
    baseline = rows[0]["median_ns"] if rows and rows[0].get("median_ns") else None
    if not nodes:
        return ""
    ok = [r for group in nodes.values() for r in group if r["status"] == "ok" and r.get("median_ns") is not None]
    highs = [r["ci_high_ns"] for r in ok] + ([baseline] if baseline else [])
    lows = [r["ci_low_ns"] for r in ok] + ([baseline] if baseline else [])
    y_max, y_min = max([*highs, 1.0]), min([*lows, 0.0]) if not lows else min(lows)
    pad = max((y_max - y_min) * 0.08, y_max * 0.005)  # a zoomed axis: trials differ by percent, not by 2x
    y_min, y_max = max(y_min - pad, 0.0), y_max + pad
    width, panel, left = 640, 110, 80
    body = [_text(10, 14, title)]
    for p, (node, group) in enumerate(nodes.items()):
        top = 26 + p * (panel + 18)
        bottom = top + panel - 18

        def y_of(value: float, top: float = top, bottom: float = bottom) -> float:
            return bottom - (bottom - top) * (value - y_min) / (y_max - y_min)

        body.append(_text(6, top + 10, node[:12]))
        body.append(f"<line x1='{left}' x2='{width - 10}' y1='{bottom}' y2='{bottom}' stroke='#ccc'/>")
        if baseline:
            yb = y_of(baseline)
            body.append(f"<line x1='{left}' x2='{width - 10}' y1='{yb:.1f}' y2='{yb:.1f}' stroke='#888' "
                        "stroke-dasharray='4 3'/>")  # fmt: skip
        step = (width - left - 20) / max(len(group), 1)
        every = max(1, int(np.ceil(34 / step)))  # a block label ("128x8") needs ~34 px at font size 8
        for i, row in enumerate(group):
            x = left + step * (i + 0.5)
            colour = STATUS_MARKS.get(row["status"], "#333")
            label = html.escape(f"{row['block']}: {row['status']}" + (f" ({row['cause']})" if row["cause"] else ""))
            if row.get("median_ns") is not None and row["status"] == "ok":
                y, lo, hi = y_of(row["median_ns"]), y_of(row["ci_low_ns"]), y_of(row["ci_high_ns"])
                body.append(f"<line x1='{x:.1f}' x2='{x:.1f}' y1='{lo:.1f}' y2='{hi:.1f}' stroke='{colour}'/>")
                body.append(f"<circle cx='{x:.1f}' cy='{y:.1f}' r='3' fill='{colour}'><title>{label}, "
                            f"{html.escape(format_ns(row['median_ns']))}</title></circle>")  # fmt: skip
            else:
                body.append(f"<text x='{x:.1f}' y='{bottom - 3:.1f}' text-anchor='middle' fill='{colour}' {FONT}>"
                            f"x<title>{label}</title></text>")  # fmt: skip
            if i % every == 0:
                body.append(_text(x, bottom + 12, row["block"], anchor="middle", extra="font-size='8'"))
    axis = f"{format_ns(y_min)} (foot) to {format_ns(y_max)} (top) per replay"
    body.append(_text(6, 26 + len(nodes) * (panel + 18), axis, extra="font-size='9'"))
    return _svg(width, 40 + len(nodes) * (panel + 18), body, title)


def graph_vs_alone(isolation: list[dict[str, Any]], title: str) -> str:
    """Per tuned node, each candidate at (its kernel alone, the whole step in the graph): agreeing rankings
    rise left to right; the graph's winner is ringed green, the alone winner red."""
    knobs = [k for k in isolation if k["compared"] >= 2]
    if not knobs:
        return ""
    size, gap, left = 200, 60, 50
    width = left + len(knobs) * (size + gap)
    body = [_text(10, 14, title)]
    for p, knob in enumerate(knobs):
        points = [
            (c["alone"]["median_ns"], c["in_graph"]["median_ns"], c["block"])
            for c in knob["candidates"]
            if c["alone"]["status"] == "ok" and c["in_graph"]["status"] == "ok"
        ]
        xs, ys = [x for x, _, _ in points], [y for _, y, _ in points]
        x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
        x_pad, y_pad = max((x1 - x0) * 0.08, x1 * 0.005), max((y1 - y0) * 0.08, y1 * 0.005)
        x0, x1, y0, y1 = x0 - x_pad, x1 + x_pad, y0 - y_pad, y1 + y_pad
        left_edge, top = left + p * (size + gap), 40
        body.append(_text(left_edge, top - 4, f"{knob['knob'][:20]} (tau {_tau(knob)})"))
        body.append(f"<rect x='{left_edge}' y='{top}' width='{size}' height='{size}' fill='none' stroke='#ccc'/>")
        ring = {tuple(knob.get("graph_winner") or ()): "#2ca02c", tuple(knob.get("alone_winner") or ()): "#d62728"}
        for x, y, block in points:
            cx = left_edge + size * (x - x0) / (x1 - x0)
            cy = top + size - size * (y - y0) / (y1 - y0)
            colour = ring.get(tuple(block), "")
            tip = html.escape(f"{'x'.join(map(str, block))}: alone {format_ns(x)}, in the graph {format_ns(y)}")
            body.append(f"<circle cx='{cx:.1f}' cy='{cy:.1f}' r='3' fill='#1f77b4'><title>{tip}</title></circle>")
            if colour:
                body.append(
                    f"<circle cx='{cx:.1f}' cy='{cy:.1f}' r='6' fill='none' stroke='{colour}' stroke-width='2'/>"
                )
        body.append(
            _text(left_edge, top + size + 14, f"alone {format_ns(x0)} to {format_ns(x1)}", extra="font-size='9'")
        )
        body.append(
            _text(left_edge, top + size + 26, f"in the graph {format_ns(y0)} to {format_ns(y1)}", extra="font-size='9'")
        )
    return _svg(width, 40 + size + 34, body, title)


def _tau(knob: dict[str, Any]) -> str:
    return f"{knob['kendall_tau']:.2f}" if knob.get("kendall_tau") is not None else "-"
