"""Does the capture-size planner predict what serving through its chosen graphs costs? (GPU machine.)

For each workload: `graphscope plan` measures every size, chooses the set under the budgets, and serves
N requests drawn from a skewed request-size distribution through the chosen graphs in a fresh child
(`--serve`); the table sets the served mean step against the prediction for the same requests. Then the
stored measurements are re-planned (no GPU) with the engine-default-like list's own memory and capture
time as budgets: expected step of the plan against that list's at equal budget.

    python benchmarks/plan_serve.py [--serve 500] [--reps 10] [--out DIR] [--only torch_block ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CASES = [  # workload, sizes
    ("examples/batched_mlp.py", None),
    ("examples/decoder_step.py", "1-256"),
    ("examples/torch_block.py", "1-8,16-256/8"),  # 39 sizes: all 256 outran a 10-minute GPU call
]


def skewed_traffic(path: Path, largest: int, seed: int = 1) -> Path:
    """Request sizes as decode batches arrive: mostly small, a long tail up to `largest` (log-normal)."""
    sizes = np.clip(np.rint(np.random.default_rng(seed).lognormal(2.5, 1.0, 20_000)), 1, largest).astype(int)
    counts = np.bincount(sizes, minlength=largest + 1)
    path.write_text("size,count\n" + "".join(f"{s},{c}\n" for s, c in enumerate(counts) if s and c))
    return path


def plan(*args: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "graphscope", "plan", *args, "--json"], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"graphscope plan {' '.join(args)}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", type=int, default=500)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--out", type=Path, default=Path("/tmp/plan-serve"))
    parser.add_argument("--only", nargs="*", help="workload stems to run (default: all)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    session = str(args.out / "session.sqlite")
    rows = []
    for workload, sizes in CASES:
        if args.only and Path(workload).stem not in args.only:
            continue
        largest = 64 if sizes is None else int(sizes.split("-")[-1].split("/")[0])
        traffic = skewed_traffic(args.out / f"traffic_{largest}.csv", largest)
        common = ["--traffic", str(traffic), "--session", session, "--reps", str(args.reps)]
        first = plan(str(ROOT / workload), *(["--sizes", sizes] if sizes else []), *common, "--serve", str(args.serve))
        (args.out / f"{Path(workload).stem}.json").write_text(json.dumps(first))
        compared = first["compared"]
        equal = plan(
            f"plan:{first['plan_id']}",
            *common,
            "--memory", f"{max(compared['memory_bytes'], 1)}B",
            "--startup", f"{max(compared['startup_ns'], 1):.0f}ns",
        )  # fmt: skip
        served, best = first["served"], first["best"]
        rows.append(
            {
                "workload": Path(workload).name,
                "sizes": len(first["per_size"]),
                "chosen": len(best["sizes"]),
                "plan_expected_ms": best["expected_ns"] / 1e6,
                "predicted_ms": served["predicted_ns"] / 1e6,
                "served_ms": served["served_mean_ns"] / 1e6,
                "error": served["error"],
                "error_here": served.get("error_here"),  # priced with medians re-measured in the serving child
                "predicted_without_switches_ms": served["predicted_without_switches_ns"] / 1e6,
                "switches": served["switches"],
                "switch_penalty_us": served["switch_penalty_ns"] / 1e3,
                "served_switch_us": (served["served_switch_ns"] or 0) / 1e3,
                "grouped_ms": served["grouped_mean_ns"] / 1e6,
                "rotation_switch_us": (first["measurements"].get("switch_ns") or {}).get("rotation", 0) / 1e3,
                "plan_memory_mib": best["memory_bytes"] / 2**20,
                "plan_startup_ms": best["startup_ns"] / 1e6,
                "list_sizes": len(compared["measured"]),
                "list_expected_ms": compared["expected_ns"] / 1e6,
                "list_memory_mib": compared["memory_bytes"] / 2**20,
                "list_startup_ms": compared["startup_ns"] / 1e6,
                "equal_budget_expected_ms": equal["best"]["expected_ns"] / 1e6 if equal["best"] else None,
                "equal_budget_sizes": len(equal["best"]["sizes"]) if equal["best"] else 0,
                "gpu": first["environment"].get("gpu"),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    (args.out / "plan_serve.json").write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
