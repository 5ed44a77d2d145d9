"""What can be tuned: knobs (a launch-site name, or one site) and the block sizes each may take."""

from __future__ import annotations

from dataclasses import dataclass

from graphscope.core.errors import BadInputError
from graphscope.core.launch_config import (
    Dim,
    LaunchConfig,
    Site,
    as_dim,
    block_problem,
    candidate_shapes,
    format_dim,
    split_site,
)


@dataclass(frozen=True)
class Knob:
    """One tunable choice: every site with this name (`add`), or one site (`add#3`)."""

    key: str
    sites: tuple[Site, ...]
    candidates: tuple[Dim, ...]

    @property
    def baseline(self) -> Dim:
        return self.sites[0].block

    def current(self, config: LaunchConfig) -> Dim:
        """The block this knob has under `config`."""
        name, ordinal = split_site(self.key)
        return config.block_for(name, ordinal if ordinal is not None else self.sites[0].ordinal, self.baseline)


def knobs_for(sites: list[Site], only: str | None = None, blocks: list[Dim] | None = None) -> list[Knob]:
    """Knobs for the recorded sites: one per launch name (or just `only`), with candidate block shapes.

    Candidates have the launch's own dimensionality (core.launch_config.candidate_shapes), or are the
    `blocks` given (shapes such as 32x8); shapes the kernel cannot run are refused with the reason.
    Shared memory that follows the block is checked where the kernel lives (the workload child).
    """
    groups: dict[str, list[Site]] = {}
    for site in sites:
        groups.setdefault(site.name, []).append(site)
    if only is not None:
        name, ordinal = split_site(only)
        if name not in groups:
            known = ", ".join(sorted(groups)) or "none"
            raise BadInputError(f"no launch site named {only!r} (sites in this workload: {known})")
        chosen = [s for s in groups[name] if ordinal is None or s.ordinal == ordinal]
        if not chosen:
            raise BadInputError(f"{name} has no launch #{ordinal} (it has {len(groups[name])})")
        groups = {only: chosen}
    knobs = []
    for key, members in sorted(groups.items()):
        limit = min(s.max_threads for s in members)
        wanted = [as_dim(b) for b in blocks] if blocks else candidate_shapes(members[0].block, limit)
        for block in wanted:
            reason = block_problem(block, limit)
            if reason and blocks:
                raise BadInputError(f"block {format_dim(block)} for {key}: {reason}")
        usable = tuple(b for b in wanted if block_problem(b, limit) is None)
        knobs.append(Knob(key, tuple(members), usable))
    return knobs
