"""One colour table (core/colours.py): lanes, legend and report charts draw a kind in the same colour,
and no module outside core/ spells a kind's colour."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from graphscope.core.colours import COLOR_GRAPH, COLOR_MEMCPY, COLOR_MEMSET, KIND_COLOR, PALETTE, hex_of, kind_rgb
from graphscope.core.events import Activity
from graphscope.report.svg import timeline
from graphscope.trace import load_trace
from graphscope.view.layout import build_layout
from graphscope.view.legend import legend_html
from tests.conftest import DATA

PACKAGE = Path(__file__).resolve().parents[2] / "graphscope"
FIXED = {Activity.MEMCPY: COLOR_MEMCPY, Activity.MEMSET: COLOR_MEMSET, Activity.GRAPH: COLOR_GRAPH}


def test_the_lanes_draw_copies_memsets_and_graphs_in_their_kinds_colour():
    trace = load_trace(DATA / "h200_forkjoin_node.sqlite")
    seen = set()
    for lane in build_layout(trace).lanes:
        for kind, colour in FIXED.items():
            mine = lane.source == kind
            if mine.any():
                seen.add(kind)
                assert set(lane.color[mine].tolist()) == {colour}, kind.noun
    assert {Activity.MEMCPY, Activity.MEMSET} <= seen  # the fork/join trace copies and sets memory


def test_legend_and_report_lanes_read_the_same_table():
    legend = legend_html()
    for kind, colour in FIXED.items():
        assert f"rgb{PALETTE[colour]}" in legend, kind.noun
        assert kind_rgb(kind) == kind_rgb(kind.table) == kind_rgb(kind.noun) == PALETTE[colour]
    kinds = ["kernels", "memcpy", "memset", "graph_launches"]
    excerpt = {
        "start_ns": 0,
        "end_ns": 400,
        "lanes": [{"label": "stream 7", "start": [0, 100, 200, 300], "end": [90, 190, 290, 390], "kinds": kinds}],
    }
    svg = timeline(excerpt, "step")
    fills = re.findall(r"<rect [^>]*fill='(#[0-9a-f]{6})'", svg)
    assert fills == [hex_of(kind_rgb(kind)) for kind in kinds]
    assert hex_of(PALETTE[COLOR_MEMCPY]) == "#2ea043" and len(set(fills)) == 4  # four kinds, four colours


def test_an_unknown_kind_is_grey_not_an_error():
    assert kind_rgb("sync") == kind_rgb("something else") == PALETTE[0]
    assert np.all([0 <= index < len(PALETTE) for index in KIND_COLOR.values()])


def _spellings(rgb: tuple[int, int, int]) -> list[str]:
    red, green, blue = rgb
    return [hex_of(rgb), f"({red}, {green}, {blue})", f"({red},{green},{blue})"]


KIND_TO_COLOUR = re.compile(
    r"[\"'](?:api|kernels?|memcpy|memset|graph_launches)[\"']\s*:\s*(?:[\"']#[0-9a-f]{6}|\(\s*\d+\s*,\s*\d+\s*,\s*\d+\s*\))"
)


def test_no_module_outside_core_spells_a_kinds_colour():
    """A memcpy, memset or graph launch has one colour (core/colours.py); a kind -> colour table
    anywhere else is a second table that will drift (the DAG's memcpy was another green)."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        if path.parent.name == "core":
            continue
        text = path.read_text().lower()
        for kind, colour in FIXED.items():
            for spelled in _spellings(PALETTE[colour]):
                if spelled in text:
                    found.append(f"{path.relative_to(PACKAGE.parent)}: {kind.noun}'s colour {spelled}")
        for match in KIND_TO_COLOUR.finditer(text):
            found.append(f"{path.relative_to(PACKAGE.parent)}: a kind's colour ({match.group(0)!r})")
    assert not found, "spelled outside core/colours.py:\n" + "\n".join(found)
