"""The seed graph (1000 nodes) applied in place five times in one workload session: the first apply against
the later ones and against the capture (run by benchmarks/gpu_jobs/apply.sh on the GPU host)."""

import sys
from pathlib import Path

sys.path.insert(0, ".")
from graphscope.core.launch_config import LaunchConfig
from graphscope.workload.session import WorkloadSession

with WorkloadSession(Path("examples/seed_vecadd.py")) as session:
    cap = session.request("capture", config=None)
    print("capture + instantiate + upload ms", (cap["capture_ns"] + cap["instantiate_ns"] + cap["upload_ns"]) / 1e6)
    for block in (128, 256, 128, 64, 256):
        applied = session.request("apply", config=LaunchConfig({"add": (block, 1, 1)}).to_json())
        print("apply", block, applied["applied"], applied["apply_ns"] / 1e6, "ms")
