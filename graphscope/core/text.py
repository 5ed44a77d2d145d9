"""Text that reaches a terminal: names from a trace with their control characters made visible, and file
names that are not UTF-8 shown byte for byte.

A trace is written by someone else: a kernel or range name may hold ESC sequences (colours, cursor moves,
OSC 52 writes to the clipboard), BEL, a carriage return that overwrites the line before it, or C1 controls
that some terminals obey. `printable` is the one function every text renderer passes such names through.
"""

from __future__ import annotations

import codecs
import os
import re
from typing import Any

_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]|[\udc80-\udcff]")
"""C0 controls (tab and newline kept apart: see `printable`), DEL, C1 controls, the Unicode line and
paragraph separators and the bidirectional overrides that make text read other than it is stored, and the
lone surrogates that stand for the undecodable bytes of a file name (os.fsdecode's surrogateescape)."""
_LINE_BREAKS = re.compile(r"[\t\n]")


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a file name that was not UTF-8
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def printable(text: str, keep_lines: bool = False) -> str:
    """`text` with every control character shown as an escape (ESC as \\x1b, BEL as \\x07, CR as \\x0d, a
    C1 control as \\x9b) so a terminal prints it and obeys none of it; tab and newline too unless
    `keep_lines` (a name is one line of a table)."""
    if not keep_lines:
        text = _LINE_BREAKS.sub(lambda m: "\\t" if m.group(0) == "\t" else "\\n", text)
    return _CONTROLS.sub(_escape, text)


def shown_path(path: str | os.PathLike[str] | bytes) -> str:
    """A file name as a line may print it: undecodable bytes as \\xNN (never a UnicodeEncodeError),
    control characters escaped."""
    return printable(os.fsdecode(path))


def _byte_escapes(error: UnicodeError) -> tuple[str, int]:
    """Codec error handler: what a stream cannot encode, shown as escapes (a file name's raw bytes as
    \\xNN, anything else as Python's backslashreplace would)."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    bad = error.object[error.start : error.end]
    return "".join(_escape(re.match(r"(?s).", c)) for c in bad), error.end  # type: ignore[arg-type]


STREAM_ERRORS = "graphscope-escape"
codecs.register_error(STREAM_ERRORS, _byte_escapes)


def printable_tree(value: Any) -> Any:
    """A command's answer (dicts, lists, strings) with every string `printable`: what a text renderer
    formats, so each name is escaped before its column is measured."""
    if isinstance(value, str):
        return printable(value) if _CONTROLS.search(value) or "\t" in value or "\n" in value else value
    if isinstance(value, dict):
        return {k: printable_tree(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [printable_tree(v) for v in value]
    return value


NAME_LIMIT = 1024
"""Longest name a report or a DAG document carries in full (templated C++ names run to a few KiB)."""


def elide(text: str, limit: int = NAME_LIMIT) -> str:
    """`text` cut to `limit` characters with an ellipsis and the number left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters]"
