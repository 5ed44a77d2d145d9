"""Launch sites and launch configurations (pure Python; shared by the runner, the DAG and the tuner).

A launch site is one `ctx.launch(...)` call in a workload's step, named `name#ordinal`: the
ordinal counts the launches with that name within one step. A configuration overrides block sizes by
site (`add#3`) or by name (`add`, every ordinal); the grid follows from the site's problem size.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphscope.core.errors import BadInputError

Dim = tuple[int, int, int]
WARP = 32
CONFIG_FORMAT = "graphscope-launch-config/1"


def as_dim(value: int | tuple[int, ...] | list[int]) -> Dim:
    """1, 2 or 3 sizes (or one int) as an (x, y, z) triple."""
    values = (int(value),) if isinstance(value, int) else tuple(int(v) for v in value)
    if not 1 <= len(values) <= 3 or any(v < 1 for v in values):
        raise ValueError(f"a launch dimension needs 1 to 3 positive sizes, not {value!r}")
    return (*values, *([1] * (3 - len(values))))  # type: ignore[return-value]


def grid_for(problem: Dim, block: Dim) -> Dim:
    """ceil(problem / block) per dimension."""
    return tuple(-(-p // b) for p, b in zip(problem, block))  # type: ignore[return-value]


def threads(block: Dim) -> int:
    return block[0] * block[1] * block[2]


def site_key(name: str, ordinal: int) -> str:
    return f"{name}#{ordinal}"


def split_site(key: str) -> tuple[str, int | None]:
    name, _, ordinal = key.rpartition("#")
    return (name, int(ordinal)) if name and ordinal.isdigit() else (key, None)


def block_problem(block: Dim, max_threads: int) -> str | None:
    """Why a block cannot be used for a kernel (None when it can)."""
    total = threads(block)
    if total > max_threads:
        return f"{total} threads per block exceed this kernel's limit of {max_threads} (its register use)"
    if total % WARP:
        return f"{total} threads per block is not a multiple of the warp size ({WARP})"
    return None


def candidate_blocks(max_threads: int, low: int = WARP) -> list[int]:
    """Power-of-two 1-D block sizes from `low` up to the kernel's limit."""
    sizes, size = [], low
    while size <= max_threads:
        sizes.append(size)
        size *= 2
    return sizes


@dataclass
class LaunchConfig:
    """Block-size overrides by site (`name#k`) or by name; a site key wins over its name."""

    blocks: dict[str, Dim] = field(default_factory=dict)
    workload: str | None = None

    def block_for(self, name: str, ordinal: int, default: Dim) -> Dim:
        return self.blocks.get(site_key(name, ordinal)) or self.blocks.get(name) or default

    def with_block(self, key: str, block: Dim) -> LaunchConfig:
        return LaunchConfig({**self.blocks, key: block}, self.workload)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": CONFIG_FORMAT,
            "workload": self.workload,
            "blocks": {k: list(v) for k, v in sorted(self.blocks.items())},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LaunchConfig:
        if data.get("format") != CONFIG_FORMAT:
            raise BadInputError(f"not a graphscope launch config (format {data.get('format')!r})")
        try:
            blocks = {str(k): as_dim(v) for k, v in data.get("blocks", {}).items()}
        except (TypeError, ValueError) as exc:
            raise BadInputError(f"launch config has a bad block size: {exc}") from None
        return cls(blocks, data.get("workload"))

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=2) + "\n")

    @classmethod
    def load(cls, path: Path) -> LaunchConfig:
        try:
            return cls.from_json(json.loads(Path(path).read_text()))
        except FileNotFoundError:
            raise BadInputError(f"{path}: no such file") from None
        except json.JSONDecodeError as exc:
            raise BadInputError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from None


@dataclass(frozen=True)
class Site:
    """One recorded launch: where it is, what it launches, and with which configuration."""

    name: str
    ordinal: int
    kernel: str
    problem: Dim
    block: Dim
    grid: Dim
    shared_mem: int = 0
    max_threads: int = 1024
    registers: int = 0

    @property
    def key(self) -> str:
        return site_key(self.name, self.ordinal)

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "name": self.name,
            "ordinal": self.ordinal,
            "kernel": self.kernel,
            "problem": list(self.problem),
            "block": list(self.block),
            "grid": list(self.grid),
            "shared_mem": self.shared_mem,
            "max_threads": self.max_threads,
            "registers": self.registers,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Site:
        return cls(
            data["name"],
            data["ordinal"],
            data["kernel"],
            as_dim(data["problem"]),
            as_dim(data["block"]),
            as_dim(data["grid"]),
            data.get("shared_mem", 0),
            data.get("max_threads", 1024),
            data.get("registers", 0),
        )
