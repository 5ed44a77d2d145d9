"""A set of rank traces analysed as one job: on this machine by a few worker processes (ranks/pool.py:
one per core, at most one per file, forked from a process with the readers imported), or on a running Dask scheduler
(`--scheduler ADDRESS`, or the DASK_SCHEDULER_ADDRESS Dask's own clients follow) whose workers may span
many machines. Each task reads one file into columns and returns a small row per rank it holds
(analysis/rank_steps.py; its steps' graph modes, ranks/modes.py), so a worker holds one file at a time;
the ranks are numbered and checked to be one job (ranks/identity.py) and the job's view is combined
from them (analysis/rank_skew.py). A file that cannot be read, or whose reading kills its worker twice,
comes back as its error: the other ranks are analysed all the same. On Dask, Dask's own logging is
silenced for the job; an interrupt closes the workers quietly (the CLI then says "graphscope: interrupted").
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from graphscope.core.errors import BadInputError, GraphscopeError, ToolMissingError
from graphscope.ranks.pool import cores, died, read_in_processes, sigint_held, worth_workers

TRACE_SUFFIXES = (".sqlite", ".nsys-rep", ".json", ".json.gz")
SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"  # Dask's own clients connect to it when set
_DASK_LOGGERS = ("distributed", "dask", "tornado", "asyncio")


def rank_files(items: list[Path], skipped: list[str] | None = None) -> list[Path]:
    """The trace files named, a folder standing for the traces directly in it (sorted by name). Entries
    of a folder with a trace's name that are no regular file (a folder, a FIFO, a socket, a device, a
    symlink that leads nowhere or loops) are skipped and named in `skipped`."""
    files: list[Path] = []
    skipped = skipped if skipped is not None else []
    for item in items:
        kind = _kind(item)
        if kind == "folder":
            found = []
            for entry in sorted(item.iterdir()):
                if not entry.name.lower().endswith(TRACE_SUFFIXES):
                    continue
                what = _kind(entry)
                if what == "file":
                    found.append(entry)
                else:
                    skipped.append(f"{entry}: {'a folder' if what == 'folder' else what}, not a trace file")
            if not found:
                raise BadInputError(
                    f"{item}: a folder with no traces (.sqlite, .nsys-rep, .json, .json.gz)"
                    + (f"; skipped: {', '.join(Path(s.split(': ')[0]).name for s in skipped[:3])}" if skipped else "")
                )
            files += found
        elif kind == "file":
            files.append(item)
        elif kind == "missing":
            raise BadInputError(f"{item}: no such file or folder")
        else:
            raise BadInputError(f"{item}: {kind}, not a trace file")
    unique: dict[Path, Path] = {}
    for file in files:  # a file named twice (or as itself and within its folder) is read once
        unique.setdefault(file.resolve(), file)
    return list(unique.values())


def _kind(path: Path) -> str:
    """'file', 'folder', 'missing', or what else the path is, in words."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "a symlink that leads nowhere" if path.is_symlink() else "missing"
    except OSError:  # ELOOP and the like
        return "a symlink loop" if path.is_symlink() else "unreadable"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


