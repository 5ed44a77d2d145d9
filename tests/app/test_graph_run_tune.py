"""The Graph view, the Run and Tune panels and the comparison window, driven offscreen.

The Tune panel runs against a stand-in workload session that answers from a timing model, so the
whole apply / re-measure / sweep / confirm loop is exercised without a GPU.
"""

from __future__ import annotations

import numpy as np
import pytest

from graphscope.core.launch_config import LaunchConfig
from graphscope.graph.model import Dag, DagNode
from graphscope.store.session_db import SessionStore
from graphscope.view.layout import KERNEL
from tests.conftest import FORKJOIN, H200_GRAPH, H200_NODE
from tests.tune.fakes import ModelSession


def test_the_trace_dag_is_shown_and_linked_to_the_timeline(window, open_trace):
    open_trace(FORKJOIN)
    view = window.dag_view
    assert view.dag is not None and len(view.items_by_group) == 8 and not view.dag.edges_known
    view.items_by_group[7].setSelected(True)  # rowsum
    gpu = next(i for i in window.timeline.items.values() if i.lane.kind == "gpu" and i.lane.stream == 13)
    assert gpu._highlight_count == 5  # one rowsum per launch
    assert "rowsum" in window.details.toPlainText() and "over 5 launches" in window.details.toPlainText()
    kernel_row = int(np.flatnonzero(window.document.trace.kernels.graph_node >= 0)[0])
    window.timeline.select(KERNEL, kernel_row)  # and back: a node's kernel selects the node
    assert [i.group for i in view.scene().selectedItems()] == [view.group_of[2]]


def test_a_thousand_node_chain_folds_into_one_box(qtbot):
    from graphscope.app.dag_view import DagView

    view = DagView()
    qtbot.addWidget(view)
    nodes = [DagNode(i, "kernel", "vec_add", (64, 1, 1), (256, 1, 1), site=f"add#{i}") for i in range(1000)]
    view.show_dag(Dag(nodes, [(i, i + 1) for i in range(999)], "live"))
    assert len(view.items_by_group) == 1 and view.items_by_group[0].title == "vec_add x1000"
    with qtbot.waitSignal(view.node_selected) as blocker:
        view.items_by_group[0].setSelected(True)
    assert len(blocker.args[0]) == 1000


def test_the_run_panel_says_plainly_when_there_is_no_gpu(qtbot, tmp_path):
    pytest.importorskip("numpy")
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount():
            pytest.skip("this machine has a GPU")
    except Exception:  # the case under test
        pass
    from graphscope.app.run_panel import RunPanel

    panel = RunPanel(tmp_path / "s.sqlite")
    qtbot.addWidget(panel)
    workload = tmp_path / "w.py"
    workload.write_text("def setup(ctx):\n    return lambda ctx: None\n")
    panel.path.setText(str(workload))
    panel.run()
    qtbot.waitUntil(lambda: panel.task is None, timeout=60_000)
    assert "no CUDA GPU is available" in panel.status.text()
    assert SessionStore(tmp_path / "s.sqlite").runs() == []  # refused before it started: not a run


@pytest.fixture
def tune_panel(qtbot, tmp_path):
    from graphscope.app.tune_panel import TunePanel

    panel = TunePanel(tmp_path / "s.sqlite", session_factory=ModelSession)
    qtbot.addWidget(panel)
    panel.path.setText(str(tmp_path / "model.py"))
    with qtbot.waitSignal(panel.dag_ready, timeout=30_000):
        panel.load()
    qtbot.waitUntil(lambda: panel.task is None)
    return panel


def test_tune_apply_one_node_and_re_measure(tune_panel, qtbot):
    tune_panel.select_nodes([1])  # the scale kernel
    assert tune_panel.block.count() == 5 and tune_panel.block.currentText() == "256"
    tune_panel.block.setCurrentText("128")
    with qtbot.waitSignal(tune_panel.dag_ready, timeout=30_000) as blocker:
        tune_panel.apply_selected()
    qtbot.waitUntil(lambda: tune_panel.task is None)
    assert blocker.args[0].nodes[1].block == (128, 1, 1)
    controller = tune_panel.controller
    assert "x the baseline" in tune_panel.status.text() and controller.best.config.blocks == {"scale": (128, 1, 1)}
    assert tune_panel.history.rowCount() == 2


