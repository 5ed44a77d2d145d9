"""The DAG view outlines a node in the colour the lanes draw its kind in (core/colours.py)."""

from __future__ import annotations

from graphscope.app.dag_view import NodeItem
from graphscope.core.colours import COLOR_MEMCPY, COLOR_MEMSET, KERNEL_COLORS, PALETTE
from tests.conftest import DATA


def test_a_dag_node_is_outlined_in_its_kinds_lane_colour(window, open_trace):
    open_trace(DATA / "h200_forkjoin_node.sqlite")
    nodes = [item for item in window.dag_view.scene().items() if isinstance(item, NodeItem)]
    outline = {item.title.split()[0]: item.pen().color().getRgb()[:3] for item in nodes}
    assert outline["memcpy"] == PALETTE[COLOR_MEMCPY]  # the lanes' green, not a second one
    assert outline["memset"] == PALETTE[COLOR_MEMSET]
    assert outline["scale"] in {PALETTE[i] for i in KERNEL_COLORS}
