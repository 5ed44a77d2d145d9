"""PDL figures on the GPU (issue #47): examples/pdl_chain.py (32 kernels) replayed with and without PDL.

One workload child. Three rounds, alternating: capture with PDL as the workload asks, measure 200 replays
(CUDA events around each graph launch), capture with PDL off on every launch (LaunchConfig.pdl), measure
200; eager steps likewise (20 each). Then each programmatic edge made plain alone in a copy of the graph
(`pdl_edges`, 200 interleaved replays per variant). Writes pdl_measure.json to the folder given.

    python benchmarks/pdl_measure.py OUT_DIR
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

from graphscope.core.launch_config import LaunchConfig
from graphscope.core.stats import describe, speedup
from graphscope.graph.edges import judge_pdl
from graphscope.graph.model import Dag
from graphscope.workload.session import WorkloadSession

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "pdl_chain.py"
ROUNDS, REPS, EAGER_REPS = 3, 200, 20


def summary(samples: list[float]) -> dict[str, float]:
    stats = describe(samples)
    return {"median_us": stats.median / 1e3, "ci_low_us": stats.ci_low / 1e3, "ci_high_us": stats.ci_high / 1e3}


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    configs = {"pdl": LaunchConfig(), "plain": LaunchConfig(pdl={"link": False, "loose": False})}
    graph: dict[str, list[float]] = {k: [] for k in configs}
    eager: dict[str, list[float]] = {k: [] for k in configs}
    matches: dict[str, list[bool | None]] = {k: [] for k in configs}
    result: dict = {"workload": EXAMPLE.name, "rounds": ROUNDS, "reps": REPS}
    started = time.perf_counter()
    with WorkloadSession(EXAMPLE) as session:
        for round_ in range(ROUNDS):
            for label, config in configs.items():
                session.request("capture", config=config.to_json())
                measured = session.request("measure", mode="graph", reps=REPS, warmup=10)
                graph[label] += measured["gpu_ns"]
                matches[label].append(measured["outputs"].get("match"))
                steps = session.request("measure", mode="eager", reps=EAGER_REPS, warmup=2)
                eager[label] += steps["gpu_ns"]
                matches[label].append(steps["outputs"].get("match"))
            print(f"round {round_}: {time.perf_counter() - started:.1f}s", flush=True)
        for label in configs:
            result[f"graph_{label}"] = summary(graph[label])
            result[f"eager_{label}"] = summary(eager[label])
            result[f"outputs_match_{label}"] = matches[label]
        ratio = speedup(graph["plain"], graph["pdl"])
        result["graph_speedup_pdl"] = ratio.to_json()
        session.request("capture", config=configs["pdl"].to_json())
        dag = Dag.from_json(session.request("dag"))
        timed = session.request("pdl_edges", reps=REPS, warmup=5)
        result["pdl_edges"] = timed
        judge_pdl(dag, replays={int(k): v for k, v in timed["edges"].items()})
        result["verdicts"] = {str(p): row["verdict"] for p, row in dag.edge_kinds.measured.items()}
        result["griddep"] = [n.detail.get("griddep") for n in dag.nodes]
    result["seconds"] = time.perf_counter() - started
    (out / "pdl_measure.json").write_text(json.dumps(result, indent=1, default=float))
    g, p = result["graph_pdl"], result["graph_plain"]
    print(
        f"32-kernel chain replay: PDL {g['median_us']:.2f} us [{g['ci_low_us']:.2f}, {g['ci_high_us']:.2f}], "
        f"plain {p['median_us']:.2f} us [{p['ci_low_us']:.2f}, {p['ci_high_us']:.2f}], "
        f"speed-up {ratio.value:.3f} [{ratio.low:.3f}, {ratio.high:.3f}]"
    )
    e, q = result["eager_pdl"], result["eager_plain"]
    print(f"eager step: PDL {e['median_us']:.2f} us, plain {q['median_us']:.2f} us")
    edges = timed["edges"]
    savings = np.array([edges[k]["saving_ns"] for k in sorted(edges, key=int)])
    print(f"per edge made plain (ns/replay): {np.round(savings).astype(int).tolist()}")
    print(f"verdicts: {result['verdicts']}")
    print(f"outputs match: {matches}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "."))
