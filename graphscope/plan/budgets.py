"""Budgets as users write them: memory ('2GiB', '500MB', '1.5 GB') and start-up time ('10s', '800ms')."""

from __future__ import annotations

import re

from graphscope.core.errors import BadInputError

_BYTES = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)?\s*$", re.IGNORECASE)
_SCALE = {
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}


def parse_bytes(text: str) -> int:
    found = _BYTES.match(text)
    if not found:
        raise BadInputError(f"--memory {text}: write a size such as 2GiB, 500MB or 1.5GB")
    value = float(found.group(1)) * _SCALE[(found.group(2) or "B").lower()]
    if not 0 < value < 2**60:
        raise BadInputError(f"--memory {text}: give a positive size")
    return int(value)


def parse_startup(text: str) -> float:
    from graphscope.analysis.scope import parse_time

    try:
        value = parse_time(text)
    except BadInputError as exc:
        raise BadInputError(f"--startup {text}: {exc.message}") from None
    if value <= 0 or not re.search(r"[a-zµ]\s*$", text.strip()):
        raise BadInputError(f"--startup {text}: give a positive time with a unit, such as 10s or 800ms")
    return float(value)
