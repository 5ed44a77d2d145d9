"""The Plan panel says why a chosen size under the 20% rule is chosen, and labels its frontier's number."""

from __future__ import annotations

import html

from graphscope.core.rules import PLAN_EXPECTED
from graphscope.text.plan import under_rule_lines
from tests.app.test_plan_panel import stored_plan  # noqa: F401 (a fixture)


def test_the_panel_explains_a_chosen_size_under_the_rule(qtbot, stored_plan):  # noqa: F811
    from graphscope.app.plan_panel import PlanPanel

    session, traffic, first = stored_plan
    assert [e["size"] for e in first["kept_under_rule"]] == [32]  # 100 us replay against 112 us eager: 11%
    panel = PlanPanel(session)
    qtbot.addWidget(panel)
    panel.target.setText(f"plan:{first['plan_id']}")
    panel.traffic.setText(str(traffic))
    panel.plan()
    qtbot.waitUntil(lambda: panel.task is None, timeout=30_000)
    (line,) = under_rule_lines(panel.result)
    assert line.startswith("size 32 is chosen though its graph saves 11% of its eager step")
    assert html.escape(line) in panel.verdict.text()
    assert panel.plot.getPlotItem().getAxis("left").labelText == PLAN_EXPECTED