def rank_rows(path: str, step: str | None = None) -> list[dict[str, Any]]:
    """The ranks of one file, reduced (runs in a Dask worker): one row per process and GPU with GPU work
    (analysis/rank_steps.py), its times on the job's clock; or one row saying why it could not be read."""
    from graphscope.analysis.rank_steps import WHOLE, file_work, rank_steps, rank_units, step_candidates, unit_label
    from graphscope.analysis.summary import summarize
    from graphscope.core.process import keep_freed_memory
    from graphscope.ranks.identity import group_of, nsight_facts
    from graphscope.ranks.modes import file_modes
    from graphscope.trace import load_trace

    keep_freed_memory()  # mallopt: cheap to repeat, and a worker may be one graphscope did not start
    try:
        trace = load_trace(path)
        summary = summarize(trace, 5)
        facts = nsight_facts(Path(path))
        capture = trace.info.capture
        said = capture.get("rank") if "rank" in capture else facts["rank"]
        offset = facts["session_start_ns"] or 0  # an Nsight export counts from its session's start
        units = rank_units(trace)
        low, high = trace.span()
        gpus = {g["device"]: g["utilization"] for g in summary.get("gpu") or []}
        base = {
            "path": path,
            "said_rank": int(said) if said is not None and str(said).strip().isdigit() else None,
            "job": {"world_size": capture.get("world_size", facts["world_size"]), "group": group_of(capture)},
            "span": [low + offset, high + offset],
            "units": len(units),
            "events": len(trace.api) + len(trace.nvtx) + sum(len(t) for t in trace.gpu_tables().values()),
            "verdict": summary["launch"]["verdict"],
            "launch_bound": summary["launch"].get("launch_bound"),
            "graph_launches": summary["graphs"]["launches"],
            "graph_modes": file_modes(summary),  # per step: full graph, piecewise, eager, mixed (ranks/modes.py)
        }
        names, passing = step_candidates(trace, step)
        work = file_work(trace)
        rows = []
        for index, unit in enumerate(units):
            # a file of one rank is read whole (its ranges may come from another of its processes)
            options = {name: rank_steps(trace, name, unit if len(units) > 1 else WHOLE, work) for name in names}
            for steps in options.values():
                for key in ("start", "end", "range_end", "arrive"):
                    steps[key] = [t + offset for t in steps[key]]
            busy = [gpus[unit[1]]] if unit[1] in gpus else list(gpus.values())
            rows.append({
                **base,
                "step_options": options,
                "step_votes": passing,
                "unit": unit_label(trace, unit) if len(units) > 1 else None,
                "unit_index": index,
                "gpu_utilization": sum(busy) / len(busy) if busy else None,
            })  # fmt: skip
        return rows
    except GraphscopeError as exc:
        return [{"path": path, "error": exc.message}]
    except Exception as exc:  # a rank the reader cannot make sense of: named, the others go on
        return [{"path": path, "error": f"{type(exc).__name__}: {exc}".splitlines()[0]}]


@contextlib.contextmanager
def quiet_dask() -> Iterator[None]:
    """Dask's loggers silenced for the job (a killed worker, a closing cluster and an interrupt each log
    several lines of their own), restored after. Every one of them: distributed gives some sub-loggers
    levels of their own (`distributed.client` warns "Couldn't gather 1 keys" after a worker died)."""
    with contextlib.suppress(ImportError):
        import distributed  # noqa: F401 (its import configures its loggers, some with levels of their own)

    names = [n for n in list(logging.root.manager.loggerDict) if n.split(".")[0] in _DASK_LOGGERS]
    loggers = [logging.getLogger(name) for name in {*_DASK_LOGGERS, *names}]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


def client_for(scheduler: str) -> Any:
    """A Dask client of the running scheduler at `scheduler`."""
    try:
        from dask.distributed import Client
    except ImportError:
        raise ToolMissingError("a Dask scheduler is reached through Dask: pip install -e '.[ranks]'") from None
    try:
        return Client(scheduler, timeout="10s")
    except (OSError, TimeoutError) as exc:
        raise BadInputError(f"cannot reach the Dask scheduler at {scheduler}: {exc}".splitlines()[0]) from None


def _close(client: Any) -> None:
    with contextlib.suppress(Exception):
        client.close(timeout=5)


def _gather(client: Any, paths: list[str], step: str | None, reader: Callable) -> list[dict[str, Any]]:
    """Every file's rows as they finish; a file whose task failed (its worker killed as often as the
    scheduler's `allowed-failures` allows) comes back as one error row naming it."""
    from dask.distributed import as_completed

    futures = client.map(reader, paths, step=step, pure=False)
    path_of = {f.key: p for f, p in zip(futures, paths)}
    rows: list[dict[str, Any]] = []
    for future in as_completed(futures):
        try:  # (a finished result held by a worker that died since is computed again: result() waits for it)
            rows += future.result()
        except Exception as exc:  # the task's own failure, reported for its file
            why = (
                died(None)
                if type(exc).__name__ == "KilledWorker"
                else f"{type(exc).__name__}: {exc}".splitlines()[0]
            )
            rows.append({"path": path_of[future.key], "error": why})
    return rows


