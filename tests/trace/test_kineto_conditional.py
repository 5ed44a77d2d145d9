"""A conditional node's body in a PyTorch-profiler trace: PyTorch 2.11 records every body execution with
correlation 0 on a stream of its own (examples/while_decode.py on an H100, `graphscope run --profile torch`:
48 body kernels a kernel name over 4 launches, 12 iterations each). Read as the replay's body graph, the
step is all graph work, the launched graph keeps its 3 nodes and the iterations are all found; work
without a launching call outside any replay, or on a stream that eager calls launch on, stays eager."""

from __future__ import annotations

import gzip
import json

import numpy as np

from graphscope.analysis.summary import summarize
from graphscope.cli import main
from graphscope.trace import load_trace
from tests.conftest import DATA

WHILE = DATA / "kineto" / "h100_while_decode_graph.pt.trace.json.gz"


def _plain_orphans_inside_replays(path) -> int:
    """The second way: correlation-0 kernels inside a graph launch's span (first to last of its kernels)."""
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    launches = {e["args"]["correlation"] for e in events if e.get("name") == "cudaGraphLaunch"}
    kernels = [e for e in events if e.get("cat") == "kernel"]
    spans = []
    for correlation in launches:
        mine = [e for e in kernels if e["args"].get("correlation") == correlation]
        spans.append((min(e["ts"] for e in mine), max(e["ts"] + e["dur"] for e in mine)))
    orphans = [e for e in kernels if e["args"].get("correlation") == 0]
    return sum(any(lo <= e["ts"] and e["ts"] + e["dur"] <= hi for lo, hi in spans) for e in orphans)


def test_a_while_body_recorded_without_correlation_is_its_replay_s_body_graph(capsys):
    trace = load_trace(WHILE)
    kernels = trace.kernels
    assert _plain_orphans_inside_replays(WHILE) == 192 == int((kernels.correlation == 0).sum())
    assert int((kernels.graph_node >= 0).sum()) == len(kernels) - 4  # all but the 4 cupy_fill launched eagerly
    graphs = np.unique(kernels.graph_node[kernels.graph_node >= 0] >> 32)
    assert len(graphs) == 2  # the launched graph and its body
    body = kernels.graph_node[kernels.correlation == 0]
    assert len(np.unique(body)) == 4  # mix, scale, pick and the loop's own next-iteration kernel
    assert any("192 GPU activities without a launching call" in w for w in trace.info.warnings)

    summary = summarize(trace)
    assert all(step["mode"] == "full graph" and step["island_kernels"] == 0 for step in summary["anatomy"]["steps"])
    assert [g["nodes"] for g in summary["graph_launch_cost"]["graphs"]] == [3]

    assert main(["summary", str(WHILE), "--json"]) == 0
    check = json.loads(capsys.readouterr().out)["conditionals_in_trace"]["decode#0"]
    assert check["iterations_in_trace"] == check["iterations_ran"] == 48 and not check["shortfall"]


def test_work_without_a_launching_call_outside_a_replay_or_on_an_eager_stream_stays_eager(tmp_path):
    data = json.loads(gzip.decompress(WHILE.read_bytes()))
    events = data["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    finish = max((e for e in kernels if e["name"] == "finish"), key=lambda e: e["ts"])  # the last replay's end
    inside = dict(finish, name="body_kernel", ts=finish["ts"] - 0.5, dur=0.1,
                  args=dict(finish["args"], correlation=0, stream=99))  # fmt: skip
    outside = dict(inside, name="stray_kernel", ts=finish["ts"] + 10_000.0)
    before = dict(inside, name="early_kernel", ts=min(e["ts"] for e in kernels) - 10_000.0)
    # inside the replay, but on stream 13, where cupy_fill is launched eagerly: a lost call, not a body
    lost = dict(inside, name="lost_call_kernel", args=dict(inside["args"], stream=13))
    events.extend([inside, outside, before, lost])
    path = tmp_path / "while.json"
    path.write_text(json.dumps(data))
    trace = load_trace(path)
    names = [trace.symbols.name(int(n)) for n in trace.kernels.name.tolist()]
    node = {n: g for n, g in zip(names, trace.kernels.graph_node.tolist(), strict=True)}
    assert node["stray_kernel"] == node["early_kernel"] == node["lost_call_kernel"] == -1
    launched = {node["prefill"] >> 32}
    assert node["body_kernel"] >= 0 and node["body_kernel"] >> 32 not in launched
    assert node["body_kernel"] >> 32 == node["mix"] >> 32  # the replay's body graph, beside mix and the rest
    assert int((trace.kernels.graph_node >= 0).sum()) == len(kernels) - 4 + 1  # the 192 and the new body kernel
