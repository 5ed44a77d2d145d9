"""Seeded faults: does `graphscope diverge` name the node each fault sits in, in how many replays and
seconds, and does the frozen-at-capture audit flag it (precision and recall)? GPU machine only.

    python3 benchmarks/diverge_faults.py --out RESULTS/faults.json [--cases cupy:stale:3,torch:grid:1]

Two workloads (benchmarks/faults/): a CuPy pipeline of eight uniquely named kernels (16 cases: each of the
four faults at stages 1, 3, 5, 7) and a PyTorch decoder-ish step with four slots (14 cases: each fault at
slots 0-2, stale and scalar also at slot 3). Every case is loaded in this process (one torch import for
all), run as `graphscope run` runs it (eager steps, then one capture, replays compared with eager), then
searched (workload/child/diverge_search.py). The right node is known without graphscope: the CuPy fault's
kernel is named stage{S}; the torch fault's kernel is the slot's op (benchmarks/faults/torch_decoder.py:
FAULT_OP) counted from the slot's marker fill.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

KINDS = ("stale", "scalar", "grid", "host")
CUPY_CASES = [f"cupy:{k}:{s}" for k in KINDS for s in (1, 3, 5, 7)] + ["cupy:none:0"]
TORCH_CASES = [f"torch:{k}:{s}" for k in KINDS for s in (0, 1, 2)] + ["torch:stale:3", "torch:scalar:3", "torch:none:0"]
# nodes from the slot's marker fill, copies included (measured on the H100: clone and the slice assignment
# are memcpy nodes): fill, add, mul, roll, memcpy (clone), mul (rows [:n]), memcpy (into rows [:n])
TORCH_OFFSET = {"add": 1, "mul": 2, "roll": 3, "rows": 5}


def expected_position(framework: str, kind: str, at: int, names: list[str]) -> int | None:
    """The node (position among kernel, copy and memset nodes) the fault sits in, from the names alone."""
    if framework == "cupy":
        return next((i for i, n in enumerate(names) if n == f"stage{at}"), None)
    fills = [i for i, n in enumerate(names) if "FillFunctor" in n]
    if len(fills) <= at:
        return None
    op = {"stale": "add", "scalar": "mul", "host": "roll", "grid": "rows"}[kind]
    return fills[at] + TORCH_OFFSET[op]


def run_case(case: str, reps: int, audit: bool = True) -> dict:
    from graphscope.workload.child.diverge_search import diverge
    from graphscope.workload.child.live import LiveWorkload

    framework, kind, at = case.split(":")
    os.environ["GRAPHSCOPE_FAULT"] = f"{kind}:{at}"
    path = HERE / "faults" / ("cupy_pipeline.py" if framework == "cupy" else "torch_decoder.py")
    answer: dict = {"case": case}
    started = time.perf_counter()
    live = LiveWorkload(path)
    live.measure("eager", reps, 1)
    graph = live.measure("graph", reps, 1)
    answer["run_match"] = graph["outputs"].get("match")
    answer["load_and_run_s"] = time.perf_counter() - started
    result = diverge(live)
    names = [x.get("symbol") or x.get("name", "") for x in (result.get("graph_launches") or [])]
    answer.update({k: result.get(k) for k in (
        "position", "search_replays", "classify_replays", "seconds", "nodes", "reference_nodes", "regions",
        "inputs", "noisy_regions", "reference_matches_eager", "note", "structural", "differences", "buffers",
    )})
    answer["found_name"] = (result.get("captured") or {}).get("name")
    answer["expected"] = expected_position(framework, kind, int(at), names) if kind != "none" else None
    answer["names"] = names
    answer["right"] = answer["expected"] is not None and answer["position"] == answer["expected"]
    if audit:
        from graphscope.workload.child.diverge_audit import audit_graph

        t0 = time.perf_counter()
        found = audit_graph(live)
        answer["audit_s"] = time.perf_counter() - t0
        answer["flagged"] = found["flagged"]
        answer["flags"] = {n["position"]: [f["flag"] for f in n["flags"]] for n in found["nodes"] if n["flags"]}
        answer["node_share"], answer["time_share"] = found["node_share"], found.get("time_share")
        audit_names = [x.get("symbol") or x.get("name", "") for x in found["launches"]]
        truth = expected_position(framework, kind, int(at), audit_names) if kind != "none" else None
        span = {truth, truth + 1} if truth is not None and framework == "torch" and kind == "grid" else {truth}
        answer["audit_true"] = sorted(p for p in found["flagged"] if p in span)
        answer["audit_false"] = sorted(p for p in found["flagged"] if p not in span)
        answer["audit_recall"] = truth is not None and truth in found["flagged"]
    if framework == "torch" and not os.environ.get("_PROBED"):
        os.environ["_PROBED"] = "1"  # API facts, once: what the allocator's snapshot holds
        segments = live.fw.torch.cuda.memory_snapshot()
        answer["snapshot_keys"] = sorted(segments[0]) if segments else []
        answer["block_keys"] = sorted(segments[0]["blocks"][0]) if segments and segments[0].get("blocks") else []
        answer["launches"] = result.get("graph_launches")
    if framework == "cupy" and not os.environ.get("_PROBED_CUPY"):
        os.environ["_PROBED_CUPY"] = "1"
        answer["launches"] = result.get("graph_launches")
        answer["eager"] = result.get("eager_launches")
    del live
    gc.collect()
    return answer


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--cases", default="")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    named = {"cupy": CUPY_CASES, "torch": TORCH_CASES, "": CUPY_CASES + TORCH_CASES}
    cases = named.get(args.cases) or args.cases.split(",")
    results = []
    for case in cases:
        try:
            answer = run_case(case, args.reps)
        except Exception as exc:
            answer = {"case": case, "error": f"{type(exc).__name__}: {exc}"}
            answer["traceback"] = traceback.format_exc()[-3000:]
        results.append(answer)
        short = {k: answer.get(k) for k in ("case", "run_match", "position", "expected", "right", "search_replays",
                                             "seconds", "found_name", "error")}
        print(json.dumps(short), flush=True)
        args.out.write_text(json.dumps(results, indent=1, default=str))
    faults = [a for a in results if ":none:" not in a["case"]]
    right = sum(1 for a in faults if a.get("right"))
    true = sum(len(a.get("audit_true", [])) for a in results)
    false = sum(len(a.get("audit_false", [])) for a in results)
    recall = sum(1 for a in faults if a.get("audit_recall"))
    print(f"search localised {right} of {len(faults)}; audit recall {recall}/{len(faults)}, "
          f"flagged nodes {true} right {false} wrong", flush=True)
    found = [a for a in faults if a.get("right")]
    summary = {
        "cases": len(faults),
        "localised": right,
        "unfound": [{k: a.get(k) for k in ("case", "position", "expected", "found_name", "note", "error")}
                    for a in faults if not a.get("right")],
        "search_replays": sorted(a["search_replays"] for a in found),
        "classify_replays": sorted(a["classify_replays"] for a in found),
        "seconds": sorted(round(a["seconds"], 3) for a in found),
        "nodes": sorted({a["nodes"] for a in found}),
        "audit_recall": recall,
        "audit_true_nodes": true,
        "audit_false_nodes": false,
        "audit_false_by_case": {a["case"]: a.get("audit_false") for a in results if a.get("audit_false")},
        "node_share": sorted({round(a["node_share"], 3) for a in results if a.get("node_share") is not None}),
        "time_share": sorted({round(a["time_share"], 3) for a in results if a.get("time_share") is not None}),
        "hidden_from_run": [a["case"] for a in faults if a.get("run_match") is True],
    }
    args.out.with_name(args.out.stem + "_summary.json").write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
