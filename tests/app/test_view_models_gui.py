"""The window draws what view/ computed once: the DAG outlines a node in its kind's lane colour
(core/colours.py); idle gaps are found once, in the background (view/gaps.py)."""

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


def test_idle_gaps_are_found_once_off_the_gui_thread_not_at_each_rebuild(window, open_trace, qtbot, monkeypatch):
    import threading

    from graphscope.view import gaps as gaps_module

    threads = []
    real = gaps_module.idle_gaps
    monkeypatch.setattr(
        gaps_module, "idle_gaps", lambda *a, **k: threads.append(threading.current_thread()) or real(*a, **k)
    )
    open_trace(DATA / "h200_forkjoin_node.sqlite")
    timeline = window.timeline
    with qtbot.waitSignal(timeline.gaps_ready, timeout=10_000):
        window.gaps_action.trigger()
    drawn = len(timeline.gap_items)
    assert drawn == 4 and len(threads) == 4
    assert threading.main_thread() not in threads  # the background pool found them
    group = next(i for i in timeline.items.values() if i.lane.kind == "gpu").lane.group
    for collapsed in (True, False):  # two rebuilds
        timeline.set_group_collapsed(group, collapsed)
    window.gaps_action.trigger()  # hidden, then shown again: drawn at once from the document's copy
    window.gaps_action.trigger()
    assert len(timeline.gap_items) == drawn and len(threads) == 4  # none found again
