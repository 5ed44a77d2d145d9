"""A run's graph trace attributed (analysis/attribution_run.py): coverage checked against a plain count of
the JSON, the modules that take the replay's time, and the kernels that lost a field named."""

from __future__ import annotations

from pathlib import Path

from graphscope.analysis.attribution_run import attribute_run_trace, run_attribution
from graphscope.analysis.capture_ops import attribute
from graphscope.text.run import attribution_lines, render_run
from graphscope.trace import load_trace
from tests.analysis.test_attribution import DECODER, USER, Trace, _kernel_ns


def test_coverage_modules_and_what_lost_its_module(tmp_path):
    trace = Trace()
    calls = [*DECODER, {"op": "aten::copy_", "dims": [[4, 16]]}]  # the last call: no module around it
    trace.capture(calls)
    for _ in range(2):
        trace.replay([("gemm", 8, 10.0), ("add", 4, 2.0), ("gemm", 8, 12.0), ("copy_kernel", 1, 3.0)])
    found = run_attribution(load_trace(trace.write(tmp_path / "run_graph.json.gz")))
    total = _kernel_ns(trace)
    assert found["nodes"] == 4 and found["graphs"] == 1 and found["note"] is None
    assert found["coverage"]["gpu_ns"] == total
    assert found["coverage"]["module"] == (total - _kernel_ns(trace, {"copy_kernel"})) / total
    assert found["coverage"]["frame"] == 1.0  # every call ran under the user's line
    assert found["modules"][0] == {
        "module": "Decoder_0.Layer_0.Linear_1",
        "kinds": {"kernel": 1},
        "nodes": 1,
        "activities": 2,
        "gpu_ns": 2 * 12_000,
    }
    assert found["frames"][0]["frame"] == USER
    assert found["lost"] == {"module": [{"kernel": "copy_kernel", "nodes": 1, "gpu_ns": 2 * 3_000}]}
    lines = attribution_lines(found, {"capture_ns": 1_000_000}, {"capture_ns": 3_000_000})
    assert "module 88.9%" in lines[0] and "frame 100.0%" in lines[0]
    assert any("without a module: copy_kernel (1)" in line for line in lines)
    assert lines[-1].endswith("3 ms (unprofiled 1 ms)")


def test_a_trace_without_its_capture_and_one_that_cannot_be_read(tmp_path):
    trace = Trace()
    trace.replay([("gemm", 8, 10.0)])
    found = run_attribution(load_trace(trace.write(tmp_path / "replay_only.json.gz")))
    assert found["coverage"]["module"] == 0.0 and "no capture" in found["note"]
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    failed = attribute_run_trace(broken)
    assert failed["nodes"] == 0 and failed["note"].startswith("not attributed: ")
    assert attribution_lines(failed, None, None) == [f"  attribution: {failed['note']}"]


def test_a_profiled_run_s_json_and_text_carry_its_replay_attributed(tmp_path, monkeypatch):
    """run_and_record hands the run's JSON form to annotate_run (the CLI's and the Run panel's path): the
    JSON and the text carry the coverage; the profiled capture's time comes through from the profiled child."""
    from graphscope.store.recorder import Recorder
    from graphscope.workload import record
    from tests.workload.fakes import fake_report

    trace = Trace()
    trace.capture(DECODER)
    trace.replay([("gemm", 8, 10.0), ("add", 4, 2.0), ("gemm", 8, 12.0)])
    path = trace.write(tmp_path / "w_graph.pt.trace.json.gz")
    report = fake_report(tmp_path / "w.py")
    report.traces = {"graph": {"sqlite": str(path), "report": str(path)}}
    recorded = {"capture_ns": 9_000_000, "instantiate_ns": 1, "upload_ns": 1, "launches_captured": 3}
    report.profiled = {"graph": {"profiler": "torch", "reps": 5, "wall_ns": 1e6, "gpu_ns": 1e6, "capture": recorded}}
    monkeypatch.setattr(record, "run_workload", lambda *args, **kwargs: report)
    from graphscope.analysis.attribution_run import annotate_run

    db = tmp_path / "s.sqlite"
    data = record.run_and_record(tmp_path / "w.py", Recorder(db), profile="torch", annotate=annotate_run)
    assert data["run_id"] == 1 and data["attribution"]["coverage"]["module"] == 1.0
    assert data["attribution"]["coverage"]["gpu_ns"] == _kernel_ns(trace)
    text = render_run(data)
    assert "replayed graph work attributed (share of replay GPU time): module 100.0%, frame 100.0%" in text
    assert "capture while recording stacks, shapes and modules: 9 ms (unprofiled 5.6 ms)" in text


REAL = Path(__file__).resolve().parents[1] / "data" / "kineto" / "h100_hf_decode_graph_profile_torch.json.gz"


def test_a_real_decode_step_run_by_graphscope_is_attributed_to_modules_and_lines():
    """`graphscope run examples/hf_decode.py --profile torch --mode graph` on an H100: 222 nodes replayed 8
    times; every node's operator, shapes and line known, every one but the step's own logits copy in a
    module; the total is the plain JSON count of the work under the graph launches."""
    from benchmarks.attribution_gpu import plain_count

    found = attribute_run_trace(REAL)
    coverage = found["coverage"]
    assert found["nodes"] == 222 and found["graphs"] == 1 and found["note"] is None
    assert coverage["gpu_ns"] == plain_count(REAL)["gpu_ns"] == 3_044_954
    assert coverage["operator"] == coverage["shapes"] == coverage["frame"] == 1.0
    assert 0.995 < coverage["module"] < 1.0
    assert found["lost"] == {"module": [{"kernel": "(copy)", "nodes": 1, "gpu_ns": 12_064}]}
    assert [m["module"] for m in found["modules"][:4]] == [f"model.layers.{i}.self_attn" for i in (0, 3, 1, 2)]
    assert all(f["frame"].startswith("transformers/") for f in found["frames"])  # the model's code, not torch's
    copy = attribute(load_trace(REAL), stacks=True)["nodes"][-1]
    assert (copy["operator"], copy["frame"], copy["module"]) == ("aten::copy_", "hf_decode.py(42): step", None)
