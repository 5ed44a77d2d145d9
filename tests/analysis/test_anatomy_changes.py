"""Mode changes, their causes and the fusion prediction on a hand-made PyTorch-profiler trace whose
every number is known by construction."""

from __future__ import annotations

import gzip
import json

import pytest

from graphscope.cli import main
from graphscope.core.launch_cost import DEFAULT

US = 1000


def _call(name, ts, dur, correlation):
    return {"ph": "X", "cat": "cuda_runtime", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur,
            "args": {"correlation": correlation}}  # fmt: skip


def _kernel(name, ts, dur, correlation):
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
            "args": {"device": 0, "stream": 7, "context": 1, "correlation": correlation}}  # fmt: skip


def _piecewise(base: int, correlation: int, queued: bool = False) -> list[dict]:
    """graph (two nodes) | eager attention kernel | graph (two nodes), a 20 us seam on each side of the
    island. `queued`: the island's call returned before the first graph ended (its seam is not host wait)."""
    c = correlation
    island_call = _call("cudaLaunchKernel", base + (20 if queued else 50), 4, c + 1)
    return [
        _call("cudaGraphLaunch", base + 10, 5, c),
        _kernel("g1a", base + 20, 10, c),
        _kernel("g1b", base + 30, 10, c),
        island_call,
        _kernel("attention", base + 60, 10, c + 1),
        _call("cudaGraphLaunch", base + 80, 5, c + 2),
        _kernel("g2a", base + 90, 10, c + 2),
        _kernel("g2b", base + 100, 10, c + 2),
    ]


def _eager_with_capture(base: int, correlation: int) -> list[dict]:
    c = correlation
    return [
        _call("cudaStreamBeginCapture", base + 5, 1, c),
        _call("cudaLaunchKernel", base + 10, 2, c + 1),  # captured: no work
        _call("cudaStreamEndCapture", base + 15, 1, c + 2),
        _call("cudaLaunchKernel", base + 50, 4, c + 3),
        _kernel("eager_a", base + 60, 10, c + 3),
        _call("cudaLaunchKernel", base + 75, 4, c + 4),
        _kernel("eager_b", base + 80, 10, c + 4),
    ]


@pytest.fixture
def made(tmp_path):
    events = []
    for i in range(4):
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{i + 1}", "pid": 1, "tid": 1,
                       "ts": i * 1000, "dur": 1000})  # fmt: skip
    events += _piecewise(0, 1) + _piecewise(1000, 11) + _eager_with_capture(2000, 21) + _piecewise(3000, 31, True)
    path = tmp_path / "steps.pt.trace.json.gz"
    with gzip.open(path, "wt") as out:
        json.dump({"traceEvents": events}, out)
    return path


