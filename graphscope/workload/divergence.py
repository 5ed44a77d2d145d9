"""`graphscope diverge WORKLOAD` from the parent's side: one workload child, asked to capture the step as
`graphscope run` does (right after an eager step), search the graph (workload/child/diverge_search.py) and,
with `audit`, diff it against a capture at a second state (workload/child/diverge_audit.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphscope.core.launch_config import LaunchConfig
from graphscope.core.progress import ProgressCallback, no_progress
from graphscope.workload.session import DEFAULT_TIMEOUT_S, WorkloadSession


def diverge_workload(
    path: Path,
    audit: bool = True,
    timeout: float = DEFAULT_TIMEOUT_S,
    config: LaunchConfig | None = None,
    progress: ProgressCallback = no_progress,
) -> dict[str, Any]:
    """The search's answer (and the audit's under "audit"), with the workload's path."""
    progress(0.0, f"loading {Path(path).name} in a child process")
    with WorkloadSession(Path(path), config, timeout) as session:
        progress(0.3, "capturing the step and searching its graph")
        result = session.request("diverge")
        if audit:
            progress(0.7, "capturing it again at a second state: the audit")
            result["audit"] = session.request("audit")
    result["workload"] = str(Path(path).resolve())
    progress(1.0, "done")
    return result


def diverge_in(session: WorkloadSession) -> dict[str, Any]:
    """The search in a session that already measured the graph (`run`, when outputs differ); a failure
    of the search itself is said in its answer, never raised over the run's own result."""
    from graphscope.core.errors import WorkloadError

    try:
        return session.request("diverge")
    except WorkloadError as exc:
        return {"error": exc.message}
