"""The Run panel's divergence section: a run whose outputs differ shows the graph's kernel nodes with the
found one selected and its two launches side by side; picking another node shows that node's pair."""

from __future__ import annotations

import json

import pytest

from graphscope.text.diverge import launch_rows
from graphscope.workload.child.diverge_search import diverge
from tests.diverge.test_search_sim import faulty
from tests.workload.fakes import fake_report

pytest.importorskip("PySide6")


@pytest.fixture
def run_data(tmp_path):
    live, drv = faulty("grid", 2)
    report = fake_report(tmp_path / "pipeline.py", match=False)
    report.divergence = diverge(live, drv)
    data = json.loads(json.dumps(report.to_json(), default=str))
    data["run_id"] = 7
    return data


def test_the_found_node_is_selected_and_its_two_launches_shown(qtbot, tmp_path, run_data):
    from graphscope.app.run_panel import RunPanel

    panel = RunPanel(tmp_path / "s.sqlite")
    qtbot.addWidget(panel)
    assert panel.diverge.isHidden()
    panel._done(run_data)
    section = panel.diverge
    assert not section.isHidden()
    assert "first node that differs: affine (#2 in capture order" in section.title.text()
    assert [i for i, item in enumerate(section.dag.items_by_group) if item.isSelected()] == [2]
    table = section.table
    cells = [[table.item(r, c).text() for c in range(3)] for r in range(table.rowCount())]
    rows = {label: (left, right) for label, left, right in cells}
    assert rows["grid"] == ("1x1x1", "8x1x1")
    assert table.item(2, 1).font().bold() and not table.item(3, 1).font().bold()  # grid differs, block does not
    section.show_node(4)  # another node: captured and fresh-capture launches agree
    assert table.item(2, 1).text() == table.item(2, 2).text() == "8x1x1"
    assert not any(table.item(r, 1).font().bold() for r in range(table.rowCount()))


def test_a_run_that_matches_shows_no_section(qtbot, tmp_path):
    from graphscope.app.run_panel import RunPanel

    panel = RunPanel(tmp_path / "s.sqlite")
    qtbot.addWidget(panel)
    panel._done({**fake_report(tmp_path / "w.py").to_json(), "run_id": 1})
    assert panel.diverge.isHidden()


def test_rows_compare_argument_bytes_not_their_rendering(run_data):
    found = run_data["divergence"]
    rows = launch_rows(found["captured"], found["reference"])
    assert [r[0] for r in rows if r[3]] == ["grid"]
    assert rows[0] == ("kernel", "affine", "affine", False)