def test_a_fallback_to_eager_is_named_with_its_capture(made, capsys):
    assert main(["summary", str(made), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)["anatomy"]
    assert [s["mode"] for s in found["steps"]] == ["piecewise", "piecewise", "eager", "piecewise"]
    assert found["modes"] == {"piecewise": 3, "eager": 1}
    first = found["steps"][0]
    assert (first["graph_launches"], first["graph_nodes"], first["islands"], first["interior_islands"]) == (2, 4, 1, 1)
    assert (first["seams"], first["seam_ns"], first["seam_host_wait_ns"]) == (2, 40 * US, 40 * US)
    assert (first["island_launch_calls"], first["island_launch_ns"], first["graph_launch_ns"]) == (1, 4 * US, 10 * US)
    assert first["busy_ns"] == 50 * US and first["graph_busy_ns"] == 40 * US
    eager = found["steps"][2]
    assert (eager["captures"], eager["capture_calls"], eager["graph_launches"], eager["island_kernels"]) == (1, 1, 0, 2)
    back, again = found["changes"]
    assert (back["step"], back["from"], back["to"], back["returns"]) == ("ProfilerStep#3", "piecewise", "eager", True)
    assert "ProfilerStep#3: no graph launch" in back["why"]
    assert "ProfilerStep#3: a capture inside the step (1 begin-capture calls, 1 launch calls captured)" in back["why"]
    assert again["step"] == "ProfilerStep#4" and again["returns"] is False


def test_fusion_prediction_by_hand(made, capsys):
    """One graph instead of graph | island | graph: the 40 us of seams the CPU kept the GPU waiting go, and
    the merged graph of 5 nodes starts its first node 3 nodes' launch latency later than the first piece
    of 2 (every piece has 2 nodes, so the trace shows no slope: the model's per-node price); in step 4 the
    island's call returned before the GPU went idle, so only the 20 us before the second graph is host wait."""
    assert main(["summary", str(made), "--json"]) == 0
    fusion = json.loads(capsys.readouterr().out)["anatomy"]["fusion"]
    relaunch = 3 * (DEFAULT.per_node_ns + DEFAULT.per_edge_ns)
    by_step = {s["step"]: s for s in fusion["steps"]}
    assert set(by_step) == {"ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#4"}
    one, four = by_step["ProfilerStep#1"], by_step["ProfilerStep#4"]
    assert one["removed_ns"] == 40 * US and four["removed_ns"] == 20 * US and four["seam_ns"] == 40 * US
    assert one["predicted_ns"] == pytest.approx(1000 * US - 40 * US + relaunch, abs=0.1)
    assert four["predicted_ns"] == pytest.approx(1000 * US - 20 * US + relaunch, abs=0.1)
    assert one["merged_nodes"] == 5 and one["host_launch_ns"] == 14 * US
    assert one["host_launch_after_ns"] == pytest.approx(DEFAULT.launch_ns(5), abs=0.1)
    assert one["graph_launch_ns"] == 10 * US
    assert one["graph_launch_model_ns"] == pytest.approx(2 * DEFAULT.fixed_ns + 4 * DEFAULT.per_node_ns, abs=0.1)
    assert fusion["latency_per_node_from"] == "the launch-cost model"
    assert fusion["launch_cost"]["measured_here"] is DEFAULT.measured_here
    assert fusion["median_predicted_ns"] == pytest.approx(1000 * US - 40 * US + relaunch, abs=0.1)


def test_summary_text_shows_steps_changes_and_assumptions(made, capsys):
    assert main(["summary", str(made)]) == 0
    text = capsys.readouterr().out
    assert "Steps and their graphs (4 ranges 'ProfilerStep#*')" in text
    assert "ProfilerStep#3: piecewise -> eager, and back after it: ProfilerStep#3: no graph launch" in text
    per_node = DEFAULT.per_node_ns + DEFAULT.per_edge_ns
    assert f"first node priced {per_node:,.2f} ns later per added node (the launch-cost model)" in text
    assert "checked on a GPU: an 8-layer decoder step on an H100, predicted from its piecewise trace" in text


def test_the_shipped_launch_cost_is_the_h100_measurement():
    """The model graphscope ships was measured on the lent H100 (benchmarks/graph_launch_cost.py); it prices
    the chains it was fitted on within its stated worst residual (a second way: the stored points)."""
    import json

    from graphscope.core.launch_cost import SHIPPED

    stored = json.loads(SHIPPED.read_text())
    assert DEFAULT.measured_here and DEFAULT.gpu == stored["gpu"] == "NVIDIA H100 80GB HBM3"
    worst = stored["host"]["worst_relative_residual"]
    chains = [p for p in stored["points"] if p["shape"] == "chain"]
    assert len(chains) == 7 and worst < 0.5
    for p in chains:
        assert DEFAULT.launch_ns(p["nodes"], p["edges"]) == pytest.approx(p["host_ns"], rel=worst + 1e-6)


def test_report_has_a_table_of_steps_by_mode(made, tmp_path):
    out = tmp_path / "r.json"
    assert main(["report", str(made), "-o", str(out)]) == 0
    (table,) = json.loads(out.read_text())["tables"]
    assert table["title"] == "Steps and their graphs (medians per mode)"
    rows = {row[1]: row for row in table["rows"]}
    assert rows["piecewise"][2:8] == [3, "2", "1", "1", "40 us", "80%"]  # 40 of 50 us busy in graphs
    assert rows["eager"][2:8] == [1, "0", "1", "2", "0 ns", "0%"]
    markdown = tmp_path / "r.md"
    assert main(["report", str(made), "-o", str(markdown)]) == 0
    assert "| piecewise | 3 | 2 | 1 | 1 | 40 us | 80% |" in markdown.read_text()


def test_recorded_graph_node_ids_are_kept(tmp_path):
    """Recent PyTorch writes each replayed kernel's `graph node id` (exec graph id in the high 32 bits) and
    `graph id`: the reader keeps them instead of numbering graphs by their kernel names."""
    from graphscope.core.events import graph_of, index_in_graph, node_id
    from graphscope.trace.reader import load_trace

    events = [_call("cudaGraphLaunch", 10, 5, 1), _call("cudaGraphLaunch", 100, 5, 2)]
    for i, ts in enumerate((20, 30)):  # launch 1: node ids recorded
        events.append(_kernel(f"k{i}", ts, 5, 1))
        events[-1]["args"]["graph node id"] = int(node_id(7, i + 3))
    for i, ts in enumerate((110, 120)):  # launch 2: only its graph id
        events.append(_kernel(f"k{i}", ts, 5, 2))
        events[-1]["args"]["graph id"] = 9
    events.append(_kernel("eager", 200, 5, 3))
    events.append(_call("cudaLaunchKernel", 190, 2, 3))
    path = tmp_path / "ids.json"
    path.write_text(json.dumps({"traceEvents": events}))
    kernels = load_trace(path).kernels
    assert "graph_arg" not in kernels.columns
    nodes = kernels.graph_node.astype("int64").tolist()
    assert [int(graph_of(n)) for n in nodes[:4]] == [7, 7, 9, 9] and nodes[4] == -1
    assert [int(index_in_graph(n)) for n in nodes[:4]] == [3, 4, 0, 1]


def test_fusion_uses_the_traces_own_latency_per_node(tmp_path, capsys):
    """Pieces of 2 and 6 nodes whose first nodes start 10 and 30 us after their calls: the trace pays 5 us
    a node (a profiler tracing each node), so the merged graph of 9 nodes starts 7 x 5 us later than the
    first piece; the 20 + 40 us the GPU waited for the CPU inside the span go."""
    events = []
    for i, base in enumerate((0, 1000)):
        c = 100 * (i + 1)
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{i + 1}", "pid": 1, "tid": 1,
                       "ts": base, "dur": 1000})  # fmt: skip
        events += [_call("cudaGraphLaunch", base + 10, 5, c), _kernel("a", base + 20, 10, c),
                   _kernel("b", base + 30, 10, c), _call("cudaLaunchKernel", base + 50, 4, c + 1),
                   _kernel("attention", base + 60, 10, c + 1),
                   _call("cudaGraphLaunch", base + 80, 5, c + 2)]  # fmt: skip
        events += [_kernel(f"n{k}", base + 110 + 10 * k, 10, c + 2) for k in range(6)]
    path = tmp_path / "slope.pt.trace.json.gz"
    with gzip.open(path, "wt") as out:
        json.dump({"traceEvents": events}, out)
    assert main(["summary", str(path), "--json"]) == 0
    anatomy = json.loads(capsys.readouterr().out)["anatomy"]
    step = anatomy["steps"][0]
    first = (step["first_graph_nodes"], step["first_graph_latency_ns"], step["span_host_wait_ns"])
    assert first == (2, 10 * US, 60 * US)
    fusion = anatomy["fusion"]
    assert fusion["latency_per_node_ns"] == pytest.approx(5 * US) and "this trace's" in fusion["latency_per_node_from"]
    assert fusion["steps"][0]["predicted_ns"] == pytest.approx(1000 * US - 60 * US + 7 * 5 * US)
