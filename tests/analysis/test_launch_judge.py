"""Graph launches judged against the launch-cost model (analysis/launch_judge.py), on the shipped H200
fork-join export (node trace mode), checked by plain SQL over the export."""

from __future__ import annotations

import json
import sqlite3
import statistics

import pytest

from graphscope.analysis.launch_judge import split_saving_ns
from graphscope.cli import main
from graphscope.core.launch_cost import DEFAULT, ORIENTATION
from tests.conftest import DATA

FORKJOIN = DATA / "h200_forkjoin_node.sqlite"


def test_each_graph_is_priced_by_its_node_count(capsys):
    assert main(["summary", str(FORKJOIN), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)["graph_launch_cost"]
    db = sqlite3.connect(FORKJOIN)
    calls = db.execute(
        "SELECT r.end - r.start, r.correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = "
        "r.nameId WHERE s.value LIKE 'cudaGraphLaunch%' ORDER BY r.start"
    ).fetchall()
    nodes = {
        c: sum(db.execute(f"SELECT COUNT(*) FROM {t} WHERE correlationId = ?", (c,)).fetchone()[0]
               for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"))
        for _, c in calls
    }  # fmt: skip
    (graph,) = found["graphs"]
    assert graph["launches"] == len(calls) == 5 and set(nodes.values()) == {graph["nodes"]} == {8}
    assert graph["median_call_ns"] == statistics.median(d for d, _ in calls)
    assert graph["first_call_ns"] == calls[0][0]
    assert graph["model_ns"] == pytest.approx(DEFAULT.launch_ns(8), abs=0.1)
    assert found["node_traced"] and any(p.startswith("node-level tracing") for p in graph["paid"])


def test_summary_text_names_what_else_is_paid(capsys):
    assert main(["summary", str(FORKJOIN)]) == 0
    text = capsys.readouterr().out
    assert "Graph launches against the launch-cost model" in text
    assert "graph 2: 8 nodes; its launch call took 27.0 us (median of 5)" in text
    assert "also paid: node-level tracing" in text


def test_splitting_saves_the_first_node_latency_of_half_the_nodes():
    # without a measured first-node latency the host per-node term prices it: half the nodes' share
    assert split_saving_ns(ORIENTATION, 5000) == pytest.approx(2500 * ORIENTATION.per_node_ns + 2500 * 0, abs=5)


def test_a_graph_mode_export_names_graph_level_tracing(capsys):
    path = DATA / "h200_seed_vecadd_graph.sqlite"
    assert main(["summary", str(path), "--json"]) == 0
    (graph,) = json.loads(capsys.readouterr().out)["graph_launch_cost"]["graphs"]
    db = sqlite3.connect(path)
    calls = [r[0] for r in db.execute(
        "SELECT r.end - r.start FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
        "WHERE s.value LIKE 'cudaGraphLaunch%' ORDER BY r.start")]  # fmt: skip
    db.close()
    assert graph["nodes"] is None and graph["model_ns"] is None and graph["launches"] == len(calls) == 3
    assert graph["median_call_ns"] == statistics.median(calls)
    assert graph["paid"][0].startswith("graph-level tracing")


@pytest.mark.parametrize("name", ["h200_seed_vecadd_graph.sqlite", "h200_seed_vecadd_node.sqlite"])
def test_first_node_latency_and_replay_agree_with_the_benchmarks_sql(name, capsys):
    """benchmarks/graph_launch_cost.py reads launch latency from Nsight exports by plain SQL; graphscope's
    judge reads it through its own reader: the same medians, in graph and in node trace mode."""
    import sys

    sys.path.insert(0, str(DATA.parent.parent / "benchmarks"))
    from graph_launch_cost import launches_by_sql

    assert main(["summary", str(DATA / name), "--json"]) == 0
    (graph,) = json.loads(capsys.readouterr().out)["graph_launch_cost"]["graphs"]
    rows = launches_by_sql(DATA / name)
    assert graph["median_first_node_ns"] == statistics.median(r["first_start"] - r["call_start"] for r in rows)
    assert graph["median_replay_ns"] == statistics.median(r["last_end"] - r["first_start"] for r in rows)
