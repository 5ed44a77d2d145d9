"""The DAG view draws programmatic (PDL) edges dashed in their colour, with a legend, tooltips naming the
ports and verdict, and Details rows for a selected node's PDL edges (on a DAG built by hand)."""

from __future__ import annotations

from graphscope.core.colours import PDL_EDGE_RGB, PLAIN_EDGE_RGB
from graphscope.core.edge_kinds import PDL_NO_EFFECT, PDL_SHORTER, EdgeKind, Port
from graphscope.graph.edges import EdgeKinds, edge_fields, judge_pdl
from graphscope.graph.model import Dag, DagNode

PDL = (EdgeKind.PROGRAMMATIC, Port.PROGRAMMATIC, Port.DEFAULT)
PLAIN = (EdgeKind.DEFAULT, Port.DEFAULT, Port.DEFAULT)


def pdl_dag(names=("a", "b", "c", "d")):
    nodes = [DagNode(i, "kernel", name, grid=(16, 1, 1), block=(256, 1, 1)) for i, name in enumerate(names)]
    edges = [(i, i + 1) for i in range(len(names) - 1)]
    return Dag(nodes, edges, "live", True, 3, [], EdgeKinds.of([PLAIN, PDL, PDL][: len(edges)]))


def test_programmatic_edges_are_dashed_in_their_colour_with_ports_and_verdict_in_the_tooltip(qtbot):
    from PySide6.QtCore import Qt

    from graphscope.app.dag_view import DagView

    dag = pdl_dag()
    judge_pdl(
        dag,
        replays={
            1: {"saving_ns": 400.0, "ci_low_ns": 350.0, "ci_high_ns": 450.0},
            2: {"saving_ns": 3.0, "ci_low_ns": -20.0, "ci_high_ns": 25.0},
        },
    )
    view = DagView()
    qtbot.addWidget(view)
    view.show_dag(dag)
    assert len(view.edge_items) == 3
    styles = [(item.pen().style(), item.pen().color().getRgb()[:3]) for item in view.edge_items]
    assert styles[0] == (Qt.PenStyle.SolidLine, PLAIN_EDGE_RGB)
    assert styles[1] == styles[2] == (Qt.PenStyle.DashLine, PDL_EDGE_RGB)
    tip = view.edge_items[1].toolTip()
    assert "programmatic edge (PDL): node 1 -> node 2" in tip and "ports programmatic -> default" in tip
    assert PDL_SHORTER in tip and "+400 ns" in tip and PDL_NO_EFFECT in view.edge_items[2].toolTip()
    assert "programmatic" not in view.edge_items[0].toolTip()
    legend = [i.toPlainText() for i in view.scene().items() if hasattr(i, "toPlainText")]
    assert any("programmatic edge (PDL)" in text for text in legend)


def test_no_legend_without_programmatic_edges_and_a_fold_names_the_ones_it_hides(qtbot):
    from graphscope.app.dag_view import DagView

    plain = pdl_dag(("a", "b"))
    view = DagView()
    qtbot.addWidget(view)
    view.show_dag(plain)
    assert not [i for i in view.scene().items() if hasattr(i, "toPlainText")]
    folded = Dag(
        [DagNode(i, "kernel", "same") for i in range(6)],
        [(i, i + 1) for i in range(5)],
        "live",
        True,
        edge_kinds=EdgeKinds.of([PDL] * 5),
    )
    view.show_dag(folded)
    (box,) = view.items_by_group
    assert "5 programmatic (PDL) edges between these nodes" in box.toolTip()


def test_details_rows_for_a_selected_nodes_pdl_edges_and_its_griddepcontrol():
    dag = pdl_dag()
    dag.nodes[2].detail["griddep"] = {"wait": True, "trigger": False, "how": "sass"}
    judge_pdl(dag)
    rows = dict(edge_fields(dag, [2]))
    assert set(rows) == {"PDL edge 1 -> 2", "PDL edge 2 -> 3", "griddepcontrol"}
    assert rows["PDL edge 1 -> 2"].startswith("ports programmatic -> default; not measured")
    assert rows["griddepcontrol"] == "waits (griddepcontrol.wait) (read from its sass)"
    assert edge_fields(dag, [0]) == []
