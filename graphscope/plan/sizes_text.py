"""Batch-size lists as users write them: `1,2,4,8`, `1-256` (every size), `8-512/8` (every 8th)."""

from __future__ import annotations

import re

from graphscope.core.errors import BadInputError

_PART = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*(?:/\s*(\d+))?)?\s*$")
MAX_SIZES = 1024


def parse_sizes(text: str) -> list[int]:
    """Sorted distinct sizes; one line saying what is wrong otherwise."""
    sizes: set[int] = set()
    for part in text.split(","):
        found = _PART.match(part)
        if not found:
            raise BadInputError(f"--sizes {text}: write sizes like 1,2,4,8 or 1-256 or 8-512/8, not {part.strip()!r}")
        low = int(found.group(1))
        high = int(found.group(2) or low)
        step = int(found.group(3) or 1)
        if low < 1 or high < low or step < 1:
            raise BadInputError(f"--sizes {text}: {part.strip()!r} is not a range of positive sizes")
        sizes.update(range(low, high + 1, step))
        if len(sizes) > MAX_SIZES:
            raise BadInputError(f"--sizes {text}: more than {MAX_SIZES} sizes; measure fewer (8-512/8)")
    return sorted(sizes)


DEFAULT_LIKE = [1, 2, 4, *range(8, 513, 8)]
"""An engine-default-like list (1, 2, 4, then every 8th size to 512: 67 sizes, as vLLM's recent default
has), what --compare-list default means."""
