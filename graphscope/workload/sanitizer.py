"""A launch configuration's step under NVIDIA compute-sanitizer, before tuning adopts it.

Output checks cannot see every wrong block: a kernel that reads memory it never wrote can match the
reference because the stale values happened to be right. compute-sanitizer instruments every access.
For one configuration, each tool (memcheck: out-of-bounds and misaligned accesses; initcheck: reads of
global memory never written; racecheck: shared-memory hazards between threads) runs the workload child
in batch mode, which loads the workload with that configuration (its reference step launches every
ctx.launch site with the configured block) and runs one eager step; the three run side by side.
Reads of shared memory never written pass all three: workload/child/scrub.py checks those first.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from graphscope.core.launch_config import LaunchConfig
from graphscope.core.settings import find_sanitizer
from graphscope.workload.session import child_command, child_environment

TOOLS = ("memcheck", "initcheck", "racecheck")
ERROR_EXIT = 86  # compute-sanitizer's exit status when it found something (--error-exitcode)
_FINDING = re.compile(r"^========= (?!COMPUTE-SANITIZER|ERROR SUMMARY|RACECHECK SUMMARY|\s)(.+)$", re.MULTILINE)
_SUMMARY = re.compile(r"(?:ERROR|RACECHECK) SUMMARY: (\d+)")
MISSING = (
    "compute-sanitizer was not found (it comes with the CUDA toolkit: put it on PATH or set "
    "GRAPHSCOPE_COMPUTE_SANITIZER): tuning goes on without --verify sanitizer"
)


def first_finding(output: str) -> str | None:
    """The tool's first message ('Invalid __global__ read of size 4 bytes'), or None when it found nothing."""
    counts = [int(n) for n in _SUMMARY.findall(output)]
    match = _FINDING.search(output)
    if match and (not counts or any(counts)):
        return match.group(1).strip()
    if any(counts):
        return f"{max(counts)} errors"
    return None


def _check(sanitizer: str, tool: str, workload: Path, config: LaunchConfig, timeout: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="graphscope-sanitizer-") as folder:
        requests, responses = Path(folder) / "requests.jsonl", Path(folder) / "responses.jsonl"
        load = {"command": "load", "path": str(workload.resolve()), "config": config.to_json()}
        step = {"command": "measure", "mode": "eager", "reps": 1, "warmup": 0}
        requests.write_text("".join(json.dumps(r) + "\n" for r in (load, step, {"command": "shutdown"})))
        command = [sanitizer, "--tool", tool, "--error-exitcode", str(ERROR_EXIT), "--print-limit", "10"]
        command += ["--report-api-errors", "no"]  # CuPy's own probing calls fail by design: not findings
        command += [*child_command(), "--batch", str(requests), str(responses)]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=child_environment())
        except subprocess.TimeoutExpired:
            return {"tool": tool, "finding": None, "error": f"{tool} took longer than {timeout:g} s"}
        output = done.stdout + done.stderr
        finding = first_finding(output)
        if finding is None and done.returncode == ERROR_EXIT:
            finding = "compute-sanitizer reported errors"
        error = None
        if finding is None and done.returncode not in (0, ERROR_EXIT):
            lines = output.strip().splitlines()
            error = f"{tool} could not run the step (exit status {done.returncode}): {lines[-1] if lines else ''}"
        return {"tool": tool, "finding": finding, "error": error}


def sanitize(
    workload: Path, config: LaunchConfig, tools: tuple[str, ...] = TOOLS, timeout: float = 300.0
) -> dict[str, Any]:
    """{'clean', 'finding' ('initcheck: Uninitialized __global__ memory read ...' or None), 'errors',
    'seconds'} for the workload's step with `config`; raises FileNotFoundError without the tool."""
    sanitizer = find_sanitizer()
    if sanitizer is None:
        raise FileNotFoundError(MISSING)
    started = time.perf_counter()
    with ThreadPoolExecutor(len(tools)) as pool:
        results = list(pool.map(lambda tool: _check(sanitizer, tool, workload, config, timeout), tools))
    findings = [f"{r['tool']}: {r['finding']}" for r in results if r["finding"]]
    return {
        "clean": not findings,
        "finding": findings[0] if findings else None,
        "errors": [r["error"] for r in results if r["error"]],
        "seconds": time.perf_counter() - started,
    }
