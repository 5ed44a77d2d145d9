"""The DAG view draws a conditional node as a box holding its body graphs, titled with its type and facts."""

from __future__ import annotations

from graphscope.app.dag_view import DagView, NodeItem
from tests.graph.conditional_dags import branches_dag, decode_dag


def _view(qtbot, dag):
    view = DagView()
    qtbot.addWidget(view)
    view.resize(1200, 600)
    view.show_dag(dag)
    return view


def test_the_while_node_holds_its_body_and_the_graph_goes_on_after_it(qtbot):
    view = _view(qtbot, decode_dag(runs_median=12.0, per_iteration_ns=4300.0))
    top = view.items_by_group
    assert [item.title for item in top] == ["prefill", "graphscope_loop_enter", "decode#0", "finish"]
    loop = top[2]
    inner = [child for child in loop.childItems() if isinstance(child, NodeItem)]
    assert [child.title for child in inner] == ["mix", "scale", "pick", "graphscope_loop_next"]
    assert all(loop.rect().contains(child.rect()) for child in inner)  # the body is drawn inside the box
    assert loop.rect().width() > 4 * inner[0].rect().width()
    assert top[3].rect().left() > loop.rect().right()  # finish comes after the whole loop, not under it
    assert "WHILE conditional node 2: decode#0" in loop.toolTip()
    assert "12 iterations per launch, 4.30 us per iteration" in loop.toolTip()


def test_nested_bodies_and_a_node_nobody_could_read(qtbot):
    view = _view(qtbot, branches_dag())
    branch = view.items_by_group[1]
    bodies = [child for child in branch.childItems() if isinstance(child, NodeItem)]
    assert [child.title for child in bodies] == ["yes", "pick#0", "after_switch"]
    switch = bodies[1]
    assert [c.title for c in switch.childItems() if isinstance(c, NodeItem)] == ["case0", "case1", "case2"]
    yes, after = bodies[0], bodies[2]
    assert after.rect().top() > yes.rect().bottom()  # then-body above the else-body
    assert "source" not in view.items_by_group[3].toolTip() and "unread" in view.items_by_group[3].toolTip()


def test_picking_a_box_inside_a_body_selects_no_top_level_node(qtbot):
    view = _view(qtbot, decode_dag())
    picked = []
    view.node_selected.connect(picked.append)
    loop = view.items_by_group[2]
    body_box = next(c for c in loop.childItems() if isinstance(c, NodeItem))
    body_box.setSelected(True)
    assert picked[-1] == []
    loop.setSelected(True)
    assert picked[-1] == [2]
