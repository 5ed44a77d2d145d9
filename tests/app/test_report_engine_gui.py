"""One report engine behind the CLI and the GUI (report/compose.py): the Compare window's Export report…
and File > Export report… give the same headline and numbers as `graphscope report` for the same files."""

from __future__ import annotations

import pytest

from graphscope.report.compare import headline
from tests.conftest import FORKJOIN, TORCH_MLP
from tests.report.test_one_engine import cli_report, plain, with_op_ranges


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """A before/after pair whose op-level ranges span more time than their steps (the issue's pair)."""
    folder = tmp_path_factory.mktemp("pair")
    return with_op_ranges(FORKJOIN, folder / "before.sqlite"), with_op_ranges(TORCH_MLP, folder / "after.sqlite")


def test_the_compare_window_and_the_cli_give_one_report(window, open_trace, qtbot, tmp_path, pair):
    """Compare with… then Export report… (its preview's report) against `graphscope report A B`."""
    from graphscope.report.compose import report_of

    open_trace(pair[0])
    compare = window.compare_with(pair[1])
    qtbot.waitUntil(lambda: compare.export_button.isEnabled(), timeout=30_000)
    compare.export()
    qtbot.waitUntil(lambda: getattr(compare, "report_preview", None) is not None, timeout=30_000)
    gui = plain(compare.report_preview.report)
    cli = cli_report(tmp_path, *pair)
    cli.pop("created")
    assert headline(gui) == headline(cli) and gui["comparison"] == cli["comparison"]
    assert gui == cli  # every number, label, scope and note
    assert plain(report_of(*compare.report_sides(), charts=False)[0]) == cli
    compare.close()


def test_file_export_report_of_an_unscoped_trace_is_the_cli_report(window, open_trace, qtbot, tmp_path, pair):
    open_trace(pair[0])
    window.export_report()
    qtbot.waitUntil(lambda: getattr(window, "report_preview", None) is not None, timeout=30_000)
    gui = plain(window.report_preview.report)
    cli = cli_report(tmp_path, pair[0])
    cli.pop("created")
    assert gui == cli and gui["a"]["scope"] == "5 NVTX ranges 'graph_*'" and gui["a"]["steps"] == 5
