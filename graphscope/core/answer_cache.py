"""Answers computed from a trace file, kept for the next time the same question is asked of the same
file (standard library only: a warm `summary` prints before NumPy is imported).

A file is known by its resolved path, size and modification time; an answer by the question's
arguments and the version of the code that made it. Answers live in the user's cache folder, beside
the trace cache (trace/cache.py), and share its on/off switch and its least-recently-used budget.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from graphscope import __version__
from graphscope.core.settings import cache_dir

NO_CACHE_ENV = "GRAPHSCOPE_NO_CACHE"


_writes_held = False


def enabled() -> bool:
    return os.environ.get(NO_CACHE_ENV, "") in ("", "0")


def hold_writes(hold: bool) -> None:
    """Whether this process holds the trace cache's writes until its command is done (trace/cache.py
    `start_held_writes`): the command line's commands that read a file once and answer."""
    global _writes_held
    _writes_held = hold


def writes_held() -> bool:
    return _writes_held


@functools.lru_cache(maxsize=8)
def code_version(*packages: str) -> str:
    """graphscope's version and the newest modification time of the named packages' sources: an answer
    or a cached column made by other code (an edited checkout, an upgrade) is never served."""
    root = Path(__file__).resolve().parent.parent
    newest = 0
    for package in packages:
        for source in (root / package).glob("*.py"):
            try:
                newest = max(newest, source.stat().st_mtime_ns)
            except OSError:
                continue
    return f"{__version__}+{newest}"


def file_key(path: Path, version: int | str) -> str:
    """A file as it is now: its resolved path, size and modification time, and a format version."""
    stat = path.stat()
    key = f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{version}"
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _answer_path(path: Path, question: dict[str, Any]) -> Path:
    asked = json.dumps(question, sort_keys=True, default=str)
    made_by = code_version("core", "trace", "analysis", "report")  # what a summary is computed and written by
    digest = hashlib.sha256(f"{made_by}|{asked}".encode()).hexdigest()[:24]
    return cache_dir() / "answers" / f"{file_key(path, 'answer')}-{digest}.txt"


def get(path: Path, question: dict[str, Any]) -> str | None:
    """The answer kept for this question of this file as it is now, or None."""
    if not enabled():
        return None
    try:
        found = _answer_path(path, question)
        text = found.read_text()
        os.utime(found)
        return text
    except OSError:
        return None


def put(path: Path, question: dict[str, Any], answer: str) -> None:
    """Keep an answer (written whole: a temporary file renamed into place); a failure is ignored."""
    if not enabled():
        return
    try:
        target = _answer_path(path, question)
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(answer)
        os.replace(temporary, target)
    except OSError:
        return
