"""The Graph view, the Run and Tune panels and the comparison window, driven offscreen.

The Tune panel runs against a stand-in workload session that answers from a timing model, so the
whole apply / re-measure / sweep / confirm loop is exercised without a GPU.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest

from graphscope.core.launch_config import LaunchConfig, Site
from graphscope.graph.model import Dag, DagNode
from graphscope.store.session_db import SessionStore
from tests.conftest import FORKJOIN, H200_GRAPH, H200_NODE


def test_the_trace_dag_is_shown_and_linked_to_the_timeline(window, open_trace):
    open_trace(FORKJOIN)
    view = window.dag_view
    assert view.dag is not None and len(view.items_by_group) == 8 and not view.dag.edges_known
    view.items_by_group[7].setSelected(True)  # rowsum
    gpu = next(i for i in window.timeline.items.values() if i.lane.kind == "gpu" and i.lane.stream == 13)
    assert gpu._highlight_count == 5  # one rowsum per launch
    assert "rowsum" in window.details.toPlainText() and "over 5 launches" in window.details.toPlainText()
    kernel_row = int(np.flatnonzero(window.document.trace.kernels.graph_node >= 0)[0])
    window.timeline.select(1, kernel_row)  # and back: a node's kernel selects the node
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


class ModelSession:
    """Stands in for WorkloadSession: a 3-node graph whose replay time depends on block sizes."""

    SITES: ClassVar[list[Site]] = [
        Site("scale", 0, "scale", (4096, 1, 1), (256, 1, 1), (16, 1, 1), max_threads=512),
        Site("relu", 0, "relu", (4096, 1, 1), (256, 1, 1), (16, 1, 1), max_threads=512),
    ]

    def __init__(self, path):
        self.info = {"sites": [s.to_json() for s in self.SITES]}
        self.config = LaunchConfig()
        self.edited = False
        self.rng = np.random.default_rng(0)
        self.closed = False

    def _median(self):
        blocks = {s.name: self.config.block_for(s.name, 0, s.block)[0] for s in self.SITES}
        return 100_000.0 + 20_000 * (blocks["scale"] != 128) + 5_000 * (blocks["relu"] != 256)

    def request(self, command, **fields):
        if command == "dag":
            nodes = [DagNode(0, "memcpy", "memcpy")] + [
                DagNode(i + 1, "kernel", s.kernel, s.grid, self.config.block_for(s.name, 0, s.block), site=s.key)
                for i, s in enumerate(self.SITES)
            ]
            return Dag(nodes, [(0, 1), (1, 2)], "live").to_json()
        if command == "apply":
            new = LaunchConfig.from_json(fields["config"])
            self.edited |= new.blocks != self.config.blocks
            self.config = new
            return {"applied": 2, "rejected": {}, "apply_ns": 5000}
        if command == "capture":
            self.config = LaunchConfig.from_json(fields["config"]) if fields.get("config") else self.config
            self.edited = False
            return {"capture_ns": 1, "instantiate_ns": 1, "upload_ns": 1, "launches_captured": 2}
        if command == "measure":
            median = self._median() * (1.2 if self.edited else 1.0)
            samples = self.rng.normal(median, median * 0.002, fields["reps"]).tolist()
            return {
                "gpu_ns": samples,
                "wall_ns": samples,
                "submit_ns": samples,
                "outputs": {"checked": True, "match": True, "exact": True, "max_abs_diff": 0.0},
            }
        raise AssertionError(command)

    def close(self):
        self.closed = True


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
    assert "x the baseline" in tune_panel.status.text() and tune_panel.best.config.blocks == {"scale": (128, 1, 1)}
    assert tune_panel.history.rowCount() == 2


def test_tune_sweep_confirm_and_export(tune_panel, qtbot, tmp_path, monkeypatch):
    tune_panel.strategy.setCurrentText("descent")
    tune_panel.sweep()
    qtbot.waitUntil(lambda: tune_panel.task is None, timeout=60_000)
    assert tune_panel.best.config.blocks == {"scale": (128, 1, 1)}
    assert "adopt" in tune_panel.status.text()
    assert SessionStore(tmp_path / "s.sqlite").db["tunings"].count == 1
    tune_panel.confirm()
    qtbot.waitUntil(lambda: tune_panel.task is None, timeout=30_000)
    assert "fresh captures" in tune_panel.status.text() and "1.20x its fresh replay" in tune_panel.status.text()
    from PySide6.QtWidgets import QFileDialog

    target = tmp_path / "tuned.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    tune_panel.export_config()
    assert LaunchConfig.load(target).blocks == {"scale": (128, 1, 1)}


def test_eager_and_graph_traces_open_one_above_the_other_on_linked_axes(qtbot):
    from graphscope.app.compare import CompareWindow

    window = CompareWindow({"eager": H200_NODE, "graph": H200_GRAPH})
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: len(window.documents) == 2, timeout=60_000)
    eager, graph = window.views["eager"].view, window.views["graph"].view
    eager.setXRange(1_000_000, 2_000_000, padding=0)
    assert graph.viewRange()[0] == pytest.approx([1_000_000, 2_000_000], rel=1e-6)
    assert "graph launches" in window.labels["graph"].text()
