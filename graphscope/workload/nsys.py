"""Run a workload under Nsight Systems, once per mode, and export each report to SQLite."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from graphscope.core.errors import ToolMissingError, WorkloadError
from graphscope.core.launch_config import LaunchConfig
from graphscope.core.settings import find_nsys
from graphscope.workload.protocol import decode
from graphscope.workload.session import child_command, child_environment, raise_for

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
        *child_command(),
        "--batch",
        str(requests),
        str(responses),
    ]


def profile_requests(
    requests: list[dict], folder: Path, stem: str, timeout: float, answers: list[dict] | None = None
) -> dict[str, str]:
    """Run a batch of child requests under `nsys profile` and export the report: {"report", "sqlite"}.

    Any request that failed in the child is raised as the error the user would see without nsys; the
    children's answers are appended to `answers` when it is given.
    """
    nsys = nsys_or_explain()
    folder.mkdir(parents=True, exist_ok=True)
    base = folder / stem
    batch, responses = base.with_suffix(".requests.jsonl"), base.with_suffix(".responses.jsonl")
    batch.write_text("".join(json.dumps(r) + "\n" for r in [{"command": "hello"}, *requests, {"command": "shutdown"}]))
    try:
        _run(profile_command(nsys, base, batch, responses), timeout, "nsys profile")
        for line in responses.read_text().splitlines() if responses.exists() else []:
            answer = decode(line)
            if not answer.get("ok"):
                raise_for(answer["error"])
            if answers is not None:
                answers.append(answer["result"])
        report, sqlite = base.with_suffix(".nsys-rep"), base.with_suffix(".sqlite")
        _run([nsys, "export", "--type", "sqlite", "-f", "true", "-o", str(sqlite), str(report)], timeout, "nsys export")
    finally:
        batch.unlink(missing_ok=True)
        responses.unlink(missing_ok=True)
    return {"report": str(report), "sqlite": str(sqlite)}


def profile_modes(
    path: Path,
    modes: tuple[str, ...],
    reps: int,
    warmup: int,
    config: LaunchConfig | None,
    folder: Path,
    timeout: float,
) -> tuple[dict[str, dict[str, str]], dict[str, dict]]:
    """One profiled child per mode, NVTX-marked: ({mode: {"report": .nsys-rep, "sqlite": export}},
    {mode: the profiled measurement})."""
    load = {"command": "load", "path": str(path.resolve()), "config": config.to_json() if config else None}
    traces, measured = {}, {}
    for mode in modes:
        answers: list[dict] = []
        measure = {"command": "measure", "mode": mode, "reps": reps, "warmup": warmup, "nvtx": True}
        traces[mode] = profile_requests([load, measure], folder, f"{path.stem}_{mode}", timeout, answers)
        measured[mode] = next(a for a in answers if isinstance(a, dict) and "wall_ns" in a)
    return traces, measured


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
