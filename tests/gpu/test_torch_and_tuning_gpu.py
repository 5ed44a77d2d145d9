"""On a real GPU: GEMMs inside captured graphs, PyTorch workloads, a tuner that survives kernels that
fault, 2-D block shapes, shared memory that follows the block, and the session database under kill -9."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphscope.core.errors import WorkloadError
from graphscope.core.launch_config import LaunchConfig
from graphscope.core.settings import find_nsys
from graphscope.graph.model import Dag
from graphscope.store.recorder import Recorder
from graphscope.store.session_db import SessionStore
from graphscope.tune.controller import TuningController
from graphscope.workload.runner import run_workload
from graphscope.workload.session import WorkloadSession

pytestmark = pytest.mark.gpu
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DECODER, TORCH_BLOCK = EXAMPLES / "decoder_step.py", EXAMPLES / "torch_block.py"


def _torch_available() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except ImportError:
        return False


needs_torch = pytest.mark.skipif(not _torch_available(), reason="needs PyTorch with CUDA")


@needs_torch
def test_a_decoder_step_with_gemms_is_captured_and_matches_eager():
    data = run_workload(DECODER, reps=20, warmup=5).to_json()
    print("decoder", json.dumps({"speedup": data["speedup"], "verdict": data["verdict"]}))
    assert data["outputs_match"] and data["modes"]["graph"]["outputs"]["checked"]
    assert data["modes"]["graph"]["capture"]["launches_captured"] == 5  # the ctx.launch sites
    with WorkloadSession(DECODER) as session:
        dag = Dag.from_json(session.request("dag"))
    names = [n.name for n in dag.kernel_nodes()]
    library = [n for n in dag.kernel_nodes() if n.site is None]
    print("decoder nodes:", names)
    assert len(library) >= 2 and all("not tunable" in n.detail["tunable"] for n in library)  # cuBLAS GEMMs
    assert {n.site.split("#")[0] for n in dag.kernel_nodes() if n.site} == {
        "side_gemm",
        "layernorm",
        "gelu",
        "residual",
        "transpose",
    }
    assert any(a != b - 1 for a, b in dag.edges)  # the side stream forks and joins


def test_cupy_matmul_in_a_captured_step_points_at_ctx_matmul(tmp_path):
    path = tmp_path / "matmul.py"
    path.write_text(
        "def setup(ctx):\n"
        "    cp = ctx.cupy\n"
        "    a = cp.ones((64, 64), cp.float32); c = cp.empty_like(a)\n"
        "    ctx.outputs(c=c)\n"
        "    def step(ctx):\n"
        "        cp.matmul(a, a, out=c)\n"
        "    return step\n"
    )
    with pytest.raises(WorkloadError) as caught:
        run_workload(path, modes=("eager", "graph"), reps=3, warmup=1)
    assert caught.value.kind == "capture_failed" and "ctx.matmul(a, b, out=c)" in caught.value.message


@needs_torch
def test_a_torch_workload_runs_as_a_cuda_graph_and_its_dag_is_read_from_the_raw_graph():
    data = run_workload(TORCH_BLOCK, reps=30, warmup=5).to_json()
    print("torch block", json.dumps({"speedup": data["speedup"], "verdict": data["verdict"]}))
    assert data["outputs_match"] and data["modes"]["graph"]["outputs"]["checked"]
    assert data["speedup"]["wall_ns"]["value"] > 1.0
    with WorkloadSession(TORCH_BLOCK) as session:
        assert session.info["sites"] == []
        dag = Dag.from_json(session.request("dag"))
    kernels = dag.kernel_nodes()
    print("torch nodes:", [n.name[:60] for n in kernels])
    assert len(kernels) >= 8 and all(n.name and n.block and n.site is None for n in kernels)
    assert all("not tunable" in n.detail["tunable"] for n in kernels)
    assert len(dag.edges) >= len(dag.nodes) - 1
    # PyTorch's kernels are C++ templates: shown by their demangled, shortened names, the signature kept
    assert not any(n.name.startswith("_Z") for n in kernels)
    assert any(n.detail.get("full_name", "").startswith("void at::native::") for n in kernels)


@needs_torch
@pytest.mark.skipif(find_nsys() is None, reason="nsys is not installed")
def test_a_torch_workload_under_nsys(tmp_path):
    from graphscope.analysis.summary import summarize
    from graphscope.trace import load_trace

    report = run_workload(TORCH_BLOCK, reps=5, warmup=2, profile="nsys", trace_dir=tmp_path)
    graph = summarize(load_trace(report.traces["graph"]["sqlite"]))
    print("torch graph trace:", graph["launch"]["verdict"])
    assert graph["scope"]["windows"] == 5 and graph["graphs"]["launches"] == 5
    assert graph["launch"]["verdict"].startswith("graphs in use")


def test_tuning_a_kernel_that_only_works_at_one_width_records_the_faults_and_completes(tmp_path):
    controller = TuningController(DECODER, recorder=Recorder(tmp_path / "s.sqlite"))
    try:
        controller.load()
        knobs = controller.knobs("transpose", [(32, 8, 1), (64, 4, 1), (16, 16, 1), (32, 16, 1), (32, 4, 1)])
        result = controller.sweep("brute", knobs)
    finally:
        controller.close()
    statuses = {t.block: t.status for t in result.trials}
    print("transpose:", statuses, result.conclusion(), controller.restarts)
    assert statuses[(64, 4, 1)] == "fault" and statuses[(16, 16, 1)] == "fault"
    assert statuses[(32, 16, 1)] == "ok" and statuses[(32, 4, 1)] == "ok"
    assert len(controller.restarts) >= 2
    stored = SessionStore(tmp_path / "s.sqlite").trials(result.tuning_id)
    assert sum(t["status"] == "fault" for t in stored) == 2


def test_a_two_dimensional_kernel_is_tuned_with_two_dimensional_shapes_and_seen_in_a_trace(tmp_path):
    controller = TuningController(DECODER, recorder=Recorder(tmp_path / "s.sqlite"))
    try:
        controller.load()
        (knob,) = controller.knobs("side_gemm")
        assert all(shape[1] > 1 for shape in knob.candidates) and (32, 8, 1) in knob.candidates
        result = controller.sweep("brute", [knob])
    finally:
        controller.close()
    ok = sorted((t.stats.median, t.block) for t in result.trials if t.usable)
    print("side_gemm:", [(f"{m / 1e3:.1f} us", b) for m, b in ok[:6]], result.conclusion())
    assert len(ok) >= len(knob.candidates) - 2
    winner = result.best.config if result.improved else LaunchConfig({"side_gemm": ok[0][1]})
    if result.improved:
        assert result.confirmed_best.how == "fresh-capture" and result.confirmed_best.usable
    if find_nsys() is None:
        pytest.skip("nsys is not installed: the trace part is not checked")
    from graphscope.trace import load_trace
    from graphscope.workload.nsys import profile_requests

    requests = [
        {"command": "load", "path": str(DECODER.resolve()), "config": winner.to_json()},
        {"command": "measure", "mode": "graph", "reps": 2, "warmup": 1, "nvtx": True},
    ]
    trace = load_trace(profile_requests(requests, tmp_path, "winner", timeout=300)["sqlite"])
    kernels = trace.kernels
    gemm = kernels.short_name == trace.symbols.lookup("gemm2d")
    in_graph = gemm & (kernels.graph_node >= 0)
    block = winner.blocks["side_gemm"]
    shapes = {(int(x), int(y)) for x, y in zip(kernels.block_x[in_graph], kernels.block_y[in_graph])}
    assert shapes == {block[:2]}


def test_shared_memory_that_follows_the_block_is_set_on_the_instantiated_graph():
    with WorkloadSession(DECODER) as session:
        before = {n.site: n for n in Dag.from_json(session.request("dag")).kernel_nodes() if n.site}
        applied = session.request("apply", config=LaunchConfig({"layernorm": (512, 1, 1)}).to_json())
        after = {n.site: n for n in Dag.from_json(session.request("dag")).kernel_nodes() if n.site}
        measured = session.request("measure", mode="graph", reps=3, warmup=1)
    assert applied["applied"] == 1 and not applied["rejected"]
    assert before["layernorm#0"].shared_mem == 2 * 256 * 4 and after["layernorm#0"].shared_mem == 2 * 512 * 4
    assert after["layernorm#0"].grid == (128, 1, 1)  # one block per row, whatever the block
    assert measured["outputs"]["match"]


# -- the session database under kill -9 -------------------------------------------------------------


def _integrity(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]


def test_kill_9_of_graphscope_mid_sweep_keeps_the_measured_trials(tmp_path):
    db = tmp_path / "s.sqlite"
    command = [
        sys.executable,
        "-m",
        "graphscope",
        "tune",
        str(EXAMPLES / "transformer_step.py"),
        "--strategy",
        "brute",
        "--session",
        str(db),
    ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    trials = 0
    while time.monotonic() < deadline and process.poll() is None:
        if db.exists():
            with sqlite3.connect(db, timeout=30) as conn:
                if conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'trials'").fetchone()[0]:
                    trials = conn.execute("SELECT count(*) FROM trials").fetchone()[0]
        if trials >= 4:
            break
        time.sleep(0.5)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert trials >= 4, "the sweep never got going"
    assert _integrity(db) == "ok"
    store = SessionStore(db)
    (tuning,) = store.db["tunings"].rows
    assert tuning["status"] == "running" and len(store.trials(tuning["id"])) >= 4  # kept, marked unfinished


def test_kill_9_of_the_workload_child_mid_run_is_named_and_the_database_is_whole(tmp_path):
    db = tmp_path / "s.sqlite"
    command = [
        sys.executable,
        "-m",
        "graphscope",
        "run",
        str(EXAMPLES / "seed_vecadd.py"),
        "--reps",
        "20000",
        "--session",
        str(db),
        "--json",
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    child = None
    deadline = time.monotonic() + 120
    while child is None and time.monotonic() < deadline:
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                except OSError:
                    continue
                try:
                    parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
                except (OSError, ValueError, IndexError):
                    continue
                if b"graphscope.workload.child" in cmdline and parent == process.pid:
                    child = int(pid)
        time.sleep(0.5)
    assert child is not None
    time.sleep(3)  # mid-measurement
    os.kill(child, signal.SIGKILL)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 2 and "SIGKILL" in err
    assert json.loads(out)["error"]["kind"] == "died"
    assert _integrity(db) == "ok"
    (run,) = SessionStore(db).runs()
    assert run["status"] == "failed" and run["error_kind"] == "died"  # the run that was in flight, nothing else


@needs_torch
@pytest.mark.parametrize("workload", [TORCH_BLOCK, EXAMPLES / "seed_vecadd.py"], ids=["torch", "cupy"])
def test_a_timeline_without_nsys_from_torch_profiler(workload, tmp_path):
    """--profile torch: each mode's trace is a PyTorch-profiler trace that graphscope reads, scoped to the
    measured repetitions; in graph mode every replayed kernel is attributed to its graph launch."""
    from graphscope.analysis.summary import summarize
    from graphscope.trace import load_trace

    report = run_workload(workload, reps=10, warmup=2, profile="torch", trace_dir=tmp_path)
    data = report.to_json()
    print(workload.name, "profiled:", json.dumps(data["profiled"]))
    eager = summarize(load_trace(report.traces["eager"]["sqlite"]))
    graph_trace = load_trace(report.traces["graph"]["sqlite"])
    graph = summarize(graph_trace)
    print("eager:", eager["launch"]["verdict"], "| graph:", graph["launch"]["verdict"], graph["graphs"])
    assert eager["scope"]["windows"] == 5 and graph["scope"]["windows"] == 5
    assert graph["graphs"]["launches"] >= 5 and eager["graphs"]["launches"] == 0
    assert graph["kernels"]["count"] > 0 and graph["launch"]["verdict"].startswith("graphs in use")
    replayed = int((graph_trace.kernels.graph_node >= 0).sum())  # warm-up replays and the measured ones
    assert replayed >= graph["graphs"]["node_activities"] > 0
    for mode in ("eager", "graph"):
        assert data["profiled"][mode]["profiler"] == "torch" and data["profiled"][mode]["overhead"] is not None
