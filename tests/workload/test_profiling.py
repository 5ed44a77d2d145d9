"""Profiled runs without a GPU: the plumbing of --profile torch / nsys, the overhead shown, refusals."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import ClassVar

import pytest

from graphscope.cli import main
from graphscope.text.run import render_run
from graphscope.workload import profiling
from tests.workload.fakes import fake_report


class FakeSession:
    """A workload child that 'profiles' one mode: the medians a profiler slows by 10% (eager) and 1% (graph)."""

    opened: ClassVar[list] = []

    def __init__(self, path, config, timeout, *rest, **options):
        FakeSession.opened.append(path)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def request(self, command, **fields):
        assert command == "profile_torch" and fields["trace"].endswith(f"_{fields['mode']}.pt.trace.json")
        Path(fields["trace"]).write_text("{}")
        base = 5_940_000.0 if fields["mode"] == "eager" else 1_060_500.0
        return {"wall_ns": [base] * fields["reps"], "gpu_ns": [base - 1_000] * fields["reps"], "trace": fields["trace"]}


def test_torch_profiling_runs_one_fresh_child_per_mode_and_keeps_its_medians(tmp_path, monkeypatch):
    monkeypatch.setattr(profiling, "WorkloadSession", FakeSession)
    FakeSession.opened.clear()
    traces, profiled = profiling.profile_modes("torch", tmp_path / "w.py", ("eager", "graph"), 5, 2, None, tmp_path, 60)
    assert len(FakeSession.opened) == 2
    assert traces["graph"] == {"sqlite": str(tmp_path / "w_graph.pt.trace.json")} | {
        "report": str(tmp_path / "w_graph.pt.trace.json")
    }
    assert profiled["eager"] == {"profiler": "torch", "reps": 5, "wall_ns": 5_940_000.0, "gpu_ns": 5_939_000.0}
    report = fake_report(tmp_path / "w.py", eager_ms=5.4, graph_ms=1.05)
    report.traces, report.profiled = traces, profiled
    data = report.to_json()
    eager = report.modes["eager"].stats("wall_ns").median
    assert data["profiled"]["eager"]["overhead"] == pytest.approx(5_940_000.0 / eager - 1)
    text = render_run(data)
    assert f"eager trace: {traces['eager']['sqlite']} (torch.profiler, 5 repetitions: 5.94 ms per step, " in text
    assert f"{data['profiled']['graph']['overhead']:+.1%} against the unprofiled run" in text


def test_an_unknown_profiler_is_refused():
    with pytest.raises(ValueError, match="unknown profiler 'perf'"):
        profiling.profile_modes("perf", Path("w.py"), ("eager",), 5, 2, None, Path("."), 60)


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="PyTorch is installed here")
def test_profile_torch_without_pytorch_is_one_line_before_anything_runs(tmp_path, capsys):
    workload = tmp_path / "w.py"
    workload.write_text("def setup(ctx):\n    raise SystemExit('must not run')\n")
    assert main(["run", str(workload), "--profile", "torch", "--session", str(tmp_path / "s.sqlite")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "PyTorch is missing" in err and "pip install" in err
    assert not (tmp_path / "s.sqlite").exists()


def test_nsys_shorthand_still_means_profile_nsys(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GRAPHSCOPE_NSYS", str(tmp_path / "no-such-nsys"))
    monkeypatch.setenv("PATH", str(tmp_path))
    workload = tmp_path / "w.py"
    workload.write_text("def setup(ctx):\n    raise SystemExit('must not run')\n")
    assert main(["run", str(workload), "--nsys", "--session", str(tmp_path / "s.sqlite")]) == 2
    assert "nsys (Nsight Systems) was not found" in capsys.readouterr().err


def test_a_profiler_that_slows_a_mode_much_is_named_as_the_source_of_its_launch_figures(tmp_path):
    report = fake_report(tmp_path / "w.py", eager_ms=5.4, graph_ms=1.05)
    report.traces = {m: {"sqlite": f"{m}.json", "report": f"{m}.json"} for m in ("eager", "graph")}
    slow = report.modes["graph"].stats("wall_ns").median * 2.64  # as torch.profiler did to the seed's graph
    report.profiled = {
        "eager": {"profiler": "torch", "reps": 5, "wall_ns": report.modes["eager"].stats("wall_ns").median * 1.05},
        "graph": {"profiler": "torch", "reps": 5, "wall_ns": slow},
    }
    for mode in report.profiled:
        report.profiled[mode]["gpu_ns"] = report.profiled[mode]["wall_ns"]
    text = render_run(report.to_json())
    assert "the profiler slowed graph by more than 20%" in text and "slowed eager" not in text
