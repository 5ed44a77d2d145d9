"""Errors a user can act on. Each carries a one-line message; the CLI prints it and exits 2."""

from __future__ import annotations


class GraphscopeError(Exception):
    """Base class: a problem with the user's input or environment, not a bug in graphscope."""

    exit_status = 2

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))

    @property
    def message(self) -> str:
        return str(self)


class BadInputError(GraphscopeError):
    """A path or argument that cannot be used (missing, a directory, wrong kind of file)."""


class NotAnExportError(BadInputError):
    """A file that is not an Nsight Systems SQLite export (or not SQLite at all)."""


class UnsupportedSchemaError(BadInputError):
    """An export whose tables lack the columns graphscope needs."""


class WorkloadError(GraphscopeError):
    """A user workload that failed: raised, faulted, hung, ran out of memory, or cannot be captured.

    `kind` names the cause (see graphscope.workload.protocol.ERRORS); `details` keeps the traceback.
    """

    run_id: int | None = None  # set by workload.record.run_and_record once the failure is stored

    def __init__(self, message: str, kind: str = "raised", details: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.details = details


class NoGpuError(GraphscopeError):
    """The command needs a CUDA GPU (and CuPy) and this machine has none."""

    run_id: int | None = None  # as WorkloadError's


class ToolMissingError(GraphscopeError):
    """An external tool (such as nsys) is needed and was not found."""


class Cancelled(GraphscopeError):
    """The user cancelled a long operation."""

    def __init__(self, message: str = "cancelled by the user") -> None:
        super().__init__(message)


def one_line(exc: BaseException, nameless: str = "the file") -> str | None:
    """What went wrong, in the one line every face shows (the CLI on stderr, the GUI's workers in the
    window), for a failure the user can act on; None for anything else (a bug). `nameless`: what an
    OS error without a file name is about."""
    import sqlite3

    if isinstance(exc, GraphscopeError):
        return exc.message
    if isinstance(exc, MemoryError):
        return "not enough memory for this file"
    if isinstance(exc, (sqlite3.DatabaseError, UnicodeDecodeError)):  # a damaged file, not a bug
        return f"the file cannot be read as an export ({' '.join(str(exc).split())})"
    if isinstance(exc, OSError):
        where = exc.filename or nameless
        return f"{where}: {exc.strerror or exc}" if where else str(exc.strerror or exc)
    return None
