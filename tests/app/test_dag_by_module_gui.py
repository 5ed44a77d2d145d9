"""The Graph view colours a trace's DAG by module where the attribution knows it, with a legend, and folds
consecutive nodes of one module into one box when asked (core/colours.py's module palette)."""

from __future__ import annotations

from graphscope.analysis.capture_ops import attribution
from graphscope.app.dag_view import NodeItem
from graphscope.core.colours import NO_MODULE_RGB, module_rgb
from graphscope.trace import load_trace
from tests.conftest import H200_NODE

KINETO = H200_NODE.parent / "kineto"
CAPTURE, REPLAY = KINETO / "h200_torch_linear_capture.json.gz", KINETO / "h200_torch_linear_replay.json.gz"


def _fills(window) -> dict[str, tuple[int, int, int]]:
    items = [i for i in window.dag_view.scene().items() if isinstance(i, NodeItem)]
    return {item.title: item.brush().color().getRgb()[:3] for item in items}


def test_the_linear_s_gemm_is_filled_in_its_module_s_colour_and_relu_is_not(window, open_trace, qtbot):
    capture = load_trace(CAPTURE)
    panel = window.graph_panel
    panel.attribution = lambda trace: attribution(trace, [capture])[0]
    open_trace(REPLAY)
    qtbot.waitUntil(lambda: panel.nodes is not None, timeout=30_000)
    assert panel.colour_by.currentText() == "module" and panel.colour_by.isEnabled()
    fills = _fills(window)
    (gemm,) = [title for title in fills if "gemm" in title]
    (relu,) = [title for title in fills if "elementwise" in title]
    assert fills[gemm] == module_rgb(0) and fills[relu] == NO_MODULE_RGB
    tips = {i.title: i.toolTip() for i in window.dag_view.scene().items() if isinstance(i, NodeItem)}
    assert "made inside module Linear_0" in tips[gemm] and "module" not in tips[relu]
    assert "Linear_0" in panel.legend.text() and "(not attributed)" in panel.legend.text()
    assert not panel.legend.isHidden()
    panel.colour_by.setCurrentText("time share")  # back to the heat fill, no legend
    assert module_rgb(0) not in _fills(window).values() and panel.legend.isHidden()


def test_a_trace_that_names_no_module_keeps_the_time_fill_and_can_fold_nothing_by_module(window, open_trace, qtbot):
    open_trace(H200_NODE)
    panel = window.graph_panel
    qtbot.waitUntil(lambda: panel.nodes is not None, timeout=30_000)  # looked up, no module found
    assert not panel.colour_by.isEnabled() and not panel.fold_modules.isEnabled()
    assert panel.colour_by.currentText() == "time share" and panel.legend.isHidden()
    assert any(" x" in title for title in _fills(window))  # the 1000 vec_adds still fold as before
