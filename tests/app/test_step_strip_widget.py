"""The per-step strip above the lanes (app/step_strip.py): shown for a trace with steps, coloured by
mode with its seams shaded and x following the timeline; hidden for a trace without steps."""

from __future__ import annotations

from tests.conftest import DATA, H200_NODE


def _drawn(qtbot, window):
    qtbot.waitUntil(lambda: window.step_strip.task is None, timeout=30_000)  # computed below the GUI thread
    return window.step_strip


def test_the_strip_shows_steps_and_seams_and_follows_the_timeline(qtbot, window, open_trace):
    document = open_trace(DATA / "kineto" / "hta__rank0_of_16_graph_launches.json.gz")
    strip = _drawn(qtbot, window)
    assert strip.isVisible() and strip.strip is not None and len(strip.strip) == 5
    assert len(strip.items) == 2 and len(strip.strip.seam_start) > 0  # steps, then the shaded seams
    middle = float(strip.strip.start[1] + strip.strip.end[1]) / 2
    assert strip.step_at(middle) == 1 and "piecewise" in strip.strip.label(1)
    assert strip.step_at(float(strip.strip.start[0]) - 1) is None
    window.timeline.view.setXRange(float(strip.strip.start[2]), float(strip.strip.end[2]), padding=0)
    assert strip.view.viewRange()[0] == window.timeline.view.viewRange()[0]
    assert document is window.document


def test_a_trace_without_steps_hides_the_strip(qtbot, window, open_trace):
    open_trace(H200_NODE)
    _drawn(qtbot, window)
    if window.step_strip.strip is None:
        assert not window.step_strip.isVisible()
    else:  # the seeds' eager_N / graph_N phases count as steps: then it is shown
        assert window.step_strip.isVisible() and len(window.step_strip.strip) > 0
    open_trace(DATA / "kineto" / "h200_torch_linear_replay.json.gz")
    _drawn(qtbot, window)
    assert window.step_strip.strip is None and not window.step_strip.isVisible()
