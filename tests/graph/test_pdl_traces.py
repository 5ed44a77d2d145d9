"""Real PDL traces of examples/pdl_chain.py (H100; `benchmarks/gpu_jobs/pdl.sh 3` writes them, copied into
tests/data as `h100_pdl_chain_{on,off}_node.sqlite` and tests/data/kineto as `h100_pdl_chain_*.pt.trace.json.gz`):
the overlap graphscope counts per stream against plain SQL / plain JSON over the file, and each edge's gap
against SQL that pairs the k-th execution of one node with the k-th of the next. Until those files are
copied in, these tests have no cases (pytest reports the empty parameter sets as skipped)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from benchmarks.pdl_trace_check import json_overlap, sql_overlap  # the second way, one copy
from graphscope.core.edge_kinds import EdgeKind, Port
from graphscope.graph.edges import EdgeKinds
from graphscope.graph.model import Dag, DagNode
from tests.conftest import DATA

NSYS = sorted(DATA.glob("h100_pdl_chain_*_node.sqlite"))
KINETO = sorted((DATA / "kineto").glob("h100_pdl_chain_*.json.gz"))
def summary_overlap(path: Path, capsys, *options: str) -> dict:
    """The summary's overlap over the whole trace (the plain counts see every row, not only the measured
    repetitions a graphscope run's trace is scoped to by default)."""
    from graphscope.cli import main

    assert main(["summary", str(path), "--json", "--whole-trace", *options]) == 0
    return json.loads(capsys.readouterr().out)["stream_overlap"]


@pytest.mark.parametrize("path", NSYS, ids=lambda p: p.stem)
def test_graphscope_counts_the_overlap_plain_sql_finds(path, capsys):
    overlap = summary_overlap(path, capsys)
    assert (overlap["count"], overlap["ns"]) == sql_overlap(path)
    if "_on_" in path.name:  # PDL on: kernels start before the one before them on the stream ends
        assert overlap["count"] > 0
        from graphscope.cli import main

        assert main(["summary", str(path), "--json"]) == 0  # scoped to the 5 measured reps of the 10
        scoped = json.loads(capsys.readouterr().out)["stream_overlap"]
        assert 0 < scoped["count"] < overlap["count"] and 0 < scoped["ns"] < overlap["ns"]


@pytest.mark.parametrize("path", KINETO, ids=lambda p: p.stem)
def test_kineto_overlap_matches_plain_json(path, capsys):
    assert summary_overlap(path, capsys)["count"] == json_overlap(path)[0]


def chain_dag(count: int = 32) -> Dag:
    """examples/pdl_chain.py as captured: 32 kernels in a chain, every edge programmatic (or `count`)."""
    nodes = [DagNode(i, "kernel", "link" if i < 24 else "loose") for i in range(count)]
    pdl = (EdgeKind.PROGRAMMATIC, Port.PROGRAMMATIC, Port.DEFAULT)
    edges = [(i, i + 1) for i in range(count - 1)]
    return Dag(nodes, edges, "live", True, None, [], EdgeKinds.of([pdl] * (count - 1)))


@pytest.mark.parametrize(
    "path, count", [(p, 32) for p in NSYS] + [(DATA / "h200_seed_vecadd_node.sqlite", 1000)], ids=lambda p: str(p)[-30:]
)
def test_each_edges_gap_from_the_trace_is_what_sql_pairs(path, count):
    """Also on the seeds' 1000-kernel chain (H200, plain edges): the pairing is the same whatever the kind."""
    from graphscope.cli.pdl import trace_gaps

    dag = chain_dag(count)
    gaps, _ = trace_gaps(dag, path)
    graph = int(dag.notes[-1].split("graph ")[1].split(",")[0])
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = con.execute(
        """WITH k AS (SELECT graphNodeId AS node, start, "end" AS stop,
                  ROW_NUMBER() OVER (PARTITION BY graphNodeId ORDER BY start) AS replay
                  FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphNodeId >> 32 = ?)
           SELECT a.node & 4294967295, b.start - a.stop FROM k a JOIN k b ON b.node = a.node + 1 AND b.replay = a.replay
           ORDER BY a.node, a.replay""",
        (graph,),
    ).fetchall()
    by_edge: dict[int, list[int]] = {}
    for index, gap in rows:
        by_edge.setdefault(int(index), []).append(int(gap))
    assert set(gaps) == set(by_edge) == set(range(count - 1))
    for position, values in by_edge.items():
        assert np.array_equal(gaps[position], np.array(values, dtype=np.float64))
