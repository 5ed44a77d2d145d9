"""The shipped demo plan (assets/demo_plan.json, measured on a GPU): `plan plan:demo` re-plans it,
`report plan:demo` renders it, a damaged or missing copy is one line; no GPU needed."""

from __future__ import annotations

import json
from statistics import median

import pytest

from graphscope.cli import main
from graphscope.core.errors import BadInputError
from graphscope.store.demo_plan import demo_plan_path, load_demo_plan

needs_demo = pytest.mark.skipif(
    not demo_plan_path().is_file(),
    reason="assets/demo_plan.json is made on a GPU: benchmarks/gpu_jobs/attrib.sh 3, then benchmarks/demo_plan.py",
)


@needs_demo
def test_the_shipped_demo_plan_is_a_measured_plan():
    plan = load_demo_plan()
    assert plan["plan_id"] == "demo" and plan["workload"] == "examples/batched_mlp.py"
    assert "H100" in plan["environment"]["gpu"] or "H200" in plan["environment"]["gpu"]
    sizes = plan["measurements"]["sizes"]
    assert sorted(m["size"] for m in sizes) == [1, 2, 4, 8, 16, 32, 64]
    for measured in sizes:  # a real measurement: repetitions, outputs checked
        assert len(measured["eager_ns"]) == plan["reps"] == len(measured["graph_ns"])
        assert len(set(measured["eager_ns"])) > 1 and measured["outputs"]["match"] is True
    smallest = min(sizes, key=lambda m: m["size"])  # launch-bound: the replay beats the eager step
    assert median(smallest["graph_ns"]) < median(smallest["eager_ns"])
    per_size = {row["size"]: row for row in plan["per_size"]}
    assert all(per_size[m["size"]]["eager_ns"] == median(m["eager_ns"]) for m in sizes)  # the table: medians


@needs_demo
def test_plan_demo_re_plans_under_a_budget_and_is_stored(tmp_path, capsys):
    session = tmp_path / "s.sqlite"
    assert main(["plan", "plan:demo", "--memory", "1MiB", "--session", str(session), "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["best"] is None or first["best"]["memory_bytes"] <= 1 << 20
    shipped = load_demo_plan()
    assert first["measurements"] == shipped["measurements"]  # re-planned from the same measurements
    assert main(["plan", "plan:demo", "--session", str(session)]) == 0
    text = capsys.readouterr().out
    assert "stored as plan 2" in text and "capture" in text
    assert main(["report", "plan:2", "--session", str(session), "-o", str(tmp_path / "p.md")]) == 0


@needs_demo
@pytest.mark.parametrize("suffix", [".md", ".html", ".json"])
def test_report_plan_demo_renders_without_a_session(tmp_path, suffix):
    out = tmp_path / f"demo{suffix}"
    assert main(["report", "plan:demo", "--session", str(tmp_path / "none.sqlite"), "-o", str(out)]) == 0
    text = out.read_text()
    assert "batched_mlp.py" in text
    if suffix == ".html":
        assert "<svg" in text


@needs_demo
def test_a_damaged_demo_plan_is_one_line(tmp_path):
    broken = tmp_path / "demo_plan.json"
    broken.write_text(json.dumps({**json.loads(demo_plan_path().read_text()), "measurements": {"sizes": []}}))
    with pytest.raises(BadInputError, match=r"^plan:demo \(.*\): the stored plan is damaged \(no measured sizes\)$"):
        load_demo_plan(broken)


def test_a_missing_demo_plan_is_one_line(tmp_path, monkeypatch, capsys):
    with pytest.raises(BadInputError, match="the shipped demo plan cannot be read"):
        load_demo_plan(tmp_path / "absent.json")
    from graphscope.store import demo_plan

    monkeypatch.setattr(demo_plan, "demo_plan_path", lambda: tmp_path / "absent.json")
    assert main(["report", "plan:demo", "--session", str(tmp_path / "s.sqlite"), "-o", str(tmp_path / "p.md")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "plan:demo: the shipped demo plan cannot be read" in err
