"""Run a workload under Nsight Systems, once per mode, and export each report to SQLite."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from graphscope.core.errors import ToolMissingError, WorkloadError
from graphscope.core.launch_config import LaunchConfig
from graphscope.core.settings import find_nsys
from graphscope.workload.protocol import decode
from graphscope.workload.session import child_environment, raise_for

PROFILE_OPTIONS = ("--trace=cuda,nvtx", "--cuda-graph-trace=node", "--sample=none", "--cpuctxsw=none")


def nsys_or_explain() -> str:
    nsys = find_nsys()
    if nsys is None:
        raise ToolMissingError(
            "nsys (Nsight Systems) was not found: install it from https://developer.nvidia.com/nsight-systems, "
            "put it on PATH or set GRAPHSCOPE_NSYS to its path"
        )
    return nsys


def profile_command(nsys: str, output: Path, requests: Path, responses: Path) -> list[str]:
    """`nsys profile` around the workload child in batch mode (nsys owns the terminal)."""
    return [
        nsys,
        "profile",
        *PROFILE_OPTIONS,
        "-o",
        str(output),
        "-f",
        "true",
        sys.executable,
        "-m",
        "graphscope.workload.child",
        "--batch",
        str(requests),
        str(responses),
    ]


def profile_modes(
    path: Path,
    modes: tuple[str, ...],
    reps: int,
    warmup: int,
    config: LaunchConfig | None,
    folder: Path,
    timeout: float,
) -> dict[str, dict[str, str]]:
    """One profiled child per mode; returns {mode: {"report": .nsys-rep, "sqlite": export}}."""
    nsys = nsys_or_explain()
    folder.mkdir(parents=True, exist_ok=True)
    traces = {}
    for mode in modes:
        stem = folder / f"{path.stem}_{mode}"
        requests, responses = stem.with_suffix(".requests.jsonl"), stem.with_suffix(".responses.jsonl")
        batch = [
            {"command": "hello"},
            {"command": "load", "path": str(path.resolve()), "config": config.to_json() if config else None},
            {"command": "measure", "mode": mode, "reps": reps, "warmup": warmup, "nvtx": True},
            {"command": "shutdown"},
        ]
        requests.write_text("".join(json.dumps(r) + "\n" for r in batch))
        _run([*profile_command(nsys, stem, requests, responses)], timeout, "nsys profile")
        for line in responses.read_text().splitlines() if responses.exists() else []:
            answer = decode(line)
            if not answer.get("ok"):
                raise_for(answer["error"])
        report = stem.with_suffix(".nsys-rep")
        sqlite = stem.with_suffix(".sqlite")
        _run([nsys, "export", "--type", "sqlite", "-f", "true", "-o", str(sqlite), str(report)], timeout, "nsys export")
        requests.unlink(missing_ok=True)
        responses.unlink(missing_ok=True)
        traces[mode] = {"report": str(report), "sqlite": str(sqlite)}
    return traces


def _run(command: list[str], timeout: float, what: str) -> None:
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=child_environment())
    except subprocess.TimeoutExpired:
        raise WorkloadError(f"{what} took longer than {timeout:g} s and was stopped", "timeout") from None
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip().splitlines()
        raise WorkloadError(
            f"{what} failed (exit status {result.returncode}): {tail[-1] if tail else ''}", "died", result.stderr
        )
