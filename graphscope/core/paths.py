"""Output files: never one of the command's own inputs, and written whole or not at all.

`refuse_inputs` compares an output with every input by resolved path (symlinks followed) and, where both
exist, by device and inode (a hard link, or a bind mount, is the same file under another name).
`replacing` writes beside the output (a hidden temporary in the same folder), flushes it to disk and
renames it over the output only once complete: a full disk, a crash or a refused write leaves the previous
file as it was, and a reader never sees half a file.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from graphscope.core.errors import BadInputError
from graphscope.core.text import STREAM_ERRORS, shown_path

PathLike = str | os.PathLike[str]


def same_file(a: PathLike, b: PathLike) -> bool:
    """Do `a` and `b` name the same file: one resolved path, or one device and inode (hard links)?"""
    try:
        if os.path.realpath(a) == os.path.realpath(b):
            return True
        return os.path.samestat(os.stat(a), os.stat(b))
    except (OSError, ValueError):  # one of them does not exist (or a name with a NUL): not the same file
        return False


def expand_inputs(paths: Iterable[PathLike], folder_files: tuple[str, ...] = ()) -> list[Path]:
    """The files a command reads: each path, and for a folder (a job's rank traces) its files whose names
    end in one of `folder_files` (a report written into the folder beside them is not one of them)."""
    found: list[Path] = []
    for path in paths:
        path = Path(path)
        found.append(path)
        with contextlib.suppress(OSError):
            if folder_files and path.is_dir():
                found.extend(p for p in path.iterdir() if p.name.endswith(folder_files))
    return found


def refuse_inputs(
    output: PathLike | None, inputs: Iterable[PathLike | None], option: str, folder_files: tuple[str, ...] = ()
) -> None:
    """Refuse (one line, exit 2) an output that is one of the command's inputs: writing it would destroy
    what is being read. `option` names the output's option in the message (`-o`, `--screenshot`); an
    output or input of None (an option not given) is left out; `folder_files` as in `expand_inputs`."""
    if output is None:
        return
    for source in expand_inputs((p for p in inputs if p is not None), folder_files):
        if same_file(output, source):
            named = os.path.abspath(output) == os.path.abspath(source)
            alias = "" if named else f" (the same file as {shown_path(source)})"
            raise BadInputError(
                f"{option} {shown_path(output)}: is one of the inputs{alias}; writing it would destroy "
                "it, so name another file"
            )


def _target(path: Path) -> Path:
    """Where the bytes go: through a symlink to the file it names (the link stays a link)."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


@contextlib.contextmanager
def replacing(path: PathLike, what: str = "the file") -> Iterator[Path]:
    """Yield a temporary path beside `path` to write; once the block ends without error the temporary is
    flushed to disk and renamed over `path` (keeping an existing file's permissions). On any error it is
    removed and the old file left whole; an OSError becomes one line naming `path`. A `path` that is a
    device or a pipe (/dev/stdout, /dev/null) is written directly: it cannot be renamed over."""
    path = Path(path)
    try:
        existing = os.stat(path)
    except OSError:
        existing = None
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        try:
            yield path
        except OSError as exc:
            raise BadInputError(f"{shown_path(path)}: cannot write {what} ({exc.strerror or exc})") from None
        return
    target = _target(path)
    plain = "".join(c if c.isascii() and c.isprintable() else "_" for c in target.name[:200])  # NAME_MAX: 255
    partial = target.with_name(f".{plain}.{os.getpid()}.partial")
    try:
        try:
            yield partial
            with open(partial, "rb+") as handle:  # what was written reaches the disk before it takes the name
                os.fsync(handle.fileno())
            if existing is not None:
                os.chmod(partial, stat.S_IMODE(existing.st_mode))
            os.replace(partial, target)
            _sync_folder(target.parent)
        except OSError as exc:
            raise BadInputError(f"{shown_path(path)}: cannot write {what} ({exc.strerror or exc})") from None
    finally:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)


def write_replacing(path: PathLike, data: str | bytes, what: str = "the file") -> None:
    """Write `data` (text as UTF-8) to `path` whole or not at all (see `replacing`)."""
    raw = data.encode("utf-8", STREAM_ERRORS) if isinstance(data, str) else data  # a name's raw byte as \\xff
    with replacing(path, what) as partial, open(partial, "wb") as out:
        write_all(out.fileno(), raw)


def write_all(fd: int, data: bytes) -> None:
    """os.write until every byte is out (a short write is not an error; ENOSPC is)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _sync_folder(folder: Path) -> None:
    """The rename itself reaches the disk (where the system lets a folder be opened)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


CONDITIONALS_SIDECAR = ".conditionals.json"


def sidecar_of(trace_path: str | Path) -> Path:
    """Where graphscope leaves the conditional nodes' iteration counts of a trace it wrote
    (analysis/conditional_trace.py): beside it, `TRACE.conditionals.json`."""
    path = Path(trace_path)
    return path.with_name(path.name + CONDITIONALS_SIDECAR)
