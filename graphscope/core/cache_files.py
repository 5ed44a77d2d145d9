"""The cache's files: what identifies a trace file's content, and how cache files are written and read
(standard library only: a warm `summary` reads its kept answer before NumPy is imported).

- A file's identity is everything that changes when its content may have: the resolved path, device,
  inode, size, modification and status-change times in nanoseconds (ctime cannot be set back from user
  space: `touch -r`, `cp -p`, `rsync -a` and `tar x` set the modification time, never ctime) and a hash of
  its first and last 64 KiB (SQLite's header, with its file change counter at offset 24, is in the first
  block; a JSON trace's opening and closing events in the two). Measured: 0.05 ms a file.
- Every cache file is written beside its final name (a temporary name no other writer uses, created
  exclusively, never through a symlink, mode 0600), flushed to disk and renamed into place: a reader sees
  the whole file or none, even after a crash.
- Every cache file is opened without following symlinks (O_NOFOLLOW) and must be a regular file.
- Small files (answers, manifests) carry a BLAKE2b digest of their contents on their first line; one
  that does not match is damage, never served.
"""

from __future__ import annotations

import itertools
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

BLOCK = 64 << 10
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_counter = itertools.count()


class DamagedEntry(ValueError):
    """A cache file that is not what graphscope wrote (truncated, edited, a symlink, not a regular file)."""


def identity(path: Path, version: int | str) -> str:
    """The key of `path`'s content as it is now, with a format version (module docstring)."""
    import hashlib  # here, not at the top: hashlib loads OpenSSL (3.5 MB), which a --no-cache command never needs

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path}: not a regular file")
        content = hashlib.blake2b(digest_size=16)
        content.update(os.pread(fd, BLOCK, 0))
        if info.st_size > BLOCK:
            content.update(os.pread(fd, BLOCK, max(BLOCK, info.st_size - BLOCK)))
    finally:
        os.close(fd)
    parts = (
        str(path.resolve()), info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns,
        content.hexdigest(), version,
    )  # fmt: skip
    return hashlib.sha256("|".join(map(str, parts)).encode("utf-8", "surrogateescape")).hexdigest()[:32]


def digest(data: bytes) -> str:
    import hashlib

    return hashlib.blake2b(data, digest_size=16).hexdigest()


def temporary_beside(path: Path) -> Path:
    """A name in `path`'s folder that no other writer (process or thread) uses."""
    return path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.{next(_counter)}.tmp")


def write_file(path: Path, write: Callable[[BinaryIO], Any] | bytes) -> None:
    """Write `path` beside and rename: created exclusively (0600, never through a symlink), flushed to
    disk, renamed into place. `write` is the bytes or a function that writes to the open file."""
    temporary = temporary_beside(path)
    fd = os.open(temporary, os.O_RDWR | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb+") as file:
            if isinstance(write, bytes):
                file.write(write)
            else:
                write(file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def open_regular(path: Path) -> int:
    """A read-only descriptor of a cache file; DamagedEntry for a symlink or anything but a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK)
    except OSError as error:
        if os.path.islink(path):
            raise DamagedEntry(f"{path}: a symlink in the cache") from None
        raise error
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise DamagedEntry(f"{path}: not a regular file")
    return fd


def read_file(path: Path) -> bytes:
    with os.fdopen(open_regular(path), "rb") as file:
        return file.read()


def write_checked(path: Path, text: str) -> None:
    """A small cache file (an answer, a manifest) with the digest of its text on its first line."""
    data = text.encode("utf-8", "surrogateescape")
    write_file(path, digest(data).encode() + b"\n" + data)


def read_checked(path: Path) -> str:
    """The text of a file `write_checked` wrote; DamagedEntry when it is not whole and unchanged."""
    data = read_file(path)
    head, newline, body = data.partition(b"\n")
    if not newline or head.decode("ascii", "replace") != digest(body):
        raise DamagedEntry(f"{path}: does not match its digest")
    return body.decode("utf-8", "surrogateescape")


def head_digest(fd: int, size: int) -> str:
    """A digest of a file's size and first 4 KiB (a `.npy` file's header: its dtype, order and shape),
    what a truncation or a garbled header changes; the data after it is checked by its sum."""
    import hashlib

    return hashlib.blake2b(str(size).encode() + os.pread(fd, 4096, 0), digest_size=16).hexdigest()


def make_private_folder(folder: Path) -> None:
    """Create `folder` (and its missing parents) 0700; an existing one is left as it is."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
