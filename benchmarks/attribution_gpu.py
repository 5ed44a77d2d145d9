"""Replayed graph work attributed to a module and a line of user code, on the GPU: a transformers decode
step (examples/hf_decode.py: a 4-layer Llama from a config, random weights, a StaticCache) run by
graphscope, and what recording the capture costs.

    python benchmarks/attribution_gpu.py run  OUT      # graphscope run --profile torch, attributed
    python benchmarks/attribution_gpu.py cost OUT      # capture time: plain, profiler, profiler + stacks
    python benchmarks/attribution_gpu.py shipped       # no GPU: every shipped trace with replayed nodes

`run` writes OUT/attribution_run.json: the run's `attribution` (coverage per field, top modules, the
kernels that lost a field) and a second count of the replay straight from the trace's JSON (kernels
with a graph node id: their number and summed duration), which must equal the attribution's total.
`cost` writes OUT/attribution_cost.json: the median capture time of the same step (graphscope's
capture, instantiate excluded) captured N times each way in one process.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKLOAD = ROOT / "examples" / "hf_decode.py"
WORKLOAD_ARGS: list[str] = []  # e.g. ["--mode", "graph"] where time is short


def plain_count(trace: Path) -> dict[str, int]:
    """Kernels, copies and memsets under a graph launch's correlation id in the Chrome trace, and their
    summed time (ns), read with json alone: the second way to count what the attribution covers."""
    opener = gzip.open if trace.name.endswith(".gz") else open
    with opener(trace, "rt") as handle:
        events = json.load(handle)["traceEvents"]
    launches = {
        (e.get("args") or {}).get("correlation")
        for e in events
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "GraphLaunch" in str(e.get("name"))
    }
    work, total, recorded = 0, 0.0, set()
    for event in events:
        args = event.get("args") or {}
        if event.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and args.get("correlation") in launches:
            work += 1
            total += float(event.get("dur", 0))
            if args.get("graph node id"):
                recorded.add(int(args["graph node id"]))
    return {
        "graph_launches": len(launches),
        "activities": work,
        "gpu_ns": round(total * 1000),
        "recorded_node_ids": len(recorded),  # 0 where this PyTorch writes no "graph node id"
    }


def run(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="attrib-"))  # traces are large: only a small gzip comes back
    command = [
        sys.executable, "-m", "graphscope", "run", str(WORKLOAD), "--profile", "torch", "--reps", "5",
        "--warmup", "2", "--json", "--session", str(scratch / "session.sqlite"), "--trace-dir", str(scratch),
        *WORKLOAD_ARGS,
    ]  # fmt: skip
    t0 = time.perf_counter()
    # its own process group: on time-out the run and its workload child go together (the job has more to do)
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, _ = child.communicate(timeout=float(os.environ.get("ATTRIB_TIMEOUT", "240")))
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
        print(f"graphscope run timed out after {time.perf_counter() - t0:.0f} s", flush=True)
        return 1
    took = time.perf_counter() - t0
    try:
        data = json.loads(stdout)
        data["modes"]
    except (ValueError, KeyError):
        print(stdout[-3000:])
        return 1
    found = {
        "seconds": took,
        "rc": child.returncode,
        "attribution": data.get("attribution"),
        "capture_plain": data["modes"].get("graph", {}).get("capture"),
        "capture_recorded": (data.get("profiled") or {}).get("graph", {}).get("capture"),
        "profiled": data.get("profiled"),
        "environment": data.get("environment"),
    }
    trace = Path(data["traces"]["graph"]["sqlite"])
    found["plain"] = plain_count(trace)
    found["trace_bytes"] = trace.stat().st_size
    (out / "attribution_run.json").write_text(json.dumps(found, indent=2))
    from graphscope.text.run import render_run

    print(render_run(data))
    coverage = (data.get("attribution") or {}).get("coverage", {})
    print("plain count:", found["plain"], "attributed total gpu_ns:", coverage.get("gpu_ns"))
    kept = out / "hf_decode_graph.pt.trace.json.gz"
    with open(trace, "rb") as src, gzip.open(kept, "wb") as dst:
        dst.write(src.read())  # the real capture + replay trace, kept for CPU tests where small
    if kept.stat().st_size > 1_500_000:
        kept.unlink()
    return 0


def cost(out: Path, times: int = 5) -> int:
    """Median capture time of the step captured `times` times each way, in this process."""
    import torch

    from graphscope.workload.child.live import LiveWorkload
    from graphscope.workload.child.op_attribution import ModuleRanges

    live = LiveWorkload(WORKLOAD)
    live.capture_graph()  # the first capture warms up (side stream): not timed
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    answer: dict[str, object] = {}

    def captures(label: str, profile: dict | None, modules: bool) -> None:
        found = []
        for _ in range(times):
            ranges = ModuleRanges(torch) if modules else None
            try:
                if profile is None:
                    found.append(live.capture_graph()["capture_ns"])
                else:
                    with torch.profiler.profile(activities=activities, **profile):
                        found.append(live.capture_graph()["capture_ns"])
            finally:
                if ranges is not None:
                    ranges.close()
        answer[label] = {"median_ns": statistics.median(found), "all_ns": found}
        print(f"{label}: capture {statistics.median(found) / 1e6:.2f} ms (median of {times})", flush=True)

    captures("plain", None, False)
    captures("profiler", {}, False)
    recorded = {"record_shapes": True, "with_stack": True, "with_modules": True}
    captures("profiler_stacks_shapes_modules", recorded, True)
    answer["kernels_captured"] = live.capture.get("launches_captured")
    (out / "attribution_cost.json").write_text(json.dumps(answer, indent=2))
    return 0


def shipped() -> int:
    """Coverage per field of every shipped trace that replays graph nodes (its own capture or node-creation
    events), and of the shipped capture/replay pair attributed with --capture."""
    from graphscope.analysis.attribution_run import run_attribution
    from graphscope.analysis.capture_ops import attribute
    from graphscope.trace import load_trace

    data = ROOT / "tests" / "data"
    paths = sorted([*data.glob("*.sqlite"), *(data / "kineto").glob("*.json.gz")])
    fields = ("operator", "module", "shapes", "frame", "api")
    print(f"{'trace':<48} {'nodes':>5} " + " ".join(f"{f:>8}" for f in fields) + "  source")
    for path in paths:
        found = run_attribution(load_trace(path))
        if not found["nodes"]:
            continue
        shares = " ".join(f"{found['coverage'][f]:>8.1%}" for f in fields)
        print(f"{path.name:<48} {found['nodes']:>5} {shares}  {found['note'] or 'its own capture / creation events'}")
    pair = attribute(load_trace(data / "kineto" / "h200_torch_linear_replay.json.gz"),
                     load_trace(data / "kineto" / "h200_torch_linear_capture.json.gz"))  # fmt: skip
    shares = " ".join(f"{pair['coverage'][f]:>8.1%}" for f in fields)
    print(f"{'h200_torch_linear_replay + --capture':<48} {sum(g['nodes'] for g in pair['graphs']):>5} {shares}")
    return 0


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "shipped":
        sys.exit(shipped())
    folder = Path(sys.argv[2])
    sys.exit(run(folder) if what == "run" else cost(folder))
