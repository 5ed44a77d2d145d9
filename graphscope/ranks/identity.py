"""Which rank of which job a trace file is, and whether a set of files can be one job.

A rank is read from the file's distributed metadata first (PyTorch's `distributedInfo` rank and world
size; in an Nsight export, the launched process's environment where nsys kept it: RANK / WORLD_SIZE or
the MPI and Slurm equivalents), else from a rank-like name (`rank0`, `rank_1`, `rank-2`, `-r3`, `_r3`);
a number elsewhere in a name (`2gpu`, `report2`) is not a rank. A file holding several ranks (GPU work of
several processes or GPUs) numbers them itself (ranks/job.py). An Nsight export's event times count from
its session's start: its ranks are put on the wall clock by the session's UTC start, so exports of one
job recorded by separate nsys sessions line up.
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

MAX_WORLD_SIZE = 1 << 20  # the largest world size taken as real: 1,048,576 ranks (about 10x today's largest jobs)
_RANK_WORD = re.compile(r"(?<![a-z0-9])rank[_-]?(\d+)(?![0-9])", re.IGNORECASE)
_RANK_LETTER = re.compile(r"(?:^|[-_.])r(\d+)(?=$|[-_.])", re.IGNORECASE)
_SUFFIXES = (".pt.trace.json.gz", ".pt.trace.json", ".json.gz", ".json", ".sqlite", ".nsys-rep")
RANK_VARIABLES = ("RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID", "MV2_COMM_WORLD_RANK")
WORLD_VARIABLES = ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", "MV2_COMM_WORLD_SIZE")


def name_rank(name: str) -> int | None:
    """The rank a file name states (`rank3`, `rank_3`, `rank-3`, `-r3`, `_r3`), or None: no rank-like
    token, or tokens naming different ranks."""
    stem = name
    for suffix in _SUFFIXES:
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    found = {int(n) for n in _RANK_WORD.findall(stem)} or {int(n) for n in _RANK_LETTER.findall(stem)}
    return found.pop() if len(found) == 1 else None


def _integer(value: Any) -> int | None:
    text = str(value).strip() if value is not None else ""
    return int(text) if text.isdigit() and len(text) <= 19 else None


def nsight_facts(path: Path) -> dict[str, Any]:
    """What an Nsight SQLite export says about its rank and clock: {'session_start_ns', 'rank',
    'world_size'} (None where it does not say). Read-only; anything else (.nsys-rep, JSON) says nothing."""
    facts: dict[str, Any] = {"session_start_ns": None, "rank": None, "world_size": None}
    if path.suffix.lower() != ".sqlite":
        return facts
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except (sqlite3.Error, ValueError):
        return facts
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "TARGET_INFO_SESSION_START_TIME" in tables:
            row = db.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1").fetchone()
            facts["session_start_ns"] = _integer(row[0]) if row else None
        if "META_DATA_CAPTURE" in tables:
            env: dict[str, set[str]] = {}
            for (value,) in db.execute(
                "SELECT value FROM META_DATA_CAPTURE WHERE name LIKE '%:ENVIRONMENT_VARIABLE' AND value LIKE '%=%'"
            ):
                key, _, said = str(value).partition("=")
                env.setdefault(key.strip(), set()).add(said.strip())
            for fact, names in (("rank", RANK_VARIABLES), ("world_size", WORLD_VARIABLES)):
                values = next((env[n] for n in names if n in env), set())
                facts[fact] = _integer(next(iter(values))) if len(values) == 1 else None
    except sqlite3.Error:
        pass
    finally:
        db.close()
    return facts


def world_size_of(value: Any, path: str) -> int | None:
    """A stated world size as an integer; absurd ones refused (one line, nothing allocated per rank)."""
    from graphscope.core.errors import BadInputError

    if value is None or str(value).strip() == "":
        return None
    size = _integer(value)
    if size is None or not 1 <= size <= MAX_WORLD_SIZE:
        shown = str(value)[:40]
        raise BadInputError(f"{path}: world size {shown!r} is not a job's (1 to {MAX_WORLD_SIZE:,} ranks)")
    return size


CLOCK_GAP_FLOOR_NS = 1_000_000_000  # ranks of one job overlap in time; files further apart than this (and
# than the longest file's span) come from different runs, or from clocks that cannot be lined up


def _files(paths: list[str], most: int = 3) -> str:
    names = sorted({Path(p).name for p in paths})
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


def _natural(name: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def assign_ranks(rows: list[dict[str, Any]]) -> int | None:
    """Number the rows' ranks in place (`rank`) and return the job's world size (None where none is stated
    or where files hold several ranks, numbered file by file); files that cannot be one
    job are refused with one line naming them (BadInputError): different world sizes or process groups,
    a file without a rank, two files of one rank, a rank outside the world, or events far apart in time."""
    from graphscope.core.errors import BadInputError

    if not rows:
        return None
    sizes: dict[int, list[str]] = {}
    for r in rows:
        size = world_size_of(r["job"].get("world_size"), r["path"])
        if size is not None:
            sizes.setdefault(size, []).append(r["path"])
    if len(sizes) > 1:
        said = "; ".join(f"world size {s} ({_files(p)})" for s, p in sorted(sizes.items()))
        raise BadInputError(f"not one job: {said}")
    groups: dict[str, list[str]] = {}
    for r in rows:
        if r["job"].get("group") is not None:
            groups.setdefault(str(r["job"]["group"]), []).append(r["path"])
    if len(groups) > 1:
        said = "; ".join(f"process group {g[:60]!r} ({_files(p)})" for g, p in sorted(groups.items()))
        raise BadInputError(f"not one job: {said}")
    world = next(iter(sizes), None)
    _check_clocks(rows)
    per_file = Counter(r["path"] for r in rows)
    if any(count > 1 for count in per_file.values()):
        _number_file_by_file(rows)
        return None  # a stated world size counts processes, these ranks are processes' GPUs: no missing ranks
    else:
        nameless = [r["path"] for r in rows if r.get("said_rank") is None and name_rank(Path(r["path"]).name) is None]
        if nameless:
            raise BadInputError(
                f"{_files(nameless)}: no rank in the trace's metadata (distributedInfo; RANK in an Nsight "
                "export's environment) or in the file's name (rank0, rank_1, rank-2, -r3)"
            )
        seen: dict[int, str] = {}
        for r in rows:
            rank = r["said_rank"] if r.get("said_rank") is not None else name_rank(Path(r["path"]).name)
            if rank in seen:
                raise BadInputError(f"{_files([seen[rank], r['path']])}: both are rank {rank}: not one job")
            seen[rank] = r["path"]
            r["rank"] = rank
    outside = [r for r in rows if world is not None and r["rank"] >= world]
    if outside:
        raise BadInputError(f"{_files([r['path'] for r in outside])}: rank {outside[0]['rank']} of world size {world}")
    return world


def _number_file_by_file(rows: list[dict[str, Any]]) -> None:
    """Files holding several ranks: ranks numbered file after file (by each file's stated or named rank,
    else its name in natural order), a file's own ranks by process id then GPU."""

    def order(r: dict[str, Any]) -> tuple:
        stated = r.get("said_rank") if r.get("said_rank") is not None else name_rank(Path(r["path"]).name)
        return (stated if stated is not None else -1, _natural(Path(r["path"]).name), r.get("unit_index", 0))

    for number, r in enumerate(sorted(rows, key=order)):
        r["rank"] = number


