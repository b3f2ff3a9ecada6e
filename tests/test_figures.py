"""figures/ holds what the lessons' code draws today (remake with `make figures`)."""
import sys

import pytest

from project import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import make_figures  # noqa: E402
import memory_figure  # noqa: E402
from autograd_lens.memory import format_bytes  # noqa: E402

FIGURES = make_figures.all_figures()
EXPECTED = {"figure1_seed_graph", "figure2_multitask_model", "overview_transformer"}


def test_the_expected_figures_are_made():
    assert EXPECTED <= set(FIGURES)


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_committed_figure_matches_the_lesson_code(name):
    committed = ROOT / "figures" / f"{name}.dot"
    assert committed.exists(), f"run `make figures` to create figures/{name}.dot"
    assert committed.read_text() == FIGURES[name].source, \
        f"figures/{name}.dot is stale: run `make figures`"
    for suffix in (".svg", ".png"):
        assert (ROOT / "figures" / f"{name}{suffix}").stat().st_size > 0


def test_no_leftover_figures():
    committed = {p.stem for p in (ROOT / "figures").glob("*.dot")}
    assert committed == set(FIGURES), "figures/ holds files that no lesson makes"
    plots = {p.stem for p in (ROOT / "figures").glob("*.txt")}
    assert plots == {memory_figure.NAME}


def test_the_memory_figure_is_what_lesson_04_s_model_gives_today():
    """The plot's data, as text: each way's phases and peak (the picture is drawn from it)."""
    found = memory_figure.timelines()
    committed = ROOT / "figures" / f"{memory_figure.NAME}.txt"
    assert committed.read_text() == memory_figure.text(found) + "\n", \
        f"figures/{memory_figure.NAME}.txt is stale: run `make figures`"
    assert (ROOT / "figures" / f"{memory_figure.NAME}.svg").stat().st_size > 0
    two_calls, one_pass = (mem.peak.bytes for mem in found.values())
    assert two_calls > 1.3 * one_pass  # what the picture is there to show
    readme = (ROOT / "README.md").read_text()  # which quotes both peaks
    assert f"peak at {format_bytes(two_calls)}" in readme and f"at {format_bytes(one_pass)}" in readme
    assert f"{two_calls:,} bytes" in readme
