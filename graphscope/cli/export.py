"""`graphscope export FILE -o trace.json`: the trace as Perfetto / Chrome trace-event JSON."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from graphscope.cli.common import add_cache_option, one_shot
from graphscope.core.paths import refuse_inputs
from graphscope.core.text import shown_path


def add(sub: Any) -> None:
    p = sub.add_parser("export", help="write a trace as Perfetto / Chrome trace-event JSON")
    p.add_argument("file", type=Path)
    p.add_argument("-o", "--output", type=Path, required=True, metavar="trace.json")
    add_cache_option(p)
    p.set_defaults(handler=run)


@one_shot
def run(args: argparse.Namespace) -> int:
    from graphscope.core.errors import BadInputError
    from graphscope.export.perfetto_file import export_file

    if not args.output.name.lower().endswith((".json", ".json.gz")):
        raise BadInputError(f"{args.output}: the export is trace-event JSON; name a .json (or .json.gz) file")
    if not args.output.parent.is_dir():
        raise BadInputError(f"{args.output}: the folder {args.output.parent} does not exist")
    refuse_inputs(args.output, [args.file], "-o")
    counts = export_file(args.file, args.output)
    print(
        f"wrote {shown_path(args.output)}: {counts['slices']:,} slices ({counts['graph_launches']:,} graph launches), "
        f"{counts['flows']:,} launch flows "
        "(open it at https://ui.perfetto.dev or chrome://tracing)"
    )
    return 0
