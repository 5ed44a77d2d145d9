"""PyTorch-profiler (Kineto) traces read into the same tables as Nsight exports: checked against a plain
json count of the public traces, and bad input refused in one line."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from graphscope.analysis.scope import nvtx_scope
from graphscope.analysis.summary import summarize
from graphscope.cli import main
from graphscope.core.errors import NotAnExportError
from graphscope.trace import load_trace
from tests.conftest import DATA, H200_NODE, union_ns

KINETO = DATA / "kineto"
GRAPH_REPLAY = KINETO / "hta__trace_diff_test_graph_replay.json.gz"
EAGER = KINETO / "hta__trace_diff_control_eager.json.gz"
TRACES = sorted(KINETO.glob("*.json.gz"))


def plain(path: Path) -> dict:
    """The same counts by the standard json module and a plain loop: the second way of getting them."""
    with gzip.open(path) as stream:
        events = json.load(stream)["traceEvents"]
    kinds = {"kernel": 0, "gpu_memcpy": 0, "gpu_memset": 0, "api": 0}
    busy, launches = [], set()
    for e in events:
        cat = e.get("cat")
        if e.get("ph") != "X":
            continue
        if cat in ("cuda_runtime", "cuda_driver"):
            kinds["api"] += 1
            if e["name"] in ("cudaGraphLaunch", "hipGraphLaunch"):
                launches.add(e["args"]["correlation"])
        elif cat in kinds:
            kinds[cat] += 1
            busy.append((round(e["ts"] * 1000), round(e["ts"] * 1000) + round(e["dur"] * 1000)))
    work = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    replayed = [e for e in work if e["args"].get("correlation") in launches]
    spans = {}  # a replay's first start and last end: work without a launching call inside it is its body's
    for e in replayed:
        lo, hi = spans.get(e["args"]["correlation"], (e["ts"], e["ts"] + e["dur"]))
        spans[e["args"]["correlation"]] = (min(lo, e["ts"]), max(hi, e["ts"] + e["dur"]))
    body = [e for e in work if e["args"].get("correlation") == 0
            and any(lo <= e["ts"] and e["ts"] + e["dur"] <= hi for lo, hi in spans.values())]  # fmt: skip
    graph_work = len(replayed) + len(body)
    return {**kinds, "graph_launches": len(launches), "graph_work": graph_work, "busy": union_ns(busy)}




@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name.split("__")[-1][:30])
def test_counts_and_busy_time_agree_with_a_plain_json_count(path):
    expected = plain(path)
    trace = load_trace(path)
    summary = summarize(trace, whole=True)
    assert summary["kernels"]["count"] == expected["kernel"]
    assert summary["memcpy"]["count"] == expected["gpu_memcpy"] and summary["memset"]["count"] == expected["gpu_memset"]
    assert summary["api"]["count"] == expected["api"] and summary["api"]["graph_launches"] == expected["graph_launches"]
    assert summary["graphs"]["node_activities"] == expected["graph_work"]
    if len(summary["gpu"]) == 1:
        assert summary["gpu"][0]["busy_ns"] == expected["busy"]


def test_graph_replays_become_graph_launches_with_their_nodes():
    trace = load_trace(GRAPH_REPLAY)
    summary = summarize(trace, whole=True)
    assert summary["graphs"]["launches"] == 12 and summary["api"]["graph_launches"] == 12
    graph_kernels = int((trace.kernels.graph_node >= 0).sum())
    assert graph_kernels == 4464  # the public trace: 12 launches replayed 4,464 kernels
    verdict = summary["launch"]["verdict"]  # its GPU never waited for the CPU: GPU-bound, graphs named
    assert verdict.startswith("GPU-bound") and "graphs in use: 12 graph launches" in verdict


def test_profiler_steps_are_steps_and_distributed_info_is_kept():
    trace = load_trace(GRAPH_REPLAY)
    steps = nvtx_scope(trace, "ProfilerStep#*")
    assert len(steps) >= 2
    assert trace.info.capture["rank"] == "1" and trace.info.capture["world_size"] == "2"
    assert trace.gpus and trace.gpus[0].name.startswith("Tesla V100")


def test_hip_traces_count_their_launches():
    summary = summarize(load_trace(KINETO / "hta__amd_mi250_minitoy.json.gz"), whole=True)
    assert summary["api"]["launches"] == 14 and "ROCm" in summary["platform"]


def test_triton_kernels_keep_their_names_and_launch_configuration():
    trace = load_trace(KINETO / "hta__triton_example.json.gz")
    (row,) = np.flatnonzero(trace.kernels.grid_x >= 0)
    assert trace.symbols.name(int(trace.kernels.short_name[row])) == "triton_poi_fused_add_cos_sin_0"
    assert int(trace.kernels.block_x[row]) == 128


def test_every_command_reads_kineto_traces(tmp_path, capsys):
    assert main(["report", str(EAGER), str(GRAPH_REPLAY), "-o", str(tmp_path / "r.json")]) == 0
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["a"]["scope"] == "6 NVTX ranges 'ProfilerStep#*'"  # like with like: the profiler's steps
    assert "the sides were traced differently" in report["comparison"]["verdicts"]["traced"]  # A100 vs V100
    assert main(["export", str(GRAPH_REPLAY), "-o", str(tmp_path / "t.json")]) == 0
    capsys.readouterr()
    assert main(["dag", str(GRAPH_REPLAY)]) == 0
    assert "graph 1, 339 nodes (315 kernel, 24 memset)" in capsys.readouterr().out


def test_a_streamed_read_equals_a_whole_read(monkeypatch):
    from graphscope.trace import kineto_json

    streamed = load_trace(GRAPH_REPLAY)
    monkeypatch.setattr(kineto_json, "CHUNK_BYTES", 1 << 30)  # one chunk: the whole file at once
    whole = load_trace(GRAPH_REPLAY)
    for table in ("api", "kernels", "memcpy", "memset", "nvtx"):
        for column in ("start", "end"):
            assert np.array_equal(getattr(streamed, table)[column], getattr(whole, table)[column])


@pytest.mark.parametrize(
    "content, words",
    [
        (b'{"a": 1}', "not a PyTorch-profiler trace"),
        (
            b'{"traceEvents": [{"ph": "X", "cat": "blink", "name": "Paint", "pid": 1, "tid": 2, "ts": 1}]}',
            "not a PyTorch",
        ),
        (b"[1, 2, 3]", "not a PyTorch-profiler trace"),
        (b'{"traceEvents": ' + b"[" * 200_000 + b"]" * 200_000 + b"}", "not a PyTorch-profiler trace"),
        (b'{"traceEvents": [{"ph": "X", "cat": "kernel"', "not a complete JSON trace"),
    ],
)
def test_bad_input_is_one_line(tmp_path, capsys, content, words):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    assert main(["summary", str(path)]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


def test_a_truncated_gzip_is_one_line(tmp_path, capsys):
    data = GRAPH_REPLAY.read_bytes()
    path = tmp_path / "cut.pt.trace.json.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(NotAnExportError, match="cannot be read as a PyTorch-profiler trace"):
        load_trace(path)


def test_a_kineto_trace_against_an_nsight_export_is_warned_about_in_the_headline(tmp_path):
    """PyTorch's profiler and Nsight Systems cost launches differently: the report says so first."""
    out = tmp_path / "r.json"
    profiled = KINETO / "h200_seed_vecadd_graph_profile_torch.json.gz"
    assert main(["report", str(profiled), str(H200_NODE), "-o", str(out)]) == 0
    verdicts = json.loads(out.read_text())["comparison"]["verdicts"]
    assert verdicts["traced"].startswith("the sides were traced differently: PyTorch's profiler against Nsight")
