"""Per-step graph anatomy on shipped traces, each count checked a second way: plain json/gzip or sqlite3
and a plain walk over the segments (graph launches and eager work in GPU start order)."""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

import pytest

from graphscope.analysis.anatomy import anatomy, changes, mode_counts
from graphscope.analysis.summary import analyze
from graphscope.trace.reader import load_trace

DATA = Path(__file__).resolve().parents[1] / "data"
KINETO = Path(__file__).resolve().parents[2] / ".." / "shared" / "traces" / "kineto"
if not KINETO.exists():
    KINETO = Path("/work/shared/traces/kineto")
GRAPH_REPLAY = KINETO / "hta__trace_diff_test_graph_replay.json.gz"
RANK0 = KINETO / "hta__rank0_of_16_graph_launches.json.gz"
CHECKED = ("graph_launches", "islands", "interior_islands", "island_kernels", "island_work", "seams", "seam_ns")


def hand_walk(steps: list[tuple[int, int]], segments: list[tuple]) -> list[dict[str, int]]:
    """The anatomy by a plain loop: `segments` are (launched at, start, end, is graph, is kernel)."""
    result = []
    for lo, hi in steps:
        mine = sorted((s for s in segments if lo <= s[0] < hi), key=lambda s: (s[1], not s[3]))
        row = dict.fromkeys(CHECKED, 0)
        reach, previous_graph, graphs_seen, pending_island = None, None, 0, False
        for _, start, end, graph, kernel in mine:
            if reach is not None and (graph or previous_graph):
                row["seams"] += 1
                row["seam_ns"] += max(0, start - reach)
            if graph:
                row["graph_launches"] += 1
                if pending_island:
                    row["interior_islands"] += 1
                pending_island = False
                graphs_seen += 1
            else:
                row["island_work"] += 1
                row["island_kernels"] += int(kernel)
                if previous_graph is None or previous_graph:
                    row["islands"] += 1
                    pending_island = graphs_seen > 0
            previous_graph = graph
            reach = end if reach is None else max(reach, end)
        result.append(row)
    return result