def test_tune_offers_two_dimensional_shapes_and_takes_one_typed_in(tune_panel, qtbot):
    tune_panel.select_nodes([4])  # the 2-D tile kernel
    shapes = [tune_panel.block.itemText(i) for i in range(tune_panel.block.count())]
    assert "16x16" in shapes and "32x8" in shapes and tune_panel.block.currentText() == "16x16"
    tune_panel.block.setCurrentText("64x4")
    tune_panel.apply_selected()
    qtbot.waitUntil(lambda: tune_panel.task is None, timeout=30_000)
    assert tune_panel.history.item(1, 0).text() == "tile=64x4"


def test_a_faulting_candidate_is_a_row_with_its_cause(tune_panel, qtbot):
    tune_panel.select_nodes([3])  # the transpose that assumes blockDim.x == 32
    tune_panel.block.setCurrentText("64x4")
    tune_panel.apply_selected()
    qtbot.waitUntil(lambda: tune_panel.task is None, timeout=30_000)
    assert tune_panel.history.item(1, 6).text().startswith("fault: the workload faulted")
    assert tune_panel.controller.restarts and tune_panel.sweep_button.isEnabled()


def test_controls_are_disabled_while_an_operation_runs(tune_panel, qtbot):
    import threading

    gate = threading.Event()
    measure = tune_panel.controller.live.measure
    tune_panel.controller.live.measure = lambda *a, **k: (gate.wait(10), measure(*a, **k))[1]
    tune_panel.sweep()
    for button in (tune_panel.load_button, tune_panel.import_button, tune_panel.sweep_button, tune_panel.apply_button):
        assert not button.isEnabled()
    assert not tune_panel.cancel_button.isHidden()
    tune_panel.cancel()
    gate.set()
    qtbot.waitUntil(lambda: tune_panel.task is None, timeout=30_000)
    assert "cancelled" in tune_panel.status.text() and tune_panel.load_button.isEnabled()


def test_tune_sweep_confirm_and_export(tune_panel, qtbot, tmp_path, monkeypatch):
    tune_panel.strategy.setCurrentText("descent")
    tune_panel.sweep()
    qtbot.waitUntil(lambda: tune_panel.task is None, timeout=60_000)
    assert tune_panel.controller.best.config.blocks["scale"] == (128, 1, 1)
    assert "adopt" in tune_panel.status.text()
    assert SessionStore(tmp_path / "s.sqlite").db["tunings"].count == 1
    tune_panel.confirm()
    qtbot.waitUntil(lambda: tune_panel.task is None, timeout=30_000)
    assert "fresh captures" in tune_panel.status.text() and "1.20x its fresh replay" in tune_panel.status.text()
    from PySide6.QtWidgets import QFileDialog

    target = tmp_path / "tuned.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    tune_panel.export_config()
    assert LaunchConfig.load(target).blocks == {"scale": (128, 1, 1), "tile": (32, 8, 1)}
    assert tune_panel.report_button.isEnabled()
    tune_panel.export_report()
    qtbot.waitUntil(lambda: getattr(tune_panel, "report_preview", None) is not None, timeout=30_000)
    report = tune_panel.report_preview.report
    assert report["tuning"]["status"] == "done" and {"fault", "ok"} <= {t["status"] for t in report["tuning"]["trials"]}


def test_eager_and_graph_traces_open_one_above_the_other_on_linked_axes(qtbot):
    from graphscope.app.compare import CompareWindow

    window = CompareWindow({"eager": H200_NODE, "graph": H200_GRAPH})
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: len(window.documents) == 2, timeout=60_000)
    eager, graph = window.views["eager"].view, window.views["graph"].view
    eager.setXRange(1_000_000, 2_000_000, padding=0)
    assert graph.viewRange()[0] == pytest.approx([1_000_000, 2_000_000], rel=1e-6)
    assert "graph launches" in window.labels["graph"].text()


