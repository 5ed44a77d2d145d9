"""Types that hold: the mypy ratchet, and the interfaces whose users mypy checks against them.

The ratchet runs mypy once over `graphscope` (its settings: `[tool.mypy]` in pyproject.toml; ~20 s on
two busy cores) and fails when

- any error is in a strict package (`graphscope.core`, `graphscope.graph`, `graphscope.analysis`,
  `graphscope.trace`: they stay at zero), or
- the error count rises above the number in `tests/mypy_baseline.txt`.

When the count falls, the test fails too, asking for the lower number, so the ratchet only turns one way.
To update the baseline after fixing errors (or, for the lead, after a merge):

    python -m mypy | tail -1                  # "Found N errors in M files ..."
    echo N > tests/mypy_baseline.txt          # N from that line; 0 once mypy says "Success"
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from graphscope.core.errors import BadInputError
from graphscope.report.sources import (
    REGISTRY,
    NvtxSource,
    RangeSource,
    RunSource,
    StoredPlan,
    TraceFile,
    TuneSource,
    parse_scope_option,
    parse_source,
    parse_stored,
)
from tests.conftest import FORKJOIN

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "tests" / "mypy_baseline.txt"
STRICT = ("graphscope/core/", "graphscope/graph/", "graphscope/analysis/", "graphscope/trace/")


def _mypy() -> subprocess.CompletedProcess[str]:
    pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[test]')")
    # --cache-dir=/dev/null: a cold run every time (a cache left by another branch cannot hide an error)
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir=/dev/null", "--no-error-summary", "--hide-error-context"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_mypy_errors_only_go_down():
    result = _mypy()
    assert result.returncode in (0, 1), result.stderr[-3000:] or result.stdout[-3000:]
    errors = [line for line in result.stdout.splitlines() if re.match(r"^\S+:\d+: error:", line)]
    strict = [line for line in errors if line.startswith(STRICT)]
    assert not strict, "the strict packages must stay clean:\n" + "\n".join(strict[:20])
    baseline = int(BASELINE.read_text().split()[0])
    assert len(errors) <= baseline, (
        f"mypy finds {len(errors)} errors, more than the {baseline} of tests/mypy_baseline.txt: fix the new "
        "ones (the first 40 of all follow; `python -m mypy` lists them all)\n" + "\n".join(errors[:40])
    )
    assert len(errors) == baseline, (
        f"mypy finds {len(errors)} errors, fewer than the {baseline} of tests/mypy_baseline.txt: "
        f"write {len(errors)} there so they stay down"
    )


# -- report sources: what every source declares, what only some have (callers narrow first) -------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("nvtx:eager_*", NvtxSource),
        ("range:1ms:2ms", RangeSource),
        ("run:3", RunSource),
        ("run:3:eager", RunSource),
        ("tune:4", TuneSource),
        ("plan:5", StoredPlan),
        (str(FORKJOIN), TraceFile),
    ],
)
def test_each_argument_parses_to_its_own_source(text, kind):
    source = parse_source(text)
    assert type(source) is kind and source.text == text
    assert type(kind.parse(text)) is kind  # parse is declared on Source: it gives its own class back
    if kind is TraceFile:
        assert source.path == FORKJOIN and source.label == FORKJOIN.name
    assert set(REGISTRY.values()) == {NvtxSource, RangeSource, RunSource, TuneSource, StoredPlan}


def test_a_stored_record_is_refused_in_one_line_where_it_is_not_one():
    with pytest.raises(BadInputError, match="write run:ID, tune:ID or plan:ID"):
        parse_stored(str(FORKJOIN))
    with pytest.raises(BadInputError, match="a scope is nvtx:NAME or range:START:END"):
        parse_scope_option("run:1", "--a")
    assert isinstance(parse_scope_option("nvtx:x", "--a"), NvtxSource)


def test_every_stored_record_loads_or_says_there_is_none(tmp_path):
    from graphscope.store.session_db import SessionStore
    from tests.workload.fakes import fake_report

    session = tmp_path / "s.sqlite"
    workload = tmp_path / "w.py"
    workload.write_text("# a workload\n")
    run = SessionStore(session).record_run({"ok": True, **fake_report(workload).to_json()})
    assert parse_stored(f"run:{run}").load(session)["id"] == run
    for text, noun in ((f"run:{run + 1}", "run"), ("tune:7", "tuning session"), ("plan:7", "plan")):
        with pytest.raises(BadInputError, match=f"{text}: no such {noun} in"):
            parse_stored(text).load(session)
