"""Kinds of CUDA-graph edges and their ports (the driver's CUgraphEdgeData), and the wording of PDL verdicts.

    edge kind   0 default        `to` starts once `from` has finished and its writes are visible
                1 programmatic   programmatic dependent launch (PDL): `to` may start once `from` triggers
                                 (every block ran griddepcontrol.launch_dependents, or exited)
    from port   0 default        `from`'s completion
                1 programmatic   `from`'s trigger (what a PDL launch captures to)
                2 launch order   `from` having begun
    to port     0 default        (the only incoming port the driver defines)

The numbers are the driver's (`CU_GRAPH_DEPENDENCY_TYPE_*`, `CU_GRAPH_KERNEL_NODE_PORT_*`), so a column
of them indexes these enums directly. A programmatic edge only saves time when `to` waits on the device
(griddepcontrol.wait, cudaGridDependencySynchronize) instead of at launch; a `to` kernel without that wait
may read `from`'s output before it is written.
"""

from __future__ import annotations

from enum import IntEnum


class EdgeKind(IntEnum):
    DEFAULT = 0
    PROGRAMMATIC = 1

    @property
    def word(self) -> str:
        return self.name.lower()


class Port(IntEnum):
    DEFAULT = 0
    PROGRAMMATIC = 1
    LAUNCH_ORDER = 2

    @property
    def word(self) -> str:
        return self.name.lower().replace("_", " ")


def kind_word(value: int) -> str:
    """'default', 'programmatic', or 'type N' for a kind a newer driver added."""
    return EdgeKind(value).word if value in EdgeKind._value2member_map_ else f"type {value}"


def port_word(value: int) -> str:
    """'default', 'programmatic', 'launch order', or 'port N' for one a newer driver added."""
    return Port(value).word if value in Port._value2member_map_ else f"port {value}"


def parse_kind(text: str | int) -> int:
    """A kind from JSON: its word or its number."""
    if isinstance(text, int):
        return text
    for kind in EdgeKind:
        if kind.word == text:
            return int(kind)
    return int(text.removeprefix("type "))


def parse_port(text: str | int) -> int:
    """A port from JSON: its words or its number."""
    if isinstance(text, int):
        return text
    for port in Port:
        if port.word == text:
            return int(port)
    return int(text.removeprefix("port "))


# -- PDL verdicts, per programmatic edge (graph/edges.py judges, every face words them so) --------------

PDL_OVERLAP = "overlaps"
"""`to` started before `from` ended (a negative gap): the launch latency is hidden."""
PDL_SHORTER = "shorter gap"
"""The gap's interval lies below every plain edge's: PDL saves the difference."""
PDL_NO_EFFECT = "no effect"
"""The gap's interval overlaps the plain edges' gap interval: PDL changed nothing measurable."""
PDL_NO_DEVICE_SYNC = "no device-side wait/trigger"
"""Neither kernel's code has griddepcontrol: `to` waits at launch as on a plain edge, and without a
griddepcontrol.wait it may read `from`'s output early (check the outputs)."""
PDL_UNMEASURED = "not measured"

VERDICT_TEXT = {
    PDL_OVERLAP: "the dependent starts before its parent ends: PDL hides the launch gap",
    PDL_SHORTER: "the gap is shorter than a plain edge's: PDL saves the difference",
    PDL_NO_EFFECT: "the gap equals a plain edge's (their 95% intervals overlap): PDL changes nothing here",
    PDL_NO_DEVICE_SYNC: (
        "neither kernel uses griddepcontrol (no griddepcontrol.wait in the dependent, no launch_dependents "
        "in its parent): the dependent cannot start early by design, and without a wait it may read its "
        "parent's output before it is written"
    ),
    PDL_UNMEASURED: "no timing for this edge (run `graphscope tune --pdl` or open a node-level trace)",
}

GRIDDEP_WAIT_PTX = "griddepcontrol.wait"
GRIDDEP_TRIGGER_PTX = "griddepcontrol.launch_dependents"
GRIDDEP_WAIT_SASS = "ACQBULK"  # what griddepcontrol.wait compiles to on sm_90 (checked by cuobjdump, see pdl.sh)
GRIDDEP_TRIGGER_SASS = "PREEXIT"  # and griddepcontrol.launch_dependents
