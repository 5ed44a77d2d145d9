"""The shipped demo plan (`plan:demo`): a capture-size plan measured on a GPU and stored with the demo
(assets/demo_plan.json), so `graphscope plan plan:demo`, `graphscope report plan:demo` and the Plan
panel can be tried on a fresh install without a GPU. It is a plan record as `graphscope plan --json`
prints one (measurements included), checked like any stored plan before it is read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphscope.core.errors import BadInputError
from graphscope.core.settings import asset_path
from graphscope.store.plan_record import plan_record

DEMO_PLAN = "plan:demo"
DEMO_FILE = "demo_plan.json"


def demo_plan_path() -> Path:
    return asset_path(DEMO_FILE)


def load_demo_plan(path: Path | None = None) -> dict[str, Any]:
    """The demo plan's record with `plan_id` "demo"; BadInputError (one line) where it is missing or damaged."""
    path = path or demo_plan_path()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise BadInputError(f"{DEMO_PLAN}: the shipped demo plan cannot be read ({path}: {reason})") from None
    return {**plan_record(text, f"{DEMO_PLAN} ({path})"), "plan_id": "demo"}
