"""Launch sites and launch configurations (pure Python; shared by the runner, the DAG and the tuner).

A launch site is one `ctx.launch(...)` call in a workload's step, named `name#ordinal`: the
ordinal counts the launches with that name within one step. A configuration overrides block sizes by
site (`add#3`) or by name (`add`, every ordinal); the grid follows from the site's problem size.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphscope.core.errors import BadInputError

Dim = tuple[int, int, int]
WARP = 32
CONFIG_FORMAT = "graphscope-launch-config/1"


def as_dim(value: int | Sequence[int]) -> Dim:
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


MAX_BLOCK_DIM = (1024, 1024, 64)


UNKNOWN_DIM = "unknown"
"""A launch dimension the trace did not record (a profiler writes 0): never shown as '0x0x0'."""


def format_dim(dim: Dim | list[int] | tuple[int, ...] | None, whole: bool = False) -> str:
    """(32, 8, 1) -> '32x8'; (256, 1, 1) -> '256' ('256x1x1' with `whole`); a size under 1 -> 'unknown'."""
    if not dim:
        return "-"
    values = [int(v) for v in dim]
    if any(v < 1 for v in values):
        return UNKNOWN_DIM
    while not whole and len(values) > 1 and values[-1] == 1:
        values.pop()
    return "x".join(map(str, values))


def parse_block(text: str) -> Dim:
    """'256', '32x8' or '8x8x4' as a block shape."""
    try:
        return as_dim([int(part) for part in text.strip().lower().split("x")])
    except ValueError:
        raise BadInputError(f"{text!r} is not a block shape (write 256, 32x8 or 8x8x4)") from None


def dimensions(block: Dim) -> int:
    """How many dimensions a block uses: 1 for (256, 1, 1), 2 for (16, 16, 1), 3 for (8, 8, 4)."""
    return 3 if block[2] > 1 else 2 if block[1] > 1 else 1


def block_problem(block: Dim, max_threads: int, shared_bytes: int = 0, max_shared: int | None = None) -> str | None:
    """Why a block cannot be used for a kernel (None when it can)."""
    total = threads(block)
    if any(b > limit for b, limit in zip(block, MAX_BLOCK_DIM)):
        return f"block {format_dim(block)} exceeds the per-dimension limit {format_dim(MAX_BLOCK_DIM)}"
    if total > max_threads:
        return f"{total} threads per block exceed this kernel's limit of {max_threads} (its register use)"
    if total % WARP:
        return f"{total} threads per block is not a multiple of the warp size ({WARP})"
    if max_shared is not None and shared_bytes > max_shared:
        return f"needs {shared_bytes:,} bytes of shared memory per block; the device allows {max_shared:,}"
    return None


def candidate_blocks(max_threads: int, low: int = WARP) -> list[int]:
    """Power-of-two 1-D block sizes from `low` up to the kernel's limit."""
    sizes, size = [], low
    while size <= max_threads:
        sizes.append(size)
        size *= 2
    return sizes


def candidate_shapes(baseline: Dim, max_threads: int) -> list[Dim]:
    """Block shapes with the baseline's own dimensionality, from the kernel's limits.

    1-D: powers of two from a warp to the limit. 2-D (and 3-D, whose z stays as it is): x from 8 to
    256 and y from 2 to 32, powers of two, whose total is a power of two from 64 to the kernel's
    register-limited maximum: 8x8, 16x16, 32x8, 64x4 ... A shape the user gives is tried as given.
    """
    if dimensions(baseline) == 1:
        return [as_dim(size) for size in candidate_blocks(max_threads)]
    z = baseline[2]
    shapes = [
        (x, y, z)
        for x in (8, 16, 32, 64, 128, 256)
        for y in (2, 4, 8, 16, 32)
        if 64 <= x * y * z <= max_threads and (x * y * z) & (x * y * z - 1) == 0
    ]
    return sorted(shapes, key=lambda shape: (threads(shape), -shape[0]))


