"""Make the shipped demo plan (assets/demo_plan.json) from what `graphscope plan --json` printed on a GPU.

    python benchmarks/demo_plan.py RAW.json

The GPU job (benchmarks/gpu_jobs/attrib.sh) runs `graphscope plan examples/batched_mlp.py --reps 20
--json`; this keeps the record as printed, less what belongs to that machine's session
(`plan_id`, `session`), with the workload named from the checkout's root, and checks it as `plan:demo`
will be checked when read.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(raw: Path) -> int:
    from graphscope.store.plan_record import plan_record

    record = json.loads(raw.read_text())
    record = {k: v for k, v in record.items() if k not in ("plan_id", "session", "ok")}
    workload = Path(record["workload"])
    record["workload"] = str(Path("examples") / workload.name)
    plan_record(record, "the demo plan")  # refused here, not on a user's machine
    target = ROOT / "assets" / "demo_plan.json"
    target.write_text(json.dumps(record, indent=1) + "\n")
    print(f"{target}: {target.stat().st_size:,} bytes; verdict: {record['verdict']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
