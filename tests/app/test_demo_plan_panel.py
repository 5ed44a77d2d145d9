"""The Plan panel's Demo plan button: the shipped demo plan re-planned without a GPU."""

from __future__ import annotations

import pytest

from graphscope.store.demo_plan import demo_plan_path


@pytest.mark.skipif(not demo_plan_path().is_file(), reason="assets/demo_plan.json is made on a GPU (attrib.sh 3)")
def test_the_plan_panel_s_demo_button_re_plans_the_shipped_plan(qtbot, tmp_path):
    from graphscope.app.plan_panel import PlanPanel

    panel = PlanPanel(tmp_path / "s.sqlite")
    qtbot.addWidget(panel)
    panel.demo_button.click()
    qtbot.waitUntil(lambda: panel.task is None, timeout=30_000)
    assert panel.result is not None, panel.status.text()
    assert panel.target.text() == "plan:demo" and panel.table.rowCount() == len(panel.result["per_size"])
    assert "capture" in panel.verdict.text()