@dataclass
class LaunchConfig:
    """Block-size overrides by site (`name#k`) or by name; a site key wins over its name."""

    blocks: dict[str, Dim] = field(default_factory=dict)
    workload: str | None = None
    pdl: dict[str, bool] = field(default_factory=dict)  # site or name -> launch with PDL or not (tune --pdl)

    def block_for(self, name: str, ordinal: int, default: Dim) -> Dim:
        return self.blocks.get(site_key(name, ordinal)) or self.blocks.get(name) or default

    def pdl_for(self, name: str, ordinal: int, default: bool) -> bool:
        """Whether a launch site launches with programmatic dependent launch (its own override, its name's, or
        what the workload asked)."""
        return self.pdl.get(site_key(name, ordinal), self.pdl.get(name, default))

    def with_block(self, key: str, block: Dim) -> LaunchConfig:
        return LaunchConfig({**self.blocks, key: block}, self.workload, dict(self.pdl))

    def with_pdl(self, key: str, on: bool) -> LaunchConfig:
        return LaunchConfig(dict(self.blocks), self.workload, {**self.pdl, key: on})

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "format": CONFIG_FORMAT,
            "workload": self.workload,
            "blocks": {k: list(v) for k, v in sorted(self.blocks.items())},
        }
        if self.pdl:  # only where PDL was tuned: configs without it read as before
            data["pdl"] = dict(sorted(self.pdl.items()))
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LaunchConfig:
        if not isinstance(data, dict):
            raise BadInputError(f"not a graphscope launch config (a JSON {type(data).__name__}, not an object)")
        if data.get("format") != CONFIG_FORMAT:
            raise BadInputError(f"not a graphscope launch config (format {data.get('format')!r})")
        try:
            blocks = {str(k): as_dim(v) for k, v in data.get("blocks", {}).items()}
        except (TypeError, ValueError, AttributeError) as exc:
            raise BadInputError(f"launch config has a bad block size: {exc}") from None
        pdl = data.get("pdl", {})
        if not isinstance(pdl, dict) or not all(isinstance(v, bool) for v in pdl.values()):
            raise BadInputError('launch config has a bad "pdl": an object of site -> true/false')
        return cls(blocks, data.get("workload"), {str(k): v for k, v in pdl.items()})

    def save(self, path: Path) -> None:
        from graphscope.core.paths import write_replacing  # beside and renamed: a full disk keeps the old one

        write_replacing(path, json.dumps(self.to_json(), indent=2) + "\n", "the launch config")

    @classmethod
    def load(cls, path: Path) -> LaunchConfig:
        try:
            return cls.from_json(json.loads(Path(path).read_text()))
        except FileNotFoundError:
            raise BadInputError(f"{path}: no such file") from None
        except json.JSONDecodeError as exc:
            raise BadInputError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from None
        except RecursionError:
            raise BadInputError(f"{path}: nested too deeply to be a launch config") from None
        except UnicodeDecodeError:
            raise BadInputError(f"{path}: not text (a launch config is JSON)") from None
        except BadInputError as exc:
            raise BadInputError(f"{path}: {exc.message}") from None


@dataclass(frozen=True)
class Site:
    """One recorded launch: where it is, what it launches, and with which configuration."""

    name: str
    ordinal: int
    kernel: str
    problem: Dim
    block: Dim
    grid: Dim
    shared_mem: int = 0  # dynamic shared memory bytes at this block
    max_threads: int = 1024
    registers: int = 0
    shared_rule: bool = False  # shared memory follows the block (the workload gave a function)
    max_shared: int | None = None  # the most dynamic shared memory the kernel may opt into
    pdl: bool = False  # launched with programmatic dependent launch (ctx.launch(..., pdl=True))

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
            "shared_rule": self.shared_rule,
            "max_shared": self.max_shared,
            "pdl": self.pdl,
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
            data.get("shared_rule", False),
            data.get("max_shared"),
            bool(data.get("pdl", False)),
        )
