"""Turn a `.nsys-rep` report into an SQLite export with `nsys export`, when nsys is installed.

Where the export goes:
- beside a report in a folder the user can write (`run.sqlite`, as nsys names it), unless a file of that
  name is there that graphscope did not make;
- otherwise in the cache folder, `exports/<report's identity>/export.sqlite`, evicted with the rest of
  the cache (trace/cache.py `evict`);
- with caching off (`--no-cache`), into a temporary folder removed when the process exits: nothing is
  written beside the report or in the cache.
A record in the cache folder (`exports/<report's identity>/export.json`) holds where the export was made
and its own identity (core/cache_files.py `identity`), so an export is used again only while both the
report and the export are unchanged: a report fetched with `cp -p` over an older one, or an export edited
or damaged since, is exported again. Every export is written in a folder of its own beside its place (two
opens of one report never share a file), checked, and renamed into place.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from graphscope.core.answer_cache import enabled, file_key
from graphscope.core.cache_files import make_private_folder, read_checked, temporary_beside, write_checked
from graphscope.core.errors import BadInputError, Cancelled, GraphscopeError, ToolMissingError
from graphscope.core.progress import CancelToken, ProgressCallback, no_progress
from graphscope.core.settings import cache_subfolder, find_nsys

REPORT_VERSION = "nsys-export:1"


def export_to_sqlite(report: Path, progress: ProgressCallback = no_progress, cancel: CancelToken | None = None) -> Path:
    """The SQLite export of `report`: one made before for the report as it is now, or a new one (where:
    the module's docstring). nsys gets `$GRAPHSCOPE_NSYS_TIMEOUT` seconds (default EXPORT_TIMEOUT_S); its
    output is checked before it is put in place, so a failed export never takes another's place."""
    if not report.is_file():
        raise BadInputError(f"{report}: no such file")
    record = _record_folder(report)
    found = _made_before(report, record)
    if found is not None:
        return found
    nsys = find_nsys()
    target = _target_for(report, record)
    if nsys is None:
        raise ToolMissingError(
            f"{report} is an Nsight Systems report and nsys was not found; run "
            f"`nsys export --type sqlite -o {report.with_suffix('.sqlite')} {report}` and open the .sqlite, "
            "or put nsys on PATH (or set GRAPHSCOPE_NSYS)"
        )
    progress(0.0, f"exporting {report.name} with nsys")
    work = temporary_beside(target).with_suffix(".partial")  # a folder of this export's own, beside the target:
    work.mkdir(mode=0o700)  # whatever nsys writes there goes with it
    try:
        partial = work / "export.sqlite"
        _run_nsys(nsys, report, partial, cancel)
        partial.replace(target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if record is not None:
        _remember(report, record, target)
    progress(1.0, "exported")
    return target


def _run_nsys(nsys: str, report: Path, partial: Path, cancel: CancelToken | None) -> None:
    """`nsys export` of `report` into `partial`, stopped when cancelled or past the time limit; raises
    unless it wrote a readable export."""
    command = [nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "-o", str(partial), str(report)]
    deadline = time.monotonic() + _timeout()
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
        start_new_session=True,
    ) as process:  # fmt: skip
        while True:
            try:
                output, _ = process.communicate(timeout=0.2)  # drains the pipe while it waits
                break
            except subprocess.TimeoutExpired:
                stop: Exception | None = None
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
                    raise stop from None
    if process.returncode != 0 or not partial.exists():
        last = output.strip().splitlines()[-1] if output.strip() else f"exit status {process.returncode}"
        raise BadInputError(f"{report}: nsys export failed: {last[:300]}")
    if not _opens(partial):
        raise BadInputError(f"{report}: nsys export reported success but wrote no readable export")


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


def _record_folder(report: Path) -> Path | None:
    """The cache folder's place for this report as it is now; None with caching off or no cache folder."""
    if not enabled():
        return None
    try:
        return cache_subfolder("exports") / file_key(report, REPORT_VERSION)
    except OSError:
        return None


def _made_before(report: Path, record: Path | None) -> Path | None:
    """An export made before from the report as it is now, unchanged since (its identity is the one noted
    when it was made), that opens as an export; a cached one that is not is removed."""
    if record is None:
        return None
    cached = record / "export.sqlite"
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        made = json.loads(read_checked(record / "export.json"))
        places = {
            str(report.resolve().with_suffix(".sqlite")): report.with_suffix(".sqlite"),
            str(cached.resolve()): cached,
        }
        path = places.get(made["path"])
        if path is not None and file_key(path, "export") == made["identity"] and _opens(path):
            with contextlib.suppress(OSError):
                (record / "used").touch()  # least recently used (the export's own times are its identity)
            return path
    with contextlib.suppress(OSError):
        cached.unlink(missing_ok=True)
    return None


def _target_for(report: Path, record: Path | None) -> Path:
    """Beside a report the user can write, unless a file graphscope did not make has that name (or
    caching is off: nothing is written beside it then); else in the cache folder, or a temporary one."""
    beside = report.with_suffix(".sqlite")
    if record is not None and _writable(report.parent) and not os.path.lexists(beside):
        return beside
    if record is not None and _writable(report.parent) and _made_by_us(report, beside):
        return beside
    if record is not None:
        try:
            make_private_folder(record)
            return record / "export.sqlite"
        except OSError:
            pass
    folder = Path(tempfile.mkdtemp(prefix="graphscope-export-"))  # 0700; gone when the process exits
    atexit.register(shutil.rmtree, folder, True)
    return folder / f"{report.stem}.sqlite"


def _made_by_us(report: Path, beside: Path) -> bool:
    """Did graphscope make the export beside the report (for this or an earlier version of it)?"""
    records = cache_subfolder("exports")
    for found in records.glob("*/export.json") if records.is_dir() else ():
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            made = json.loads(read_checked(found))
            if Path(made["path"]) == beside.resolve() and file_key(beside, "export") == made["identity"]:
                return True
    return False


def _remember(report: Path, record: Path, target: Path) -> None:
    """Note which export was made for the report as it is now (its own identity with it)."""
    with contextlib.suppress(OSError):
        make_private_folder(record)
        made = {"path": str(target.resolve()), "identity": file_key(target, "export")}
        write_checked(record / "export.json", json.dumps(made))
        (record / "used").touch()


def _writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK)
