"""The straggler rule's false alarms and misses on generated rank sets (tests/synthetic_ranks.py).

For each rank count: `--sets` jobs of `--steps` steps with no straggler (every step an alarm would be
false), and as many with one rank late by a planted share of the step, in every step (a rank slower than
the others) and in every 3rd step (a rank that is late now and then): each planted step a hit or a miss.
A step is about 160 us; its generated jitter: the two-rank gap's standard deviation is about 5.2 us. Read
serially (ranks/job.py analyse_serially: the workers' own reader, no Dask).

    python benchmarks/straggler_rule.py [--counts 2,3,4,64] [--sets 40] [--steps 14] [--late 0.1,0.2,0.3]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graphscope.ranks.job import analyse_serially  # noqa: E402
from tests.synthetic_ranks import write_rank_set  # noqa: E402

STEP_NS = 160_000


def flagged(job: dict) -> dict[int, int]:
    return {s["step"]: s["straggler"] for s in job["steps"] if s["held_by"] in ("GPU work", "launch-bound host")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="2,3,4,64")
    parser.add_argument("--sets", type=int, default=40)
    parser.add_argument("--steps", type=int, default=14)
    parser.add_argument("--late", default="0.1,0.2,0.3")
    args = parser.parse_args()
    shares = [float(x) for x in args.late.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        for count in [int(x) for x in args.counts.split(",")]:
            sets = max(2, args.sets // (8 if count > 16 else 1))
            alarms = 0
            for seed in range(sets):
                folder = Path(tmp) / f"plain{count}-{seed}"
                write_rank_set(folder, world=count, steps=args.steps, seed=10_000 + seed)
                alarms += len(flagged(analyse_serially([folder])))
                shutil.rmtree(folder)
            line = [f"{count} ranks: {alarms} false alarms in {sets * args.steps} steps"]
            for every in (1, 3):
                for share in shares:
                    hits = planted = 0
                    for seed in range(sets):
                        folder = Path(tmp) / f"late{count}-{seed}"
                        late = {(count - 1, k): int(share * STEP_NS) for k in range(0, args.steps, every)}
                        write_rank_set(folder, world=count, steps=args.steps, seed=20_000 + seed, slow_host=late)
                        found = flagged(analyse_serially([folder]))
                        hits += sum(found.get(k) == count - 1 for _, k in late)
                        planted += len(late)
                        shutil.rmtree(folder)
                    line.append(f"{share:.0%} late {'every step' if every == 1 else 'every 3rd step'}: "
                                f"{hits}/{planted} found")  # fmt: skip
            print("; ".join(line), flush=True)


if __name__ == "__main__":
    main()
