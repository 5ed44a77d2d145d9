"""A launch configuration the trace did not record (a profiler writes 0) reads "unknown", never "0x0x0":
in `dag`'s table and DOT, the Graph view's inspector and a kernel's Details (issue 44)."""

from __future__ import annotations

from graphscope.core.launch_config import format_dim
from graphscope.graph.export import to_dot
from graphscope.graph.model import Dag, DagNode
from graphscope.text.tune import render_dag
from graphscope.view.describe import describe_nodes


def _dag() -> Dag:
    known = DagNode(0, "kernel", "gemm", grid=(64, 1, 1), block=(128, 1, 1))
    unknown = DagNode(1, "kernel", "hip_kernel", grid=(0, 0, 0), block=(0, 0, 0))
    return Dag([known, unknown], [], "trace")


def test_format_dim_says_unknown_for_unrecorded_sizes():
    assert format_dim((0, 0, 0)) == format_dim((0, 0, 0), whole=True) == "unknown"
    assert format_dim((256, 1, 1)) == "256" and format_dim((256, 1, 1), whole=True) == "256x1x1"
    assert format_dim(None) == "-"


def test_dag_text_dot_and_inspector_read_unknown():
    dag = _dag()
    text = render_dag(dag, "trace t")
    assert "0x0x0" not in text and "unknown" in text.splitlines()[-1]
    assert "64x1x1" in text  # a recorded one unchanged
    dot = to_dot(dag, fold=False)
    assert "0x0x0" not in dot and "grid unknown block unknown" in dot
    _, fields = describe_nodes([dag.nodes[1]])
    assert dict(fields)["grid"] == "unknown" and dict(fields)["block"] == "unknown"
