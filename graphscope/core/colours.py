"""The one colour table: what colour each kind of event is drawn in, on every face that draws it.

The timeline's lanes index `PALETTE` (a lane stores a small int per event), the DAG view outlines a
node in its kind's colour, the report's SVG lane excerpts fill bars with it, and the legend explains
it: all read this module, so a memcpy is the same green everywhere (before, the DAG drew it in
(15, 157, 88) and the lanes in (46, 160, 67)). Nothing outside core/ spells a kind's colour
(tests/test_vocabulary.py checks).
"""

from __future__ import annotations

from graphscope.core.events import Activity, ApiKind
from graphscope.core.rules import MODE_EAGER, MODE_FULL, MODE_IDLE, MODE_MIXED, MODE_PIECEWISE

RGB = tuple[int, int, int]

# palette indices: 0-7 API kinds (ApiKind values), 8 memcpy, 9 memset, 10 graph, 11-26 kernels, 27-34 NVTX
PALETTE: tuple[RGB, ...] = (
    (150, 150, 150),
    (66, 133, 244),
    (156, 39, 176),
    (219, 68, 55),
    (15, 157, 88),
    (0, 150, 136),
    (244, 160, 0),
    (121, 85, 72),
    (46, 160, 67),
    (0, 172, 193),
    (142, 68, 173),
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
    (57, 106, 177),
    (218, 124, 48),
    (62, 150, 81),
    (204, 37, 41),
    (107, 76, 154),
    (146, 36, 40),
    (174, 199, 232),
    (255, 187, 120),
    (152, 223, 138),
    (255, 152, 150),
    (197, 176, 213),
    (196, 156, 148),
    (247, 182, 210),
    (219, 219, 141),
)
COLOR_MEMCPY, COLOR_MEMSET, COLOR_GRAPH = 8, 9, 10
KERNEL_COLORS = range(11, 27)  # a kernel's colour is one of these, by a hash of its name
NVTX_COLORS = range(27, 35)
COLOR_KERNEL = KERNEL_COLORS.start  # "a kernel" where a face colours kinds, not names (DAG, report lanes)
COLOR_OTHER = int(ApiKind.OTHER)  # grey: a kind with no colour of its own

KIND_COLOR: dict[Activity, int] = {
    Activity.KERNEL: COLOR_KERNEL,
    Activity.MEMCPY: COLOR_MEMCPY,
    Activity.MEMSET: COLOR_MEMSET,
    Activity.GRAPH: COLOR_GRAPH,
    Activity.GRAPH_BRACKET: COLOR_GRAPH,
    Activity.API: int(ApiKind.KERNEL_LAUNCH),  # a lane of API calls drawn in one colour (report lanes)
}
"""Palette index of each kind of event where a face draws one colour per kind."""

# idle gaps on a GPU lane (key G), by cause: the index is the gap's cause code
GAP_RGB: tuple[RGB, ...] = ((255, 140, 0), (120, 120, 120), (160, 160, 200))
GAP_LABELS = ("GPU idle, waiting for the CPU to submit", "GPU idle, work queued", "GPU idle, cause unknown")
HOST_WAIT, OTHER_WAIT, UNKNOWN_WAIT = range(3)


def kind_rgb(kind: str | Activity) -> RGB:
    """The colour of a kind of event: an `Activity`, its table ('memcpy', 'kernels') or its noun
    ('kernel', the DAG's node types); grey for anything else."""
    if not isinstance(kind, Activity):
        kind = _BY_NAME.get(kind, Activity.SYNC)
    return PALETTE[KIND_COLOR.get(kind, COLOR_OTHER)]


def hex_of(rgb: RGB) -> str:
    """'#rrggbb' of a colour (SVG and HTML)."""
    red, green, blue = rgb
    return f"#{red:02x}{green:02x}{blue:02x}"


_BY_NAME = {
    **{kind.noun: kind for kind in Activity if kind.table},
    **{kind.table: kind for kind in Activity if kind.table},
}


# the DAG's fill by nn.Module (Graph panel, colour by module): light, so a box's text reads on any of them
# (dag_view.ink_on picks near black on all twelve); modules take them by rank of replay GPU time, cycling
MODULE_PALETTE: tuple[RGB, ...] = (
    *PALETTE[NVTX_COLORS.start : NVTX_COLORS.start + 8],  # the NVTX ranges' light colours, then four more
    (158, 218, 229),
    (253, 208, 162),
    (161, 217, 155),
    (188, 189, 220),
)
NO_MODULE_RGB: RGB = (214, 214, 218)  # a node no module is known for: grey, apart from the heat fill's white


def module_rgb(rank: int) -> RGB:
    """The fill of the module ranked `rank` (0: most replay GPU time)."""
    return MODULE_PALETTE[rank % len(MODULE_PALETTE)]



MODE_COLOURS: dict[str, tuple[int, int, int]] = {  # a step's graph mode (core.rules.STEP_MODES): the step strip
    MODE_FULL: (46, 160, 67),  # green: the whole step replayed
    MODE_PIECEWISE: (66, 133, 244),  # blue: graphs with eager islands between them
    MODE_MIXED: (251, 188, 4),  # amber: graphs hold under GRAPH_BODY_SHARE of the step's GPU time
    MODE_EAGER: (234, 67, 53),  # red: no graph launch at all
    MODE_IDLE: (189, 189, 189),  # grey: no GPU work
}
SEAM_COLOUR = (0, 0, 0, 90)  # dark, translucent: a seam shaded over its step's colour

# the DAG's edges by kind (core.edge_kinds): plain in grey, programmatic (PDL) in magenta and dashed, apart from
# every kind's outline colour above, so an edge never reads as a node
PLAIN_EDGE_RGB: RGB = (120, 120, 130)
PDL_EDGE_RGB: RGB = (200, 30, 140)
