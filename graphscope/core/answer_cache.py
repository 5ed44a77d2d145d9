"""Answers computed from a trace file, kept for the next time the same question is asked of the same
file (standard library only: a warm `summary` prints before NumPy is imported).

A file is known by its content's identity (core/cache_files.py: path, device, inode, size, times in
nanoseconds and a hash of its first and last blocks); an answer by the question's arguments and the
version of the code that made it. An answer carries a digest of its text: one damaged is removed.
Answers live in the user's cache folder, beside the trace cache (trace/cache.py), and share its on/off
switch and its least-recently-used budget.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from graphscope import __version__
from graphscope.core.cache_files import DamagedEntry, identity, make_private_folder, read_checked, write_checked
from graphscope.core.settings import cache_subfolder

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


_writers: list[tuple[Callable[[], None], Callable[[], None]]] = []


def register_writer(start_held: Callable[[], None], wait: Callable[[], None]) -> None:
    """A cache that holds its writes while a command runs (trace/cache.py, once imported): `start_held`
    begins them once the command is done, `wait` lets them finish before the process leaves."""
    _writers.append((start_held, wait))


def release_writes() -> None:
    """The command is done: writes are no longer held, and those held start (in each registered cache)."""
    hold_writes(False)
    for start_held, _ in _writers:
        start_held()


def wait_for_writers() -> None:
    """Let every registered cache's writers finish (the process is about to leave)."""
    for _, wait in _writers:
        wait()


@functools.lru_cache(maxsize=8)
def code_version(*packages: str) -> str:
    """graphscope's version and the newest modification time of the named packages' sources: an answer
    or a cached column made by other code (an edited checkout, an upgrade) is never served."""
    root = Path(__file__).resolve().parent.parent
    newest = 0
    for package in packages:
        for source in [*(root / package).glob("*.py"), *(root / package).glob("*.json")]:
            try:
                newest = max(newest, source.stat().st_mtime_ns)
            except OSError:
                continue
    return f"{__version__}+{newest}"


LAUNCH_MODEL_FILE = "launch_cost.json"  # core/launch_cost.USER_FILE, in the data folder


def _launch_model_stamp() -> str:
    """The user's measured launch-cost model as it is now (a digest of its bytes: a few hundred, so a
    rewrite of the same size within one mtime tick is noticed too), or '' without one."""
    import hashlib  # loads OpenSSL: only where a cache is used (cache_files.identity)

    from graphscope.core.settings import data_dir

    try:
        content = (data_dir() / LAUNCH_MODEL_FILE).read_bytes()
    except OSError:
        return ""
    return "+launch" + hashlib.blake2b(content, digest_size=8).hexdigest()


def file_key(path: Path, version: int | str) -> str:
    """A file's content as it is now (cache_files.identity: device, inode, size, times in ns, a hash of
    its first and last blocks) and a format version."""
    return identity(path, version)


_asked: dict[tuple[str, str], Path] = {}  # (file, question) -> the answer's path when `get` was asked


def _answer_path(path: Path, question: dict[str, Any]) -> Path:
    import hashlib

    asked = json.dumps(question, sort_keys=True, default=str)
    made_by = code_version("core", "trace", "analysis", "text", "cli")  # what a summary is computed and written by
    made_by += _launch_model_stamp()  # the user's launch-cost model prices graph launches (core/launch_cost.py)
    digest = hashlib.sha256(f"{made_by}|{asked}".encode()).hexdigest()[:24]
    return cache_subfolder("answers") / f"{file_key(path, 'answer')}-{digest}.txt"


def get(path: Path, question: dict[str, Any]) -> str | None:
    """The answer kept for this question of this file as it is now, or None. An answer that does not
    match its digest (truncated, edited, empty) is removed, never served."""
    if not enabled():
        return None
    try:
        found = _answer_path(path, question)
    except OSError:
        return None
    _asked[str(path), json.dumps(question, sort_keys=True, default=str)] = found
    try:
        text = read_checked(found)
        if not text.strip():
            raise DamagedEntry(f"{found}: empty")
    except FileNotFoundError:
        return None
    except (OSError, ValueError):  # damaged (or not a regular file): removed, and the answer computed again
        _remove(found)
        return None
    with contextlib.suppress(OSError):
        os.utime(found, follow_symlinks=False)
    return text


def put(path: Path, question: dict[str, Any], answer: str) -> None:
    """Keep an answer (written beside and renamed, with its digest); a failure is ignored. Not kept when
    the file changed since `get` was asked: the answer may be of the file as it was."""
    if not enabled() or not answer.strip():
        return
    try:
        target = _answer_path(path, question)
        asked = _asked.pop((str(path), json.dumps(question, sort_keys=True, default=str)), target)
        if asked != target:
            return
        make_private_folder(target.parent)
        write_checked(target, answer)
    except OSError:
        return


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
