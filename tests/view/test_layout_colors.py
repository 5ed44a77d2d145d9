"""The same kernel or NVTX name gets the same colour in every trace (Compare shows A above B)."""

from __future__ import annotations

from graphscope.core.events import Activity
from graphscope.trace import load_trace
from graphscope.view.layout import build_layout
from tests.conftest import DATA


def _colours(path):
    """name -> the colours its kernels and NVTX ranges are drawn in, and name -> its string id."""
    trace = load_trace(path)
    colours, ids = {}, {}
    for lane in build_layout(trace).lanes:
        for source, name, colour in zip(lane.source.tolist(), lane.name.tolist(), lane.color.tolist()):
            if name < 0 or source not in (Activity.KERNEL, Activity.NVTX):
                continue
            text = trace.symbols.name(int(name))
            colours.setdefault(text, set()).add(int(colour))
            ids[text] = int(name)
    return colours, ids


def test_a_name_has_one_colour_across_traces_whose_string_ids_differ():
    a, a_ids = _colours(DATA / "h200_seed_vecadd_node.sqlite")
    b, b_ids = _colours(DATA / "h200_forkjoin_node.sqlite")
    common = set(a) & set(b)
    assert {"capture", "eager_0"} <= common  # NVTX ranges both traces have
    assert any(a_ids[n] != b_ids[n] for n in common)  # the case that coloured them differently before
    for name in common:
        assert len(a[name]) == 1 and a[name] == b[name], name