def test_a_torch_profiled_run_opens_beside_an_nsight_export_and_their_report_warns(qtbot):
    """The Compare window across sources: a PyTorch-profiler trace (a `run --profile torch` graph mode, its
    measured repetitions) above an Nsight export; the report of the two says they were traced differently."""
    from graphscope.app.compare import CompareWindow
    from graphscope.report.compose import report_of

    profiled = H200_NODE.parent / "kineto" / "h200_seed_vecadd_graph_profile_torch.json.gz"
    window = CompareWindow({"graph": profiled, "nsight": H200_NODE})
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: len(window.documents) == 2, timeout=60_000)
    assert "graph launches" in window.labels["graph"].text() and "kernels" in window.labels["nsight"].text()
    assert window.export_button.isEnabled()
    report, _ = report_of(*window.report_sides())
    assert report["comparison"]["verdicts"]["traced"].startswith("the sides were traced differently: PyTorch")
    assert report["a"]["steps"] == 5  # the profiled run's measured repetitions, not the whole trace


def _boxes_overlap(view) -> bool:
    rects = [item.sceneBoundingRect() for item in view.items_by_group]
    return any(a.intersects(b) for i, a in enumerate(rects) for b in rects[i + 1 :])


def test_trace_dags_show_launch_configurations_in_boxes_that_do_not_overlap(window, open_trace):
    open_trace(FORKJOIN)
    view = window.dag_view
    rowsum = next(n for n in view.dag.nodes if n.name == "rowsum")
    assert rowsum.block == (64, 1, 1) and rowsum.grid == (8, 1, 1)
    assert not _boxes_overlap(view)
    item = next(i for i in view.items_by_group if i.members[0].name == "rowsum")
    assert "grid 8, block 64" in item.toolTip() and item.subtitle == "block 64 · grid 8"


def test_a_live_fork_join_dag_is_laid_out_in_layers_without_overlaps(qtbot):
    from graphscope.app.dag_view import DagView

    view = DagView()
    qtbot.addWidget(view)
    nodes = [DagNode(i, "kernel", "k" * (i + 1) * 20, (1, 1, 1), (32, 1, 1)) for i in range(7)]
    view.show_dag(Dag(nodes, [(0, 1), (0, 2), (1, 3), (2, 4), (3, 5), (4, 5), (0, 6), (6, 5)], "live"))
    assert not _boxes_overlap(view)
    columns = {i: view.items_by_group[view.group_of[i]].rect().x() for i in range(7)}
    assert columns[0] < columns[1] == columns[2] == columns[6] < columns[3] < columns[5]
    assert view.items_by_group[view.group_of[6]].toolTip().startswith("k" * 140)  # the full name


def test_a_trace_without_graphs_says_so(window, open_trace):
    from tests.conftest import DATA

    open_trace(DATA / "extra-p__extrap__profile1.sqlite")
    assert window.dag_view.dag is None
    text = " ".join(i.toPlainText() for i in window.dag_view.scene().items() if hasattr(i, "toPlainText"))
    assert "no CUDA graph node activity" in text
    open_trace(H200_GRAPH)
    text = " ".join(i.toPlainText() for i in window.dag_view.scene().items() if hasattr(i, "toPlainText"))
    assert "--cuda-graph-trace=node" in text


def test_the_graph_dock_fits_when_it_is_first_shown(window, open_trace, qtbot):
    window.graph_dock.hide()
    open_trace(FORKJOIN)
    window.graph_dock.show()
    window.graph_dock.raise_()
    qtbot.waitUntil(lambda: window.dag_view._fitted, timeout=5_000)
    visible = window.dag_view.mapToScene(window.dag_view.viewport().rect()).boundingRect()
    assert visible.contains(window.dag_view.scene().itemsBoundingRect().adjusted(10, 40, -10, -10))
