"""A trace that records fewer executions of a WHILE node's body than ran is flagged where the trace meets
the run (`run --profile`), and again by `summary` of that trace; a complete trace is confirmed. The traces
are PyTorch-profiler JSON as its CUPTI records a CuPy graph replay (kernels under the launch's correlation)."""

from __future__ import annotations

import json
from pathlib import Path

from graphscope.analysis.conditional_trace import check, check_run, expected_runs, sidecar_of
from graphscope.cli import main
from graphscope.text.run import render_run
from graphscope.trace import load_trace
from tests.workload.fakes import fake_report

LAUNCHES, ITERATIONS = 5, 12
BODY = ["mix", "scale", "pick"]


def _event(name: str, cat: str, ts: float, correlation: int, pid: int = 1) -> dict:
    args = {"correlation": correlation} | ({"device": 0, "stream": 7} if cat == "kernel" else {})
    return {
        "ph": "X",
        "cat": cat,
        "name": name,
        "pid": 0 if cat == "kernel" else pid,
        "tid": 2,
        "ts": ts,
        "dur": 2,
        "args": args,
    }


def _trace(tmp_path: Path, recorded_iterations: int, name: str) -> Path:
    """LAUNCHES graph launches of prefill, the loop (recorded_iterations body runs) and finish, and one eager
    `mix` launch outside any graph (which must not count)."""
    events, ts = [], 0.0
    for launch in range(LAUNCHES):
        events.append(_event("cudaGraphLaunch", "cuda_runtime", ts, launch + 1))
        kernels = ["prefill", "graphscope_loop_enter", *BODY * recorded_iterations, "finish"]
        for i, kernel in enumerate(kernels):
            events.append(_event(kernel, "kernel", ts + 10 + 3 * i, launch + 1))
        ts += 1000
    events.append(_event("cudaLaunchKernel", "cuda_runtime", ts, 99))
    events.append(_event("mix", "kernel", ts + 10, 99))
    path = tmp_path / name
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    return path


def _measured(warmup: int = 1) -> dict:
    """What the profiled child's meter says: LAUNCHES - warmup measured steps of ITERATIONS each."""
    reps = LAUNCHES - warmup
    loop = {"kind": "while", "runs_per_step": [ITERATIONS] * reps, "warmup_steps": warmup}
    return {"decode#0": loop | {"warmup_runs": ITERATIONS * warmup, "body_kernels": BODY}}


def test_one_recorded_body_run_per_launch_is_flagged_as_1_of_12(tmp_path):
    trace = load_trace(_trace(tmp_path, 1, "short.json"))
    result = check(trace, expected_runs(_measured()))["decode#0"]
    assert result["shortfall"] and result["iterations_ran"] == 60 and result["iterations_in_trace"] == 5
    assert result["kernels_in_trace"] == {"mix": 5, "scale": 5, "pick": 5}  # the eager mix is not a body run


def test_a_trace_with_every_iteration_is_not_flagged(tmp_path):
    trace = load_trace(_trace(tmp_path, ITERATIONS, "full.json"))
    result = check(trace, expected_runs(_measured()))["decode#0"]
    assert not result["shortfall"] and result["iterations_in_trace"] == 60


def _run_data(tmp_path: Path, trace: Path) -> dict:
    data = fake_report(tmp_path / "while_decode.py").to_json()
    data["traces"] = {"graph": {"sqlite": str(trace), "report": str(trace)}}
    data["profiled"] = {"graph": {"profiler": "torch", "reps": 4, "wall_ns": 1e5, "gpu_ns": 9e4, "overhead": 0.02}}
    data["profiled"]["graph"]["conditionals"] = _measured()
    return data


def test_the_run_says_what_its_trace_misses_and_summary_of_the_trace_says_it_again(tmp_path, capsys):
    path = _trace(tmp_path, 1, "while_decode_graph.pt.trace.json")
    data = _run_data(tmp_path, path)
    check_run(data)
    text = render_run(data)
    assert "the trace shows 1 of 12 iterations per launch of WHILE decode#0 (mix: 5 recorded where 60 ran" in text
    assert json.loads(sidecar_of(path).read_text())["decode#0"]["runs"] == 60
    assert main(["summary", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Conditional nodes (graphscope counted their iterations when it wrote this trace):" in out
    assert "the trace shows 1 of 12 iterations per launch of WHILE decode#0" in out
    assert main(["summary", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["conditionals_in_trace"]["decode#0"]["shortfall"] is True


def test_a_complete_trace_is_confirmed_and_a_trace_without_counts_says_nothing(tmp_path, capsys):
    data = _run_data(tmp_path, _trace(tmp_path, ITERATIONS, "full.pt.trace.json"))
    check_run(data)
    assert "the trace shows every body execution of WHILE decode#0 (12 per launch)" in render_run(data)
    plain = _trace(tmp_path, 1, "other.json")
    assert main(["summary", str(plain)]) == 0
    assert "Conditional nodes" not in capsys.readouterr().out


def test_a_trace_that_cannot_be_read_leaves_the_run_standing_with_a_note(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    data = _run_data(tmp_path, broken)
    check_run(data)
    assert "conditional nodes not checked against this trace:" in render_run(data)


def test_the_run_shows_each_loop_s_iterations_and_split_cost(tmp_path):
    data = fake_report(tmp_path / "while_decode.py").to_json()
    loop = {"kind": "while", "runs_median": 12.0, "per_iteration_ns": 4300.0, "fixed_ns": 9100.0}
    data["modes"]["graph"]["conditionals"] = {"decode#0": loop | {"one_iteration_median_ns": 13400.0}}
    data["modes"]["eager"]["conditionals"] = {
        "decode#0": {"kind": "while", "runs_median": 12.0, "step_gpu_ns_per_run": 51000.0}
    }
    text = render_run(data)
    assert "WHILE decode#0 (graph): 12 iterations per step; 4.3 us per iteration + 9.1 us fixed" in text
    assert "WHILE decode#0 (eager): 12 iterations per step; 51 us of the step's GPU span per iteration" in text


def test_counts_left_after_a_summary_are_noticed_and_a_planted_sidecar_flags_nothing(tmp_path, capsys):
    path = _trace(tmp_path, 1, "later.pt.trace.json")
    assert main(["summary", str(path)]) == 0  # kept in the answer cache without counts beside it
    assert "Conditional nodes" not in capsys.readouterr().out
    check_run(_run_data(tmp_path, path))  # the counts arrive beside the same, unchanged trace
    assert main(["summary", str(path)]) == 0
    assert "the trace shows 1 of 12 iterations" in capsys.readouterr().out
    sidecar_of(path).write_text('{"decode#0": {"body_kernels": 7, "runs": "many"}}')
    assert main(["summary", str(path)]) == 0
    assert "Conditional nodes" not in capsys.readouterr().out
