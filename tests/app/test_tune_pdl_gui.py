"""The Tune panel's PDL button: each launch's flip a row against the PDL baseline, the confirmation, the
adopted flips in the status line, and the Graph view redrawn with the new edge kinds."""

from __future__ import annotations


def test_tune_pdl_adds_a_row_per_flip_and_redraws_the_graph(qtbot, tmp_path):
    from graphscope.app.tune_panel import TunePanel
    from tests.tune.pdl_fakes import PdlModelSession

    panel = TunePanel(tmp_path / "s.sqlite", session_factory=PdlModelSession)
    qtbot.addWidget(panel)
    panel.path.setText(str(tmp_path / "model.py"))
    with qtbot.waitSignal(panel.dag_ready, timeout=30_000):
        panel.load()
    qtbot.waitUntil(lambda: panel.task is None)
    assert panel.pdl_button.isEnabled()
    with qtbot.waitSignal(panel.dag_ready, timeout=30_000) as blocker:
        panel.tune_pdl()
    qtbot.waitUntil(lambda: panel.task is None)
    labels = [panel.history.item(r, 0).text() for r in range(panel.history.rowCount())]
    assert labels[1:] == [
        "PDL baseline",
        "relu#0 PDL off",
        "transpose#0 PDL on",
        "PDL baseline, fresh capture",
        "PDL best, fresh capture",
    ]
    row = labels.index("transpose#0 PDL on")
    assert float(panel.history.item(row, 4).text().rstrip("x")) > 1.0  # against the PDL baseline
    assert panel.status.text().startswith("PDL adopted: transpose#0 on (captured afresh, the best is")
    assert blocker.args[0].edge_kinds.kind.tolist() == [0, 1, 1, 0, 0]
    panel.close_session()
