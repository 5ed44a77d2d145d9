"""The Plan panel on stored measurements (no GPU): frontier, table, chosen set, snippets, report."""

from __future__ import annotations

import json

import pytest

from graphscope.cli import main
from graphscope.plan import runner
from tests.plan.test_plan_command import FakeSession


@pytest.fixture
def stored_plan(tmp_path, monkeypatch, capsys):
    """A plan measured by the recorded fake child and stored, as `graphscope plan` leaves one."""
    monkeypatch.setattr(runner, "WorkloadSession", FakeSession)
    workload = tmp_path / "serve.py"
    workload.write_text("SIZES = [1, 2, 4, 8, 16, 32]\ndef setup(ctx):\n    return lambda ctx: None\n")
    session = tmp_path / "s.sqlite"
    traffic = tmp_path / "traffic.csv"
    traffic.write_text("size,count\n1,50\n3,30\n12,15\n30,5\n")
    assert main(["plan", str(workload), "--traffic", str(traffic), "--session", str(session), "--json"]) == 0
    return session, traffic, json.loads(capsys.readouterr().out)


def test_a_stored_plan_is_re_planned_in_the_panel_with_a_budget(qtbot, stored_plan, tmp_path):
    from graphscope.app.plan_panel import PlanPanel

    session, traffic, first = stored_plan
    panel = PlanPanel(session)
    qtbot.addWidget(panel)
    panel.resize(1300, 700)
    panel.show()
    panel.target.setText(f"plan:{first['plan_id']}")
    panel.traffic.setText(str(traffic))
    panel.memory.setText("20MiB")
    panel.plan()
    qtbot.waitUntil(lambda: panel.task is None, timeout=30_000)
    result = panel.result
    assert result is not None, panel.status.text()
    assert result["plan_id"] != first["plan_id"] and result["best"]["memory_bytes"] <= 20 << 20
    chosen = panel.chosen()
    assert chosen and chosen == result["best"]["sizes"]
    rows = range(panel.table.rowCount())
    marked = [int(panel.table.item(r, 0).text()) for r in rows if panel.table.item(r, 7).text()]
    assert marked == chosen and panel.table.rowCount() == len(result["per_size"])
    assert "capture" in panel.verdict.text()
    panel.engine.setCurrentText("SGLang")
    assert f"--cuda-graph-bs {' '.join(map(str, chosen))}" in panel.snippet.toPlainText()
    panel.copy_button.click()
    from PySide6.QtGui import QGuiApplication

    assert QGuiApplication.clipboard().text() == panel.snippet.toPlainText()
    names = [item.name() for item in panel.plot.getPlotItem().listDataItems()]
    assert any(n.startswith("chosen") for n in names) and any(n.startswith("compared list") for n in names)
    panel.grab().save(str(tmp_path / "plan_panel.png"))
    panel.export()
    qtbot.waitUntil(lambda: getattr(panel, "report_preview", None) is not None, timeout=30_000)
    out = tmp_path / "plan.html"
    panel.report_preview.save(out)
    assert "<svg" in out.read_text()


def test_bad_input_is_one_line_in_the_panel(qtbot, tmp_path):
    from graphscope.app.plan_panel import PlanPanel

    panel = PlanPanel(tmp_path / "s.sqlite")
    qtbot.addWidget(panel)
    panel.plan()
    assert "choose a workload" in panel.status.text()
    panel.target.setText(str(tmp_path / "missing.py"))
    panel.plan()
    qtbot.waitUntil(lambda: panel.task is None, timeout=30_000)
    assert "no such workload file" in panel.status.text() and panel.result is None
    panel.target.setText("plan:99")
    panel.memory.setText("lots")
    panel.plan()
    qtbot.waitUntil(lambda: panel.task is None, timeout=30_000)
    assert "write a size such as 2GiB" in panel.status.text()
