"""Programmatic dependent launch on a real GPU: ctx.launch(pdl=True) eager and captured, the edges read back
with their kind and ports, the kernels' griddepcontrol read from their SASS, and each edge timed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphscope.core.edge_kinds import PDL_NO_DEVICE_SYNC, EdgeKind, Port
from graphscope.core.launch_config import LaunchConfig
from graphscope.graph.edges import judge_pdl, kinds_of
from graphscope.graph.model import Dag
from graphscope.workload.session import WorkloadSession

pytestmark = pytest.mark.gpu
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_a_pdl_chain_runs_eager_and_captured_with_the_same_outputs():
    with WorkloadSession(EXAMPLES / "pdl_chain.py") as session:
        eager = session.request("measure", mode="eager", reps=5, warmup=2)
        graph = session.request("measure", mode="graph", reps=5, warmup=2)
    assert eager["outputs"]["match"] is not False and graph["outputs"]["match"] is not False
    print(f"eager {np.median(eager['gpu_ns']) / 1e3:.1f} us, graph {np.median(graph['gpu_ns']) / 1e3:.1f} us")


def test_the_captured_chain_has_programmatic_edges_with_their_ports_and_griddep_read_from_sass():
    with WorkloadSession(EXAMPLES / "pdl_chain.py") as session:
        dag = Dag.from_json(session.request("dag"))
    kinds = kinds_of(dag)
    print(dag.notes, kinds.to_json()["kind"][:3], kinds.to_json()["from_port"][:3])
    assert len(dag.nodes) == 32 and len(dag.edges) == 31 and dag.chains() == [list(range(32))]
    assert (kinds.kind == EdgeKind.PROGRAMMATIC).all()
    assert (kinds.from_port == Port.PROGRAMMATIC).all() and (kinds.to_port == Port.DEFAULT).all()
    assert all(n.site for n in dag.nodes) and all(n.detail.get("griddep") for n in dag.nodes), dag.notes
    link, loose = dag.nodes[0].detail["griddep"], dag.nodes[31].detail["griddep"]
    print("griddep", link, loose)
    assert link["wait"] and link["trigger"] and not loose["wait"] and not loose["trigger"]
    verdicts = [kinds.measured[p]["verdict"] for p in range(31)]
    assert verdicts[24:] == [PDL_NO_DEVICE_SYNC] * 7  # loose -> loose: neither waits nor triggers


def test_pdl_switched_off_by_the_config_captures_plain_edges():
    config = LaunchConfig(pdl={"link": False, "loose": False})
    with WorkloadSession(EXAMPLES / "pdl_chain.py", config) as session:
        dag = Dag.from_json(session.request("dag"))
    assert len(dag.edges) == 31 and not len(kinds_of(dag).programmatic())


def test_each_programmatic_edge_made_plain_costs_replay_time():
    with WorkloadSession(EXAMPLES / "pdl_chain.py") as session:
        dag = Dag.from_json(session.request("dag"))
        timed = session.request("pdl_edges", reps=40, warmup=3)
    captured, plain = timed["captured"], timed["all_plain"]
    print(
        f"replay as captured {captured['median_ns'] / 1e3:.2f} us, all plain {plain['plain_median_ns'] / 1e3:.2f} us "
        f"(+{plain['saving_ns']:.0f} ns [{plain['ci_low_ns']:.0f}, {plain['ci_high_ns']:.0f}])"
    )
    for key, row in sorted(timed["edges"].items(), key=lambda kv: int(kv[0])):
        print(f"edge {key}: {row['saving_ns']:+.0f} ns [{row['ci_low_ns']:.0f}, {row['ci_high_ns']:.0f}]")
    assert len(timed["edges"]) == 31
    assert plain["ci_low_ns"] > 0  # every edge plain is slower than the PDL chain
    judged = judge_pdl(dag, replays={int(k): v for k, v in timed["edges"].items()})
    assert all(row["verdict"] for row in judged.values())
