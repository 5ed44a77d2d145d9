"""The per-step strip's model (view/step_strip.py): steps coloured by graph mode and seams in time, on a
constructed trace (one step run eagerly amid graph replays) against a plain JSON reading of the same
file, and on a shipped piecewise trace against the anatomy's seam totals."""

from __future__ import annotations

import json

import numpy as np

from graphscope.analysis.anatomy import anatomy
from graphscope.analysis.summary import analyze
from graphscope.core.colours import MODE_COLOURS
from graphscope.core.rules import MODE_EAGER, MODE_FULL, STEP_MODES
from graphscope.trace import load_trace
from graphscope.view.step_strip import step_strip
from tests.conftest import DATA
from tests.ranks.helpers import graph_ranks


def _plain_seams(path):
    """Per ProfilerStep, by plain JSON: the GPU idle between the step's graph replay (its kernels) and the
    all-reduce that follows, or None for a step without a graph launch."""
    events = json.loads(path.read_text())["traceEvents"]
    steps = sorted((e for e in events if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
    launch_at = {e["args"]["correlation"]: e for e in events if e["cat"] == "cuda_runtime"}
    found = []
    for step in steps:
        lo, hi = step["ts"], step["ts"] + step["dur"]
        graph = [e for e in events if e["name"] == "cudaGraphLaunch" and lo <= e["ts"] < hi]
        if not graph:
            found.append(None)
            continue
        mine = [e for e in events if e["cat"] == "kernel" and lo <= launch_at[e["args"]["correlation"]]["ts"] < hi]
        replay_end = max(e["ts"] + e["dur"] for e in mine if "nccl" not in e["name"])
        reduce_start = min(e["ts"] for e in mine if "nccl" in e["name"])
        found.append(max(round((reduce_start - replay_end) * 1000), 0))
    return found


def test_steps_take_their_mode_colour_and_seams_match_a_plain_reading(tmp_path):
    path = graph_ranks(tmp_path / "job", world=2, eager={1: {3}})[1]
    document = json.loads(path.read_text())
    for i, event in enumerate(e for e in document["traceEvents"] if "nccl" in e["name"]):
        event["ts"] += 10 + 5 * i  # the all-reduce starts later: a seam of 10, 15, 20, ... us after the replay
        event["dur"] -= 10 + 5 * i
    path.write_text(json.dumps(document))
    trace = load_trace(path)
    strip = step_strip(trace, analyze(trace), origin=0)
    assert [STEP_MODES[m] for m in strip.mode] == [MODE_FULL] * 3 + [MODE_EAGER] + [MODE_FULL] * 2
    assert strip.colours()[3] == MODE_COLOURS[MODE_EAGER] != strip.colours()[0]
    plain = _plain_seams(path)
    idle = np.bincount(strip.seam_step, weights=strip.seam_end - strip.seam_start, minlength=len(strip))
    assert plain[3] is None and idle[3] == 0  # the eager step has no seam
    assert [round(x) for i, x in enumerate(idle) if i != 3] == [p for p in plain if p is not None]
    assert sum(p > 0 for p in plain if p) == len(strip.seam_start) == 5  # one drawn seam per idle boundary
    assert "eager; 0 seams" in strip.label(3) and strip.label(0).startswith("ProfilerStep#0: full graph")


def test_a_piecewise_trace_has_its_seams_where_the_anatomy_counts_them():
    trace = load_trace(DATA / "kineto" / "hta__rank0_of_16_graph_launches.json.gz")
    analysis = analyze(trace)
    origin = int(trace.span()[0])  # the layout's origin: timeline x stays exact (view/time_origin.py)
    strip = step_strip(trace, analysis, origin)
    found = anatomy(trace, analysis.work, analysis.graphs, analysis.launches)
    idle = np.bincount(strip.seam_step, weights=strip.seam_end - strip.seam_start, minlength=len(strip))
    assert np.array_equal(idle.astype(np.int64), found.steps.seam_ns) and found.steps.seam_ns.sum() > 0
    assert np.array_equal(strip.start.astype(np.int64) + origin, found.steps.start) and "piecewise" in found.modes
    assert (strip.seam_end > strip.seam_start).all()


def test_a_trace_without_steps_has_no_strip():
    trace = load_trace(DATA / "kineto" / "h200_torch_linear_replay.json.gz")
    assert step_strip(trace, analyze(trace)) is None
