"""Replayed graph nodes attributed to the operators that launched them during capture (real H200 traces)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from graphscope.analysis.capture_ops import NO_OPERATOR, attribute, captures
from graphscope.cli import main
from graphscope.core.events import graph_of
from graphscope.trace import load_trace
from tests.conftest import DATA, H200_NODE

KINETO = H200_NODE.parent / "kineto"
CAPTURE, REPLAY = KINETO / "h200_torch_linear_capture.json.gz", KINETO / "h200_torch_linear_replay.json.gz"
CUPY_PROFILE = KINETO / "h200_seed_vecadd_graph_profile_torch.json.gz"
H200_FORKJOIN = DATA / "h200_forkjoin_node.sqlite"


def test_a_torch_graph_s_kernels_get_the_operators_of_its_capture():
    """torch.relu(linear(x)) captured: the GEMM node is aten::addmm's, the elementwise one aten::clamp_min's
    (relu's kernel), in the capture's order; 5 replays of each."""
    found = attribute(load_trace(REPLAY), load_trace(CAPTURE))
    assert found["note"] is None and found["unmatched"] == []
    assert [(o["operator"], o["nodes"], o["activities"]) for o in found["operators"]] == [
        ("aten::addmm", 1, 5),
        ("aten::clamp_min", 1, 5),
    ]
    replay = load_trace(REPLAY)
    kernels = replay.kernels
    gemm = np.array(["gemm" in replay.symbols.name(int(n)) for n in kernels.name.tolist()])
    assert found["operators"][0]["gpu_ns"] == int((kernels.end - kernels.start)[gemm].sum())  # the GEMMs' time
    # the Python side, with_stack and with_modules on: the user's line (not torch's forward), the module path
    assert found["operators"][0]["frame"] == "torchprof.py(31): <module>"
    assert found["operators"][0]["module"] == "Linear_0" and found["operators"][1]["module"] is None  # relu: outside


def test_the_capture_window_holds_only_the_node_making_calls():
    (window,) = captures(load_trace(CAPTURE))
    assert window.fields["operator"] == ["aten::addmm", "aten::clamp_min"]  # not cudaMalloc, not queries
    assert window.fields["api"] == ["cudaLaunchKernel", "cudaLaunchKernel"]


def test_a_profiled_cupy_run_attributes_its_own_capture_and_counts_every_replay():
    trace = load_trace(CUPY_PROFILE)
    found = attribute(trace)
    (graph,) = found["graphs"]
    assert graph["nodes"] == 1000 and not graph["by_position_only"]
    (only,) = found["operators"]  # CuPy launches outside any PyTorch operator
    assert only["operator"] == NO_OPERATOR and only["nodes"] == 1000
    in_graphs = trace.kernels.graph_node >= 0
    assert only["activities"] == int(in_graphs.sum()) == 1000 * len(np.unique(trace.kernels.correlation[in_graphs]))
    assert len(set(graph_of(trace.kernels.graph_node[in_graphs]).tolist())) == 1


def test_an_nsight_node_trace_uses_its_ranges_and_its_capture_order():
    found = attribute(load_trace(H200_FORKJOIN))
    assert {o["operator"] for o in found["operators"]} == {"capture"}  # the NVTX range around the capture
    assert {o["api"]: o["nodes"] for o in found["operators"]} == {
        "cuLaunchKernel": 6,
        "cudaMemcpyAsync": 1,
        "cudaMemsetAsync": 1,
    }
    assert found["graphs"][0]["nodes"] == 8 and not found["graphs"][0]["by_position_only"]


def test_without_a_capture_the_summary_says_what_to_record(capsys):
    assert main(["summary", str(REPLAY), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)["capture_attribution"]
    assert found["operators"] == [] and "holds no stream capture" in found["note"] and "--capture" in found["note"]


def test_the_summary_shows_the_operator_table_with_capture(capsys):
    assert main(["summary", str(REPLAY), "--capture", str(CAPTURE)]) == 0
    text = capsys.readouterr().out
    assert "Graph work by the operator that launched it during capture" in text
    assert "aten::addmm" in text and "aten::clamp_min" in text


def test_a_capture_of_another_shape_matches_nothing_and_says_so():
    found = attribute(load_trace(CUPY_PROFILE), load_trace(CAPTURE))
    assert found["graphs"] == [] and found["unmatched"] and "match no single capture" in found["note"]


@pytest.mark.parametrize("bad", ["missing.json", "not_a_trace.txt"])
def test_a_bad_capture_file_is_one_line(tmp_path, capsys, bad):
    path = tmp_path / bad
    if bad.endswith(".txt"):
        path.write_text("hello")
    assert main(["summary", str(REPLAY), "--capture", str(path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
