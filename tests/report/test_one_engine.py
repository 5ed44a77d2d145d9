"""One report engine behind the CLI and the GUI (report/compose.py): op-level ranges are never the steps;
a pair that differs only in its tracing gets no gain verdict. (The GUI's faces against the CLI:
tests/app/test_report_engine_gui.py, on the same files.)"""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest

from graphscope.cli import main
from graphscope.report.compare import headline
from tests.conftest import FORKJOIN, H200_GRAPH, H200_NODE, TORCH_MLP

OP_FAMILY = "aten::copy_, op_id = *"


def with_op_ranges(source, target):
    """A copy of an H200 export with an op-level range ('aten::copy_, op_id = N', as PyTorch's NVTX
    annotations name them) over every eager_N and graph_N range: a repeated family that spans more time
    than any other, which the old comparison took for the steps."""
    shutil.copy(source, target)
    with sqlite3.connect(target) as conn:
        conn.execute(
            "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
            "SELECT start, end, eventType, 'aten::copy_, op_id = ' || (317177 + rowid), globalTid, domainId "
            "FROM NVTX_EVENTS WHERE text LIKE 'eager_%' OR text LIKE 'graph_%'"
        )
    conn.close()
    return target


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pair")
    return with_op_ranges(FORKJOIN, folder / "before.sqlite"), with_op_ranges(TORCH_MLP, folder / "after.sqlite")


def cli_report(tmp_path, *args):
    out = tmp_path / "cli.json"
    assert main(["report", *map(str, args), "-o", str(out)]) == 0
    return json.loads(out.read_text())


def plain(report):
    """The report as its JSON file holds it, without the time it was made."""
    data = json.loads(json.dumps(report))
    data.pop("created")
    return data


def test_op_ranges_are_never_compared_as_steps(tmp_path, pair):
    data = cli_report(tmp_path, *pair)
    assert data["a"]["scope"] == data["b"]["scope"] == "5 NVTX ranges 'graph_*'"
    assert data["a"]["steps"] == data["b"]["steps"] == 5
    assert OP_FAMILY not in json.dumps(data)
    how = next(n for n in data["notes"] if "compared over" in n)
    assert "56% of GPU busy time" in how and "29% of GPU busy time" in how  # each side's share, said


def test_a_pair_traced_two_ways_gets_no_gain_verdict(tmp_path):
    """The seed traced in node mode and in graph mode: one program, so the difference is the tracing."""
    data = cli_report(tmp_path, H200_NODE, H200_GRAPH)
    verdicts = data["comparison"]["verdicts"]
    assert "graph trace mode node against graph" in verdicts["traced"]
    gain = verdicts["gain"]
    assert gain.startswith("no gain verdict: the same program (python3 workloads/seed_vecadd.py) traced two ways")
    assert not any(word in gain for word in ("worth it", "real but small", "slower", "less time per step"))
    assert headline(data)[:2] == [verdicts["traced"], gain]


def test_the_timeline_caption_gives_the_steps_length_when_only_its_start_is_drawn(tmp_path):
    """A step of more GPU events than a picture holds: the caption says the step's length and what is drawn."""
    from graphscope.report.compose import trace_sides
    from graphscope.report.formats import charts_for
    from graphscope.report.sides import EXCERPT_EVENTS
    from graphscope.report.sources import Loaded

    side, _ = trace_sides(Loaded().trace(H200_NODE), scopes=(None, None))  # the whole trace: one step
    excerpt = side.excerpt
    assert excerpt["step_ns"] == side.steps["wall_ns"][0] > excerpt["end_ns"] - excerpt["start_ns"]
    assert sum(len(lane["start"]) for lane in excerpt["lanes"] if lane["kind"] == "work") == EXCERPT_EVENTS
    from graphscope.core.units import format_ns

    caption = charts_for({"kernels": []}, (side, None))["timeline_a"]
    step, drawn = format_ns(excerpt["step_ns"]), format_ns(excerpt["end_ns"] - excerpt["start_ns"])
    assert f"first step ({side.label}): {step}, its first {drawn} drawn" in caption


def test_a_step_submits_what_the_summary_counts(tmp_path):
    """A report's per-step host submit follows the summary's submission cost: the seed's capture range
    launches nothing (its 1,000 cuLaunchKernel calls build the graph), while an eager step's calls are
    counted (checked against the API rows by SQL)."""
    out = tmp_path / "r.json"
    assert main(["report", str(H200_NODE), "--a", "nvtx:capture", "--b", "nvtx:eager_1", "-o", str(out)]) == 0
    report = json.loads(out.read_text())
    capture, eager = report["a"]["per_step"], report["b"]["per_step"]
    assert capture["launch_calls"]["median"] == 0 and capture["submit_ns"]["median"] == 0
    with sqlite3.connect(H200_NODE) as conn:
        (low, high), = conn.execute("SELECT start, end FROM NVTX_EVENTS WHERE text = 'eager_1'")
        (calls,) = conn.execute(
            "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON r.nameId = s.id "
            "WHERE s.value LIKE 'cuLaunchKernel%' AND r.start >= ? AND r.start < ?",
            (low, high),
        ).fetchone()
    conn.close()
    assert eager["launch_calls"]["median"] == calls > 0


def test_the_timeline_prints_each_lanes_label_whole_or_elided_in_the_middle():
    """hta's trace_diff report cut 'thread 3113936 launch calls' to 'thread 3113936 launch ca' (and a
    negative tid's lane ran past the margin): a label of up to 31 characters is printed whole, a longer
    one keeps its start (the thread) and its end (what the lane holds)."""
    import re

    from graphscope.report.svg import timeline

    labels = ["thread -1029147072 launch calls", "thread 123456789012345678 launch calls", "GPU 3 stream 7"]
    lanes = [{"label": label, "kind": "api", "start": [10], "end": [20]} for label in labels]
    svg = timeline({"start_ns": 0, "end_ns": 100, "lanes": lanes}, "A, first step")
    texts = re.findall(r"text-anchor='end'[^>]*>([^<]*)</text>", svg)
    assert texts[0] == labels[0] and texts[2] == labels[2]
    assert len(texts[1]) == 31 and texts[1].startswith("thread 1234") and texts[1].endswith("launch calls")
    assert "…" in texts[1]
