"""The capture traces `summary --capture` names: files, or folders of them (vLLM and SGLang write one
file per capture size and rank). No NumPy here: the summary's answer cache asks before it loads any."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from graphscope.core.errors import BadInputError, NotAnExportError

TRACE_SUFFIXES = (".json", ".json.gz", ".sqlite")


def capture_files(paths: list[Path]) -> list[Path]:
    """The capture traces named: files as given, a folder's traces (.json, .json.gz, .sqlite) by name."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(TRACE_SUFFIXES))
        else:
            found.append(path)
    return found


def load_captures(paths: list[Path], load: Callable[[Path], Any]) -> tuple[list[Any], list[str]]:
    """The capture traces read with `load`, and the files of a folder that are not traces, each with its
    reason (a folder may hold an engine's other JSON); a file named itself must read. Refused: no trace."""
    traces, skipped = [], []
    for path in paths:
        for found in capture_files([path]):
            try:
                traces.append(load(found))
            except NotAnExportError as exc:
                if not path.is_dir():
                    raise
                skipped.append(str(exc))
    if not traces:
        reason = f" ({skipped[0]})" if skipped else ""
        raise BadInputError(f"--capture {paths[0]}: no capture traces (.json, .json.gz, .sqlite) to read{reason}")
    return traces, skipped
