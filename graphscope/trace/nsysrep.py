"""Turn a `.nsys-rep` report into an SQLite export with `nsys export`, when nsys is installed."""

from __future__ import annotations

import subprocess
from pathlib import Path

from graphscope.core.errors import BadInputError, Cancelled, ToolMissingError
from graphscope.core.progress import CancelToken, ProgressCallback, no_progress
from graphscope.core.settings import cache_dir, find_nsys


def export_to_sqlite(report: Path, progress: ProgressCallback = no_progress, cancel: CancelToken | None = None) -> Path:
    """Export `report` next to itself (or into the cache when that folder is read-only) and return the path.

    An existing export newer than the report is reused.
    """
    if not report.is_file():
        raise BadInputError(f"{report}: no such file")
    nsys = find_nsys()
    target = _target_for(report)
    if target.exists() and target.stat().st_mtime >= report.stat().st_mtime:
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
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as process:
        while True:
            try:
                output, _ = process.communicate(timeout=0.2)  # drains the pipe while it waits
                break
            except subprocess.TimeoutExpired:
                if cancel is not None and cancel.cancelled:
                    process.kill()
                    process.communicate()
                    partial.unlink(missing_ok=True)
                    raise Cancelled("export cancelled") from None
    if process.returncode != 0 or not partial.exists():
        last = output.strip().splitlines()[-1] if output.strip() else f"exit status {process.returncode}"
        partial.unlink(missing_ok=True)
        raise BadInputError(f"{report}: nsys export failed: {last}")
    partial.replace(target)
    progress(1.0, "exported")
    return target


def _target_for(report: Path) -> Path:
    beside = report.with_suffix(".sqlite")
    if _writable(report.parent):
        return beside
    return cache_dir() / f"{report.stem}-{report.stat().st_size}.sqlite"


def _writable(folder: Path) -> bool:
    import os

    return os.access(folder, os.W_OK)
