"""A stand-in workload child with PDL: ModelSession's graph whose relu launch is programmatic as captured."""

from __future__ import annotations

from typing import ClassVar

from graphscope.core.edge_kinds import EdgeKind, Port
from graphscope.core.launch_config import Site
from graphscope.graph.edges import EdgeKinds
from graphscope.graph.model import Dag
from tests.tune.fakes import ModelSession

PDL = (EdgeKind.PROGRAMMATIC, Port.PROGRAMMATIC, Port.DEFAULT)
PLAIN = (EdgeKind.DEFAULT, Port.DEFAULT, Port.DEFAULT)


class PdlModelSession(ModelSession):
    """Replay: ModelSession's, +3 us when relu's PDL is off, -2 us when transpose's is on (scale -> relu is
    programmatic as captured; scale -> transpose plain); tile has two parents, scale follows a copy."""

    SITES: ClassVar[list[Site]] = [
        Site("scale", 0, "scale", (4096, 1, 1), (256, 1, 1), (16, 1, 1), max_threads=512),
        Site("relu", 0, "relu", (4096, 1, 1), (256, 1, 1), (16, 1, 1), max_threads=512, pdl=True),
        Site("transpose", 0, "transpose", (1024, 1024, 1), (32, 8, 1), (32, 128, 1), max_threads=1024),
        Site("tile", 0, "tile", (512, 512, 1), (16, 16, 1), (32, 32, 1), max_threads=1024),
    ]

    def _median(self) -> float:
        return (
            super()._median()
            + 3_000 * (not self.config.pdl_for("relu", 0, True))
            - 2_000 * self.config.pdl_for("transpose", 0, False)
        )

    def request(self, command, timeout=None, **fields):
        answer = super().request(command, timeout, **fields)
        if command == "dag":
            dag = Dag.from_json(answer)
            on = [self.config.pdl_for(s.name, s.ordinal, s.pdl) for s in self.SITES]
            # edges (0,1) (1,2) (1,3) (3,4) (2,4): relu is node 2, transpose node 3
            dag.edge_kinds = EdgeKinds.of([PLAIN, PDL if on[1] else PLAIN, PDL if on[2] else PLAIN, PLAIN, PLAIN])
            answer = dag.to_json()
        return answer
