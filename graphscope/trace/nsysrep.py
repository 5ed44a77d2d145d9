"""Turn a `.nsys-rep` report into an SQLite export with `nsys export`, when nsys is installed."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from graphscope.core.errors import BadInputError, Cancelled, GraphscopeError, ToolMissingError
from graphscope.core.progress import CancelToken, ProgressCallback, no_progress
from graphscope.core.settings import cache_dir, find_nsys


def export_to_sqlite(report: Path, progress: ProgressCallback = no_progress, cancel: CancelToken | None = None) -> Path:
    """Export `report` next to itself (or into the cache when that folder is read-only) and return the path.

    An existing export newer than the report is reused when it opens as an export; nsys gets
    `$GRAPHSCOPE_NSYS_TIMEOUT` seconds (default EXPORT_TIMEOUT_S); its output is checked before it is
    put in place, so a failed export never takes the report's place.
    """
    if not report.is_file():
        raise BadInputError(f"{report}: no such file")
    nsys = find_nsys()
    target = _target_for(report)
    if target.exists() and target.stat().st_mtime >= report.stat().st_mtime and _opens(target):
        return target
    if nsys is None:
        raise ToolMissingError(
            f"{report} is an Nsight Systems report and nsys was not found; run "
            f"`nsys export --type sqlite -o {target} {report}` and open the .sqlite, "
            "or put nsys on PATH (or set GRAPHSCOPE_NSYS)"
        )
    progress(0.0, f"exporting {report.name} with nsys")
    partial = target.with_suffix(".partial.sqlite")
    command = [nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "-o", str(partial), str(report)]
    deadline = time.monotonic() + _timeout()
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    ) as process:
        while True:
            try:
                output, _ = process.communicate(timeout=0.2)  # drains the pipe while it waits
                break
            except subprocess.TimeoutExpired:
                stop = None
                if cancel is not None and cancel.cancelled:
                    stop = Cancelled("export cancelled")
                elif time.monotonic() > deadline:
                    stop = BadInputError(
                        f"{report}: nsys export did not finish in {_timeout():.0f} s and was stopped "
                        "(set GRAPHSCOPE_NSYS_TIMEOUT for longer exports)"
                    )
                if stop is not None:
                    _kill_group(process)
                    process.communicate()
                    partial.unlink(missing_ok=True)
                    raise stop from None
    if process.returncode != 0 or not partial.exists():
        last = output.strip().splitlines()[-1] if output.strip() else f"exit status {process.returncode}"
        partial.unlink(missing_ok=True)
        raise BadInputError(f"{report}: nsys export failed: {last}")
    if not _opens(partial):
        partial.unlink(missing_ok=True)
        raise BadInputError(f"{report}: nsys export reported success but wrote no readable export")
    partial.replace(target)
    progress(1.0, "exported")
    return target


EXPORT_TIMEOUT_S = 900.0


def _kill_group(process: subprocess.Popen) -> None:
    """nsys and whatever it started (its own session): a killed parent alone leaves children holding
    the output pipe open."""
    try:
        os.killpg(process.pid, 9)
    except OSError:
        process.kill()


def _timeout() -> float:
    try:
        value = float(os.environ.get("GRAPHSCOPE_NSYS_TIMEOUT", EXPORT_TIMEOUT_S))
    except ValueError:
        return EXPORT_TIMEOUT_S
    return value if value > 0 else EXPORT_TIMEOUT_S


def _opens(path: Path) -> bool:
    """Does `path` open as an Nsight Systems export (SQLite with its tables)?"""
    from graphscope.trace.database import ExportDatabase

    try:
        with ExportDatabase(path) as db:
            return any(db.resolve_table(t) for t in ("StringIds", "CUPTI_ACTIVITY_KIND_KERNEL", "NVTX_EVENTS"))
    except (GraphscopeError, OSError):
        return False


def _target_for(report: Path) -> Path:
    beside = report.with_suffix(".sqlite")
    if _writable(report.parent):
        return beside
    return cache_dir() / f"{report.stem}-{report.stat().st_size}.sqlite"


def _writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK)
