"""view/attached.py without Qt: what attaching a capture trace finds, its one line, and that the trace's
report then counts the capture's modules (report/sides.py reads the trace's held attribution)."""

from __future__ import annotations

import gzip
import json
import shutil

from graphscope.analysis.capture_ops import node_attribution
from graphscope.analysis.summary import analyze
from graphscope.cli import main
from graphscope.report.compose import trace_report
from graphscope.trace import load_trace
from graphscope.view.attached import attach, use
from tests.conftest import H200_NODE

KINETO = H200_NODE.parent / "kineto"
CAPTURE, REPLAY = KINETO / "h200_torch_linear_capture.json.gz", KINETO / "h200_torch_linear_replay.json.gz"


def _module_tables(trace):
    report, _ = trace_report((trace, analyze(trace)), charts=False)
    return [t for t in report.get("tables", []) if t["title"].startswith("Time by module")]


def test_the_report_of_a_trace_counts_its_attached_capture(capsys):
    replay = load_trace(REPLAY)
    assert _module_tables(replay) == []  # the replay alone names no module
    found = attach(replay, [CAPTURE])
    use(replay, found)
    assert node_attribution(replay) is found.nodes
    (table,) = _module_tables(replay)
    assert main(["summary", str(REPLAY), "--capture", str(CAPTURE), "--json", "--no-cache"]) == 0
    summary = json.loads(capsys.readouterr().out)["capture_attribution"]
    (linear,) = summary["modules"]
    assert table["raw"] == [
        ["Linear_0", linear["nodes"], linear["gpu_ns"], linear["gpu_ns"] / summary["coverage"]["gpu_ns"]]
    ]
    use(replay, None)  # detached: the trace's own again
    assert _module_tables(replay) == []


def test_a_folder_of_captures_and_a_replay_with_creation_events(tmp_path):
    """A folder is read as the summary reads it (an engine's other JSON in it skipped, with its reason);
    a node-mode Nsight export whose nodes its own creation events attribute is not credited to a capture
    that matches none of its graphs."""
    shutil.copy(CAPTURE, tmp_path / "capture_bs1_rank0.json.gz")
    (tmp_path / "config.json").write_text("{}")
    found = attach(load_trace(REPLAY), [tmp_path])
    assert found.matched and found.attributed == found.kernels == 10 and len(found.skipped) == 1
    export = load_trace(H200_NODE)
    found = attach(export, [CAPTURE])
    assert not found.matched and found.attributed == 0
    assert found.message().startswith(f"capture {CAPTURE.name} attributes nothing: no graph the replay ran (")


def test_two_captures_of_one_shape_that_disagree_on_every_node_attribute_nothing(tmp_path):
    """A second capture of the same shape made by other code (its operators, module and line renamed in
    a copy of the shipped capture): the replay's one graph matches both, they agree on no operator,
    module or line, so nothing is attributed and the line says why."""
    doc = json.loads(gzip.decompress(CAPTURE.read_bytes()))
    for event in doc["traceEvents"]:
        name = event.get("name", "")
        if event.get("cat") == "cpu_op":
            event["name"] = f"{name}_other"
        elif name.startswith("nn.Module: "):
            event["name"] = name.replace("Linear_0", "Linear_9")
        elif name.startswith("torchprof.py("):
            event["name"] = name.replace("torchprof.py", "other.py")
    shutil.copy(CAPTURE, tmp_path / "a.json.gz")
    (tmp_path / "b.json.gz").write_bytes(gzip.compress(json.dumps(doc).encode()))
    found = attach(load_trace(REPLAY), [tmp_path])
    assert not found.matched and found.attributed == 0 and found.kernels == 10
    assert found.message().endswith(
        "the captures that match the replay's graphs disagree on every node (several of one shape)"
    )
    alone = attach(load_trace(REPLAY), [tmp_path / "b.json.gz"])  # the renamed capture alone: its own names
    assert alone.matched and alone.nodes.text("module", int(alone.nodes.fields["module"].argmax())) == "Linear_9"