def _check_clocks(rows: list[dict[str, Any]]) -> None:
    """Refuse files whose events lie far apart: different runs, or clocks that do not line up."""
    from graphscope.core.errors import BadInputError

    spans = sorted({(r["span"][0], r["span"][1], r["path"]) for r in rows if r.get("span")})
    if len(spans) < 2:
        return
    tolerance = max(CLOCK_GAP_FLOOR_NS, max(hi - lo for lo, hi, _ in spans))
    reach, reach_path = spans[0][1], spans[0][2]
    for lo, hi, path in spans[1:]:
        if lo - reach > tolerance:
            raise BadInputError(
                f"{_files([reach_path, path])}: their events lie {_gap(lo - reach)} apart (different runs, "
                "or clocks that do not line up): not one job"
            )
        if hi > reach:
            reach, reach_path = hi, path


def _gap(ns: int) -> str:
    from graphscope.core.units import format_ns

    hours = ns / 3.6e12
    return f"{hours / 24:,.1f} days" if hours >= 48 else f"{hours:,.1f} hours" if hours >= 1 else format_ns(ns)


def _is_default(group: dict) -> bool:
    return group.get("pg_desc") == "default_pg" or str(group.get("pg_name")) == "0"


def group_of(capture: dict[str, str]) -> str | None:
    """The job's process group as the trace states it: PyTorch's default group in `pg_config` (a list of
    every group the rank belongs to, which differs between ranks of one job in their subgroups), else
    the whole value, else the backend."""
    import ast

    said = capture.get("pg_config")
    if said and len(said) < 100_000:
        try:
            groups = ast.literal_eval(said)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return said
        if isinstance(groups, list):
            default = [g for g in groups if isinstance(g, dict) and _is_default(g)]
            return repr(default[0]) if default else None
    if said:
        return said
    return capture.get("backend")
