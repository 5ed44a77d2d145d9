"""The capture traces `summary --capture` names: files, or folders of them (vLLM and SGLang write one
file per capture size and rank). No NumPy here: the summary's answer cache asks before it loads any."""

from __future__ import annotations

from pathlib import Path

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