def kineto_plain(path: Path) -> tuple[list[str], list[dict[str, int]]]:
    """Steps and their anatomy from the standard json module and hand_walk."""
    with gzip.open(path) as stream:
        events = [e for e in json.load(stream)["traceEvents"] if e.get("ph") == "X"]

    def ns(value) -> int:
        return value * 1000 if isinstance(value, int) else round(float(value) * 1000)

    steps = sorted((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"]) for e in events
                   if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#"))  # fmt: skip
    calls = {e["args"]["correlation"]: e for e in events if e.get("cat") in ("cuda_runtime", "cuda_driver")}
    graph_calls = {c for c, e in calls.items() if e["name"].startswith("cudaGraphLaunch")}
    segments, graphs = [], {}
    for e in events:
        if e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        start = ns(e["ts"])
        end = start + ns(e["dur"])
        c = e["args"].get("correlation")
        at = ns(calls[c]["ts"]) if c in calls else start
        if c in graph_calls:
            first, last = graphs.get(c, (start, end))[:2]
            graphs[c] = (min(first, start), max(last, end), at)
        else:
            segments.append((at, start, end, False, e["cat"] == "kernel"))
    segments += [(at, start, end, True, False) for start, end, at in graphs.values()]
    return [s[2] for s in steps], hand_walk([s[:2] for s in steps], segments)


def sqlite_plain(path: Path) -> tuple[list[str], list[dict[str, int]]]:
    """Steps (eager_N, graph_N) and their anatomy from sqlite3 and hand_walk."""
    db = sqlite3.connect(path)
    steps = db.execute(
        "SELECT text, start, end FROM NVTX_EVENTS WHERE text LIKE 'eager\\_%' ESCAPE '\\' "
        "OR text LIKE 'graph\\_%' ESCAPE '\\' ORDER BY start"
    ).fetchall()
    tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE name LIKE 'CUPTI_ACTIVITY_KIND_MEM%'")]
    segments, graphs = [], {}
    for table in ["CUPTI_ACTIVITY_KIND_KERNEL", *tables]:
        rows = db.execute(
            f"SELECT w.start, w.end, w.graphNodeId, w.correlationId, r.start FROM {table} w "
            "LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = w.correlationId"
        ).fetchall()
        for start, end, node, correlation, at in rows:
            at = start if at is None else at
            if node is not None:
                first, last = graphs.get(correlation, (start, end))[:2]
                graphs[correlation] = (min(first, start), max(last, end), at)
            else:
                segments.append((at, start, end, False, table.endswith("KERNEL")))
    segments += [(at, start, end, True, False) for start, end, at in graphs.values()]
    return [s[0] for s in steps], hand_walk([(s[1], s[2]) for s in steps], segments)


def _ours(path: Path):
    trace = load_trace(path)
    a = analyze(trace)
    return anatomy(trace, a.work, a.graphs, a.launches)


def _rows(found) -> list[dict[str, int]]:
    return [{c: int(found.steps[c][i]) for c in CHECKED} for i in range(len(found))]


@pytest.mark.parametrize("path", [GRAPH_REPLAY, RANK0], ids=["graph_replay", "rank0_of_16"])
def test_kineto_steps_against_plain_json(path):
    found = _ours(path)
    names, expected = kineto_plain(path)
    assert found.names == names
    assert _rows(found) == expected
    assert all(row["graph_launches"] > 0 and row["interior_islands"] > 0 for row in expected)


def test_hta_graph_launches_modes():
    """rank0_of_16: 14 graph launches a step with eager islands between them; its first step has 705 more
    eager kernels (1,753 against 1,048), so the graphs hold under half of its GPU time there: mixed."""
    found = _ours(RANK0)
    assert mode_counts(found) == {"piecewise": 4, "mixed": 1}
    assert found.modes[0] == "mixed" and (found.graph_share[1:] > 0.5).all() and found.graph_share[0] < 0.5
    (change,) = changes(found)
    assert (change["from"], change["to"], change["step"]) == ("mixed", "piecewise", "ProfilerStep#551")
    assert change["why"] == ["eager kernels: 1,753 in ProfilerStep#550, 1,048 in ProfilerStep#551"]


@pytest.mark.parametrize(
    "name, modes",
    [
        ("h200_seed_vecadd_node.sqlite", ["eager"] * 3 + ["full graph"] * 3),
        ("h200_forkjoin_node.sqlite", ["eager"] * 3 + ["full graph"] * 5),
    ],
)
def test_h200_node_exports_against_sqlite(name, modes):
    found = _ours(DATA / name)
    names, expected = sqlite_plain(DATA / name)
    assert found.names == names and found.modes == modes
    assert _rows(found) == expected
    eager = [row for row, mode in zip(expected, modes, strict=True) if mode == "eager"]
    assert all(row["islands"] == 1 and row["graph_launches"] == 0 for row in eager)
    (change,) = changes(found)
    assert change["step"] == "graph_0" and change["why"][0] == "eager_2: no graph launch"
    assert "graph_0: graph 2 launched for the first time" in change["why"]


def test_per_operation_ranges_of_a_benchmark_are_not_steps():
    """extra-p's benchmark: its phases are the steps; its per-operation ranges beside them (each 9% of GPU
    busy time or less, under STEP_PHASE_SHARE) are not, though they repeat and overlap no phase."""
    found = _ours(DATA / "extra-p__extrap__profile1.sqlite")
    db = sqlite3.connect(DATA / "extra-p__extrap__profile1.sqlite")
    phases = [name for (name,) in db.execute(
        "SELECT coalesce(n.text, s.value) AS name FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
        "WHERE name GLOB 'main->process->phase[0-9]' ORDER BY n.start"
    )]  # fmt: skip
    assert found.source == "3 ranges 'main->process->phase*'" and found.names == phases
    assert found.modes == ["eager", "eager", "no GPU work"]
