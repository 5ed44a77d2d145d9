"""Exact counts of `graphscope summary` against plain SQL, on every real export."""

from __future__ import annotations

import pytest

from graphscope.analysis.summary import summarize
from graphscope.trace import load_trace
from tests.conftest import EXPORTS
from tests.trace.sql_oracle import expected_counts


@pytest.mark.parametrize("path", EXPORTS, ids=lambda p: p.stem[:40])
def test_summary_counts_match_sql(path):
    summary = summarize(load_trace(path), whole=True)  # every row, as SQL counts (a run's trace: all its reps)
    for dotted, expected in expected_counts(path).items():
        section, key = dotted.split(".")
        assert summary[section][key] == expected, dotted