def analyse_job(
    items: list[Path],
    step: str | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    reader: Callable[[str, str | None], list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """The job's cross-rank view, with how it was computed (scheduler, workers, seconds). `reader` reads
    one file in a worker (rank_rows; another importable function for tests). Without a scheduler (here
    or in DASK_SCHEDULER_ADDRESS) the files are read by `workers` local processes (default: one per
    core, at most one per file; none, the files read here one after another, when their estimated time
    would not repay starting them: ranks/pool.worth_workers)."""
    skipped: list[str] = []
    files = [str(p) for p in rank_files(items, skipped)]
    started = time.perf_counter()
    scheduler = scheduler or os.environ.get(SCHEDULER_ENV) or None
    if scheduler:
        rows, engine = _on_dask(scheduler, files, step, reader or rank_rows)
    else:
        count = max(1, min(workers or cores(), len(files)))
        if workers is None and reader is None and not worth_workers(files, count):
            rows = [row for path in files for row in rank_rows(path, step)]  # small: no worker pays off
            engine = {"scheduler": "in-process", "workers": 1}
        else:
            rows = read_in_processes(files, step, reader or rank_rows, count)
            engine = {"scheduler": "local", "workers": count}
    result = job_of_rows(rows)
    result["skipped"] = skipped
    result["engine"] = {**engine, "files": len(files), "seconds": time.perf_counter() - started}
    return result


def _on_dask(scheduler: str, files: list[str], step: str | None, reader: Callable) -> tuple[list, dict[str, Any]]:
    """Every file's rows, read by the workers of the running Dask scheduler at `scheduler`."""
    client = None
    with quiet_dask():
        try:
            with sigint_held():
                client = client_for(scheduler)
            engine = {"scheduler": scheduler, "workers": len(client.scheduler_info()["workers"])}
            rows = _gather(client, files, step, reader)
        finally:
            if client is not None:
                _close(client)
    return rows, engine


def job_of_rows(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The job from every file's rows: unreadable files named, the rest numbered, checked to be one job
    (else refused), cut by one family of step ranges and combined."""
    from graphscope.analysis.rank_skew import combine
    from graphscope.ranks.identity import assign_ranks
    from graphscope.ranks.modes import job_modes

    problems = [f"{r['path']}: {r['error'].removeprefix(r['path'] + ': ')}" for r in rows if r.get("error")]
    good = [r for r in rows if not r.get("error")]
    _, stepless = choose_steps(good)
    world = assign_ranks(good)
    result = combine(good, world)
    result["graph_modes"] = job_modes(good, result["ranks"])
    result["problems"] = problems + stepless + result["problems"]
    result.update(_missing(good, world))
    return result


def analyse_serially(items: list[Path], step: str | None = None) -> dict[str, Any]:
    """The same job in this process, one file after another (no Dask): for tests and benchmarks."""
    skipped: list[str] = []
    files = rank_files(items, skipped)
    result = job_of_rows([row for path in files for row in rank_rows(str(path), step)])
    result["skipped"] = skipped
    return result


def choose_steps(rows: list[dict[str, Any]]) -> tuple[str | None, list[str]]:
    """Cut every rank by the same ranges: of the families at least half the ranks hold, the one that
    passes the step rule in the most files (ties: the one most files chose first, then the most held).
    Each row gets that family's steps; the rows without any of its ranges are taken out (a launcher
    process that copied a few bytes is no rank), each named in the lines returned. (None, []) when no
    family qualifies: every row keeps no steps."""
    from collections import Counter

    def holds(r: dict[str, Any], name: str) -> bool:
        return bool(r["step_options"].get(name, {}).get("start"))

    votes = Counter(name for r in rows for name in r["step_votes"])
    firsts = Counter(r["step_votes"][0] for r in rows if r["step_votes"])
    held = Counter(name for r in rows for name in r["step_options"] if holds(r, name))
    ranked = sorted((n for n in votes if 2 * held[n] >= len(rows)), key=lambda n: (-votes[n], -firsts[n], -held[n], n))
    name = ranked[0] if ranked else None
    left_out = []
    for r in list(rows):
        if name is not None and not holds(r, name):
            where = f" ({r['unit']})" if r.get("unit") else ""
            left_out.append(f"{r['path']}{where}: no {name!r} ranges: left out")
            rows.remove(r)
            continue
        r.pop("step_votes", None)
        steps = r.pop("step_options").get(name) if name else None
        r.update(steps or _NO_STEPS)
        r["step_name"] = name
    return name, left_out


_NO_STEPS = {"start": [], "end": [], "range_end": [], "arrive": [], "compute_busy_ns": [], "host_ns": [],
             "comm_ns": [], "gpu_busy_ns": [], "communication_kernels": 0}  # fmt: skip


def _missing(rows: list[dict[str, Any]], world: int | None, most: int = 64) -> dict[str, Any]:
    """The ranks of the world with no file: how many, and the first `most` of them (never a set of the
    whole world: it may be a million)."""
    if not world:
        return {"missing_ranks": [], "missing_count": 0}
    seen = sorted({r["rank"] for r in rows})
    first: list[int] = []
    expect = 0
    for rank in [*seen, world]:
        while expect < rank and len(first) < most:
            first.append(expect)
            expect += 1
        expect = rank + 1
    return {"missing_ranks": first, "missing_count": world - len(seen)}
