"""Every chart a report draws is well-formed SVG: an attribute given twice (font-size='11' font-size='8')
made Qt's SVG renderer refuse the rank overview's lateness chart, which browsers had drawn regardless."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from graphscope.report.compose import report_from_sources
from graphscope.report.ranks_report import lateness_chart
from graphscope.report.svg import graph_vs_alone, trial_medians
from tests.conftest import H200_NODE, TORCH_MLP


def _parses(svg: str) -> None:
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")


@pytest.mark.parametrize("sources", [[str(H200_NODE)], [str(H200_NODE), str(TORCH_MLP)]], ids=["one", "two"])
def test_trace_report_charts_are_xml(sources):
    _report, charts = report_from_sources(sources, None, None, None, None, True)
    assert charts
    for svg in charts.values():
        if svg:
            _parses(svg)


def test_tuning_and_rank_charts_are_xml():
    rows = [
        {"site": "k", "how": "in-place", "status": "ok", "median_ns": 1000.0 + i, "ci_low_ns": 990.0,
         "ci_high_ns": 1010.0, "block": str(32 * (i + 1)), "cause": ""}
        for i in range(30)
    ]  # fmt: skip
    rows.insert(0, {**rows[0], "site": None})
    _parses(trial_medians(rows, "t"))
    ok = {"status": "ok", "median_ns": 1.0}
    candidates = [
        {"block": [32, 1, 1], "in_graph": {**ok, "median_ns": 5.0}, "alone": {**ok, "median_ns": 2.0}},
        {"block": [64, 1, 1], "in_graph": {**ok, "median_ns": 6.0}, "alone": {**ok, "median_ns": 1.0}},
    ]
    knob = {"knob": "k", "compared": 2, "kendall_tau": 1.0, "graph_winner": [32, 1, 1], "alone_winner": [64, 1, 1]}
    knob["candidates"] = candidates
    _parses(graph_vs_alone([knob], "t"))
    _parses(lateness_chart([[0, 5000, 0], [0, 0, 9000]], [0, 1], "t"))
