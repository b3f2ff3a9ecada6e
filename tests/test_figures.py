"""figures/ holds what the lessons' code draws today (remake with `make figures`)."""
import sys

import pytest

from project import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import make_figures  # noqa: E402

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
